"""Where each page's ``page.md#anchor`` links land in each language's build, and whether the anchor is there.

The site is built once per language (mkdocs-static-i18n, ``docs_structure: suffix``). The English build
renders every ``<page>.md``; the Chinese build renders ``<page>.zh.md`` where it exists and falls back
to ``<page>.md`` otherwise. A link ``other.md#a`` in a page of the Chinese build resolves to
``other.zh.md`` when that exists: so an English page without a Chinese twin that links into a
translated page needs the anchor in the Chinese page too, or ``mkdocs build --strict`` with anchor
validation fails once both are in the tree. ``broken_links(docs)`` lists every such miss as
``page:line``, for both builds, without building the site.

Anchors are heading ids: an explicit ``{#id}`` (attr_list), else python-markdown's default slug of the
heading text. Anchors of pages with generated content (``:::`` directives: mkdocstrings, mkdocs-click)
are not checked.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_EXPLICIT_ID = re.compile(r"\s*\{:?\s*#([\w-]+)[^}]*\}\s*$")
_LINK = re.compile(r"\]\(([^)\s]*?)(?:\s+\"[^\"]*\")?\)")
LANGS = ("en", "zh")


@dataclass(frozen=True)
class Link:
    page: str
    line: int
    target: str  # "other.md", "" for the same page
    anchor: str


@dataclass(frozen=True)
class Miss:
    link: Link
    lang: str
    resolved: str

    def __str__(self) -> str:
        link = f"docs/{self.link.page}:{self.link.line}: link '{self.link.target}#{self.link.anchor}'"
        if not self.resolved:
            return f"{link}: no page {self.link.target} in the {self.lang} build"
        return f"{link}: {self.resolved} (the page the {self.lang} build links to) has no such anchor"


def slugify(text: str) -> str:
    """python-markdown's default toc slug of a heading's text (inline code marks dropped)."""
    text = re.sub(r"`([^`]*)`", r"\1", text)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def _outside_fences(text: str) -> list[tuple[int, str]]:
    lines, fence = [], None
    for n, line in enumerate(text.splitlines(), 1):
        m = _FENCE.match(line)
        if fence is None and m:
            fence = m.group(1)
        elif fence is not None and m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
            fence = None
        elif fence is None:
            lines.append((n, line))
    return lines


def anchors(text: str) -> set[str] | None:
    """The heading ids of a page; None when the page has generated content (ids not known here)."""
    found: set[str] = set()
    for _, line in _outside_fences(text):
        if line.startswith("::: "):
            return None
        m = _HEADING.match(line)
        if not m:
            continue
        title = m.group(2)
        explicit = _EXPLICIT_ID.search(title)
        slug = explicit.group(1) if explicit else slugify(title)
        base, k = slug, 0
        while slug in found:  # python-markdown's unique(): _1, _2, ...
            k += 1
            slug = f"{base}_{k}"
        found.add(slug)
    return found


def links(page: str, text: str) -> list[Link]:
    """The links of a page to ``#anchor`` or ``other.md#anchor`` (not inside code fences or spans)."""
    out = []
    for n, line in _outside_fences(text):
        for m in _LINK.finditer(re.sub(r"`[^`]*`", "", line)):
            target, _, anchor = m.group(1).partition("#")
            if anchor and (target == "" or (target.endswith(".md") and "/" not in target and ":" not in target)):
                out.append(Link(page, n, target, anchor))
    return out


def _rendered(docs: Path, lang: str) -> dict[str, str]:
    """page name (``compiling.md``) -> the file the ``lang`` build renders for it."""
    pages = {p.name: p.name for p in docs.glob("*.md") if not p.name.endswith(".zh.md")}
    if lang == "zh":
        for name in pages:
            if (docs / name.replace(".md", ".zh.md")).exists():
                pages[name] = name.replace(".md", ".zh.md")
    return pages


def broken_links(docs: Path) -> list[Miss]:
    texts = {p.name: p.read_text(encoding="utf-8") for p in docs.glob("*.md")}
    ids = {name: anchors(text) for name, text in texts.items()}
    misses = []
    for lang in LANGS:
        rendered = _rendered(docs, lang)
        for source in sorted(set(rendered.values())):
            for link in links(source, texts[source]):
                target = source if link.target == "" else rendered.get(link.target)
                if target is None:
                    misses.append(Miss(link, lang, ""))
                elif ids[target] is not None and link.anchor not in ids[target]:
                    misses.append(Miss(link, lang, target))
    return misses
