"""Build the toolchain images (``sim``, ``hw``) from a manifest, with content-hash tags and labels.

The build context is assembled on the host: a hash-verified wheelhouse
(:mod:`pypto.toolchain.wheelhouse`), an ``image.lock`` pinning every wheel (the project's own
included), the manifest, ``image.json`` (flavor, contents), the smoke test. The tag is
``pypto-<toolchain>-<flavor>:<hash12>`` where the hash covers every context file and build
argument, so an existing tag means "already built from these inputs".

Flavors: ``sim`` (CPU simulator + CPU torch, for upstream-style programs that ``import torch``),
``sim-slim`` (the same without torch), ``hw`` (``sim`` + CANN + simpler from installers you supply).

    python -m pypto.toolchain.images build --flavor sim
    python -m pypto.toolchain.images tag --flavor sim      # the tag a build would produce (for CI pulls)
    python -m pypto.toolchain.images build --flavor hw --installers DIR
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pypto.errors import InternalError, PyptoError, ToolchainError
from pypto.toolchain import wheelhouse
from pypto.toolchain.build_progress import BuildProgress
from pypto.toolchain.hw_installers import check_installers, hw_required
from pypto.toolchain.image_normalize import normalize_image
from pypto.toolchain.image_prune import drop_leftovers, prune_command, tag_cache_stage
from pypto.toolchain.manifest import Manifest, load_manifest
from pypto.toolchain.settings import subprocess_env

LABEL_PREFIX = "io.pypto"
LABEL_VERSION = f"{LABEL_PREFIX}.toolchain.version"
LABEL_MANIFEST = f"{LABEL_PREFIX}.toolchain.manifest-sha256"
LABEL_FLAVOR = f"{LABEL_PREFIX}.image.flavor"
LABEL_INPUTS = f"{LABEL_PREFIX}.image.inputs-sha256"
FLAVORS = ("sim", "sim-slim", "hw")
DOCKERFILES = {"sim": "sim.Dockerfile", "sim-slim": "sim.Dockerfile", "hw": "hw.Dockerfile"}
IMAGE_JSON = "/opt/pypto/image.json"
"""Inside every image: flavor, toolchain, repository, and whether torch is installed."""


def repo() -> Path:
    """The source checkout images are built from (see :func:`wheelhouse.find_checkout`)."""
    return wheelhouse.find_checkout()


def docker_dir() -> Path:
    return repo() / "docker"


def has_torch(flavor: str) -> bool:
    """Whether a flavor's image carries CPU torch (``sim`` and ``hw`` do, ``sim-slim`` does not)."""
    return flavor != "sim-slim"


@dataclass(frozen=True, slots=True)
class BuildOptions:
    """Knobs of one image build (the flags of ``python -m pypto.toolchain.images build``)."""

    flavor: str = "sim"
    toolchain: str | None = None
    """Toolchain version (None: the newest manifest)."""
    base_image: str | None = None
    """Base image reference (None: the debootstrap base; for ``hw``: the matching sim image)."""
    installers: Path | None = None
    """``hw`` only: directory with the CANN installers and the simpler archive."""
    rebuild: bool = False
    no_cache: bool = False
    """Ignore the engine's layer cache (to check that a rebuild reproduces the image)."""
    normalize: bool = True
    """Rewrite the config's ``created`` times to SOURCE_DATE_EPOCH (see :mod:`image_normalize`)."""
    wheelhouse: Path | None = None
    """Host download cache for the image's wheels (None: ``<checkout>/wheelhouse``, git-ignored)."""
    smoke_examples: tuple[Path, ...] | None = None
    """Example scripts the build-time smoke test runs (None: the first beginner example)."""
    debian_mirror: str | None = None
    """Mirror for debootstrap (None: the host's apt sources, else the manifest's)."""
    source_date_epoch: str | None = None
    """Timestamp for reproducible outputs (None: the checkout's last commit time)."""


