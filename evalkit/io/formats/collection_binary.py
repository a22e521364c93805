"""Binary collection tables: ``pickle`` (the official CheckThat! 4b collection) and ``parquet``.

Columns are found as in delimited tables (:func:`evalkit.io.formats.collections.canonical`).
Unpickling runs code from the file, so a pickle is read only with ``trust_pickle=True``
(``--trust-pickle``).
"""
from __future__ import annotations

from typing import Iterator, Mapping

from evalkit.data import Source
from evalkit.core.errors import InputError, UsageError
from evalkit.io.formats.collections import Probe, Record, canonical, register_collection
from evalkit.io.manifest import sha256_of


def _pickle_records(path: str, trust_pickle: bool, mapping: Mapping[str, str]) -> Iterator[Record]:
    if not trust_pickle:
        raise UsageError(
            f"{path}: is a pickle; unpickling runs code from the file, so evalkit reads it only with --trust-pickle "
            "(use it only on files from a source you trust, e.g. the official CheckThat! 4b collection)"
        )
    from evalkit.core.errors import require

    pd = require("pandas", f"{path}: reading a pickled table")
    try:
        frame = pd.read_pickle(path)  # noqa: S301 - explicitly trusted by the user
    except Exception as exc:  # noqa: BLE001 - any unpickling failure is a bad input
        raise InputError(path, f"cannot read pickle ({type(exc).__name__}: {exc})") from None
    if not hasattr(frame, "to_dict"):
        raise InputError(path, f"pickle holds a {type(frame).__name__}, not a table")
    for position, row in enumerate(frame.reset_index(drop=True).to_dict("records"), start=1):
        yield position, canonical(row, mapping, path, position)


def _parquet_records(path: str, mapping: Mapping[str, str]) -> Iterator[Record]:
    from evalkit.core.errors import require

    require("pyarrow", f"{path}: reading Parquet")
    try:
        import pyarrow.parquet as pq

        table = pq.read_table(path)
    except Exception as exc:  # noqa: BLE001
        raise InputError(path, f"cannot read Parquet ({type(exc).__name__}: {exc})") from None
    for position, row in enumerate(table.to_pylist(), start=1):
        yield position, canonical(row, mapping, path, position)


def read_pickle(path: str, mapping: Mapping[str, str], trust_pickle: bool = False) -> tuple[Iterator[Record], Source]:
    return _pickle_records(path, trust_pickle, mapping), Source(path, "pickle", sha256_of(path))


def read_parquet(path: str, mapping: Mapping[str, str], trust_pickle: bool = False) -> tuple[Iterator[Record], Source]:
    return _parquet_records(path, mapping), Source(path, "parquet", sha256_of(path))


def sniff_pickle(probe: Probe) -> bool:
    return probe.name.endswith((".pkl", ".pickle")) or probe.head[:1] == b"\x80"


def sniff_parquet(probe: Probe) -> bool:
    return probe.name.endswith(".parquet") or probe.head[:4] == b"PAR1"


PICKLE = register_collection("pickle", "pickled pandas DataFrame (CheckThat! 4b collection; only with --trust-pickle)", sniff_pickle, read_pickle)
PARQUET = register_collection("parquet", "Parquet table, columns by their usual names or --map FIELD=COLUMN", sniff_parquet, read_parquet)
