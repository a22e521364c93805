"""The organiser's API: :func:`pool` builds a judging pool and its sheet, :func:`reuse` tests the judgments.

>>> import evalkit
>>> made = evalkit.pool("runs/a_1.trec", "runs/b_1.trec", depth=10, group_by="^[^_]+")   # doctest: +SKIP
>>> made.pool.size, made.summary()["groups"]                                             # doctest: +SKIP
>>> made.save("pool.tsv")               # the judging sheet + pool.tsv.manifest.json     # doctest: +SKIP
>>> test = evalkit.reuse("qrels.txt", "runs/a_1.trec", "runs/b_1.trec", depth=10, group_by="^[^_]+")  # doctest: +SKIP
>>> test.to_pandas()                    # one row per run: full and reduced score, ranks  # doctest: +SKIP
>>> test.save("reports/reuse.md")       # Markdown (or .json) and the figure beside it    # doctest: +SKIP

Runs and gold are what :func:`evalkit.score` takes (paths, ``Run``/``Qrels``,
DataFrames, dicts). A run's group comes from ``groups`` (one per run), or
from the regular expression ``group_by`` on its file name (``group_on="path"``:
on the path as given; runs in memory: on their names), else each run is its
own group (leave one run out).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from evalkit.core.errors import UsageError
from evalkit.judging.groups import groups_of
from evalkit.judging.pool import Pool, build_pool, check_depth

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from evalkit.data.corpus import Corpus
    from evalkit.io.reading import QrelsLike, RunLike
    from evalkit.judging.reuse import Reuse
    from evalkit.core.options import ScoringOptions


def resolve_groups(runs: "Sequence[RunLike]", names: Sequence[str], groups: Sequence[str] | None, group_by: str | None,
                   group_on: str = "name") -> list[str]:
    """Each run's group: ``groups`` as given, or ``group_by`` on file names (paths) / run names (in memory), or its name."""
    if groups is not None and group_by is not None:
        raise UsageError("give groups or group_by, not both")
    if groups is not None:
        if len(groups) != len(runs):
            raise UsageError(f"{len(groups)} groups for {len(runs)} runs")
        return [str(g) for g in groups]
    if group_by is None:
        return list(names)
    subjects = [os.fspath(r) if isinstance(r, (str, os.PathLike)) else n for r, n in zip(runs, names)]
    return groups_of(subjects, names, group_by, on=group_on)


# ----------------------------------------------------------------- pool
@dataclass(frozen=True, eq=False)
class PoolResult:
    """A pool, how it was made (seed, blind sheet) and its manifest; :meth:`save` writes the judging sheet."""

    pool: Pool
    seed: int
    blind: bool
    files: list[str | None]  # each run's file (None: in memory)
    notes: list[str]
    manifest: dict[str, Any] = field(repr=False)
    query_texts: Mapping[str, str] | None = field(default=None, repr=False)  # texts for the assessors, when given
    doc_texts: Mapping[str, str] | None = field(default=None, repr=False)
    text_files: list[str] = field(default_factory=list, repr=False)  # the query and collection files read (never overwritten)

    def sheet(self, delimiter: str = "\t") -> str:
        """The judging sheet's text (:mod:`evalkit.judging.sheet`)."""
        from evalkit.judging.sheet import sheet_text

        return sheet_text(self.pool, self.seed, delimiter=delimiter, blind=self.blind, query_texts=self.query_texts,
                          doc_texts=self.doc_texts)

    def to_pandas(self) -> "pd.DataFrame":
        """One row per pooled pair in the assessors' order: query_id, doc_id, pool_position, n_runs, n_groups, runs, groups."""
        import io

        from evalkit.core.errors import require

        pd = require("pandas", "PoolResult.to_pandas() (a DataFrame)")

        from evalkit.judging.sheet import sheet_text

        text = sheet_text(self.pool, self.seed, blind=False)
        frame = pd.read_csv(io.StringIO(text), sep="\t", dtype=str, keep_default_na=False)
        for column in ("pool_position", "n_runs", "n_groups"):
            frame[column] = frame[column].astype(int)
        return frame.drop(columns=["relevance"])

    def summary(self) -> dict[str, Any]:
        """Pool size, per-query sizes, and each run's and group's pairs and unique contribution (JSON-ready)."""
        from evalkit.report.pool_summary import pool_summary

        return pool_summary(self)

    def save(self, path: str | os.PathLike, *, force: bool = False) -> Path:
        """Write the judging sheet (``.csv``: comma-separated, else tab) and its ``.manifest.json`` atomically."""
        from evalkit.judging.sheet import delimiter_for
        from evalkit.io.manifest import write_sidecar
        from evalkit.io.transactions import atomic_write, committed_together, sidecar_of

        with committed_together([path, sidecar_of(path)], force, inputs=[f for f in self.files if f] + self.text_files):
            target = atomic_write(path, self.sheet(delimiter_for(os.fspath(path))), force=force)
            write_sidecar(path, self.manifest)
        return target