@dataclass(frozen=True, slots=True)
class BuildPlan:
    """Everything that determines one image: context dir, Dockerfile, build args, labels, tag."""

    flavor: str
    context: Path
    dockerfile: str
    buildargs: dict[str, str]
    labels: dict[str, str]
    tag: str
    inputs_sha256: str


@dataclass(frozen=True, slots=True)
class BuiltImage:
    """Result of :func:`build_image` (also printed as JSON by the CLI)."""

    tag: str
    id: str
    flavor: str
    size_mb: float
    seconds: float
    cached: bool
    base_image: str
    labels: dict[str, str] = field(default_factory=dict)


def build_command(flavor: str, toolchain: str) -> str:
    """The copy-pasteable command that builds the image the launcher needs."""
    extra = " --installers DIR" if flavor == "hw" else ""
    return f"python -m pypto.toolchain.images build --flavor {flavor} --toolchain {toolchain}{extra}"


def image_repository(manifest: Manifest, flavor: str) -> str:
    return f"pypto-{manifest.version}-{flavor}"


def source_date_epoch(options: BuildOptions) -> str:
    """The option, else the checkout's last commit time, else 0."""
    if options.source_date_epoch:
        return options.source_date_epoch
    proc = subprocess.run(["git", "-C", str(repo()), "log", "-1", "--format=%ct"], capture_output=True, text=True)
    return proc.stdout.strip() if proc.returncode == 0 and proc.stdout.strip() else "0"


def _git_revision() -> str:
    proc = subprocess.run(["git", "-C", str(repo()), "rev-parse", "HEAD"], capture_output=True, text=True)
    return proc.stdout.strip() if proc.returncode == 0 else "unknown"


def _run(argv: list[str], what: str, extra_env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(argv, capture_output=True, text=True, env=subprocess_env(extra_env))
    if proc.returncode != 0:
        raise ToolchainError(f"{what} failed (exit {proc.returncode})", stderr=proc.stderr[-4000:],
                             repro=shlex.join(argv))
    return proc.stdout


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _require_checkout() -> None:
    repo()  # raises ToolchainError naming what is missing


def wheelhouse_dir(options: BuildOptions) -> Path:
    return options.wheelhouse or repo() / "wheelhouse"


def fetch_wheels(manifest: Manifest, dest: Path, flavor: str = "sim") -> dict[str, str]:
    """Download/verify the flavor's locked wheels plus ptoas into ``dest``; {file name: sha256}."""
    _log(f"wheelhouse: verifying {'all' if has_torch(flavor) else 'the sim-slim'} locked wheels in {dest}")
    return wheelhouse.fetch(manifest, dest, with_torch=has_torch(flavor))


def build_project_wheel(dest: Path, epoch: str) -> Path:
    """Build this checkout's pypto wheel (deterministic under SOURCE_DATE_EPOCH)."""
    argv = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(dest), str(repo())]
    _run(argv, "Building the pypto wheel", {"SOURCE_DATE_EPOCH": epoch})
    wheels = sorted(dest.glob("pypto-*.whl"))
    if len(wheels) != 1:
        raise InternalError(f"expected one pypto wheel in {dest}, found {[w.name for w in wheels]}")
    return wheels[0]


def _lock_lines(files: dict[str, str], project: Path) -> list[str]:
    lines = []
    for name, digest in sorted({**files, project.name: _sha256(project)}.items()):
        dist, version = name.split("-")[:2]
        lines.append(f"{dist.replace('_', '-')}=={version} --hash=sha256:{digest}")
    return lines


def smoke_examples(options: BuildOptions) -> list[Path]:
    """Example scripts the build-time smoke test runs; default: the first beginner example."""
    if options.smoke_examples is not None:
        return list(options.smoke_examples)
    return sorted((repo() / "examples" / "beginner").glob("*.py"))[:1]


