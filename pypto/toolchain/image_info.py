"""What the toolchain image pypto runs in carries (``/opt/pypto/image.json``), for error messages.

Every image records its repository, flavor, toolchain and whether CPU torch is installed. A user
file that imports a module the image lacks gets a hint naming the image and the flavor that has it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

IMAGE_JSON = Path("/opt/pypto/image.json")


def current_image(path: Path = IMAGE_JSON) -> dict[str, Any] | None:
    """The facts of the image this process runs in; None outside an image."""
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _image_ref(facts: dict[str, Any]) -> str:
    """The image reference: the one the launcher passed (PYPTO_CONTAINER_IMAGE), else its repository."""
    try:
        from pypto.toolchain.settings import resolve_settings

        ref = resolve_settings().container_image
    except Exception:  # noqa: BLE001 - a settings problem must not hide the import error being reported
        ref = None
    return ref or f"{facts.get('repository', 'pypto')} (toolchain {facts.get('toolchain', '?')})"


def _torch_pin() -> str:
    try:
        from pypto.toolchain.manifest import load_manifest

        return load_manifest().image.torch_wheels["torch"].split("+")[0]
    except Exception:  # noqa: BLE001 - the hint must not fail while an import error is being reported
        return "<the version in the manifest's [image.torch_wheels]>"


def missing_module_hint(module: str, facts: dict[str, Any] | None = None, in_image: bool | None = None) -> str:
    """How to get ``module``: on the host, install it; in an image, which image lacks it and what has it."""
    top = module.split(".")[0]
    facts = current_image() if in_image is None and facts is None else facts
    if facts is None:
        if top == "torch":
            return (f"install CPU torch in this environment ({sys.executable}): pip install torch=={_torch_pin()} "
                    "(or compile in the 'sim' image, which carries it: pypto compile --in-container ...)")
        return f"install the package that provides '{top}' into this Python environment ({sys.executable})"
    image, flavor = _image_ref(facts), facts.get("flavor", "?")
    if top == "torch" and not facts.get("torch"):
        having = ", ".join(f"'{f}'" for f in facts.get("flavors_with_torch", ["sim"]))
        return (f"this runs in image {image}, flavor '{flavor}', which has no torch; the {having} flavor(s) carry "
                f"CPU torch {facts.get('torch_pin') or _torch_pin()}: build it with "
                "`python -m pypto.toolchain.images build --flavor sim` and run that image instead")
    return (f"this runs in image {image}, flavor '{flavor}', which has no module '{top}': images install only "
            "the wheels locked for them (see /opt/pypto/python-packages.txt); add its package to [image.wheels] in "
            "the toolchain manifest, run `python -m pypto.toolchain.wheelhouse lock` and rebuild the image")
