"""The documentation site builds with ``mkdocs build --strict`` and its search works in a real browser.

The site is built into a temp dir, served over HTTP on 127.0.0.1 (material's search loads its index
with ``fetch`` in a web worker, which a ``file://`` page may not do), and opened in headless Chromium
with ``?q=<term>``: the page's own search runs and the results it lists are read from the DOM. Skipped,
with the reason, when mkdocs and its plugins (``pip install -e '.[docs]'``) or Chromium are missing.
"""

from __future__ import annotations

import functools
import http.server
import importlib.util
import subprocess
import sys
import threading
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "tools"))
from browser import DevTools, needs_chromium  # noqa: E402

DOCS_MODULES = ("mkdocs", "material", "mkdocs_static_i18n", "mkdocstrings_handlers.python", "mkdocs_click")


def _missing_docs_modules() -> list[str]:
    missing = []
    for name in DOCS_MODULES:
        try:
            found = importlib.util.find_spec(name) is not None
        except ModuleNotFoundError:  # the parent package of a dotted name is absent
            found = False
        if not found:
            missing.append(name)
    return missing


needs_mkdocs = pytest.mark.skipif(bool(_missing_docs_modules()),
                                  reason=f"the docs extra is not installed (missing {', '.join(_missing_docs_modules())}): "
                                         "pip install -e '.[docs]'")

# Each term must be found by the site's search, and the page listed must be the one that explains it.
SEARCHES = {
    "ir.compile": "compiling/",
    "skip_ptoas": "compiling/",
    "PassDumpLevel": "compiling/",
}

RESULTS_JS = """(() => {
  const meta = document.querySelector('.md-search-result__meta');
  if (!meta) return null;
  const text = meta.textContent.trim();
  if (!text || text.startsWith('Initializing')) return null;
  return {meta: text, items: Array.from(document.querySelectorAll('.md-search-result__item')).map(li => ({
    href: (li.querySelector('a') || {}).href || '', text: li.textContent.replace(/\\s+/g, ' ').trim()}))};
})()"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site") / "site"
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"),
                           "-d", str(out)], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert proc.returncode == 0, f"mkdocs build --strict failed:\n{proc.stderr[-4000:]}"
    return out


@pytest.fixture(scope="module")
def served(site: Path) -> Iterator[str]:
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@needs_mkdocs
def test_strict_build_has_every_page_and_the_generated_ones(site: Path) -> None:
    for page in ("getting-started", "compiling", "running", "cli", "toolchains", "api", "diagnostics"):
        assert (site / page / "index.html").is_file(), page
    cli = (site / "cli" / "index.html").read_text()
    assert "pypto run-pto" in cli and "--skip-ptoas" in cli  # mkdocs-click rendered the commands
    settings = (site / "toolchains" / "index.html").read_text()
    assert "settings-table" not in settings and "PYPTO_PTOAS_TIMEOUT_S" in settings and "PYPTO_WHEELHOUSE" in settings
    assert "pypto.driver.compile" in (site / "api" / "index.html").read_text()
    assert (site / "assets" / "swimlane.png").is_file() and (site / "assets" / "memory_map.png").is_file()


@pytest.fixture(scope="module")
def browser() -> Iterator[DevTools]:
    with DevTools(timeout=90) as tools:
        yield tools


def _search(browser: DevTools, served: str, term: str) -> dict:
    browser.open(served + "?q=" + urllib.parse.quote(term))
    return browser.wait_for(RESULTS_JS)


@needs_mkdocs
@needs_chromium
@pytest.mark.parametrize("term", list(SEARCHES))
def test_the_search_finds_it_in_the_browser(served: str, browser: DevTools, term: str) -> None:
    found = _search(browser, served, term)
    hrefs = [urllib.parse.urlsplit(item["href"]).path for item in found["items"]]
    assert found["items"], f"search for {term!r} found nothing: {found['meta']}"
    assert any(path.endswith("/" + SEARCHES[term]) for path in hrefs), (term, found["meta"], hrefs)
    words = term.lower().replace(".", " ").split()
    assert any(all(w in item["text"].lower() for w in words) for item in found["items"]), found["items"][:3]


@needs_mkdocs
@needs_chromium
def test_a_term_on_no_page_finds_nothing(served: str, browser: DevTools) -> None:
    """The check above can fail: the browser reports an empty result for a word no page holds."""
    found = _search(browser, served, "zqxjvkwpfh")
    assert found["items"] == [] and "No matching" in found["meta"], found