def assemble_context(manifest: Manifest, options: BuildOptions, ctx: Path, epoch: str) -> None:
    """Fill ``ctx`` with the Dockerfile, wheelhouse, image.lock, manifest and smoke inputs."""
    _require_checkout()
    source = wheelhouse_dir(options)
    files = fetch_wheels(manifest, source, options.flavor)
    wh, proj = ctx / "wheelhouse", ctx / "project"
    wh.mkdir(parents=True)
    for name in files:
        _link_or_copy(source / name, wh / name)
    project = build_project_wheel(proj, epoch)
    lines = _lock_lines(files, project)
    (ctx / "image.lock").write_text("\n".join(lines) + "\n")
    mine = [line for line in lines if line.startswith("pypto==")]
    (ctx / "deps.lock").write_text("\n".join(line for line in lines if line not in mine) + "\n")
    (proj / "pypto.lock").write_text("\n".join(mine) + "\n")
    (ctx / "image.json").write_text(json.dumps(image_facts(manifest, options.flavor), indent=1, sort_keys=True) + "\n")
    shutil.copy2(manifest.path, ctx / "toolchain.toml")
    shutil.copy2(docker_dir() / DOCKERFILES[options.flavor], ctx / "Dockerfile")
    smoke = ctx / "smoke"
    smoke.mkdir()
    shutil.copy2(docker_dir() / "smoke.sh", smoke / "smoke.sh")
    shutil.copy2(docker_dir() / "clamp-mtimes.sh", ctx / "clamp-mtimes.sh")
    examples = smoke_examples(options)
    for example in examples:  # keep examples/<group>/<file> so their `parents[1]` import of _common works
        dest = smoke / "examples" / example.parent.name / example.name
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(example, dest)
    if examples and (repo() / "examples" / "_common.py").is_file():
        shutil.copy2(repo() / "examples" / "_common.py", smoke / "examples" / "_common.py")


def image_facts(manifest: Manifest, flavor: str) -> dict[str, Any]:
    """``/opt/pypto/image.json``: what the image is and carries (error messages inside it read this)."""
    torch = manifest.image.torch_wheels.get("torch") if has_torch(flavor) else None
    return {"repository": image_repository(manifest, flavor), "flavor": flavor, "toolchain": manifest.version,
            "torch": torch, "flavors_with_torch": [f for f in FLAVORS if has_torch(f)],
            "torch_pin": manifest.image.torch_wheels.get("torch")}


def inputs_hash(ctx: Path, buildargs: dict[str, str]) -> str:
    """sha256 over every context file (path + content) and the build arguments."""
    h = hashlib.sha256()
    for path in sorted(p for p in ctx.rglob("*") if p.is_file()):
        rel = path.relative_to(ctx).as_posix()
        if rel.startswith("project/pypto-"):
            continue  # covered by image.lock's hash line; wheel names carry no extra information
        h.update(f"{rel}\0{_sha256(path)}\n".encode())
    h.update(json.dumps(buildargs, sort_keys=True).encode())
    return h.hexdigest()


def build_args(manifest: Manifest, flavor: str, base_image: str, epoch: str) -> dict[str, str]:
    """Every pinned value the Dockerfiles need, taken from the manifest."""
    args = {
        "BASE_IMAGE": base_image,
        "PYTHON_VERSION": manifest.python.version,
        "GXX_MIN": str(manifest.compilers.gxx_min),
        "TOOLCHAIN_VERSION": manifest.version,
        "PTOAS_VERSION": manifest.ptoas.version,
        "SOURCE_DATE_EPOCH": epoch,
    }
    if flavor == "hw":
        cann = manifest.hardware.cann
        args.update({"CANN_VERSION": cann.version, "CANN_TOOLKIT": cann.toolkit_installer,
                     "SIMPLER_COMMIT": manifest.hardware.simpler.commit})
    return args


