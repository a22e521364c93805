"""Coding string ids as integers: the one home of id factorizing and id lookup.

* :func:`factorize` -- codes of Python strings in first-seen order.
* :func:`factorize_arrow` -- the same for a pyarrow string column (the pyarrow
  reader's query or document ids, where the compiled reader was not built).
* :func:`positions_in` -- each id's index in a unique array (a run's document
  ids among the judged ones), -1 when absent.

The compiled reader of :mod:`evalkit.native._native` codes a TREC file's ids as it
reads them (``evalkit/native/csrc/reader.c``) and :func:`positions_in` uses its
id table too (a hash table probed in batches with prefetching, seeded per
process against crafted collisions; :data:`evalkit.native.kernels.COMPILED` says
whether it was built). Every path gives identical codes: first-seen order,
byte-wise equality.
"""
from __future__ import annotations

import itertools
from typing import Hashable, Iterable

import numpy as np

from evalkit.native import kernels



def factorize(values: Iterable[Hashable]) -> tuple[np.ndarray, np.ndarray]:
    """Codes (int64) and unique values (object array) in first-seen order.

    ``dict.fromkeys`` keeps first-seen order and a ``map`` over a dict lookup
    codes the values, both loops in C rather than a Python generator.
    """
    if not isinstance(values, (list, tuple)):
        values = list(values)
    unique = list(dict.fromkeys(values))
    lookup = dict(zip(unique, range(len(unique))))
    codes = np.fromiter(map(lookup.__getitem__, values), dtype=np.int64, count=len(values))
    return codes, object_array(unique)


class ArrowColumnCoder:
    """Codes a pyarrow string column given chunk by chunk (a streamed reader's blocks), first-seen order.

    ``add(chunk)`` keeps one chunk; ``finish()`` gives the codes of every row
    (int64) and the distinct values (object array of str) in code order
    (pyarrow's ``dictionary_encode``, which codes in first-seen order).
    """

    def __init__(self) -> None:
        self._chunks: list = []

    def add(self, chunk) -> None:
        """Keep one ``string`` chunk (no nulls)."""
        self._chunks.append(chunk)

    def finish(self) -> tuple[np.ndarray, np.ndarray]:
        """(codes of every row added, unique values)."""
        import pyarrow as pa

        chunks = self._chunks or [pa.array([], type=pa.string())]
        column = chunks[0] if len(chunks) == 1 else pa.chunked_array(chunks, type=pa.string()).combine_chunks()
        encoded = column.dictionary_encode()
        return arrow_to_numpy(encoded.indices, np.int32).astype(np.int64), object_array(encoded.dictionary.to_pylist())


def factorize_arrow(strings) -> tuple[np.ndarray, np.ndarray]:
    """Codes (int64) and unique values (object array of str) of a pyarrow ``string`` Array or ChunkedArray, first-seen order."""
    import pyarrow as pa

    coder = ArrowColumnCoder()
    for chunk in strings.chunks if isinstance(strings, pa.ChunkedArray) else [strings]:
        coder.add(chunk)
    return coder.finish()


def positions_in(values: np.ndarray, universe: np.ndarray) -> np.ndarray:
    """For each value, its index in the unique array ``universe``; -1 when absent.

    Compiled where the kernel was built and every id is a ``str``; else a ``dict`` lookup (the pure-Python twin).
    """
    values_list, universe_list = values.tolist(), universe.tolist()
    found = kernels.positions(values_list, universe_list)
    if found is not None:
        return found
    index = dict(zip(universe_list, range(len(universe_list))))
    return np.fromiter(map(index.get, values_list, itertools.repeat(-1)), dtype=np.int64, count=len(values_list))


def arrow_to_numpy(array, dtype, copy: bool = True) -> np.ndarray:
    """A null-free fixed-width pyarrow Array as numpy, without pyarrow's pandas shim (slow import).

    ``copy=False`` gives a read-only view that keeps the Arrow buffer alive (no copy of millions of scores).
    """
    buffer = array.buffers()[1]
    itemsize = np.dtype(dtype).itemsize
    view = np.frombuffer(buffer, dtype=dtype, count=len(array), offset=array.offset * itemsize)
    return view.copy() if copy else view


def member_of(values, universe) -> np.ndarray:
    """For each value, whether it is in ``universe`` (ids, any order, repeats allowed): a hashed lookup.

    ``np.isin`` on object arrays compares every value with every id (numpy cannot sort objects): 50,000
    gold queries took minutes; this is linear.
    """
    unique = object_array(list(dict.fromkeys(np.asarray(universe, dtype=object).tolist())))
    return positions_in(np.asarray(values, dtype=object), unique) >= 0


def object_array(items: list) -> np.ndarray:
    """``items`` as a 1-d object array (never a 2-d one, whatever the items are)."""
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out
