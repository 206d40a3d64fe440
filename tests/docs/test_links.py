"""Every ``page.md#anchor`` link of every page lands on an existing anchor in both language builds.

In the Chinese build a link resolves to the Chinese twin of its target when there is one, also from an
English page that has none (it is rendered as the fallback): so a translated page must keep the
anchors other pages link to (``doc_links.py``). ``mkdocs build --strict`` checks the same with anchor
validation on; this runs without building the site and names ``page:line``.
"""

from __future__ import annotations

from pathlib import Path

from doc_links import Link, anchors, broken_links, links, slugify

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_every_anchor_link_lands() -> None:
    misses = broken_links(DOCS)
    assert not misses, "anchor links:\n" + "\n".join(map(str, misses))


def test_slugs_follow_python_markdown() -> None:
    assert slugify("`ir.compile`: compiling a `@pl.program`") == "ircompile-compiling-a-plprogram"
    assert slugify("A full or read-only disk is your error, not pypto's") == \
        "a-full-or-read-only-disk-is-your-error-not-pyptos"
    assert slugify("Upstream's API: ir, language, arith, pypto_core") == "upstreams-api-ir-language-arith-pypto_core"


def test_anchors_and_links_of_a_page() -> None:
    text = ("# Title\n## 编译入口 {#entry-points}\n## Edge cases\n## Edge cases\n"
            "```\n## not a heading\n[x](a.md#in-code)\n```\n"
            "See [b](other.md#there), [c](#edge-cases_1), `[d](e.md#in-span)` and [e](https://x.org/a.md#y).\n")
    assert anchors(text) == {"title", "entry-points", "edge-cases", "edge-cases_1"}
    assert links("p.zh.md", text) == [Link("p.zh.md", 9, "other.md", "there"), Link("p.zh.md", 9, "", "edge-cases_1")]
    assert anchors("# API\n\n::: pypto.ir\n") is None


def test_a_translated_page_must_keep_linked_anchors(tmp_path: Path) -> None:
    (tmp_path / "cli.md").write_text("# CLI\nExit codes: [see](reliability.md#exit-codes).\n")
    (tmp_path / "reliability.md").write_text("# Reliability\n## Exit codes\n")
    (tmp_path / "reliability.zh.md").write_text("# 可靠性\n## 退出码\n")
    misses = broken_links(tmp_path)
    assert [str(m) for m in misses] == [
        "docs/cli.md:2: link 'reliability.md#exit-codes': reliability.zh.md "
        "(the page the zh build links to) has no such anchor"]
    (tmp_path / "reliability.zh.md").write_text("# 可靠性\n## 退出码 {#exit-codes}\n")
    assert broken_links(tmp_path) == []