def pool(
    *runs: "RunLike",
    depth: int,
    group_by: str | None = None,
    group_on: str = "name",
    groups: Sequence[str] | None = None,
    names: Sequence[str] | None = None,
    seed: int = 42,
    blind: bool = False,
    run_format: str = "auto",
    column: str | None = None,
    queries: "str | os.PathLike | Mapping[str, str] | None" = None,
    corpus: "str | os.PathLike | Corpus | None" = None,
    trust_pickle: bool = False,
    progress: bool = False,
) -> PoolResult:
    """The depth-``depth`` pool of ``runs`` (:mod:`evalkit.judging.pool`): pooled pairs, who retrieved each, unique contributions.

    ``seed`` fixes each query's random order on the sheet; ``blind`` leaves
    out of the sheet which runs and groups retrieved each document;
    ``queries`` (a query file or ``{id: text}``) and ``corpus`` (a collection
    file or :class:`~evalkit.data.corpus.Corpus`) put the texts on the sheet.
    """
    from evalkit.io.reading import as_run, input_entry
    from evalkit.scoring.runset import paths_of as _paths_of, run_names as _run_names
    from evalkit.report.pool_summary import coverage_notes
    from evalkit.io.manifest import build_manifest
    from evalkit.scoring.runset import with_progress

    depth = check_depth(depth)
    if not runs:
        raise UsageError("a pool needs at least one run")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**32:
        raise UsageError(f"seed must be an integer in 0..2^32-1 (got {seed!r})")
    labels = _run_names(runs, names)
    chosen = resolve_groups(runs, labels, groups, group_by, group_on)  # a bad pattern fails before any run is read
    pairs = with_progress(list(zip(runs, labels)), progress, "reading")
    loaded = [as_run(r, name=n, format=run_format, column=column) for r, n in pairs]
    made = build_pool(loaded, depth, chosen, labels)
    query_texts, doc_texts, text_inputs, text_notes = pool_texts(made, queries, corpus, trust_pickle)
    manifest = build_manifest(
        None, [input_entry(f"run:{n}", r) for n, r in zip(labels, loaded)] + text_inputs,
        {"depth": depth, "group_by": group_by, "group_on": group_on if group_by else None, "groups": dict(zip(labels, chosen)),
         "blind": blind, "pool_size": made.size, "queries": len(made.query_ids)},
        seed=seed, command="pool",
    )
    notes = [f"{r.name}: {message}" for r in loaded for message in r.warnings] + coverage_notes(made, loaded) + text_notes
    text_files = [os.fspath(p) for p in (queries, corpus) if isinstance(p, (str, os.PathLike))]
    return PoolResult(pool=made, seed=seed, blind=blind, files=_paths_of(runs), notes=notes, manifest=manifest,
                      query_texts=query_texts, doc_texts=doc_texts, text_files=text_files)


def pool_texts(made: Pool, queries, corpus, trust_pickle: bool = False):
    """(query texts, document texts of the pooled documents, manifest entries, notes) from a query file or dict and a
    collection file or :class:`~evalkit.data.corpus.Corpus`; ``None`` for what was not given."""
    from evalkit.data.corpus import Corpus
    from evalkit.io.formats.collections import read_corpus, read_queries
    from evalkit.io.manifest import input_entry

    inputs, notes = [], []
    query_texts = doc_texts = None
    if queries is not None:
        if isinstance(queries, (str, os.PathLike)):
            read = read_queries(queries)
            inputs.append(input_entry("queries", read.source or os.fspath(queries)))
            queries = read.as_dict()
        query_texts = {str(k): str(v) for k, v in dict(queries).items()}
        missing = [q for q in made.query_ids.tolist() if q not in query_texts]
        if missing:
            notes.append(f"{len(missing):,} of the {len(made.query_ids):,} pooled queries have no text in the queries given "
                         f"(e.g. {missing[0]!r}): their query_text cells are empty")
    if corpus is not None:
        if not isinstance(corpus, Corpus):
            path = corpus
            corpus = read_corpus(path, trust_pickle=trust_pickle)
            inputs.append(input_entry("corpus", corpus.source or os.fspath(path)))
        position = corpus.position()
        doc_texts = {d: corpus.text(position[d]) for d in made.doc_ids.tolist() if d in position}
        missing_docs = len(made.doc_ids) - len(doc_texts)
        if missing_docs:
            notes.append(f"{missing_docs:,} of the {len(made.doc_ids):,} pooled documents are not in the collection: their doc_text "
                         "cells are empty (runs of another collection?)")
    return query_texts, doc_texts, inputs, notes


