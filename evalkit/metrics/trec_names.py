"""trec_eval's ``-m`` language: measure families, their default parameters, nicknames and print order.

trec_eval reads ``-m name`` or ``-m name.params``: a family with cutoffs
(``P.5,10``), with parameter text (``ndcg.1=3,2=9``, ``utility.1,-1,0,0``),
or a nickname for a set of measures (``official``, ``all_trec``, ``set``,
``qrels_jg``). A bare family name means its default parameters (``P`` is
``P.5,10,15,20,30,100,200,500,1000``). It prints measures in one fixed order
(that of its ``measures.c``), whatever order ``-m`` gave them in, and each
family's cutoffs ascending. These tables are that language; :mod:`evalkit.metrics.parse`
turns the text into metrics.
"""
from __future__ import annotations

import re

CUTS = "5,10,15,20,30,100,200,500,1000"
LEVELS = ",".join(f"{i / 10:.2f}" for i in range(11))
R_MULTIPLES = "0.2,0.4,0.6,0.8,1.0,1.2,1.4,1.6,1.8,2.0"

# trec_eval 10's measures in its print order (measures.c), the preference measures left out
ORDER = (
    "runid num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank iprec_at_recall P relstring recall "
    "infAP gm_bpref Rprec_mult utility 11pt_avg binG G dcg ideal_dcg ndcg ndcg_rel Rndcg ndcg_cut map_cut relative_P "
    "success set_P set_relative_P set_recall set_map set_F num_nonrel_judged_ret map_avgjg P_avgjg Rprec_mult_avgjg "
    "yaap rbp rbp_resid unj"
).split()

# a bare family name stands for these parameters (trec_eval's defaults)
FAMILY_DEFAULTS = {
    "P": CUTS, "recall": CUTS, "relative_P": CUTS, "map_cut": CUTS, "ndcg_cut": CUTS, "P_avgjg": CUTS,
    "success": "1,5,10", "unj": "5,10,20", "iprec_at_recall": LEVELS, "Rprec_mult": R_MULTIPLES,
    "Rprec_mult_avgjg": R_MULTIPLES,
}
# bare names that mean something else in evalkit, ir_measures and ranx (P: precision of the whole list):
# read as trec_eval's families only where names are read as trec_eval reads them (expand_trec_eval)
EVALKIT_MEANING = ("P", "recall", "relative_P", "success")

_NICKNAMES = {
    "official": "runid num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank iprec_at_recall P",
    "all_trec": "runid num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank iprec_at_recall P relstring "
    "recall unj rbp rbp_resid infAP gm_bpref utility 11pt_avg ndcg relative_P Rprec_mult success map_cut ndcg_cut "
    "ndcg_rel Rndcg binG G set_P set_recall set_relative_P set_map set_F num_nonrel_judged_ret",
    "set": "runid num_q num_ret num_rel num_rel_ret utility set_P set_recall set_relative_P set_map set_F",
    "qrels_jg": "runid num_q map_avgjg P_avgjg Rprec_mult_avgjg",
}


def _explicit(names: str) -> str:
    return " ".join(f"{name}.{FAMILY_DEFAULTS[name]}" if name in FAMILY_DEFAULTS else name for name in names.split())


# each nickname as evalkit reads it; "trec_eval" is evalkit's older name for "official"
MEASURE_SETS = {name: _explicit(names) for name, names in _NICKNAMES.items()}
MEASURE_SETS["trec_eval"] = MEASURE_SETS["official"]

_SET_NAME = re.compile(r"(?<![\w.@-])(" + "|".join(MEASURE_SETS) + r")(?![\w.@(-])", re.I)
_ALWAYS = [name for name in FAMILY_DEFAULTS if name not in EVALKIT_MEANING]
_BARE_FAMILY = re.compile(r"(?<![\w.@(-])(" + "|".join(_ALWAYS) + r")(?![\w.@(-])", re.I)


def expand_sets(spec: str) -> str:
    """Nicknames (``all_trec``) to their measures; bare families that only trec_eval has (``ndcg_cut``) to their defaults."""
    spec = _SET_NAME.sub(lambda m: MEASURE_SETS[m.group(1).lower()], spec)
    return _BARE_FAMILY.sub(lambda m: f"{m.group(1)}.{FAMILY_DEFAULTS[next(n for n in _ALWAYS if n.lower() == m.group(1).lower())]}",
                            spec)


