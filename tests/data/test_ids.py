"""evalkit.data.ids and the compiled id table: the kernel and the pure-Python fallback give identical codes and positions."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from evalkit.data import ids
from evalkit.native import kernels

TRICKY = ["", "a", "a\x00", "a\x00\x00", "12345678", "123456789", "12345678X", "12345679X", "ünïcödé", "日本語の文書", "x" * 300,
          "x" * 299 + "y", "MED-1", "MED-10", "d0", "D0", "d0 ", "\t"]


def random_ids(rng: np.random.Generator, n: int, distinct: int) -> list[str]:
    pool = [f"doc-{i:x}" * int(rng.integers(1, 4)) for i in range(distinct)] + TRICKY
    return [pool[i] for i in rng.integers(0, len(pool), size=n)]


@pytest.fixture(params=["compiled", "fallback"])
def kernel(request, monkeypatch):
    if request.param == "compiled" and not kernels.COMPILED:
        pytest.skip("evalkit.native._native was not built (no C compiler at install time)")
    if request.param == "fallback":
        monkeypatch.setattr(kernels, "native", None)
    return request.param


@pytest.mark.parametrize("n, distinct", [(0, 1), (1, 1), (50, 5), (20_000, 300), (200_000, 150_000)])
def test_factorize_arrow_codes_in_first_seen_order(n, distinct):
    values = random_ids(np.random.default_rng(n), n, distinct)
    codes, uniques = ids.factorize_arrow(pa.array(values, type=pa.string()))
    expected_codes, expected_uniques = ids.factorize(values)
    assert codes.dtype == np.int64 and uniques.dtype == object
    assert codes.tolist() == expected_codes.tolist() and uniques.tolist() == expected_uniques.tolist()


def test_factorize_arrow_on_a_slice():
    values = random_ids(np.random.default_rng(7), 5_000, 700)
    sliced = pa.array(["skipped"] * 13 + values, type=pa.string()).slice(13)  # offsets not starting at 0
    expected = ids.factorize(values)
    codes, uniques = ids.factorize_arrow(sliced)
    assert codes.tolist() == expected[0].tolist() and uniques.tolist() == expected[1].tolist()


def coded_by_the_reader(values: list[str]) -> tuple[list[int], list[str]]:
    """The compiled reader's codes of ``values`` written one a line (``ID 1``): its id table at work."""
    data = "".join(f"{v} 1\n" for v in values).encode()
    [(codes, uniques)], numbers, _, _ = kernels.read_table(data, 2, False, (0,), 1)
    assert numbers.tolist() == [1.0] * len(values)
    return codes.tolist(), uniques


needs_native = pytest.mark.skipif(not kernels.COMPILED, reason="evalkit.native._native was not built (no C compiler at install time)")
SPLITTABLE = [t for t in TRICKY if t and t.split() == [t]]  # ids a whitespace table can hold


@needs_native
@pytest.mark.parametrize("n, distinct", [(1, 1), (50, 5), (20_000, 300), (200_000, 150_000)])
def test_the_compiled_id_table_codes_in_first_seen_order(n, distinct, monkeypatch):
    values = [v for v in random_ids(np.random.default_rng(n), n, distinct) if v in SPLITTABLE or v.startswith("doc-")]
    expected_codes, expected_uniques = ids.factorize(values)
    for seed in (0, 1, 2**64 - 1):  # the codes never depend on the seed
        monkeypatch.setattr(kernels, "SEED", seed)
        assert coded_by_the_reader(values) == (expected_codes.tolist(), expected_uniques.tolist())


def test_positions_in(kernel):
    rng = np.random.default_rng(3)
    universe = np.array(sorted(set(random_ids(rng, 3_000, 2_000))), dtype=object)
    values = np.array(random_ids(rng, 60_000, 4_000), dtype=object)
    index = {v: i for i, v in enumerate(universe.tolist())}
    assert ids.positions_in(values, universe).tolist() == [index.get(v, -1) for v in values.tolist()]
    assert ids.positions_in(values[:0], universe).tolist() == []
    assert ids.positions_in(values[:5], universe[:0]).tolist() == [-1] * 5


def test_positions_in_ids_that_are_not_str(kernel):
    universe = np.array(["1", 2, "\ud800"], dtype=object)  # an int and a lone surrogate: the dict decides
    values = np.array([2, "1", "\ud800", "2"], dtype=object)
    assert ids.positions_in(values, universe).tolist() == [1, 0, 2, -1]


@needs_native
@pytest.mark.parametrize("prefix", ["prefix__", "a_prefix_of_16_b", "a_prefix_longer_than_16_bytes_"])
def test_many_ids_sharing_prefixes_and_hash_bits(prefix):
    """Ids equal in their first 8 or 16 bytes and of equal length only differ past the inline prefix."""
    values = [f"{prefix}{i:07d}" for i in range(30_000)] * 2
    codes, uniques = coded_by_the_reader(values)
    assert codes == list(range(30_000)) * 2 and uniques == values[:30_000]


def test_member_of_is_linear_and_exact():
    values = np.array([f"q{i}" for i in range(60_000)] + [1, None], dtype=object)
    universe = np.array([f"q{i}" for i in range(0, 60_000, 2)] + ["q2", 1], dtype=object)  # a repeat, an int
    got = ids.member_of(values, universe)
    assert got.tolist() == [i % 2 == 0 for i in range(60_000)] + [True, False]
