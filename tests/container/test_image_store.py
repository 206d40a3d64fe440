"""The engine's image store stays bounded: builds leave no dangling image, prune keeps the newest tags."""

from __future__ import annotations

import io
import time
from typing import Any

import pytest

from pypto.toolchain.image_prune import PYPTO_LABELS, prune, pypto_tagged
from pypto.toolchain.images import base_tag
from pypto.toolchain.manifest import load_manifest

pytestmark = pytest.mark.container

REPO = "pypto-prune-test"


def _dangling(engine: Any) -> list[str]:
    return [i.id for label in PYPTO_LABELS for i in engine.images.list(filters={"dangling": True, "label": label})]


def _build(engine: Any, base: str, tag: str | None, note: str) -> str:
    dockerfile = f"FROM {base}\nLABEL io.pypto.image.flavor=prune-test\nLABEL note={note}\n"
    image, _ = engine.images.build(fileobj=io.BytesIO(dockerfile.encode()), tag=tag, rm=True)
    return image.id


def test_the_image_builds_left_no_dangling_image_and_tagged_their_cache_stage(engine: Any, sim_image: Any) -> None:
    assert _dangling(engine) == []
    repository = next(t for t in sim_image.tags).rpartition(":")[0]
    stages = engine.images.list(name=f"{repository}-deps")  # the layer cache of the next build, under a tag
    assert stages and all(i.labels.get("io.pypto.image.stage") == "deps" for i in stages)


def test_prune_keeps_the_newest_tags_of_a_repository_and_drops_leftovers(engine: Any, sim_image: Any) -> None:
    base = base_tag(load_manifest(None))
    try:
        _build(engine, base, f"{REPO}:old", "old")
        time.sleep(1.1)  # Created has one-second resolution in the engine's listing order
        newest = _build(engine, base, f"{REPO}:new", "new")
        leftover = _build(engine, base, None, "untagged")
        assert leftover in _dangling(engine)
        report = prune(engine, keep=1, repositories={REPO}, older_than_s=3600)
        assert f"{REPO}:old" in report.removed
        assert leftover not in report.removed  # young: it may belong to a build still running
        assert leftover in prune(engine, keep=1, repositories={REPO}, older_than_s=0).removed
        assert [ref for _, _, ref in pypto_tagged(engine)[REPO]] == [f"{REPO}:new"]
        assert engine.images.get(f"{REPO}:new").id == newest
        engine.images.get(newest).tag(REPO, "same")  # a second tag of the newest image is kept with it
        assert f"{REPO}:same" not in prune(engine, keep=1, repositories={REPO}).removed
        assert leftover not in _dangling(engine)
    finally:
        prune(engine, keep=0, repositories={REPO}, older_than_s=3600)
        for image in engine.images.list(filters={"dangling": True, "label": "note=untagged"}):
            engine.images.remove(image.id)
    assert REPO not in pypto_tagged(engine)
