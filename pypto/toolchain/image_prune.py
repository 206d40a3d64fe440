"""Keep the engine's image store bounded: a build leaves no dangling image, and old tags can be pruned.

A toolchain image build makes three kinds of image besides the one it tags:

- the ``deps`` stage (the third-party venv, torch in ``sim``): the final stage copies from it, so the
  legacy builder leaves its last image untagged. It is the layer cache that saves reinstalling torch
  when only pypto changed, so it is not deleted: it is tagged ``<repository>-deps:<hash12>`` (same
  hash as the image) and labelled ``io.pypto.image.stage=deps``;
- the image as built, before :mod:`image_normalize` re-loads it with clamped timestamps: the
  re-loaded image has new layers, so the original chain (about the whole image's size) is removed;
- step images of a failed build: untagged, labelled once the stage's ``LABEL`` ran.

:func:`drop_leftovers` runs after every build and removes the dangling images carrying a pypto label
(older than half an hour: a concurrent build's are not leftovers yet).
:func:`prune` (``python -m pypto.toolchain.images prune --keep N``) removes all but the newest ``N``
tags of each pypto repository, for a machine that builds every day.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

LABEL_STAGE = "io.pypto.image.stage"
PYPTO_LABELS = ("io.pypto.image.flavor", LABEL_STAGE)
LEFTOVER_AGE_S = 1800.0
"""A dangling pypto image younger than this may still belong to a build in progress."""


@dataclass
class PruneReport:
    """What a prune removed (image references) and what the engine kept (reference: reason)."""

    removed: list[str] = field(default_factory=list)
    kept: dict[str, str] = field(default_factory=dict)


CACHE_STAGES = ("deps", "install")
"""Stages a final image copies from (sim: the third-party venv; hw: the CANN install)."""


def stage_tag(image_tag: str, stage: str) -> str:
    """``pypto-0.1.0-sim:abc`` and ``deps`` -> ``pypto-0.1.0-sim-deps:abc``."""
    repository, _, digest = image_tag.rpartition(":")
    return f"{repository}-{stage}:{digest}"


def tag_cache_stage(client: Any, stages: dict[str, str], image_tag: str) -> str | None:
    """Tag the cache stage a build just made (``stages``: name -> last image id, from the build stream).

    Kept as the layer cache of the next build, under a tag, so it is never a dangling image.
    """
    stage = next((s for s in CACHE_STAGES if s in stages), None)
    if stage is None:
        return None
    ref = stage_tag(image_tag, stage)
    repository, _, version = ref.rpartition(":")
    from pypto.toolchain.engine import docker_sdk

    try:
        client.images.get(stages[stage]).tag(repository, version)
    except docker_sdk().errors.NotFound:  # removed meanwhile (someone pruned): only the next build is slower
        return None
    return ref


def _remove(client: Any, ref: str, report: PruneReport) -> None:
    from pypto.toolchain.engine import docker_sdk

    try:
        client.images.remove(ref, noprune=False)
        report.removed.append(ref)
    except docker_sdk().errors.NotFound:
        pass  # removed with a child removed before it
    except docker_sdk().errors.APIError as exc:  # in use by a container, or a parent of a tagged image
        report.kept[ref] = str(getattr(exc, "explanation", None) or exc)


def _age_s(image: Any) -> float:
    from datetime import UTC, datetime

    created = str(image.attrs.get("Created", ""))
    try:  # the engine gives nanoseconds: 2026-12-03T23:56:20.123456789Z
        stamp = datetime.strptime(created[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC)
    except ValueError:
        return float("inf")
    return (datetime.now(UTC) - stamp).total_seconds()


def drop_leftovers(client: Any, older_than_s: float = LEFTOVER_AGE_S) -> PruneReport:
    """Remove the dangling images that carry a pypto label (see the module docstring).

    Only those older than ``older_than_s``: a build running at the same time has dangling images of
    its own until it tags them, and they are not leftovers yet.
    """
    report = PruneReport()
    for label in PYPTO_LABELS:
        for image in client.images.list(filters={"dangling": True, "label": label}):
            if _age_s(image) >= older_than_s:
                _remove(client, image.id, report)
    return report


def pypto_tagged(client: Any) -> dict[str, list[tuple[str, str, str]]]:
    """Repository -> [(created, image id, reference)] over tagged images with a pypto label, plus the bases."""
    by_repo: dict[str, list[tuple[str, str, str]]] = {}
    seen: set[str] = set()
    images = [i for label in PYPTO_LABELS for i in client.images.list(filters={"label": label})]
    images += [i for i in client.images.list() if any(t.startswith("pypto-base-") for t in i.tags)]
    for image in images:
        for ref in image.tags:
            if ref in seen:
                continue
            seen.add(ref)
            by_repo.setdefault(ref.rpartition(":")[0], []).append((image.attrs.get("Created", ""), image.id, ref))
    return by_repo


def prune(client: Any, keep: int, repositories: set[str] | None = None,
          older_than_s: float = LEFTOVER_AGE_S) -> PruneReport:
    """Untag (and delete, when nothing else holds it) the tags of all but the ``keep`` newest images per repository.

    ``Created`` of our images is the checkout's commit time (SOURCE_DATE_EPOCH), so "newest" follows
    the history. Every tag of a kept image stays (a cache stage reused unchanged by a newer build
    carries both builds' tags). Images a container uses are kept and reported.
    ``repositories`` limits the pruning of tags to those repositories (dangling leftovers always go).
    """
    if keep < 0:
        raise ValueError("keep must be >= 0")
    report = drop_leftovers(client, older_than_s)
    for repository, refs in pypto_tagged(client).items():
        if repositories is not None and repository not in repositories:
            continue
        newest = sorted({(created, image) for created, image, _ in refs}, reverse=True)[:keep]
        kept = {image for _, image in newest}
        for _, image, ref in refs:
            if image not in kept:
                _remove(client, ref, report)
    report.removed += drop_leftovers(client, older_than_s).removed
    return report


def prune_command(client_factory: Any, keep: int, older_than_s: float = LEFTOVER_AGE_S) -> int:
    """``python -m pypto.toolchain.images prune --keep N``: print what was removed and kept as JSON."""
    import json
    import sys

    from pypto.errors import PyptoError

    if keep < 0:
        print("error: --keep must be 0 or more", file=sys.stderr)
        return 2
    try:
        report = prune(client_factory(), keep, older_than_s=older_than_s)
    except PyptoError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 3
    for ref, why in report.kept.items():
        print(f"pypto-images: kept {ref}: {why}", file=sys.stderr)
    print(json.dumps({"removed": report.removed, "kept": report.kept}, indent=1))
    return 0