# ----------------------------------------------------------------- reuse
@dataclass(frozen=True, eq=False)
class ReuseResult:
    """The leave-one-group-out test (:mod:`evalkit.judging.reuse`), its policy lines and manifest."""

    reuse: "Reuse"
    policy: list[str]
    notes: list[str]
    manifest: dict[str, Any] = field(repr=False)
    files: list[str | None] = field(default_factory=list, repr=False)  # the inputs' files (never overwritten)

    def to_pandas(self) -> "pd.DataFrame":
        """One row per run: group, full and reduced value, change, full and reduced rank, rank change."""
        from evalkit.core.errors import require

        pd = require("pandas", "ReuseResult.to_pandas() (a DataFrame)")

        rows = [
            {"run": r.run, "group": g.group, "full": r.full, "reduced": r.reduced, "change": r.change, "full_rank": r.full_rank,
             "reduced_rank": r.reduced_rank, "rank_change": r.rank_change}
            for g in self.reuse.groups for r in g.runs
        ]
        return pd.DataFrame(rows).set_index("run")

    def groups_frame(self) -> "pd.DataFrame":
        """One row per group: unique pairs, judgments removed, worst change, Kendall's tau and tau_AP."""
        from evalkit.core.errors import require

        pd = require("pandas", "ReuseResult.groups_frame() (a DataFrame)")

        rows = [
            {"group": g.group, "runs": len(g.runs), "unique_pairs": g.unique_pairs, "removed": g.removed,
             "removed_relevant": g.removed_relevant, "largest_drop": g.largest_drop, "most_places_lost": g.most_places_lost,
             "kendall_tau": g.kendall_tau, "tau_ap": g.tau_ap, "tau_ap_variant": g.tau_ap_variant}
            for g in self.reuse.groups
        ]
        return pd.DataFrame(rows).set_index("group")

    def save(self, out: str | os.PathLike, *, force: bool = False) -> list[Path]:
        """Write the report (``.md`` or ``.json``) and its figure ``STEM.reuse.png`` beside it; returns the paths written."""
        from evalkit.report.reuse_output import write_reuse

        return write_reuse(self, out, force=force)


def reuse(
    gold: "QrelsLike",
    *runs: "RunLike",
    depth: int,
    group_by: str | None = None,
    group_on: str = "name",
    groups: Sequence[str] | None = None,
    names: Sequence[str] | None = None,
    metric: str | None = None,
    scoring: "ScoringOptions | None" = None,
    progress: bool = False,
    **options: Any,
) -> ReuseResult:
    """Leave each group out of the depth-``depth`` pool of ``runs`` and rescore its runs on ``gold`` without its unique documents.

    The task's official score is compared (or ``metric``); every run is scored
    on the same gold queries under one missing-query policy, as ``compare``
    does. The scoring choices are ``scoring`` and/or its fields as keywords
    (``task``, ``missing``, ``relevance_level``, ``allow_partial``, formats;
    ``depth`` there would cut the rankings scored, and ``metrics`` is ``metric``).
    """
    from evalkit.api import score_many
    from evalkit.io.reading import input_entry
    from evalkit.scoring.runset import check_task_name, paths_of as _paths_of, run_names as _run_names
    from evalkit.judging.reuse import leave_one_group_out
    from evalkit.io.manifest import build_manifest
    from evalkit.metrics import parse_metric
    from evalkit.core.options import ScoringOptions

    depth = check_depth(depth)
    chosen_options = ScoringOptions.of(scoring, **options)
    if chosen_options.metrics:
        raise UsageError("the reuse test compares one value per run: give metric=, not metrics=")
    if getattr(chosen_options, "zscores", None) or getattr(chosen_options, "judgment_groups", False):
        raise UsageError("the reuse test removes judgments from one gold: z-scores and judgment groups do not apply")
    check_task_name(chosen_options.task)
    if len(runs) < 2:
        raise UsageError(f"the reuse test needs at least two runs (got {len(runs)})")
    label = parse_metric(metric).label if metric else None
    labels = _run_names(runs, names)
    chosen = resolve_groups(runs, labels, groups, group_by, group_on)
    if len(set(chosen)) < 2:
        raise UsageError(f"the reuse test needs runs of at least two groups (every run is in group {chosen[0]!r})")
    the_task, qrels, scored = score_many(gold, runs, [label] if label else None, names=labels, scoring=chosen_options,
                                         progress=progress)
    found = leave_one_group_out(the_task, qrels, scored, chosen, depth, metric=label, scoring=chosen_options)
    manifest = build_manifest(
        the_task.name, [input_entry("gold", qrels)] + [input_entry(f"run:{s.name}", s.run) for s in scored],
        {"depth": depth, "metric": found.metric, "group_by": group_by, "group_on": group_on if group_by else None,
         "groups": dict(zip(labels, chosen)), "scoring": chosen_options.manifest(scored[0].score.missing)},
        command="reuse",
    )
    notes = [note for s in scored for note in s.notes] + found.notes
    return ReuseResult(reuse=found, policy=scored[0].score.policy_lines(), notes=notes, manifest=manifest,
                       files=[*_paths_of(runs), os.fspath(gold) if isinstance(gold, (str, os.PathLike)) else None])
