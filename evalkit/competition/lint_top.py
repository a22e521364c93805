"""Codabench's rules for the top of competition.yaml: version, title, logo, terms, pages, image, contact
(see :mod:`evalkit.competition.lint`)."""
from __future__ import annotations

from evalkit.competition import codabench
from evalkit.competition.lint_base import TEXT_LIMIT, Bundle, check, mapping_items, rule

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
