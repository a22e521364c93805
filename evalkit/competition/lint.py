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

from dataclasses import dataclass, field
from typing import Any, Callable

from evalkit.competition import codabench
from evalkit.competition.archive import Archive
from evalkit.errors import EvalkitError

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


def is_int(value: Any, minimum: int | None = 0) -> bool:
    """An integer as a Django integer field takes it (a YAML int, or its text); never a bool."""
    if isinstance(value, bool):
        return False
    try:
        number = int(str(value).strip()) if isinstance(value, str) else value
    except ValueError:
        return False
    return isinstance(number, int) and (minimum is None or number >= minimum)


# ---------------------------------------------------------------- the rules of the bundle's top level
R_VERSION = rule("version", "`version: 2` (unpack_competition: versions 1 and 1.5 go to another unpacker, any other is refused)")
R_TITLE = rule("title", "a title of 1 to 256 characters (Competition.title)")
R_IMAGE = rule("image", "`image` names a file of the bundle (BaseUnpacker._unpack_image)")
R_IMAGE_FORMAT = rule("image-format", "the logo is a PNG, JPEG, GIF or WebP image (the logo's Base64ImageField)")
R_TERMS = rule("terms", "`terms` names a non-empty text file of the bundle (V2Unpacker._unpack_terms)")
R_PAGES = rule("pages", "`pages` is a list of mappings with `title` and `file` (V2Unpacker._unpack_pages iterates it)")
R_PAGE_FILE = rule("page-file", "each page's file exists and is not empty (V2Unpacker._unpack_pages)")
R_DOCKER = rule("docker-image", "`docker_image` is a name of at most 128 characters (Competition.docker_image)")
R_EMAIL = rule("contact-email", "`contact_email` is an e-mail address of at most 256 characters (Competition.contact_email, an EmailField)")

_IMAGE_MAGIC = ((b"\x89PNG\r\n\x1a\n", "png"), (b"\xff\xd8\xff", "jpeg"), (b"GIF87a", "gif"), (b"GIF89a", "gif"))


def image_type(data: bytes) -> str | None:
    for magic, kind in _IMAGE_MAGIC:
        if data.startswith(magic):
            return kind
    return "webp" if data[:4] == b"RIFF" and data[8:12] == b"WEBP" else None


@check
def top_level(bundle: Bundle) -> None:
    y = bundle.yaml
    if str(y.get("version", "1")) != codabench.SUPPORTED_VERSION:
        bundle.add(R_VERSION, "version", f"is {y.get('version', '1 (absent)')!r}; evalkit checks version 2 bundles (write `version: 2`)")
    title = y.get("title")
    if title is None or not str(title).strip():
        bundle.add(R_TITLE, "title", "missing: a competition needs a title")
    elif len(str(title)) > codabench.COMPETITION_TITLE_MAX:
        bundle.add(R_TITLE, "title", f"is {len(str(title))} characters; Codabench allows {codabench.COMPETITION_TITLE_MAX}")
    image = y.get("image")
    if image is None:
        bundle.add(R_IMAGE, "image", "missing: Codabench requires a logo")
    else:
        name = bundle.file(image)
        if name is None or not bundle.archive.is_file(name):
            bundle.add(R_IMAGE, "image", f"{image!r} is not a file of the bundle")
        else:
            kind = image_type(bundle.archive.read(name, TEXT_LIMIT)[:16])
            if kind not in codabench.IMAGE_TYPES:
                bundle.add(R_IMAGE_FORMAT, "image", f"{image!r} is not a PNG, JPEG, GIF or WebP image")
    terms = y.get("terms")
    if terms is None:
        bundle.add(R_TERMS, "terms", "missing: Codabench requires a terms file")
    else:
        name = bundle.file(terms)
        if name is None:
            bundle.add(R_TERMS, "terms", f"{terms!r} is not a file of the bundle")
        else:
            text = bundle.text(name, "terms", R_TERMS)
            if text == "":
                bundle.add(R_TERMS, "terms", f"{terms!r} is empty; it must contain the terms")
    email = y.get("contact_email")
    if email is not None and not codabench.is_email(email):
        bundle.add(R_EMAIL, "contact_email", f"{email!r} is not an e-mail address")
    image_name = y.get("docker_image")
    if image_name is not None and (not isinstance(image_name, str) or not image_name.strip()
                                   or len(image_name) > codabench.DOCKER_IMAGE_MAX):
        bundle.add(R_DOCKER, "docker_image", f"{image_name!r} is not an image name of 1 to {codabench.DOCKER_IMAGE_MAX} characters")


@check
def pages(bundle: Bundle) -> None:
    if "pages" not in bundle.yaml:
        bundle.add(R_PAGES, "pages", "missing: the unpacker iterates `pages` (write `pages: []` for none)")
        return
    for where, page in mapping_items(bundle, "pages", R_PAGES):
        if not str(page.get("title") or "").strip():
            bundle.add(R_PAGES, f"{where}.title", "missing: a page needs a title")
        if "file" not in page:
            bundle.add(R_PAGES, f"{where}.file", "missing: a page needs a file")
            continue
        name = bundle.file(page["file"])
        if name is None:
            bundle.add(R_PAGE_FILE, f"{where}.file", f"{page['file']!r} is not a file of the bundle (Unable to find page)")
        elif bundle.text(name, f"{where}.file", R_PAGE_FILE) == "":
            bundle.add(R_PAGE_FILE, f"{where}.file", f"{page['file']!r} is empty; a page must contain content")


def all_rules() -> dict[str, str]:
    """Every rule id and what it checks (the rule modules registered)."""
    from evalkit.competition import lint_board, lint_evalkit  # noqa: F401  (register their rules)

    return dict(RULES)


def lint_archive(archive: Archive) -> list[Problem]:
    """Every problem of the bundle in ``archive`` (its competition.yaml already at the root)."""
    import yaml

    all_rules()
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
    return bundle.problems


R_ZIP = rule("zip", "the bundle is a readable zip (unpack_competition: Bad zip file uploaded)")
R_YAML_AT_ROOT = rule("yaml-at-root", "competition.yaml is at the root of the zip, not in a folder (unpack_competition)")
R_YAML = rule("yaml", "competition.yaml is UTF-8 YAML holding a mapping (read with safe_load)")


def lint_bundle(path: str) -> list[Problem]:
    """Every problem of the bundle zip at ``path`` (an unreadable input file raises, as everywhere in evalkit)."""
    from evalkit.errors import InputError
    from evalkit.textio import check_regular

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
        return lint_archive(archive)
    finally:
        archive.close()
