"""The linter's frame: rules registered by id, the bundle as the unpacker sees it, one problem per line
(see :mod:`evalkit.competition.lint`)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, TypeGuard

from evalkit.competition import codabench
from evalkit.competition.archive import Archive
from evalkit.core.errors import EvalkitError

RULES: dict[str, str] = {}  # rule id -> what it checks (and where Codabench does it)
_CHECKS: list[Callable[["Bundle"], None]] = []
TEXT_LIMIT = 16 << 20  # a page or terms file read by the linter


def rule(rule_id: str, description: str) -> str:
    RULES[rule_id] = description
    return rule_id


def check(function: Callable[["Bundle"], None]) -> Callable[["Bundle"], None]:
    _CHECKS.append(function)
    return function


@dataclass(frozen=True)
class Problem:
    rule: str
    where: str  # the YAML path (``leaderboards[0].columns[2].key``) or a file of the bundle
    message: str
    severity: str = "error"  # "warning": reported, not counted

    def line(self) -> str:
        prefix = "warning: " if self.severity == "warning" else ""
        return f"{prefix}{self.where}: {self.message} [{self.rule}]"


@dataclass
class Bundle:
    """A bundle as the unpacker sees it, and the problems found so far."""

    archive: Archive
    yaml: dict
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what the bundle does, for the organiser (not problems)

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def add(self, rule_id: str, where: str, message: str, severity: str = "error") -> None:
        assert rule_id in RULES, rule_id
        self.problems.append(Problem(rule_id, where, message, severity))

    def file(self, reference: Any) -> str | None:
        """The bundle member a YAML path names (a file or a folder), or ``None`` when the bundle has none."""
        if not isinstance(reference, str) or not reference:
            return None
        name = codabench.bundle_path(reference)
        if name is None:
            return None
        return name if self.archive.is_file(name) or (name and self.archive.is_folder(name)) else None

    def text(self, name: str, where: str, rule_id: str) -> str | None:
        """A page or terms file as the unpacker reads it (text, UTF-8); ``None`` with a problem when it cannot be."""
        if not self.archive.is_file(name):
            self.add(rule_id, where, f"{name} is a folder, not a file")
            return None
        try:
            return self.archive.read(name, TEXT_LIMIT).decode("utf-8")
        except UnicodeDecodeError:
            self.add(rule_id, where, f"{name} is not UTF-8 text (the unpacker reads it as text and fails)")
        except EvalkitError as exc:
            self.add(rule_id, where, exc.one_line())
        return None


def as_list(bundle: Bundle, key: str, rule_id: str | None) -> list:
    """The list ``key`` of competition.yaml (``[]`` when absent); another type is a problem of ``rule_id``."""
    value = bundle.yaml.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        if rule_id:
            bundle.add(rule_id, key, f"must be a list, not {type(value).__name__}")
        return []
    return value


def mapping_items(bundle: Bundle, key: str, rule_id: str | None = None) -> list[tuple[str, dict]]:
    """``(yaml path, item)`` of each mapping in the list ``key``; with ``rule_id``, anything else is its problem
    (only the rule owning the list reports, so a problem is never reported twice)."""
    items = []
    for i, item in enumerate(as_list(bundle, key, rule_id)):
        where = f"{key}[{i}]"
        if isinstance(item, dict):
            items.append((where, item))
        elif rule_id:
            bundle.add(rule_id, where, f"must be a mapping, not {type(item).__name__}")
    return items


def is_int(value: Any, minimum: int | None = 0) -> TypeGuard[int | str]:
    """An integer as a Django integer field takes it (a YAML int, or its text); never a bool."""
    if isinstance(value, bool):
        return False
    try:
        number = int(str(value).strip()) if isinstance(value, str) else value
    except ValueError:
        return False
    return isinstance(number, int) and (minimum is None or number >= minimum)