JUDGMENT_GROUP_MEASURES = ("runid", "num_q", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg")  # what trec_eval computes under -R qrels_jg
_BY_LOWER = {name.lower(): name for name in (*ORDER, *_NICKNAMES, "trec_eval")}


def check_trec_eval_names(names: list[str], judgment_groups: bool) -> None:
    """Refuse what trec_eval refuses among measure names it knows: a name in another case (its names are
    case-sensitive: ``p.5``), and under ``-R qrels_jg`` any measure but those it computes from judgment groups
    (``map`` there: "rel_info format not qrels"), or an ``_avgjg`` measure without judgment groups."""
    from evalkit.core.errors import UsageError, shown

    for token in names:
        name = token.partition(".")[0]
        known = _BY_LOWER.get(name.lower())
        if known is not None and known != name:
            raise UsageError(f"measure {shown(token)}: trec_eval's measure names are case-sensitive: write {known} "
                             "(or leave out --output trec_eval)")
        if judgment_groups and name not in JUDGMENT_GROUP_MEASURES:
            raise UsageError(f"measure {shown(token)}: with judgment groups (-R qrels_jg) trec_eval computes only "
                             f"{', '.join(JUDGMENT_GROUP_MEASURES)} (the qrels_jg set); it refuses {name} (rel_info format not qrels)")
        if not judgment_groups and name in JUDGMENT_GROUP_MEASURES[2:]:
            raise UsageError(f"measure {shown(token)}: {name} needs judgment groups (-R qrels_jg); trec_eval refuses it on plain qrels")


def expand_trec_eval(spec: str | list[str] | tuple[str, ...], judgment_groups: bool = False) -> list[str]:
    """Measure names read as trec_eval reads its ``-m`` arguments.

    Bare ``P``, ``recall``, ``relative_P`` and ``success`` are trec_eval's
    families (elsewhere they keep the meaning they have in evalkit,
    ir_measures and ranx: P, Recall, RelP, Success of the whole list), and
    a family's parameters are those of its first ``name.params`` argument,
    whether the family is named alone or through a nickname: ``-m all_trec
    -m relstring.20`` prints ``relstring_20`` only, ``-m P.5 -m P.10`` only
    ``P_5``, as trec_eval does. What trec_eval refuses among its own names
    is refused (:func:`check_trec_eval_names`).
    """
    tokens = [token for part in ([spec] if isinstance(spec, str) else list(spec)) for token in part.split()]
    given: dict[str, str] = {}
    for token in tokens:
        name, dot, params = token.partition(".")
        if dot and name in ORDER and name not in given:
            given[name] = params
    out: list[str] = []
    for token in tokens:
        names = _NICKNAMES[token].split() if token in _NICKNAMES else _NICKNAMES["official"].split() if token == "trec_eval" \
            else [token.partition(".")[0]] if token.partition(".")[0] in ORDER else [token]
        for name in names:
            if name in given:
                name = f"{name}.{given[name]}"
            elif name in FAMILY_DEFAULTS:
                name = f"{name}.{FAMILY_DEFAULTS[name]}"
            if name not in out:
                out.append(name)
    check_trec_eval_names(out, judgment_groups)
    return out


def dotted_specs(spec: str, names: dict[str, str]) -> str:
    """``ndcg.1=3,2=9`` to ``ndcg(1=3,2=9)`` for measures that take parameter text (``names``: name -> spec kind).

    trec_eval's parameter text has commas, which evalkit's lists split on;
    parentheses keep it whole. Pair measures (``ndcg``) take it only when it
    has an ``=`` (``ndcg.10`` stays evalkit's nDCG@10).
    """
    if not names:
        return spec
    pattern = re.compile(r"(?<![\w.@(-])(" + "|".join(map(re.escape, sorted(names, key=len, reverse=True))) + r")\.([^\s;()]+)", re.I)

    def rewrite(match: re.Match) -> str:
        name, text = match.group(1), match.group(2)
        if names[name.lower()] == "pairs" and "=" not in text:
            return match.group(0)
        return f"{name}({text})"

    return pattern.sub(rewrite, spec)


def c_atol(text: str) -> int:
    """C's ``atol``: the leading integer of ``text`` (``23.4`` -> 23, ``x`` -> 0), as trec_eval reads a cutoff."""
    match = re.match(r"\s*([+-]?[0-9]+)", text)
    return int(match.group(1)) if match else 0


_C_FLOAT = re.compile(r"\s*([+-]?)(?:(0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?)"
                      r"|((?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)|(inf(?:inity)?|nan)(?:\([0-9A-Za-z_]*\))?)", re.I)


def c_atof(text: str) -> float:
    """C's ``atof``: the leading number of ``text`` (``.5,`` -> 0.5, ``x`` -> 0.0), as trec_eval reads a parameter.

    As C reads it, ``nan``, ``inf`` and hexadecimal (``0x1p3``) are numbers too, and ``1e999`` is infinite: the
    declared ranges (:mod:`evalkit.metrics.parameters`) refuse what is not finite, never a silent 0.
    """
    match = _C_FLOAT.match(text)
    if not match:
        return 0.0
    sign, hexa, decimal, special = match.groups()
    if hexa:
        body = hexa if "p" in hexa.lower() else hexa + "p0"
        value = float.fromhex(body)
    else:
        value = float(decimal or special)
    return -value if sign == "-" else value


def c_number(text: str, metric: str, spec: str) -> float:
    """A parameter value of trec_eval's text, read as ``atof`` reads it when that is all the text holds and it is a
    decimal (``nan`` and ``inf`` too, which the declared ranges then refuse as not finite): a value with letters after
    the number (``3x``, which ``atof`` reads as 3), an empty one (``1,,0,0``, read as 0) or a hexadecimal one
    (``0x1p3``) is refused, as every number evalkit reads is an ASCII decimal (:mod:`evalkit.core.input_rules`)."""
    match = _C_FLOAT.match(text)
    if match is None or match.end() != len(text) or text[:1].isspace() or match.group(2):
        from evalkit.core.errors import shown
        from evalkit.metrics.parameters import ParameterError

        what = "a value is empty" if text == "" else f"{shown(text)} is not a number"
        raise ParameterError(f"metric {shown(f'{metric}({spec})')}: {what} (trec_eval's atof reads it as {c_atof(text):g})")
    return c_atof(text)


def c_values(spec: str, metric: str = "") -> list[float]:
    """trec_eval's comma-separated parameter values, each read with ``atof`` (:func:`c_number`)."""
    return [c_number(part, metric, spec) for part in spec.split(",")]


def order_key(name: str) -> int:
    """Where trec_eval prints a measure family (``len(ORDER)`` for names it does not have)."""
    try:
        return ORDER.index(name)
    except ValueError:
        return len(ORDER)
