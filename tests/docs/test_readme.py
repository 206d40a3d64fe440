"""The README is the front door: short, the two fresh-machine commands first, every link into the site live."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()


def test_the_readme_is_short_and_starts_with_the_two_commands() -> None:
    assert len(README.splitlines()) < 150
    first = re.search(r"^```bash\n(.*?)^```$", README, re.S | re.M)
    assert first is not None
    commands = first.group(1).splitlines()  # .ci/run runs exactly these two lines, verbatim
    assert len(commands) == 2, commands
    assert commands[0].startswith("python -m pip install -e . && ") and "examples/" in commands[0]
    assert commands[1].startswith("python -m pip install -e '.[test]' && ") and "pytest" in commands[1]


def test_every_relative_link_of_the_readme_exists_and_every_page_is_linked() -> None:
    links = [m.split("#")[0] for m in re.findall(r"\]\(([^)]+)\)", README) if "://" not in m]
    missing = [link for link in links if not (ROOT / link).exists()]
    assert links and not missing, missing
    pages = {p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md") if not p.name.endswith(".zh.md")}
    assert pages <= set(links), sorted(pages - set(links))
