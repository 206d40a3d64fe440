"""Give a freshly built image a reproducible ID: clamp the ``created`` times of its config to an epoch.

An image ID is the sha256 of its config, which lists the layer digests (``rootfs.diff_ids``) and,
under the legacy builder, the wall-clock ``created`` time of the image and of every history entry.
The Dockerfiles make layer contents and mtimes deterministic (``pypto-clamp-mtimes``); this module
rewrites the config's times to ``SOURCE_DATE_EPOCH`` by streaming ``docker save`` through a
rewriter into ``docker load``. Layers are passed through untouched, so equal inputs give an equal
ID, and any layer that still differs shows up as a different ``diff_id``.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import tarfile
import threading
from datetime import UTC, datetime
from typing import IO, Any

from pypto.errors import ToolchainError


def normalized_config(raw: bytes, epoch: int) -> bytes:
    """The config JSON with every ``created`` time set to ``epoch`` (compact, sorted keys)."""
    config = json.loads(raw)
    stamp = datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    config["created"] = stamp
    for entry in config.get("history", []):
        entry["created"] = stamp
    config.pop("container", None)  # the id of the build's intermediate container (legacy builder)
    if isinstance(config.get("container_config"), dict):
        config["container_config"]["Hostname"] = ""
    return json.dumps(config, sort_keys=True, separators=(",", ":")).encode()


def _add(out: tarfile.TarFile, name: str, data: bytes, epoch: int) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mtime, info.mode = len(data), epoch, 0o644
    out.addfile(info, io.BytesIO(data))


def rewrite_saved(src: IO[bytes], dst: IO[bytes], epoch: int, tag: str) -> str:
    """Copy a ``docker save`` stream with its config normalized; return the new image ID."""
    new_id = ""
    renamed: dict[str, str] = {}
    with tarfile.open(fileobj=src, mode="r|") as tin, tarfile.open(fileobj=dst, mode="w|") as tout:
        for member in tin:
            name = member.name
            if member.isfile() and name.endswith(".json") and "/" not in name and name != "manifest.json":
                data = normalized_config(tin.extractfile(member).read(), epoch)  # type: ignore[union-attr]
                digest = hashlib.sha256(data).hexdigest()
                renamed[name], new_id = f"{digest}.json", f"sha256:{digest}"
                _add(tout, f"{digest}.json", data, epoch)
            elif name == "manifest.json":
                manifest = json.loads(tin.extractfile(member).read())  # type: ignore[union-attr]
                for entry in manifest:
                    entry["Config"] = renamed.get(entry["Config"], entry["Config"])
                    entry["RepoTags"] = [tag]
                _add(tout, name, json.dumps(manifest).encode(), epoch)
            elif name == "repositories":
                continue  # legacy; docker load takes the tags from manifest.json
            else:
                tout.addfile(member, tin.extractfile(member) if member.isfile() else None)
    if not new_id:
        raise ToolchainError(f"`docker save {tag}` produced no image config", repro=f"docker save {tag} | tar t")
    return new_id


def normalize_image(client: Any, tag: str, epoch: int) -> str:
    """Re-load ``tag`` with normalized config times; returns its (reproducible) image ID."""
    read_fd, write_fd = os.pipe()
    result: dict[str, Any] = {}

    def produce() -> None:
        with os.fdopen(write_fd, "wb") as sink:
            try:
                stream = _Chunks(client.api.get_image(tag))
                result["id"] = rewrite_saved(stream, sink, epoch, tag)
            except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
                result["error"] = exc

    thread = threading.Thread(target=produce, daemon=True)
    thread.start()
    with os.fdopen(read_fd, "rb") as source:
        try:
            client.api.load_image(source, quiet=True)
        except Exception as exc:  # noqa: BLE001 - the engine's message is reported with the repro command
            thread.join(timeout=5)
            raise ToolchainError(f"Re-loading {tag} with normalized timestamps failed: {exc}",
                                 repro=f"docker save {tag} | docker load") from None
    thread.join()
    if "error" in result:
        raise result["error"]
    new_id = result["id"]
    found = client.images.get(tag).id
    if found != new_id:
        raise ToolchainError(f"{tag} is {found} after the re-load, expected {new_id}",
                             repro=f"docker save {tag} | docker load")
    return new_id


class _Chunks(io.RawIOBase):
    """A readable file over the SDK's chunk iterator (what ``tarfile`` stream mode needs)."""

    def __init__(self, chunks: Any) -> None:
        self.chunks = iter(chunks)
        self.buffer = b""

    def readable(self) -> bool:
        return True

    def readinto(self, target: Any) -> int:
        while not self.buffer:
            try:
                self.buffer = next(self.chunks)
            except StopIteration:
                return 0
        n = min(len(target), len(self.buffer))
        target[:n], self.buffer = self.buffer[:n], self.buffer[n:]
        return n
