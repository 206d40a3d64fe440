"""The settings page's table is the settings model: every field, its variable, type and default.

The hook (``docs/_hooks/settings_table.py``) runs inside ``mkdocs build``; here it is loaded by path
and checked against ``Settings.model_fields`` directly, so it needs no mkdocs.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest
from pydantic import Field

from pypto.toolchain.settings_model import Settings
from pypto.toolchain.settings_sources import env_var

HOOK = Path(__file__).resolve().parents[2] / "docs" / "_hooks" / "settings_table.py"


@pytest.fixture(scope="module")
def hook() -> ModuleType:
    spec = importlib.util.spec_from_file_location("settings_table_hook", HOOK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_field_is_a_row_with_its_variable_and_default(hook: ModuleType) -> None:
    rows = {line.split("|")[1].strip(" `"): line for line in hook.settings_table().splitlines()[2:]}
    assert list(rows) == list(Settings.model_fields)
    for name, field in Settings.model_fields.items():
        assert f"`{env_var(name)}`" in rows[name], rows[name]
        if field.default_factory is None and field.default is not None and not isinstance(field.default, bool):
            assert f"`{field.default}`" in rows[name], rows[name]
    assert "`PTOAS_ROOT`" in rows["ptoas_root"] and "`300.0`" in rows["ptoas_timeout_s"]
    assert "`none` \\| `basic` \\| `roundtrip`" in rows["verify_level"]
    assert str(Path.home()) not in hook.settings_table()  # no value of the machine that builds the site


def test_the_marker_is_replaced_and_other_pages_are_left_alone(hook: ModuleType) -> None:
    page = f"# Settings\n\n{hook.MARKER}\n"
    assert hook.on_page_markdown(page).count("| `platform` | `PYPTO_PLATFORM` |") == 1
    assert hook.on_page_markdown("# Other\n") == "# Other\n"


def test_a_mention_of_the_marker_in_prose_stays_text(hook: ModuleType) -> None:
    """The development page names the marker inline; only a line that is the marker alone is replaced."""
    prose = f"# Site\n\nA page holds the line `{hook.MARKER}` where the table goes.\n"
    assert hook.on_page_markdown(prose) == prose
    page = f"# Settings\n\n  {hook.MARKER}\n\nSee `{hook.MARKER}` above.\n"
    out = hook.on_page_markdown(page)
    assert out.count("| `platform` | `PYPTO_PLATFORM` |") == 1 and f"See `{hook.MARKER}` above." in out


def test_a_new_factory_default_must_be_described(hook: ModuleType) -> None:
    """A default computed on the build machine would print that machine's value: the build fails instead."""
    field = Field(default_factory=lambda: "machine-specific")
    with pytest.raises(ValueError, match="FACTORY_DEFAULTS"):
        hook._default("new_setting", field)