def image_labels(manifest: Manifest, flavor: str, inputs: str, epoch: str) -> dict[str, str]:
    """OCI labels plus ours (toolchain version, manifest sha256, flavor, inputs hash)."""
    from importlib.metadata import version

    created = datetime.fromtimestamp(int(epoch), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        "org.opencontainers.image.title": image_repository(manifest, flavor),
        "org.opencontainers.image.description": f"pypto toolchain {manifest.version} ({flavor}): {manifest.description}",
        "org.opencontainers.image.version": version("pypto"),
        "org.opencontainers.image.revision": _git_revision(),
        "org.opencontainers.image.created": created,
        "org.opencontainers.image.licenses": "Apache-2.0",
        LABEL_VERSION: manifest.version,
        LABEL_MANIFEST: manifest.sha256,
        LABEL_FLAVOR: flavor,
        LABEL_INPUTS: inputs,
        f"{LABEL_PREFIX}.toolchain.ptoas.version": manifest.ptoas.version,
    }


def plan_build(manifest: Manifest, options: BuildOptions, base_image: str, ctx: Path) -> BuildPlan:
    """Assemble the context in ``ctx`` and derive build args, labels and the content-hash tag."""
    flavor = options.flavor
    if flavor not in FLAVORS:
        raise ToolchainError(f"Unknown image flavor '{flavor}'", hint=f"use one of {', '.join(FLAVORS)}")
    epoch = source_date_epoch(options)
    if flavor == "hw":
        stage_installers(manifest, options.installers, ctx)
    else:
        assemble_context(manifest, options, ctx, epoch)
    clamp_times(ctx, int(epoch))
    args = build_args(manifest, flavor, base_image, epoch)
    digest = inputs_hash(ctx, args)
    return BuildPlan(flavor, ctx, "Dockerfile", args, image_labels(manifest, flavor, digest, epoch),
                     f"{image_repository(manifest, flavor)}:{digest[:12]}", digest)


def clamp_times(ctx: Path, epoch: int) -> None:
    """Give every context file and directory the mtime ``epoch`` (COPY keeps mtimes in the layer)."""
    for path in sorted(ctx.rglob("*"), reverse=True):
        os.utime(path, (epoch, epoch), follow_symlinks=False)


def stage_installers(manifest: Manifest, installers: Path | None, ctx: Path) -> None:
    """Check the installers (see :func:`check_installers`) and stage them with the hw Dockerfile in ``ctx``."""
    _require_checkout()
    sums, simpler = check_installers(manifest, installers)
    assert installers is not None
    staged = ctx / "installers"
    staged.mkdir(parents=True)
    for name, _, _ in hw_required(manifest):
        _link_or_copy(installers / name, staged / name)
    shutil.copy2(simpler, staged / "simpler.tar.gz")
    (staged / "SHA256SUMS").write_text("\n".join(sums) + "\n")
    (ctx / "image.json").write_text(json.dumps(image_facts(manifest, "hw"), indent=1, sort_keys=True) + "\n")
    shutil.copy2(docker_dir() / DOCKERFILES["hw"], ctx / "Dockerfile")


def _link_or_copy(src: Path, dst: Path) -> None:
    try:
        os.link(src, dst)  # installers are large; a hard link avoids a copy on the same filesystem
    except OSError:
        shutil.copy2(src, dst)


def _client() -> Any:
    from pypto.toolchain.engine import docker_client
    from pypto.toolchain.settings import tool_timeout

    return docker_client(timeout=max(900.0, tool_timeout("docker_timeout_s")))  # image save/load of ~2 GB


def _sdk() -> Any:
    from pypto.toolchain.engine import docker_sdk

    return docker_sdk()


def base_tag(manifest: Manifest) -> str:
    """Tag of the debootstrap base: suite, variant and the script's content."""
    pin = manifest.base_image
    digest = hashlib.sha256(f"{pin.suite}|{pin.debootstrap_variant}|".encode()
                            + (docker_dir() / "make_base.sh").read_bytes()).hexdigest()
    return f"pypto-base-{pin.suite}:{digest[:12]}"


