"""TREC run: ``qid Q0 docid rank score tag``, whitespace-separated, no header.

As in trec_eval, the rank column is ignored: documents are ordered by score
(descending), ties by doc id (descending). Fields after the run tag are
ignored (trec_eval: "Lines may contain fields after the run_id; they are
ignored"), with one warning counting such lines; comment lines (first
non-blank character ``#``) and blank lines are skipped.
"""
from __future__ import annotations

from dataclasses import replace

from evalkit.data import Run
from evalkit.core.errors import UsageError
from evalkit.io.formats import Format, Sample, register
from evalkit.io.formats.tables import read_whitespace
from evalkit.native.kernels import TREC_RUN
from evalkit.io.textio import LoadedFile


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def sniff(sample: Sample) -> bool:
    """A TREC-shaped first line: six fields or more, the fifth a number (``nan`` too) or the second the usual
    ``Q0``; the reader then names any line that breaks its rules (the score). The rank column is read by
    neither (trec_eval ignores it), so a rank of ``x`` is no reason to refuse a run."""
    parts = sample.fields
    return len(parts) >= 6 and (_is_number(parts[4]) or parts[1] == "Q0")


def read(loaded: LoadedFile, **_) -> Run:
    table = read_whitespace(loaded, TREC_RUN)
    [(qidx, query_ids), (didx, doc_ids)] = table.columns
    warnings = _extra_fields(loaded, table.extra_lines, table.first_extra)
    run = Run(query_ids=query_ids, doc_ids=doc_ids, qidx=qidx, didx=didx, scores=table.values, warnings=warnings)
    return replace(run, tag=last_tag(loaded))


def read_against(loaded: LoadedFile, qrels) -> Run | None:
    """The run read against the gold it will be scored on (:mod:`evalkit.io.prejudged`): what :func:`read` gives, its
    rows read (by :func:`read`) only when asked for; ``None`` where :func:`read` must read it."""
    from evalkit.io.prejudged import read_judged

    return read_judged(loaded, qrels, lambda: read(loaded), warnings=lambda n_extra, first_extra: _extra_fields(loaded, n_extra, first_extra),
                       tag=lambda: last_tag(loaded))


def _extra_fields(loaded: LoadedFile, extra_lines: int, first_extra: int) -> tuple[str, ...]:
    """The warning of a run whose lines have fields after the run tag (none without such lines)."""
    if not extra_lines:
        return ()
    where = f", first on line {first_extra}" if first_extra else ""
    return (f"{loaded.label}: {extra_lines} lines have fields after the run tag{where}; they are ignored, as trec_eval does",)


def last_tag(loaded: LoadedFile) -> str | None:
    """The run tag of the last data line (trec_eval reports that one as the runid)."""
    data, whole = loaded.suffix()
    end = len(data)
    while end > 0:
        start = data.rfind(b"\n", 0, end - 1) + 1
        if start == 0 and not whole:  # the line may begin before the bytes held
            data, whole = loaded.data, True
            end = len(data)
            continue
        fields = data[start:end].split()
        if len(fields) >= 6 and not fields[0].startswith(b"#"):
            return fields[5].decode("utf-8")
        end = start
    return None


def format_trec_run(run: Run, tag: str | None = None, depth: int | None = None) -> str:
    """The run as TREC lines ``qid Q0 doc rank score tag`` in evalkit's rank order.

    Scored runs keep their scores (``repr`` precision, so re-reading gives the
    same ranking); list runs get ``depth + 1 - rank``. ``depth`` keeps the
    first ``depth`` documents per query. Repeated documents keep their first
    position only (TREC runs name a document once per query).
    """
    ranked = run.ranked()
    keep = ranked.first if depth is None else ranked.first & (ranked.rank <= depth)
    qidx, didx = ranked.qidx[keep], ranked.didx[keep]
    # ranks are renumbered after dropping repeats, so they stay 1..n within a query
    from evalkit.data.ranking import group_positions

    ranks = group_positions(qidx)
    if run.is_scored:
        scores = ranked.scores[keep]
    else:
        scores = (ranks.max(initial=0) + 1 - ranks).astype(float)
    name = "_".join((tag or run.name or "evalkit").split()) or "evalkit"
    query_ids, doc_ids = run.query_ids, run.doc_ids
    for kind, ids in (("query", query_ids), ("document", doc_ids)):
        bad = next((i for i in ids.tolist() if not i or len(i.split()) != 1 or i.split()[0] != i), None)
        if bad is not None:
            raise UsageError(f"{kind} id {bad!r} cannot be written to a TREC run (empty or holds whitespace)")
    lines = [
        f"{query_ids[q]} Q0 {doc_ids[d]} {r} {s!r} {name}"
        for q, d, r, s in zip(qidx.tolist(), didx.tolist(), ranks.tolist(), scores.tolist())
    ]
    return "\n".join(lines) + ("\n" if lines else "")


FORMAT = register(Format("trec-run", "run", "TREC run: qid Q0 docid rank score tag", sniff, read, read_against=read_against))


def labels_tsv(run: Run) -> str:
    """A labeler's verdicts as ``query_id<TAB>doc_id<TAB>rank<TAB>label``, every labelled row in rank order."""
    ranked = run.ranked()
    rows = ["query_id\tdoc_id\trank\tlabel"]
    for q, d, r, row in zip(ranked.qidx.tolist(), ranked.didx.tolist(), ranked.rank.tolist(), ranked.row.tolist()):
        assert run.labels is not None  # a labeler's run: its callers write this file only where it has labels
        label = run.labels[row]
        if label is not None and label == label and str(label):
            rows.append(f"{run.query_ids[q]}\t{run.doc_ids[d]}\t{r}\t{label}")
    return "\n".join(rows) + "\n"
