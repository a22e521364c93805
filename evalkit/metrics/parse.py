"""Turning the measure names people type into metrics.

One grammar covers the three spellings in use, all case-insensitive:

* evalkit / ranx / ir_measures: ``name``, ``name@k``, ``name(rel=2)``,
  ``name(rel=2)@k`` -- ``nDCG@10``, ``mrr@10``, ``RR(rel=2)``, ``IPrec@0.5``;
* trec_eval output names: ``name_k`` -- ``P_5``, ``ndcg_cut_10``,
  ``iprec_at_recall_0.10``;
* trec_eval ``-m`` arguments: ``name.k`` or ``name.k1,k2`` -- ``P.5,10``.

Each metric module registers its names (see :func:`evalkit.metrics.register`);
an unknown name is a :class:`~evalkit.core.errors.UsageError` listing close matches
(difflib), and a name that means different things in different tools is
refused with the choices spelled out.
"""
from __future__ import annotations

import re

from evalkit.core.errors import UsageError, shown
from evalkit.metrics import _RULES, Metric, known, registered
from evalkit.metrics.parameters import CUTOFFS, ParameterError
from evalkit.metrics.trec_names import c_atol, dotted_specs, expand_sets
from evalkit.core.input_rules import NUMBER

# linear: no two blank runs meet (``\s*(...)?\s*`` split one run of blanks in n ways)
_TOKEN = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9_.+\-]*?)\s*(?:\((?P<params>[^()]*)\)\s*)?(?:@\s*(?P<k>[^@()\s]+))?$")
_TREC_SUFFIX = re.compile(r"^(?P<base>[A-Za-z][A-Za-z0-9_\-]*?)_(?P<k>[0-9]+(?:\.[0-9]+)?)$")
_TREC_LIST = re.compile(r"(?<![\w\-.@(])(?P<base>[A-Za-z][A-Za-z0-9_\-]*)\.(?P<list>[+\-0-9.][^\s;()]*)")
_TREC_DOT = re.compile(r"^(?P<base>[A-Za-z][A-Za-z0-9_\-]*?)\.(?P<k>[^\s@()]+)$")
# a rank cutoff as trec_eval's atol reads it: digits (a leading +), a decimal fraction cut off (its own test suite
# writes ndcg_cut.23.4 for 23); never an exponent or letters after them (P.1e1 and P.5x, which atol reads as 1 and 5)
_RANK_TEXT = re.compile(r"\+?[0-9]{1,30}(?:\.[0-9]*)?\Z")

MAX_NAME, MAX_SPEC = 200, 20_000  # bounds on what is parsed (metric names also come from files: baselines, configs)

# Names that tools use for different things: refused, with the choices.
AMBIGUOUS = {
    "hits": "ranx 'hits@k' counts the relevant documents in the top k, elsewhere hits@k is the hit rate: "
    "write success@k (1 if any relevant document is in the top k) or num_rel_ret@k (how many)",
    "hit": "write success@k (hit rate: 1 if any relevant document is in the top k) or num_rel_ret@k (how many)",
}


def _kind(value) -> str:
    from evalkit.core.errors import shown

    return f"{type(value).__name__} {shown(value)}"


def _close_matches(name: str) -> str:
    import difflib

    names = sorted(set(known()) | set(AMBIGUOUS))
    close = difflib.get_close_matches(name.lower(), names, n=5, cutoff=0.6)
    if close:
        return "close matches: " + ", ".join(close)
    return "known: " + ", ".join(sorted(c.name for c in registered()))


def _number(text: str, what: str, token: str) -> float:
    from evalkit.core.input_rules import ValueProblem, number_text

    try:
        return number_text(text, what)  # the one number rule of every input
    except ValueProblem as problem:
        raise ParameterError(f"metric {token!r}: {problem}") from None


