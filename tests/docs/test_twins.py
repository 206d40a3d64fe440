"""Every page of the site's nav has its Chinese twin, and the line-for-line translations keep their English page's shape.

The Chinese build (mkdocs-static-i18n, ``docs_structure: suffix``) silently falls back to the English
``<page>.md`` when ``<page>.zh.md`` is missing, and ``mkdocs build --strict`` says nothing: so a twin that
goes missing (deleted, renamed, a new page added without one) is caught here. The API reference is
mkdocstrings over the docstrings and stays English.

Most twins were written as Chinese pages of their own (their examples and sections differ from the
English ones). The pages in ``LINE_FOR_LINE`` are translations of their English page as it stands: the
same headings at the same levels with the same anchors, the same links, and the same code blocks,
byte for byte (only prose and table prose are translated). Update both when one changes.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from doc_links import anchors

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
ENGLISH_ONLY = {"api.md"}  # generated from the docstrings
LINE_FOR_LINE = ("performance.md", "development.md")

_NAV_PAGE = re.compile(r"^\s*-\s+[^:]+:\s+(\S+\.md)\s*$")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})(.*)$")
_HEADING = re.compile(r"^(#{1,6})\s")
_LINK = re.compile(r"\]\(([^)\s]+)\)")


def nav_pages(mkdocs_yml: str) -> list[str]:
    """The pages of the ``nav:`` section, in order."""
    nav = mkdocs_yml.split("\nnav:\n", 1)[1]
    return [m.group(1) for line in nav.splitlines() if (m := _NAV_PAGE.match(line))]


def missing_twins(docs: Path, pages: list[str]) -> list[str]:
    return [page for page in pages
            if page not in ENGLISH_ONLY and not (docs / page.replace(".md", ".zh.md")).exists()]


def shape(text: str) -> dict[str, list]:
    """What a line-for-line translation keeps: code blocks (info string and body), heading levels, anchors, links."""
    blocks, levels, links, fence, body = [], [], [], None, []
    for line in text.splitlines():
        m = _FENCE.match(line)
        if fence is None and m:
            fence, body = m.group(1), [line.strip()]
        elif fence is not None:
            body.append(line)
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not m.group(2).strip():
                blocks.append("\n".join(body))
                fence = None
        else:
            if h := _HEADING.match(line):
                levels.append(len(h.group(1)))
            links += _LINK.findall(re.sub(r"`[^`]*`", "", line))
    ids = anchors(text) or set()
    return {"code blocks": blocks, "heading levels": levels, "links": links,
            "anchors": sorted(ids - {_title_slug(text)})}


def _title_slug(text: str) -> str:
    """The page title's id differs by language (it is never linked to): left out of the anchors."""
    first = next((line for line in text.splitlines() if line.startswith("# ")), "# ")
    return sorted(anchors(first) or {""})[0]


def differences(english: str, chinese: str) -> list[str]:
    en, zh = shape(english), shape(chinese)
    return [f"{key}: {len(en[key])} in English, {len(zh[key])} in Chinese" if len(en[key]) != len(zh[key])
            else f"{key} differ: {[x for x in en[key] if x not in zh[key]][:3]}"
            for key in en if en[key] != zh[key]]


def test_every_nav_page_has_a_chinese_twin() -> None:
    pages = nav_pages((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    assert "performance.md" in pages and "api.md" in pages
    assert not missing_twins(DOCS, pages), f"no docs/<page>.zh.md for: {missing_twins(DOCS, pages)}"


def test_line_for_line_twins_keep_the_english_shape() -> None:
    for page in LINE_FOR_LINE:
        english = (DOCS / page).read_text(encoding="utf-8")
        chinese = (DOCS / page.replace(".md", ".zh.md")).read_text(encoding="utf-8")
        assert not differences(english, chinese), f"docs/{page} and its twin: {differences(english, chinese)}"


def test_a_missing_twin_or_a_changed_block_is_reported(tmp_path: Path) -> None:
    yml = "site_name: x\nnav:\n  - Home: index.md\n  - Perf: perf.md\n  - API reference: api.md\n"
    assert nav_pages(yml) == ["index.md", "perf.md", "api.md"]
    (tmp_path / "index.zh.md").write_text("# 首页\n")
    assert missing_twins(tmp_path, nav_pages(yml)) == ["perf.md"]
    english = "# Perf\n## Figures\nSee [x](a.md#b).\n```bash\nrun --fast  # quick\n```\n"
    assert differences(english, "# 性能\n## 数字 {#figures}\n见 [x](a.md#b)。\n```bash\nrun --fast  # quick\n```\n") == []
    assert differences(english, "# 性能\n## 数字\n见 [x](a.md#b)。\n```bash\nrun --fast  # quick\n```\n") == [
        "anchors differ: ['figures']"]
    assert differences(english, "# 性能\n## 数字 {#figures}\n见 [x](a.md#b)。\n") == [
        "code blocks: 1 in English, 0 in Chinese"]
    assert differences(english, "# 性能\n## 数字 {#figures}\n见 [x](a.md#b)。\n```bash\nrun --fast  # 快\n```\n") == [
        "code blocks differ: ['```bash\\nrun --fast  # quick\\n```']"]


def _nav_titles(mkdocs_yml: str) -> list[str]:
    nav = mkdocs_yml.split("\nnav:\n", 1)[1]
    return [line.split("-", 1)[1].split(":", 1)[0].strip() for line in nav.splitlines() if _NAV_PAGE.match(line)]


def test_every_nav_title_is_translated_for_the_chinese_build() -> None:
    """Without a ``nav_translations`` entry the Chinese site shows the English title in its nav and tab."""
    yaml = pytest.importorskip("yaml")

    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    config = yaml.load(text, Loader=yaml.BaseLoader)  # BaseLoader: mkdocs' !!python tags stay unresolved
    i18n = next(p["i18n"] for p in config["plugins"] if isinstance(p, dict) and "i18n" in p)
    zh = next(lang for lang in i18n["languages"] if lang["locale"] == "zh")
    titles = _nav_titles(text)
    assert "Performance" in titles
    assert [t for t in titles if t not in zh.get("nav_translations", {})] == []
