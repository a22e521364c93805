"""One number rule, every reader: the same bytes give the same verdict and the same number (Python's ``float()``, to
the bit) in the pure-Python reader, the compiled table reader (one and two threads), the judged reading of a run's
bytes (``judge_run``), the judged reading from its file 1 MiB at a time (``judge_file``), pyarrow (the fast path of
an install without the compiled kernels), the in-memory API, and each reader a file's size selects.

The rule (:mod:`evalkit.core.input_rules`): an ASCII decimal ``[+-]digits[.digits][(e|E)[+-]digits]`` (``.5`` and ``5.`` too)
whose value ``float()`` gives finitely; an overflow to infinity is refused, an underflow is the 0 or subnormal that
``float()`` gives. Refused although ``float()`` or C's ``atof`` would read them: ``inf``/``nan`` in any spelling,
hex floats, underscores (``1_0``), other scripts' digits, surrounding text (``5%``, ``1,5``).

The forms are generated from a seed: many leading zeros before and after the point (up to 99,999), long mantissas,
exponents of many digits and with leading zeros, overflow and underflow at every boundary, subnormals, signs, the
exact midpoints of neighbouring doubles and their nearest neighbours, and the refused spellings, each also mutated by
one inserted, deleted or replaced byte.
"""
from __future__ import annotations

import math
import os
import random
import re
import struct

import numpy as np
import pytest

from evalkit.native import kernels
from evalkit.io.formats import tables
from evalkit.io.textio import LoadedFile
from evalkit.core.input_rules import ValueProblem, number, number_text

needs_native = pytest.mark.skipif(kernels.native is None, reason="evalkit.native._native was not built (no C compiler at install time)")

# the rule, written independently of evalkit.core.input_rules: what a file's number token must be (unambiguous: a token that
# fails is read once, never split in every way between two runs of digits)
RULE = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)

EDGES = [
    "1.7976931348623157e308", "1.7976931348623158e308", "1.7976931348623159e308", "179769313486231580793728971405303415"
    "0796766080000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "00000000000000000000000000000000000000000000000000000000000000000", "1e308", "1e309", "-1e309", "10e307", "0.1e309",
    "4.9406564584124654e-324", "4.9e-324", "5e-324", "2.4703282292062327e-324", "2.4703282292062328e-324", "3e-324",
    "2.2250738585072011e-308", "2.2250738585072012e-308", "2.2250738585072014e-308", "1e-320", "-1e-320", "1e-400",
    "-1e-400", "0e400", "-0e-400", "0.0", "-0", "+0", "-.0", "0.", "9007199254740993", "9007199254740992.5",
    "0.30000000000000004", "1e22", "1e23", "8.98846567431158e307", "1" + "0" * 308, "1" + "0" * 309, "0." + "0" * 323 + "5",
    "0." + "0" * 99_999 + "1e1000000", "0." + "0" * 99_990 + "1e100000", "0." + "0" * 99_999 + "1e99999",
    "0." + "0" * 99_999 + "1", "1" + "0" * 99_999 + "e-99999", "1" + "0" * 99_999 + "e-1000000", "0" * 99_999 + "1.5",
    "1e" + "0" * 50_000 + "5", "1e-" + "9" * 30, "1e+" + "9" * 30, "0e" + "9" * 30, "1" * 800, "0." + "1" * 800,
    "1.5e-0000000000000000000000000000007", "7.2057594037927933e16", "123456789012345678901234567890e-30",
]
REFUSED_SPELLINGS = [
    "inf", "-inf", "+inf", "Inf", "INF", "infinity", "-Infinity", "+INFINITY", "nan", "-nan", "+nan", "NaN", "NAN",
    "nan(1)", "snan", "1_0", "1_000.5", "1e1_0", "_1", "1_", "1__0", "0x10", "0X1p3", "0x1.8p1", "-0x1p-1074", "0b1",
    "0o7", "1j", "1d5", "1f", "1.5L", "١", "١٢.٥", "１", "1,5", "5%", "$5", "1e", "1e+", "1e-", "e5", ".e5", ".", "-",
    "+", "+-1", "--1", "-+1", "1-", "1.2.3", "1e5.0", "1e5e5", "..5", "5..", "N/A", "NA", "null", "None", "true",
    "\u0661", "½", "1\u00a0", "\u00a01", "1\u2028", "1\x85", "\u20061", "ⅷ", "0.5\x00", "",
]


def _digits(rng: random.Random, low: int, high: int) -> str:
    return "".join(rng.choice("0123456789") for _ in range(rng.randint(low, high)))