def _params(cls: type[Metric], text: str | None, token: str) -> dict:
    """The ``name=value`` parameters in parentheses, or (``spec_kind`` metrics) trec_eval's parameter text as ``spec``."""
    if text is None or not text.strip():
        return {}
    parts = [part for part in text.split(",") if part.strip()]
    named = all(part.partition("=")[0].strip() in cls.params for part in parts)
    if cls.spec_kind == "pairs" or (cls.spec_kind == "values" and not named):
        return {"spec": "".join(text.split())}
    out: dict[str, float] = {}
    for part in parts:
        key, sep, value = (p.strip() for p in part.partition("="))
        if not sep or not key:
            raise UsageError(f"metric {token!r}: write parameters as name=value, e.g. {cls.name}(rel=2)")
        if key not in cls.params:
            supported = ", ".join(cls.params) or "none"
            raise UsageError(f"metric {token!r}: parameter {key!r} is not supported by {cls.name} (supported: {supported})")
        out[key] = _number(value.strip("'\""), f"parameter {key}", token)
    return out


def _cutoff(cls: type[Metric], text: str, token: str) -> float:
    """The cutoff as a number (its range is the metric's declaration, :mod:`evalkit.metrics.parameters`)."""
    if cls.cutoff_kind == "rank":
        if not re.fullmatch(r"[+-]?[0-9]{1,30}", text):
            raise ParameterError(f"metric {token!r}: {CUTOFFS['rank'].rule_text()}")
        return int(text)
    return _number(text, "the multiple" if cls.cutoff_kind == "multiple" else "the recall level", token)


def _lookup(name: str) -> tuple[type[Metric], str] | None:
    key = name.lower()
    if key in AMBIGUOUS:
        raise UsageError(f"metric name {name!r} is ambiguous: {AMBIGUOUS[key]}")
    cls = known().get(key)
    return None if cls is None else (cls, _RULES.get(key, cls.cutoff))


def _split_name(name: str, k: str | None) -> tuple[type[Metric], str, str | None]:
    """(class, cutoff rule, cutoff text) for a bare name, a trec_eval ``name_k`` or ``name.k``.

    A rank cutoff in trec_eval's ``-m name.k`` form is read as trec_eval's
    ``atol`` reads it (``ndcg_cut.+30``; ``ndcg_cut.23.4`` is 23, as in
    trec_eval's own test suite); an exponent or letters after the digits
    (``P.1e1``, ``P.5x``, which ``atol`` reads as 1 and 5) are refused:
    surely not what was meant.
    """
    found = _lookup(name)
    if found:
        return found[0], found[1], k
    for pattern in (_TREC_SUFFIX, _TREC_DOT):
        match = pattern.match(name)
        if match and k is None:
            found = _lookup(match.group("base"))
            if found:
                text = match.group("k")
                if pattern is _TREC_DOT and found[0].cutoff_kind == "rank":
                    text = _trec_rank(match.group("base"), text)
                return found[0], found[1], text
    raise UsageError(f"unknown metric {name!r} ({_close_matches(name)}; see `evalkit metrics`)")


def _trec_rank(base: str, text: str) -> str:
    """A rank cutoff of trec_eval's ``name.k`` as ``atol`` reads it (:data:`_RANK_TEXT`); anything else refused,
    naming what ``atol`` would have read."""
    if _RANK_TEXT.match(text):
        return str(c_atol(text))
    read = c_atol(text)
    raise ParameterError(f"metric {shown(base + '.' + text)}: the cutoff {shown(text)} is not a number of documents "
                         f"(trec_eval's atol reads it as {read}; write {base}.{read} if that is meant)")


def _expand_list(match: re.Match) -> str:
    """trec_eval's ``name.k1,k2`` to ``name.k1 name.k2`` (validated as trec_eval validates it); other text unchanged.

    An empty cutoff (``P.5,`` at the end of the text, ``P.5,,10``) and a repeated one (``P.5,5``) are refused,
    as trec_eval refuses them ("Negative cutoff detected", "duplicate cutoffs detected").
    """
    base, text = match.group("base"), match.group("list")
    found = _lookup(base) if "," in text else None
    if found is None or found[1] == "none":
        return match.group(0)
    pieces = text.split(",")
    numeric = 0
    while numeric < len(pieces) and (pieces[numeric] == "" or pieces[numeric][0] in "+-0123456789."):
        numeric += 1
    cutoffs, rest = pieces[:numeric], pieces[numeric:]
    while cutoffs and cutoffs[-1] == "" and (rest or match.end() < len(match.string)):
        cutoffs.pop()  # a separator of evalkit's list ("P.5, ndcg@10"), not an empty cutoff
    token = f"{base}.{text}"
    if "" in cutoffs:
        how = "refuses it: 'Negative cutoff detected'" if found[0].cutoff_kind == "rank" else "reads it as 0"
        raise ParameterError(f"metric {shown(token)}: an empty cutoff in the list (trec_eval {how})")
    seen: dict[float | str, str] = {}
    for piece in cutoffs:
        key: float | str = piece
        if found[0].cutoff_kind == "rank" and _RANK_TEXT.match(piece):
            key = float(c_atol(piece))
        elif NUMBER.match(piece):
            key = float(piece)
        if key in seen:
            raise ParameterError(f"metric {shown(token)}: the cutoff {piece} is given twice (trec_eval refuses duplicate cutoffs)")
        seen[key] = piece
    return " ".join([f"{base}.{piece}" for piece in cutoffs] + [",".join(rest)] * bool(rest))


