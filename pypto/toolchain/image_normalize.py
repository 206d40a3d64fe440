"""Give a freshly built image a reproducible ID: clamp the ``created`` times of its config to an epoch.

An image ID is the sha256 of its config, which lists the layer digests (``rootfs.diff_ids``) and,
under the legacy builder, the wall-clock ``created`` time of the image and of every history entry.
The Dockerfiles make file contents and mtimes deterministic (``pypto-clamp-mtimes``); this module
streams ``docker save`` through a rewriter into ``docker load`` that clamps every mtime in the layer
tarballs to ``SOURCE_DATE_EPOCH`` (the builder stamps the directories a COPY or WORKDIR touches
with the wall clock) and sets the config's times to it. Equal inputs then give an equal ID, and a
layer whose contents still differ shows up as a different ``diff_id``.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import tarfile
import tempfile
import threading
from datetime import UTC, datetime
from typing import IO, Any

from pypto.errors import ToolchainError


def normalized_config(raw: bytes, epoch: int, diff_ids: list[str] | None = None) -> bytes:
    """The config JSON with every ``created`` time set to ``epoch`` (and new layer digests, if given)."""
    config = json.loads(raw)
    stamp = datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    config["created"] = stamp
    for entry in config.get("history", []):
        entry["created"] = stamp
    config.pop("container", None)  # the id of the build's intermediate container (legacy builder)
    if isinstance(config.get("container_config"), dict):
        config["container_config"]["Hostname"] = ""
    for key in ("config", "container_config"):  # the id of the intermediate image the last step ran on
        if isinstance(config.get(key), dict) and config[key].get("Image"):
            config[key]["Image"] = ""
    if diff_ids is not None:
        config["rootfs"]["diff_ids"] = diff_ids
    return json.dumps(config, sort_keys=True, separators=(",", ":")).encode()


def _add(out: tarfile.TarFile, name: str, data: bytes, epoch: int) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mtime, info.mode = len(data), epoch, 0o644
    out.addfile(info, io.BytesIO(data))


def clamp_layer(src: IO[bytes], dst: IO[bytes], epoch: int) -> str:
    """Copy one layer tarball with every mtime later than ``epoch`` set to ``epoch``; its sha256 (diff_id).

    The legacy builder records the wall-clock mtime of the directories a step touched (the parent of
    a COPY destination, a WORKDIR), so equal contents would otherwise give different layer digests.
    """
    digest = hashlib.sha256()

    class _Hashing(io.RawIOBase):
        def writable(self) -> bool:
            return True

        def write(self, data: Any) -> int:
            digest.update(data)
            dst.write(data)
            return len(data)

    with tarfile.open(fileobj=src, mode="r|") as tin, \
            tarfile.open(fileobj=_Hashing(), mode="w|", format=tarfile.PAX_FORMAT) as tout:  # type: ignore[arg-type]
        for member in tin:
            member.mtime = min(int(member.mtime), epoch)
            for key in ("mtime", "atime", "ctime"):
                member.pax_headers.pop(key, None)
            tout.addfile(member, tin.extractfile(member) if member.isfile() else None)
    return f"sha256:{digest.hexdigest()}"


def rewrite_saved(src: IO[bytes], dst: IO[bytes], epoch: int, tag: str) -> str:
    """Copy a ``docker save`` stream with clamped layer mtimes and a normalized config; return the new ID.

    Layers are rewritten as they stream by (each through a temporary file, since a tar member's size
    precedes its data); the config and manifest, which name the new layer digests, are written last.
    """
    configs: dict[str, bytes] = {}
    manifest: list[dict[str, Any]] = []
    layer_ids: dict[str, str] = {}
    with tarfile.open(fileobj=src, mode="r|") as tin, tarfile.open(fileobj=dst, mode="w|") as tout:
        for member in tin:
            name = member.name
            if member.isfile() and name.endswith("/layer.tar"):
                with tempfile.TemporaryFile() as tmp:
                    layer_ids[name] = clamp_layer(tin.extractfile(member), tmp, epoch)  # type: ignore[arg-type]
                    member.size, member.mtime = tmp.tell(), min(int(member.mtime), epoch)
                    tmp.seek(0)
                    tout.addfile(member, tmp)
            elif member.isfile() and name.endswith(".json") and "/" not in name and name != "manifest.json":
                configs[name] = tin.extractfile(member).read()  # type: ignore[union-attr]
            elif name == "manifest.json":
                manifest = json.loads(tin.extractfile(member).read())  # type: ignore[union-attr]
            elif name == "repositories" or (member.isfile() and name.endswith("/json")):
                continue  # legacy v1 metadata (with build times); docker load reads manifest.json
            else:
                member.mtime = min(int(member.mtime), epoch)
                tout.addfile(member, tin.extractfile(member) if member.isfile() else None)
        if len(manifest) != 1 or manifest[0].get("Config") not in configs:
            raise ToolchainError(f"`docker save {tag}` produced no single image config", repro=f"docker save {tag} | tar t")
        entry = manifest[0]
        data = normalized_config(configs[entry["Config"]], epoch, [layer_ids[name] for name in entry["Layers"]])
        digest = hashlib.sha256(data).hexdigest()
        _add(tout, f"{digest}.json", data, epoch)
        entry.update(Config=f"{digest}.json", RepoTags=[tag])
        _add(tout, "manifest.json", json.dumps(manifest).encode(), epoch)
    return f"sha256:{digest}"


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
        found = _retag_existing(client, tag, new_id) or found
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


def _retag_existing(client: Any, tag: str, image_id: str) -> str | None:
    """A rebuild whose normalized image already exists: the engine's load keeps the old tag target, so
    point the tag at the existing (identical) image; returns the tag's new ID, or None."""
    try:
        image = client.images.get(image_id)
    except Exception:  # noqa: BLE001 - not present: the caller reports the mismatch
        return None
    repo, _, name = tag.rpartition(":")
    image.tag(repo, name)
    return client.images.get(tag).id
