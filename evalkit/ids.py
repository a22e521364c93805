"""Coding string ids as integers: the one home of id factorizing and id lookup.

* :func:`factorize` -- codes of Python strings in first-seen order.
* :func:`factorize_arrow` -- the same for a pyarrow string column (a reader's
  query or document ids: millions of rows).
* :func:`positions_in` -- each id's index in a unique array (a run's document
  ids among the judged ones), -1 when absent.

The two large-input functions use the compiled kernels of :mod:`evalkit._native`
(``evalkit/_native.c``, built by ``pip install``; a hash table probed in batches
with prefetching, seeded per process against crafted collisions) and fall back
to pyarrow's ``dictionary_encode`` and a ``dict`` where it was not built
(:data:`COMPILED` says which). Both give identical codes: first-seen order,
byte-wise equality.
"""
from __future__ import annotations

import itertools
import os
from typing import Iterable

import numpy as np

try:
    from evalkit import _native
except ImportError:  # no C compiler at install time: the pure-Python paths below
    _native = None

COMPILED = _native is not None
SEED = int.from_bytes(os.urandom(8), "little")  # per process, as Python's own str hashing


def factorize(values: Iterable[str]) -> tuple[np.ndarray, np.ndarray]:
    """Codes (int64) and unique values (object array) in first-seen order.

    ``dict.fromkeys`` keeps first-seen order and a ``map`` over a dict lookup
    codes the values, both loops in C (2.5x a Python generator).
    """
    if not isinstance(values, (list, tuple)):
        values = list(values)
    unique = list(dict.fromkeys(values))
    lookup = dict(zip(unique, range(len(unique))))
    codes = np.fromiter(map(lookup.__getitem__, values), dtype=np.int64, count=len(values))
    uniques = np.empty(len(unique), dtype=object)
    uniques[:] = unique
    return codes, uniques


def factorize_arrow(strings) -> tuple[np.ndarray, np.ndarray]:
    """Codes (int64) and unique values (object array of str) of a pyarrow ``string`` Array or ChunkedArray, first-seen order.

    5,000,000 document ids with 500,000 distinct: 0.1 s compiled, against
    0.45 s for ``dictionary_encode`` on this project's 2-core machine.
    """
    import pyarrow as pa

    chunks = strings.chunks if isinstance(strings, pa.ChunkedArray) else [strings]
    if _native is None or not pa.types.is_string(strings.type) or strings.null_count:
        encoded = (pa.chunked_array(chunks, type=strings.type).combine_chunks() if len(chunks) != 1 else chunks[0]).dictionary_encode()
        codes = _to_numpy(encoded.indices, np.int32).astype(np.int64)
        return codes, _object_array(encoded.dictionary.to_pylist())
    buffers = []
    for chunk in chunks:
        offsets = np.frombuffer(chunk.buffers()[1], dtype=np.int32, count=len(chunk) + 1, offset=chunk.offset * 4)
        data = chunk.buffers()[2]
        buffers.append((offsets, b"" if data is None else data))
    codes = np.empty(len(strings), dtype=np.int64)
    return codes, _object_array(_native.factorize(buffers, codes, SEED))


def positions_in(values: np.ndarray, universe: np.ndarray) -> np.ndarray:
    """For each value, its index in the unique array ``universe``; -1 when absent.

    500,000 run document ids against 200,000 judged ones: 0.04 s compiled,
    0.15 s with a ``dict`` (the fallback, and the path for ids that are not all ``str``).
    """
    values_list, universe_list = values.tolist(), universe.tolist()
    if _native is not None:
        out = np.empty(len(values_list), dtype=np.int64)
        try:
            _native.positions(values_list, universe_list, out, SEED)
            return out
        except (TypeError, UnicodeError):  # ids of other types, lone surrogates: the dict decides
            pass
    index = dict(zip(universe_list, range(len(universe_list))))
    return np.fromiter(map(index.get, values_list, itertools.repeat(-1)), dtype=np.int64, count=len(values_list))


def _object_array(items: list) -> np.ndarray:
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out


def _to_numpy(array, dtype) -> np.ndarray:
    from evalkit.data import arrow_to_numpy

    return arrow_to_numpy(array, dtype)
