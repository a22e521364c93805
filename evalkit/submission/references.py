"""What a submission is checked against: the queries of its split and the collection ids.

Query sets come from gold files (any format :func:`evalkit.io.reading.read_qrels`
reads), query files (a table with a ``post_id`` / ``claim_id`` / ``query_id``
column, BEIR ``queries.jsonl``) or plain lists (one id per line). A set is
named after the split in its file name (``train``, ``dev``, ``test``), else
after the file. Given several sets, the split of a submission is guessed from
its query ids (largest Jaccard overlap), so a file named ``_dev_`` that holds
the test queries is caught.

Collection ids come from the same kinds of files: the documents of gold files
(the 4b collection is exactly the union of the train and dev ``cord_uid``
values: 7,718 ids), a corpus JSONL, a table with a document id column, or a
plain list.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from evalkit.core.columns import REFERENCE_DOC_ID, REFERENCE_QUERY_ID
from evalkit.core.errors import InputError, UsageError, shown
from evalkit.submission.problems import Problems
from evalkit.io.textio import parse_json

SPLIT_TOKEN = re.compile(r"(?<![a-z])(train|training|dev|devel|development|val|valid|validation|test)(?![a-z])")
CANONICAL_SPLIT = {"training": "train", "devel": "dev", "development": "dev", "valid": "val", "validation": "val"}
MIN_GUESS_OVERLAP = 0.5  # Jaccard below this names no split


def split_in_name(path: str | os.PathLike) -> str | None:
    """The split a file name announces (``E5_HN_All__dev_TOP100.tsv`` -> ``dev``), if exactly one."""
    found = {CANONICAL_SPLIT.get(m, m) for m in SPLIT_TOKEN.findall(Path(path).name.lower())}
    return found.pop() if len(found) == 1 else None


@dataclass(frozen=True)
class Split:
    """The query ids of one split (train, dev, test, ...), in file order; not :class:`evalkit.data.corpus.Queries` (ids and texts)."""

    name: str
    path: str
    ids: tuple[str, ...]

    @property
    def id_set(self) -> frozenset[str]:
        cached = self.__dict__.get("_set")
        if cached is None:
            cached = frozenset(self.ids)
            object.__setattr__(self, "_set", cached)
        return cached


def _plain_ids(text: str, label: str) -> list[str]:
    ids = []
    for number, line in enumerate(text.split("\n"), start=1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 1:
            raise InputError(label, "expected one id per line (or a table with a known id column)", number)
        ids.append(parts[0])
    return ids


def _table_ids(text: str, label: str, columns: Sequence[str]) -> list[str] | None:
    """Ids from a headed TSV/CSV or JSONL; ``None`` when the file is neither."""
    from evalkit.io.formats.tables import read_delimited
    from evalkit.io.textio import LoadedFile

    first = text.lstrip().split("\n", 1)[0]
    if first.startswith("{"):
        ids = []
        for number, line in enumerate(text.split("\n"), start=1):
            if not line.strip():
                continue
            record = parse_json(line, label, number)
            key = next((c for c in columns if isinstance(record, dict) and c in record), None)
            if key is None:
                raise InputError(label, f"no id field (expected one of: {', '.join(columns)})", number)
            ids.append(str(record[key]))
        return ids
    delimiter = "\t" if "\t" in first else "," if "," in first else None
    if delimiter is None:
        return None
    header = [h.strip().lower() for h in first.split(delimiter)]
    column = next((c for c in columns if c in header), None)
    if column is None:
        return None
    loaded = LoadedFile(path=label, data=text.encode("utf-8"), sha256="")
    names, records = read_delimited(loaded, delimiter)
    index = [n.lower() for n in names].index(column)
    return [fields[index].strip() for _, fields in records if fields[index].strip()]


def read_ids(path: str | os.PathLike, kind: str) -> list[str]:
    """Query (``kind="query"``) or document ids from a gold, table, JSONL or plain id file."""
    from evalkit.io.formats import formats, sample_of
    from evalkit.io.reading import read_qrels
    from evalkit.io.textio import load

    loaded = load(path)
    sample = sample_of(loaded)
    if any(f.sniff(sample) for f in formats("qrels")):
        qrels = read_qrels(path)
        return [str(q) for q in qrels.query_ids] if kind == "query" else [str(d) for d in qrels.doc_ids]
    text = loaded.text()
    ids = _table_ids(text, loaded.label, REFERENCE_QUERY_ID if kind == "query" else REFERENCE_DOC_ID)
    if ids is None:
        ids = _plain_ids(text, loaded.label)
    if not ids:
        raise InputError(loaded.label, f"holds no {kind} ids")
    return ids


def load_splits(paths: Iterable[str | os.PathLike]) -> list[Split]:
    """One :class:`Split` per file, named after its split (or the file, if the name says none)."""
    sets = []
    for path in paths:
        ids = tuple(dict.fromkeys(read_ids(path, "query")))
        sets.append(Split(split_in_name(path) or Path(path).name, str(path), ids))
    names = [s.name for s in sets]
    return [s if names.count(s.name) == 1 else Split(Path(s.path).name, s.path, s.ids) for s in sets]


def load_collection_ids(paths: Iterable[str | os.PathLike]) -> tuple[frozenset[str], str]:
    """The union of the document ids of ``paths`` and a description for messages."""
    ids: set[str] = set()
    names = []
    for path in paths:
        ids.update(read_ids(path, "doc"))
        names.append(Path(path).name)
    return frozenset(ids), f"{len(ids):,} collection ids from {', '.join(names)}"


def jaccard(a: frozenset[str] | set[str], b: frozenset[str] | set[str]) -> float:
    union = len(a | b)
    return len(a & b) / union if union else 0.0


def guess_split(ids: set[str], candidates: Sequence[Split]) -> tuple[Split | None, float]:
    """The candidate whose query ids overlap ``ids`` most (Jaccard), if the overlap is convincing."""
    scored = sorted(((jaccard(ids, c.id_set), i) for i, c in enumerate(candidates)), reverse=True)
    if not scored or scored[0][0] < MIN_GUESS_OVERLAP:
        return None, scored[0][0] if scored else 0.0
    return candidates[scored[0][1]], scored[0][0]


def resolve_split(
    seen: dict[str, int], candidates: Sequence[Split], declared: str | None, path: str, problems: Problems
) -> Split | None:
    """Pick the split to check against and report a name or declaration that disagrees with the content.

    ``seen`` maps each query id of the submission to its line. With one
    candidate it is the expected split; with several, ``declared`` (``--split``)
    names it, else the guess from the query ids does.
    """
    if not candidates:
        return None
    ids = set(seen)
    guess, overlap = guess_split(ids, candidates)
    if guess is not None:
        problems.facts["guessed_split"] = guess.name
        problems.facts["overlap"] = f"{len(ids & guess.id_set)} of {len(guess.ids)} {guess.name} queries"
    by_name = {c.name: c for c in candidates}
    if declared is not None and declared not in by_name:
        raise UsageError(f"--split {declared!r} is not one of the given query sets ({', '.join(by_name)})")
    named = split_in_name(path)
    if declared is not None:
        expected: Split | None = by_name[declared]
        if guess is not None and guess is not expected:
            problems.error("wrong split", f"its query ids are the {guess.name} split ({problems.facts['overlap']}), not {declared} as declared")
    elif len(candidates) == 1:
        expected = candidates[0]
    else:
        expected = guess
        if expected is None:
            problems.error("wrong split", f"its query ids match none of the given splits ({', '.join(by_name)}; best overlap {overlap:.0%})")
    if named is not None and guess is not None and named != guess.name and named in by_name:
        problems.error("wrong split", f"the file name says {shown(named)} but its query ids are the {guess.name} split ({problems.facts['overlap']})")
    if expected is not None:
        problems.facts["split"] = expected.name
    return expected


def check_coverage(seen: dict[str, int], expected: Split | None, problems: Problems, what: str = "query") -> None:
    """Every query of ``expected`` exactly once and no others (duplicates are found while reading)."""
    if expected is None:
        return
    for query, line in seen.items():
        if query not in expected.id_set:
            problems.error("unknown query", f"{what} {shown(query)} is not in the {expected.name} split", line)
    for query in expected.ids:
        if query not in seen:
            problems.error("missing query", f"{what} {shown(query)} of the {expected.name} split is missing")