def ensure_base(manifest: Manifest, client: Any, options: BuildOptions) -> str:
    """Build the debootstrap base unless an image with its tag exists; return the tag."""
    docker = _sdk()

    tag = base_tag(manifest)
    try:
        client.images.get(tag)
        return tag
    except docker.errors.ImageNotFound:
        pass
    pin = manifest.base_image
    argv = ["bash", str(docker_dir() / "make_base.sh"), "--suite", pin.suite, "--variant", pin.debootstrap_variant,
            "--tag", tag, "--fallback-mirror", pin.mirror]
    if options.debian_mirror:
        argv += ["--mirror", options.debian_mirror]
    epoch = source_date_epoch(options)
    if os.geteuid() != 0 and shutil.which("sudo"):  # debootstrap needs root (CI runners: passwordless sudo)
        argv = ["sudo", "-n", f"SOURCE_DATE_EPOCH={epoch}", *argv]
        _log("debootstrap needs root: running make_base.sh through `sudo -n` "
             "(or pass --base-image REF to start from a registry image)")
    _log(f"building base image {tag} (debootstrap {pin.suite})")
    _run(argv, "Building the debootstrap base image", {"SOURCE_DATE_EPOCH": epoch})
    return tag


def _log(msg: str) -> None:
    print(f"pypto-images: {msg}", file=sys.stderr, flush=True)


def run_build(client: Any, plan: BuildPlan, no_cache: bool, progress: BuildProgress) -> str:
    """docker build through the engine API, its output fed to ``progress``; return the image id."""
    repro = shlex.join(["docker", "build", "-t", plan.tag, *[x for k, v in plan.buildargs.items()
                                                              for x in ("--build-arg", f"{k}={v}")],
                        str(plan.context)])
    image_id = ""
    for chunk in client.api.build(path=str(plan.context), dockerfile=plan.dockerfile, tag=plan.tag,
                                  buildargs=plan.buildargs, labels=plan.labels, rm=True, forcerm=True,
                                  nocache=no_cache, decode=True):
        if "stream" in chunk:
            progress.feed(chunk["stream"])
        if "error" in chunk:
            raise ToolchainError(f"Building {plan.tag} failed at step {progress.step}/{progress.total}: "
                                 f"{chunk['error'].strip()}", stderr=progress.failure_tail(), repro=repro,
                                 hint=f"the build context is kept in {plan.context}")
        image_id = chunk.get("aux", {}).get("ID", image_id)
    return image_id or client.images.get(plan.tag).id


def build_image(options: BuildOptions | None = None, *, verbose: bool = False) -> BuiltImage:
    """Build (or reuse, when the content-hash tag exists) an image for a toolchain."""
    docker = _sdk()

    options = options or BuildOptions()
    if options.flavor not in FLAVORS:
        raise ToolchainError(f"Unknown image flavor '{options.flavor}'", hint=f"use one of {', '.join(FLAVORS)}")
    manifest = load_manifest(options.toolchain)
    if options.flavor == "hw":
        check_installers(manifest, options.installers)  # refuse before spending minutes on the sim image
    client = _client()
    start = time.monotonic()
    base_image = options.base_image
    if options.flavor == "hw":
        base_image = base_image or build_image(replace(options, flavor="sim", base_image=None), verbose=verbose).tag
    else:
        base_image = base_image or ensure_base(manifest, client, options)
    ctx = Path(tempfile.mkdtemp(prefix=f"pypto-image-{options.flavor}-"))
    plan = plan_build(manifest, options, base_image, ctx)
    try:
        image = None if options.rebuild else client.images.get(plan.tag)
    except docker.errors.ImageNotFound:
        image = None
    cached = image is not None
    with BuildProgress(plan.tag, verbose=verbose) as progress:
        if image is None:
            built_id = run_build(client, plan, options.no_cache, progress)
            tag_cache_stage(client, progress.stages, plan.tag)
            if options.normalize:
                progress.note("normalizing the config's timestamps (reproducible image ID)")
                normalize_image(client, plan.tag, int(plan.buildargs["SOURCE_DATE_EPOCH"]))
                _drop_dangling(client, built_id)
            image = client.images.get(plan.tag)
        drop_leftovers(client)
    size_mb = round(image.attrs["Size"] / 2**20, 1)
    progress.summary(plan.tag, image.id, size_mb, cached_image=cached)
    shutil.rmtree(ctx, ignore_errors=True)
    return BuiltImage(plan.tag, image.id, options.flavor, size_mb, round(time.monotonic() - start, 1), cached,
                      base_image, dict(image.labels))