def _zeros(rng: random.Random) -> str:
    return "0" * rng.choice([0, 0, 0, 1, 2, 5, 17, 30, 300, 400])


def generated(rng: random.Random) -> str:
    """One decimal of random shape: sign, leading zeros and digits either side of the point, an exponent."""
    sign = rng.choice(["", "", "", "-", "+"])
    whole = _zeros(rng) + _digits(rng, 0, rng.choice([3, 19, 25, 40]))
    point = rng.random() < 0.7
    fraction = (_zeros(rng) + _digits(rng, 0, rng.choice([3, 17, 25, 40]))) if point else ""
    exponent = ""
    if rng.random() < 0.6:
        size = rng.choice([rng.randint(0, 30), rng.randint(280, 345), rng.randint(290, 420), rng.randint(0, 10**7), 10**rng.randint(6, 25)])
        exponent = rng.choice("eE") + rng.choice(["", "-", "+", "-"]) + "0" * rng.choice([0, 0, 1, 6, 40]) + str(size)
    if not whole and not fraction:
        whole = "0"
    return sign + whole + ("." if point else "") + fraction + exponent


def exact(rng: random.Random) -> list[str]:
    """A random double written several ways: repr, %.17g, %.20e, with zeros added either side, as an integer."""
    bits = rng.getrandbits(64) if rng.random() < 0.5 else struct.unpack("<Q", struct.pack("<d", rng.random() * 10.0 ** rng.randint(-320, 308)))[0]
    value = abs(struct.unpack("<d", struct.pack("<Q", bits))[0])
    if not math.isfinite(value):
        value = 1.5
    mantissa, _, power = f"{value:.16e}".partition("e")
    return [repr(value), f"{value:.17g}", f"{value:.20e}", f"{value:.25g}", f"-{value!r}", f"{mantissa}0000e{power}",
            f"00{mantissa}E{int(power):+05d}", f"{value:.3e}"]


def halfway(rng: random.Random) -> list[str]:
    """The exact decimal midpoint of two neighbouring doubles (a tie: rounds to the even one), and the decimals a unit
    of its 1,100th digit above and below (the hardest inputs of a correctly rounded conversion), near 1, among the
    subnormals and at the top of the range (where the midpoint above the largest double rounds to infinity)."""
    from decimal import Decimal, localcontext

    power = rng.choice([rng.randint(-30, 30), rng.randint(-1074, -1022), rng.randint(1000, 1023)])
    value = math.ldexp(1.0 + rng.random(), power) if power > -1022 else math.ldexp(rng.randint(1, 2**20), -1074)
    if not math.isfinite(value):
        value = 1.7976931348623157e308
    with localcontext() as context:
        context.prec = 2400
        after = Decimal(math.nextafter(value, math.inf)) if value < 1.7976931348623157e308 else Decimal(2) ** 1024
        middle = (Decimal(value) + after) / 2
        step = Decimal(10) ** (middle.adjusted() - 1100)
        return [f"{m:e}" for m in (middle, middle + step, middle - step)]


def mutated(rng: random.Random, form: str) -> str:
    """``form`` with one byte inserted, deleted or replaced (by a digit, a sign, a point, an exponent mark, a letter)."""
    at = rng.randint(0, len(form))
    byte = rng.choice("0123456789+-.eE_xpinfa")
    how = rng.randrange(3)
    if how == 0 or not form:
        return form[:at] + byte + form[at:]
    at = min(at, len(form) - 1)
    return form[:at] + ("" if how == 1 else byte) + form[at + 1:]


