"""``pypto toolchain verify --image TAG``: check a toolchain image against the manifest.

Checks, each reported as a :class:`~pypto.toolchain.doctor.Check`:

- labels: toolchain version, manifest sha256, flavor, ptoas version, inputs hash present;
- the manifest inside (``/opt/pypto/toolchain.toml``) has the manifest's sha256;
- the image's lock (``/opt/pypto/image.lock``) pins ptoas with the manifest's wheel sha256 and every
  other wheel with the version and hash of this pypto's lock (``docker/requirements.lock`` when run
  from a checkout, else the manifest's versions);
- the installed distributions have exactly the pinned versions (torch only in torch flavors);
- ``pypto toolchain verify`` inside the image passes (ptoas files vs its RECORD, g++, sim headers).

The probe runs with the launcher's sandbox (no network, read-only root, no capabilities).
"""

from __future__ import annotations

import json
import re
from typing import Any

from pypto.errors import ToolchainError
from pypto.toolchain.doctor import Check
from pypto.toolchain.images import (
    FLAVORS,
    LABEL_FLAVOR,
    LABEL_INPUTS,
    LABEL_MANIFEST,
    LABEL_VERSION,
    has_torch,
)
from pypto.toolchain.manifest import Manifest

_PROBE = r"""
import hashlib, json, subprocess
from importlib import metadata
def read(p):
    try:
        return open(p, "rb").read()
    except OSError:
        return None
manifest = read("/opt/pypto/toolchain.toml")
lock = read("/opt/pypto/image.lock")
verify = subprocess.run(["pypto", "toolchain", "verify", "--json"], capture_output=True, text=True)
print(json.dumps({
    "manifest_sha256": hashlib.sha256(manifest).hexdigest() if manifest is not None else None,
    "lock": lock.decode() if lock is not None else None,
    "image_json": (read("/opt/pypto/image.json") or b"null").decode(),
    "installed": {d.metadata["Name"].lower().replace("_", "-"): d.version for d in metadata.distributions()},
    "verify": verify.stdout, "verify_exit": verify.returncode, "verify_stderr": verify.stderr[-2000:],
}))
"""
_LOCK_LINE = re.compile(r"^([A-Za-z0-9_.-]+)==(\S+)\s+--hash=sha256:([0-9a-f]{64})$", re.M)


def check_labels(labels: dict[str, str], manifest: Manifest) -> list[Check]:
    """The identity labels against the manifest."""
    flavor = labels.get(LABEL_FLAVOR)
    want = {LABEL_VERSION: manifest.version, LABEL_MANIFEST: manifest.sha256,
            "io.pypto.toolchain.ptoas.version": manifest.ptoas.version}
    checks = [Check(f"label {k}", labels.get(k) == v, f"{labels.get(k) or '<missing>'}" +
                    ("" if labels.get(k) == v else f" (manifest: {v})")) for k, v in want.items()]
    checks.append(Check(f"label {LABEL_FLAVOR}", flavor in FLAVORS, f"{flavor or '<missing>'}"))
    checks.append(Check(f"label {LABEL_INPUTS}", bool(labels.get(LABEL_INPUTS)), labels.get(LABEL_INPUTS) or "<missing>"))
    return checks


def expected_pins(manifest: Manifest, flavor: str) -> dict[str, tuple[str, str | None]]:
    """{name: (version, sha256 or None)} the flavor must carry: the checkout's lock, else the manifest."""
    from pypto.toolchain import wheelhouse

    try:
        pins = {p.name: (p.version, p.sha256) for p in wheelhouse.flavor_pins(manifest, has_torch(flavor))}
    except ToolchainError:  # no checkout (a plain install): versions only, from the manifest
        pins = {wheelhouse.normalize(n): (v, None) for n, v in manifest.image.flavor_wheels(has_torch(flavor)).items()}
        pins["ptoas"] = (manifest.ptoas.version, manifest.ptoas.sha256)
    return pins