def _drop_dangling(client: Any, image_id: str) -> None:
    """Remove the pre-normalization image (now untagged); it only shares layers with the result."""
    try:
        client.images.remove(image_id)
    except Exception:  # noqa: BLE001 - still referenced (e.g. by a container): the engine keeps it
        pass


def image_tag(options: BuildOptions) -> str:
    """The tag a build with these options produces (assembles the context; no engine needed for sim)."""
    manifest = load_manifest(options.toolchain)
    if options.base_image is None and options.flavor != "hw":
        options = replace(options, base_image=base_tag(manifest))
    if options.base_image is None:
        raise ToolchainError("The hw tag depends on the sim image it is built on", hint="pass --base-image SIM_TAG")
    with tempfile.TemporaryDirectory(prefix=f"pypto-image-{options.flavor}-") as ctx:
        return plan_build(manifest, options, options.base_image, Path(ctx)).tag


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m pypto.toolchain.images", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="build (or reuse) an image; prints its tag, id, size and time as JSON")
    t = sub.add_parser("tag", help="print the tag a build would produce, without building (CI: pull by this tag)")
    for p in (b, t):
        p.add_argument("--flavor", choices=FLAVORS, default="sim",
                       help="sim: simulator + CPU torch; sim-slim: without torch; hw: sim + CANN + simpler")
        p.add_argument("--base-image", help="base image reference (default: a debootstrap base built here)")
        p.add_argument("--installers", type=Path, help="hw only: directory with the CANN installers and simpler archive")
        p.add_argument("--wheelhouse", type=Path, help="wheel download cache (default: <checkout>/wheelhouse)")
        p.add_argument("--smoke-example", action="append", type=Path, dest="smoke_examples",
                       help="example script the smoke test runs (repeatable; default: the first beginner example)")
        p.add_argument("--no-smoke-examples", action="store_true", help="smoke test without running examples")
    b.add_argument("--rebuild", action="store_true", help="build even if the tag exists")
    b.add_argument("--no-cache", action="store_true", help="with --rebuild: ignore the engine's layer cache")
    b.add_argument("--keep-timestamps", action="store_false", dest="normalize",
                   help="keep the builder's wall-clock `created` times (the image ID then differs per build)")
    b.add_argument("-v", "--verbose", action="store_true", help="print every build output line (without a TTY)")
    pr = sub.add_parser("prune", help="remove dangling pypto images and all but the newest --keep tags per repository")
    pr.add_argument("--keep", type=int, default=1, help="tags to keep per pypto repository (default: 1)")
    pr.add_argument("--older-than", type=float, default=1800.0, dest="older_than_s", metavar="SECONDS",
                    help="dangling images younger than this may be a running build's; kept (default: 1800)")
    for p in (b, t, sub.add_parser("base", help="build (or reuse) the debootstrap base image; prints its tag")):
        p.add_argument("--toolchain", help="toolchain version (default: newest manifest)")
        p.add_argument("--debian-mirror", help="debootstrap mirror (default: this host's apt sources)")
        p.add_argument("--source-date-epoch", help="timestamp for reproducible outputs (default: last commit)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = vars(_parser().parse_args(argv))
    command = args.pop("command")
    if command == "prune":
        return prune_command(_client, args["keep"], args["older_than_s"])
    verbose = args.pop("verbose", False)
    if args.pop("no_smoke_examples", False):
        args["smoke_examples"] = ()
    if args.get("smoke_examples"):
        args["smoke_examples"] = tuple(p.resolve() for p in args["smoke_examples"])
    options = BuildOptions(**args)
    try:
        if command == "base":
            print(ensure_base(load_manifest(options.toolchain), _client(), options))
            return 0
        if command == "tag":
            print(image_tag(options))
            return 0
        built = build_image(options, verbose=verbose)
    except PyptoError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(asdict(built), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
