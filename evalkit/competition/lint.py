"""``evalkit competition check``: a Codabench v2 bundle checked against the rules Codabench applies, and evalkit's.

Codabench reports the first problem of an upload on its error page, often
as "Unpacking the bundle failed" with a Python exception, or not at all
(a scores key matching no column is dropped silently; a leaderboard then
shows "n/a"). This linter reads the bundle as the unpacker does (the zip
extracted by name as ``extractall`` places members, ``competition.yaml``
read with ``safe_load``) and reports every problem, one line each, naming
the YAML path and the rule. Rules are registered by id (:data:`RULES`):
Codabench's own (unpacker, serializers, models: see
:mod:`evalkit.competition.codabench`) and evalkit's (a scoring program
with a command, the keys its scores use matching the columns).
"""
from __future__ import annotations

from evalkit.competition import codabench
from evalkit.competition import lint_top  # noqa: F401  (each rule module registers its rules, in this order)
from evalkit.competition import lint_board  # noqa: F401
from evalkit.competition import lint_evalkit  # noqa: F401
from evalkit.competition.archive import Archive
from evalkit.competition.lint_base import _CHECKS, RULES, TEXT_LIMIT, Bundle, Problem, rule
from evalkit.core.errors import EvalkitError


def all_rules() -> dict[str, str]:
    """Every rule id and what it checks."""
    return dict(RULES)


def lint_archive(archive: Archive, notes: list[str] | None = None) -> list[Problem]:
    """Every problem of the bundle in ``archive`` (its competition.yaml already at the root); what the bundle does
    (its submission rules...) appended to ``notes``."""
    import yaml

    try:
        text = archive.read(codabench.YAML_NAME, TEXT_LIMIT).decode("utf-8")
        parsed = yaml.safe_load(text)
    except UnicodeDecodeError:
        return [Problem(R_YAML, codabench.YAML_NAME, "is not UTF-8 text")]
    except yaml.YAMLError as exc:
        return [Problem(R_YAML, codabench.YAML_NAME, f"is not YAML ({' '.join(str(exc).split())})")]
    except EvalkitError as exc:
        return [Problem(R_YAML, codabench.YAML_NAME, exc.one_line())]
    if not isinstance(parsed, dict):
        return [Problem(R_YAML, codabench.YAML_NAME, "must be a YAML mapping (title: ..., tasks: ..., phases: ...)")]
    bundle = Bundle(archive, parsed)
    for function in _CHECKS:
        function(bundle)
    if notes is not None:
        notes.extend(bundle.notes)
    return bundle.problems


R_ZIP = rule("zip", "the bundle is a readable zip (unpack_competition: Bad zip file uploaded)")
R_YAML_AT_ROOT = rule("yaml-at-root", "competition.yaml is at the root of the zip, not in a folder (unpack_competition)")
R_YAML = rule("yaml", "competition.yaml is UTF-8 YAML holding a mapping (read with safe_load)")


def lint_bundle(path: str, notes: list[str] | None = None) -> list[Problem]:
    """Every problem of the bundle zip at ``path`` (an unreadable input file raises, as everywhere in evalkit); what the
    bundle does appended to ``notes`` (:func:`lint_archive`)."""
    from evalkit.core.errors import InputError
    from evalkit.io.textio import check_regular

    check_regular(path)
    try:
        archive = Archive.open(path)
    except InputError as exc:
        return [Problem(R_ZIP, str(path), exc.message)]
    try:
        if not archive.is_file(codabench.YAML_NAME):
            nested = sorted(n for n in archive.files if n.rsplit("/", 1)[-1] == codabench.YAML_NAME)
            hint = f" (found {nested[0]}: zip the folder's contents, not the folder)" if nested else ""
            return [Problem(R_YAML_AT_ROOT, codabench.YAML_NAME, f"is missing from the root of the zip{hint}")]
        return lint_archive(archive, notes)
    finally:
        archive.close()