def number_forms(seed: int = 39, n: int = 3000) -> list[str]:
    """``n`` generated forms and the fixed ones (edges, refused spellings), each of those also mutated once."""
    rng = random.Random(seed)
    forms = list(EDGES) + list(REFUSED_SPELLINGS)
    while len(forms) < n:
        pick = rng.random()
        forms += exact(rng) if pick < 0.25 else halfway(rng) if pick < 0.3 else [generated(rng)]
    forms += [mutated(rng, f) for f in forms[: len(EDGES) + len(REFUSED_SPELLINGS)] if len(f) < 1000]
    forms += [mutated(rng, rng.choice(forms)) for _ in range(n // 5)]
    return forms


def expected(form: str) -> float | None:
    """The rule's verdict: Python's float() of a token the rule accepts and float() gives finitely, else ``None``."""
    if not RULE.fullmatch(form):
        return None
    value = float(form)
    return value if math.isfinite(value) else None


def bits(value: float) -> int:
    return struct.unpack("<q", struct.pack("<d", value))[0]


FORMS = number_forms()
# one field each: no ASCII blank (what the readers split on) and no NUL (which sends a file to the Python reader)
TOKENS = [f for f in FORMS if f and not any(c in f for c in " \t\n\r\x0b\x0c\x00")]
VALID = [f for f in TOKENS if expected(f) is not None]
REFUSED = [f for f in TOKENS if expected(f) is None]


def test_the_forms_cover_every_class():
    """Thousands of forms, both verdicts, the underflows, subnormals, overflows and huge exponents among them."""
    values = [expected(f) for f in VALID]
    assert len(FORMS) > 3000 and len(VALID) > 1500 and len(REFUSED) > 500
    assert any(v == 0 and f.strip("+-0.").lower().startswith(tuple("123456789")) for f, v in zip(VALID, values))  # underflow
    assert any(0 < abs(v) < 2.2250738585072014e-308 for v in values)  # subnormal
    assert any(f.startswith("1e") and "e1000" in f or len(f.partition("e")[2]) > 6 for f in VALID)
    assert sum(1 for f in TOKENS if RULE.fullmatch(f) and expected(f) is None) > 50  # overflows
    assert any(len(f) > 99_999 for f in VALID)
    assert sum(1 for f in VALID if len(f) > 1000 and "e" in f) > 100  # the midpoints and their neighbours


def test_the_rule_of_memory_is_the_rule_of_files():
    """values.number_text (files and in-memory text) and values.number: the rule, Python's float() to the bit; ASCII
    blanks around in-memory text stripped, as a file's fields are split."""
    for form in FORMS:
        want = expected(form)
        for text in (form, f" \t{form}\n"):
            try:
                got = number_text(text)
            except ValueProblem:
                got = None
            assert (got is None) == (want is None or "\x00" in form), form[:80]
            if got is not None:
                assert bits(got) == bits(want), form[:80]
            try:
                assert bits(number(text)) == bits(got)
            except ValueProblem:
                assert got is None


def _loaded(lines: list[str]) -> LoadedFile:
    return LoadedFile("forms.txt", ("\n".join(lines) + "\n").encode(), "0" * 64)


def _python_values(lines: list[str]) -> np.ndarray | None:
    try:
        return tables._python_whitespace(_loaded(lines), 2, False, (0,), 1, "score").values
    except Exception as problem:  # noqa: BLE001 - InputError is the only one expected; anything else fails below
        assert type(problem).__name__ == "InputError", problem
        return None


def test_the_python_reader_applies_the_rule():
    assert _python_values([f"q {f}" for f in VALID]).view(np.int64).tolist() == [bits(expected(f)) for f in VALID]
    for form in REFUSED:
        assert _python_values([f"q {form}"]) is None, form[:80]


@needs_native
@pytest.mark.parametrize("threads", [1, 2])
def test_the_compiled_table_reader_gives_pythons_floats(threads):
    """read_table (scores of a 256 KiB+ run, grades of a 256 KiB+ qrels): every valid form in one table, to the bit;
    each refused one declines (the Python reader then names its line)."""
    lines = [f"q{i} 0 d {f}" for i, f in enumerate(VALID)]
    found = kernels.read_table(("\n".join(lines) + "\n").encode(), 4, False, (0, 2), 3, threads=threads)
    assert found is not None
    assert found[1].view(np.int64).tolist() == [bits(expected(f)) for f in VALID]
    for form in REFUSED:
        assert kernels.read_table(f"q 0 d {form}\n".encode(), 4, False, (0, 2), 3, threads=threads) is None, form[:80]


def _order_run(forms: list[str]) -> tuple[bytes, tuple]:
    """Each form against its own float's repr, twice: in query ``a<i>`` the form's document ``a`` ranks first only if
    the form reads as more than the repr, in ``z<i>`` its document ``z`` ranks second only if less (ties rank the
    larger document id first): both as if equal means read as float() reads it."""
    lines, query_ids = [], []
    for i, form in enumerate(forms):
        reference = repr(expected(form)) if expected(form) is not None else "0"
        for side, doc in (("a", "a"), ("z", "z")):
            query_ids.append(f"{side}{i}")
            lines += [f"{side}{i} Q0 {doc} 1 {form} t", f"{side}{i} Q0 b 2 {reference} t"]
    doc_ids = ["a", "b", "z"]
    qidx = np.repeat(np.arange(len(query_ids), dtype=np.int64), 2)
    didx = np.array([0 if q.startswith("a") else 2 for q in query_ids for _ in (0, 1)], dtype=np.int64)
    didx[1::2] = 1
    return ("\n".join(lines) + "\n").encode(), (query_ids, qidx, didx, doc_ids)


def _as_equal(found: tuple, n: int) -> list[bool]:
    """From a judged result: per form, whether it ranked as its float's repr (the two ranks of _order_run)."""
    _, _, run_queries, _, _, hit_query, hit_rank, hit_row = found
    rank = {}
    for q, r, row in zip(np.asarray(hit_query).tolist(), np.asarray(hit_rank).tolist(), np.asarray(hit_row).tolist()):
        if row % 2 == 0:  # the form's own row (judgment rows alternate: the form's document, then b)
            rank[run_queries[q]] = r
    return [rank.get(f"a{i}") == 2 and rank.get(f"z{i}") == 1 for i in range(n)]


def _judge_bytes(data: bytes, gold: tuple, threads: int):
    return kernels.judge_run(data, gold[0], gold[1], gold[2], gold[3], threads=threads)


def _judge_path(path: str, gold: tuple, threads: int):
    fd = os.open(path, os.O_RDONLY)
    try:
        return kernels.judge_file(fd, os.fstat(fd).st_size, gold, threads)
    finally:
        os.close(fd)


@needs_native
@pytest.mark.parametrize("threads", [1, 2])
def test_the_judged_readings_of_bytes_and_of_files_rank_as_pythons_floats(tmp_path, threads):
    """judge_run (a small run scored against its gold) and judge_file (a 1 MiB+ run, 1 MiB a read: the 100,000-byte
    numbers straddle its reads): every valid form ranks exactly as its float's repr; each refused one declines."""
    longest = max(VALID, key=len)
    forms = [longest] + [f for f in VALID if f is not longest]
    data, gold = _order_run(forms)
    start = data.index(longest.encode())
    data = b"#" * ((1 << 20) - len(longest) // 2 - start - 1) + b"\n" + data  # the longest number straddles the first read
    assert data.index(longest.encode()) < 1 << 20 < data.index(longest.encode()) + len(longest) < len(data) // 2
    path = tmp_path / "run.trec"
    path.write_bytes(data)
    for found in (_judge_bytes(data, gold, threads), _judge_path(str(path), gold, threads)):
        assert found is not None
        equal = _as_equal(found if len(found) == 8 else kernels.judged_arrays(found), len(forms))
        assert all(equal), [f[:80] for f, ok in zip(forms, equal) if not ok][:5]
    for form in REFUSED:
        data, gold = _order_run([form])
        path.write_bytes(data)
        assert _judge_bytes(data, gold, threads) is None, form[:80]
        assert _judge_path(str(path), gold, threads) is None, form[:80]


def test_pyarrow_gives_pythons_floats_or_leaves_the_file_to_python():
    """The fast path of an install without the compiled kernels: the same floats, or ``None`` (the Python reader
    decides) for any refused form; never a number for a refused form."""
    pytest.importorskip("pyarrow")
    found = tables._arrow_whitespace(_loaded([f"q {f}" for f in VALID]), 2, False, (0,), 1)
    if found is not None:
        assert found.values.view(np.int64).tolist() == [bits(expected(f)) for f in VALID]
    for form in REFUSED:
        assert tables._arrow_whitespace(_loaded([f"q {form}", "q 1"]), 2, False, (0,), 1) is None, form[:80]


# --- through files: each reader a file's size (and the install) selects -------------------------------------------

ISSUE_CASE = "0." + "0" * 99_999 + "1e1000000"  # truly 1e900000: float() gives inf
FILE_REFUSED = [ISSUE_CASE, "0." + "0" * 400 + "1e1000", "1e400", "-1" + "0" * 400, "inf", "nan", "1_0", "0x1p3", "١",
                "1e", "+-1"]


class Spy:
    """Counts the calls of some kernels (which reader a file reached)."""

    def __init__(self, monkeypatch, *names: str):
        self.calls = dict.fromkeys(names, 0)
        for name in names:
            original = getattr(kernels, name)

            def counted(*args, _original=original, _name=name, **kwargs):
                self.calls[_name] += 1
                return _original(*args, **kwargs)

            monkeypatch.setattr(kernels, name, counted)


def _write(path, lines: list[str], pad_to: int = 0) -> str:
    data = ("\n".join(lines) + "\n").encode()
    if len(data) < pad_to:
        data = b"#" + b"c" * (pad_to - len(data)) + b"\n" + data  # a comment line: skipped by every reader
    path.write_bytes(data)
    return str(path)


SMALL = [f for f in VALID if len(f) < 60][:1500]
MEDIUM = [f for f in VALID if len(f) < 1000]
SIZES = {"small": 0, "256KiB": tables.FAST_PATH_BYTES, "1MiB": 1 << 20}


@pytest.mark.parametrize("install", ["compiled", "pyarrow", "python"])
@pytest.mark.parametrize("size", list(SIZES))
def test_scores_and_grades_read_from_files_are_pythons_floats(tmp_path, monkeypatch, install, size):
    """A run's scores and a qrels' grades, read by each reader a file's size and the install select: float() of
    each form, to the bit; the judged readings (small run: judge_run, 1 MiB+: judge_file) rank as the general run."""
    from evalkit.api import score
    from evalkit.io.reading import read_qrels, read_run
    from evalkit.io.prejudged import DeferredRun

    if install != "compiled":
        monkeypatch.setattr(kernels, "native", None)
        monkeypatch.setattr(kernels, "COMPILED", False, raising=False)
        if install == "python":
            monkeypatch.setattr(tables, "_arrow_whitespace", lambda *args: None)
        else:
            pytest.importorskip("pyarrow")
    forms = {"small": SMALL, "256KiB": MEDIUM, "1MiB": VALID}[size]
    spy = Spy(monkeypatch, "read_table", "judge_run", "judge_file")
    run = read_run(_write(tmp_path / "run.trec", [f"q{i} Q0 d 1 {f} t" for i, f in enumerate(forms)], SIZES[size]))
    qrels = read_qrels(_write(tmp_path / "qrels.txt", [f"q{i} 0 d {f}" for i, f in enumerate(forms)], SIZES[size]))
    want = [bits(expected(f)) for f in forms]
    assert run.scores.view(np.int64).tolist() == want and qrels.grades.view(np.int64).tolist() == want
    data, gold = _order_run(forms)
    run_path = tmp_path / "order.trec"
    run_path.write_bytes(b"#" + b"c" * max(0, SIZES[size] - len(data)) + b"\n" + data if size != "small" else data)
    qrels_path = _write(tmp_path / "order.qrels", [f"{q} 0 {gold[3][d]} {int(d != 1)}" for q, d in zip(np.repeat(gold[0], 2), gold[2])])
    order_qrels = read_qrels(qrels_path)
    judged, general = read_run(str(run_path), against=order_qrels), read_run(str(run_path))
    assert isinstance(judged, DeferredRun) == (install == "compiled")
    want_rr = [0.5 if q.startswith("a") else 1.0 for q in gold[0]]
    for a_run in (judged, general):
        result = score(a_run, order_qrels, task="trec", metrics="mrr@10")
        per_query = dict(zip(result.task_score.evaluation.query_ids.tolist(), result.task_score.evaluation.per_query["MRR@10"].tolist()))
        assert [per_query[q] for q in gold[0]] == want_rr
    assert len(data) < 1 << 20 or size == "1MiB"
    if install == "compiled":
        assert spy.calls["read_table"] >= (size != "small") * 2
        assert spy.calls["judge_file" if size == "1MiB" else "judge_run"] >= 1


@pytest.mark.parametrize("install", ["compiled", "python"])
@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("form", FILE_REFUSED, ids=lambda f: f[:12])
def test_a_refused_number_is_one_error_naming_its_line_on_every_path(tmp_path, monkeypatch, install, size, form):
    """The issue's case and its kin, as a score (general and judged readings) and as a grade: refused, the line named."""
    from evalkit.core.errors import InputError
    from evalkit.io.reading import read_qrels, read_run

    if install == "python":
        monkeypatch.setattr(kernels, "native", None)
        monkeypatch.setattr(kernels, "COMPILED", False, raising=False)
    qrels = read_qrels(_write(tmp_path / "good.qrels", ["q0 0 d 1", "q1 0 d 0"]))
    run_path = _write(tmp_path / "run.trec", ["q0 Q0 d 1 0.5 t", f"q1 Q0 d 1 {form} t"], SIZES[size])
    qrels_path = _write(tmp_path / "qrels.txt", ["q0 0 d 1", f"q1 0 d {form}"], SIZES[size])
    line = 2 + (SIZES[size] > 0)
    for read in (lambda: read_run(run_path), lambda: read_run(run_path, against=qrels), lambda: read_qrels(qrels_path)):
        with pytest.raises(InputError) as caught:
            read()
        message = str(caught.value)
        assert f":{line}:" in message and "not a" in message and "\n" not in message and len(message) < 400, message