def check_contents(facts: dict[str, Any], manifest: Manifest, flavor: str) -> list[Check]:
    """What the probe found inside the image against the manifest and the lock."""
    from pypto.toolchain.wheelhouse import normalize

    sha = facts.get("manifest_sha256")
    checks = [Check("manifest inside", sha == manifest.sha256,
                    f"/opt/pypto/toolchain.toml sha256 {sha or '<missing>'}"
                    + ("" if sha == manifest.sha256 else f" (manifest: {manifest.sha256})"))]
    locked = {normalize(n): (v, h) for n, v, h in _LOCK_LINE.findall(facts.get("lock") or "")}
    want = expected_pins(manifest, flavor)
    ptoas = locked.get("ptoas", ("", ""))
    checks.append(Check("ptoas sha256", ptoas[1] == manifest.ptoas.sha256,
                        f"image.lock pins ptoas=={ptoas[0] or '?'} sha256 {ptoas[1] or '<missing>'}"))
    bad_lock = sorted(n for n, (v, h) in want.items() if n in locked and (locked[n][0] != v or (h and locked[n][1] != h)))
    missing = sorted(set(want) - set(locked))
    extra = sorted(set(locked) - set(want) - {"pypto"})
    checks.append(Check("image.lock", not (bad_lock or missing or extra) and bool(locked),
                        f"{len(locked)} pins" + "".join(f"; {what}: {', '.join(names)}" for what, names in
                                                        (("differ", bad_lock), ("missing", missing),
                                                         ("unexpected", extra)) if names)))
    installed = facts.get("installed") or {}
    wrong = sorted(f"{n} {installed.get(n, 'absent')} (pinned {v})" for n, (v, _) in want.items()
                   if installed.get(n) != v)
    torch_ok = ("torch" in installed) == has_torch(flavor)
    checks.append(Check("installed versions", not wrong, "; ".join(wrong) or f"{len(want)} pinned wheels installed"))
    checks.append(Check("torch", torch_ok, f"{installed.get('torch', 'absent')} (flavor {flavor} "
                        f"{'carries' if has_torch(flavor) else 'leaves out'} torch)"))
    checks.append(_inner_verify(facts))
    return checks


def _inner_verify(facts: dict[str, Any]) -> Check:
    try:
        report = json.loads(facts.get("verify") or "")
    except ValueError:
        return Check("pypto toolchain verify (in the image)", False,
                     f"exit {facts.get('verify_exit')}: {facts.get('verify_stderr', '').strip()[-300:]}")
    failed = [c["name"] for c in report.get("checks", []) if not c.get("ok")]
    return Check("pypto toolchain verify (in the image)", bool(report.get("ok")),
                 f"failed: {', '.join(failed)}" if failed else f"{len(report.get('checks', []))} checks passed")


def probe(client: Any, ref: str) -> dict[str, Any]:
    """Run the probe script in the image (sandboxed) and return what it found."""
    from pypto.toolchain.docker import PIDS_LIMIT, TMPFS, docker_sdk

    docker = docker_sdk()
    repro = f"docker run --rm --network none --entrypoint python {ref} -c '<probe>'"
    container = client.containers.create(ref, command=["-c", _PROBE], entrypoint=["python"], network_mode="none",
                                         cap_drop=["ALL"], security_opt=["no-new-privileges"], read_only=True,
                                         tmpfs=dict(TMPFS), pids_limit=PIDS_LIMIT, detach=True, user="65534:65534",
                                         environment={"HOME": "/tmp", "PYPTO_CACHE_DIR": "/opt/pypto/cache"},
                                         labels={"io.pypto.launcher": "1"})
    try:
        container.start()
        code = container.wait(timeout=300).get("StatusCode", 1)
        out = container.logs(stdout=True, stderr=False).decode(errors="replace")
        if code != 0:
            err = container.logs(stdout=False, stderr=True).decode(errors="replace")
            raise ToolchainError(f"The verification probe failed in {ref} (exit {code})", stderr=err[-2000:], repro=repro)
        return json.loads(out.strip().splitlines()[-1])
    except docker.errors.APIError as exc:
        raise ToolchainError(f"The engine failed running the probe in {ref}: {exc}", repro=repro) from None
    finally:
        container.remove(force=True)


def verify_image(ref: str, manifest: Manifest) -> list[Check]:
    """Every check of an image (labels first; contents when the labels name a known flavor)."""
    from pypto.toolchain.docker import check_image_argument, docker_client, docker_sdk

    check_image_argument(ref)
    client = docker_client()
    try:
        image = client.images.get(ref)
    except docker_sdk().errors.ImageNotFound:
        raise ToolchainError(f"Image '{ref}' is not present in the local engine", repro=f"docker image inspect {ref}",
                             hint="build it with: python -m pypto.toolchain.images build --flavor sim") from None
    labels = dict(image.labels or {})
    checks = [Check("image", True, f"{ref} {image.id[:19]} ({image.attrs.get('Size', 0) / 2**20:.0f} MB)"),
              *check_labels(labels, manifest)]
    flavor = labels.get(LABEL_FLAVOR)
    if flavor in FLAVORS:
        checks += check_contents(probe(client, ref), manifest, flavor)
    return checks