def parse_metric(text: str) -> Metric:
    """``"mrr@5"`` -> ``MRR@5``, ``"P_5"`` -> ``P@5``, ``"RR(rel=2)"`` -> ``MRR(rel=2)``.

    Raises :class:`UsageError` on unknown or ambiguous names, bad cutoffs and unsupported parameters.
    """
    if not isinstance(text, str):
        raise UsageError(f"a metric is a name such as 'mrr@5', not {_kind(text)}")
    token = text.strip()
    if len(token) > MAX_NAME:
        raise UsageError(f"metric name {token[:40]!r}... is longer than {MAX_NAME} characters")
    match = _TOKEN.match(token)
    if not match:
        raise UsageError(f"cannot read metric {token!r} (write it as name, name@k or name(rel=2)@k, e.g. mrr@5)")
    cls, rule, k = _split_name(match.group("name"), match.group("k"))
    params = _params(cls, match.group("params"), token)
    if k is None:
        if rule == "required":
            raise UsageError(f"metric {token} needs a cutoff, e.g. {cls.name}@{'10' if cls.cutoff_kind == 'rank' else '0.5'}")
        return cls(**params)
    if rule == "none":
        raise UsageError(f"metric {cls.name} takes no cutoff" + (f" ({token!r})" if token.lower() != cls.name.lower() else ""))
    return cls(_cutoff(cls, k, token), **params)


def _tokens(spec: str) -> list[str]:
    """Split on blanks, commas and semicolons outside parentheses; ``P.5,10`` becomes ``P.5 P.10``.

    A measure-set name (trec_eval's nicknames: ``official`` or ``trec_eval``,
    ``all_trec``, ``set``, ``qrels_jg``) stands for its measures, a family
    only trec_eval has (``ndcg_cut``, ``map_cut``, ``iprec_at_recall``,
    ``unj``, ``Rprec_mult``) for its default cutoffs, and trec_eval's
    parameter text (``ndcg.1=3,2=9``) stays whole.
    """
    spec = dotted_specs(expand_sets(spec), {name: cls.spec_kind for name, cls in known().items() if cls.spec_kind})
    spec = _TREC_LIST.sub(_expand_list, spec)
    tokens, current, depth = [], "", 0
    for char in spec:
        depth += (char == "(") - (char == ")")
        if depth == 0 and (char.isspace() or char in ",;"):
            if current:
                tokens.append(current)
            current = ""
        else:
            current += char
    if current:
        tokens.append(current)
    return tokens


def parse_metrics(spec: str | list[str] | tuple[str, ...]) -> list[Metric]:
    """Parse a space- or comma-separated list (or a list of such strings); duplicates dropped."""
    parts = [spec] if isinstance(spec, str) else list(spec) if isinstance(spec, (list, tuple)) else None
    if parts is None or not all(isinstance(part, str) for part in parts):
        bad = spec if parts is None else next(part for part in parts if not isinstance(part, str))
        raise UsageError(f"metrics are names such as 'ndcg@10 mrr@10' (a string, or a list of strings), not {_kind(bad)}")
    if sum(len(part) for part in parts) > MAX_SPEC:
        raise UsageError(f"the metric list is longer than {MAX_SPEC} characters")
    tokens = [t for part in parts for t in _tokens(part)]
    if not tokens:
        raise UsageError("no metric given")
    return list(dict.fromkeys(parse_metric(t) for t in tokens))
