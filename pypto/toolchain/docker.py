"""Run pypto inside the toolchain image (docker SDK): identity check, hardened sandbox, full cleanup.

The container gets the source read-only at ``/src`` and the output dir read-write at ``/out``, runs
as the caller's uid:gid with no network, no capabilities, no-new-privileges, a read-only root and a
tmpfs ``/tmp``. Its output is streamed, its exit code returned, and it is removed on every path
(Ctrl-C and timeouts included). Engine failures become :class:`ToolchainError` with a repro command.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
import tempfile
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any

from pypto.errors import ToolchainError, UserError
from pypto.toolchain.engine import check_image_argument, docker_client, docker_sdk, engine_deadline
from pypto.toolchain.images import LABEL_FLAVOR, LABEL_MANIFEST, LABEL_VERSION, build_command
from pypto.toolchain.manifest import Manifest
from pypto.toolchain.settings import Settings, env_var

CONTAINER_SRC = "/src"
CONTAINER_OUT = "/out"
CONTAINER_HOME = "/tmp/home"
CONTAINER_CACHE = "/tmp/cache/pypto"
# exec is allowed on /tmp: the simulator dlopen()s kernels it builds into its cache.
TMPFS = {"/tmp": "rw,exec,nosuid,nodev,size=1g"}
PIDS_LIMIT = 512
KILL_TIMEOUT_S = 10
FORWARDED_SETTINGS = ("platform", "runtime", "toolchain", "verify_level", "warning_level", "log_level",
                      "log_format", "compile_profiling", "emit_pto_loc", "codegen_max_workers", "emit_debug_runner",
                      "ptoas_timeout_s", "build_timeout_s", "run_max_bytes")  # the tools inside keep their limits
ALWAYS_FORWARDED = ("platform", "runtime", "toolchain")
ENGINE_EXIT_CODES = {
    125: "the container engine could not run the container",
    126: "the image's entrypoint (pypto) could not be executed",
    127: "the image's entrypoint (pypto) was not found in the image",
    137: "the container was killed (SIGKILL: out of memory, or killed from outside)",
}


@dataclass(frozen=True, slots=True)
class Mount:
    """One bind mount."""

    host: str
    container: str
    read_only: bool


@dataclass(frozen=True, slots=True)
class RunSpec:
    """A fully decided container run; renders to SDK kwargs and to an equivalent ``docker run``."""

    image: str
    argv: tuple[str, ...]
    user: str | None
    mounts: tuple[Mount, ...]
    environment: dict[str, str] = field(default_factory=dict)
    workdir: str = CONTAINER_SRC
    userns_mode: str | None = None
    entrypoint: tuple[str, ...] | None = None
    """None: the image's (``pypto``)."""
    labels: dict[str, str] = field(default_factory=dict)
    """Extra container labels (``pypto sweep`` marks its containers to reap dead attempts' ones)."""

    def create_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``client.containers.create``."""
        from docker.types import Mount as DockerMount

        kwargs: dict[str, Any] = dict(
            image=self.image, command=list(self.argv), user=self.user, environment=dict(self.environment),
            working_dir=self.workdir, network_mode="none", cap_drop=["ALL"], security_opt=["no-new-privileges"],
            read_only=True, tmpfs=dict(TMPFS), init=True, pids_limit=PIDS_LIMIT, detach=True,
            mounts=[DockerMount(m.container, m.host, type="bind", read_only=m.read_only) for m in self.mounts],
            labels={**self.labels, "io.pypto.launcher": "1"},
        )
        if self.userns_mode:
            kwargs["userns_mode"] = self.userns_mode
        if self.entrypoint:
            kwargs["entrypoint"] = list(self.entrypoint)
        return {k: v for k, v in kwargs.items() if v is not None}

    def cli_argv(self, *, interactive: bool = False, entrypoint: str | None = None) -> list[str]:
        """The same run as a ``docker run`` command line."""
        argv = ["docker", "run", "--rm", "--init", "--network", "none", "--cap-drop", "ALL",
                "--security-opt", "no-new-privileges", "--read-only", "--pids-limit", str(PIDS_LIMIT)]
        argv += [x for path, opts in TMPFS.items() for x in ("--tmpfs", f"{path}:{opts}")]
        if interactive:
            argv.append("-it")
        if self.user:
            argv += ["--user", self.user]
        if self.userns_mode:
            argv += ["--userns", self.userns_mode]
        for m in self.mounts:
            argv += ["--mount", f"type=bind,src={m.host},dst={m.container}" + (",readonly" if m.read_only else "")]
        argv += [x for k, v in sorted(self.environment.items()) for x in ("-e", f"{k}={v}")]
        argv += [x for k, v in sorted(self.labels.items()) for x in ("--label", f"{k}={v}")]
        argv += ["-w", self.workdir]
        entry = [entrypoint] if entrypoint else list(self.entrypoint or ())
        if entry:
            argv += ["--entrypoint", entry[0]]
        return [*argv, self.image, *entry[1:], *self.argv]

    def repro(self) -> str:
        return shlex.join(self.cli_argv())


def image_flavor(settings: Settings) -> str:
    """``sim`` for simulated platforms, ``hw`` for hardware ones."""
    return "sim" if settings.platform_info.simulated else "hw"


def usable_flavors(settings: Settings) -> tuple[str, ...]:
    """Flavors that can serve the platform, preferred first (``sim-slim`` lacks only torch)."""
    return ("sim", "sim-slim") if settings.platform_info.simulated else ("hw",)


def check_image_labels(ref: str, labels: dict[str, str] | None, manifest: Manifest, flavor: str | tuple[str, ...]) -> None:
    """Refuse an image whose toolchain labels do not match the manifest (names the build command)."""
    labels = labels or {}
    flavors = (flavor,) if isinstance(flavor, str) else flavor
    want = {LABEL_VERSION: manifest.version, LABEL_MANIFEST: manifest.sha256}
    wrong = {k: labels.get(k) for k, v in want.items() if labels.get(k) != v}
    if labels.get(LABEL_FLAVOR) not in flavors:
        wrong[LABEL_FLAVOR] = labels.get(LABEL_FLAVOR)
        want[LABEL_FLAVOR] = " or ".join(flavors)
    if wrong:
        got = ", ".join(f"{k}={v or '<missing>'}" for k, v in wrong.items())
        exp = ", ".join(f"{k}={want[k]}" for k in wrong)
        raise ToolchainError(
            f"Image '{ref}' does not match toolchain {manifest.version}: it has {got}; expected {exp}. "
            "Refusing to compile with a different toolchain than the one selected.",
            hint=f"build the matching image with: {build_command(flavors[0], manifest.version)}",
        )


def select_image(client: Any, settings: Settings, image: str | None = None) -> Any:
    """The image for the active toolchain: the given/configured reference, else the newest labelled one
    (a ``sim`` image before a ``sim-slim`` one)."""
    docker = docker_sdk()
    manifest, flavors = settings.manifest, usable_flavors(settings)
    ref = image or settings.container_image
    if ref:
        try:
            found = client.images.get(ref)
        except docker.errors.ImageNotFound:
            raise ToolchainError(f"Image '{ref}' is not present in the local engine", repro=f"docker image inspect {ref}",
                                 hint=f"build it with: {build_command(flavors[0], manifest.version)}") from None
        check_image_labels(ref, found.labels, manifest, flavors)
        return found
    candidates = client.images.list(filters={"label": [f"{LABEL_VERSION}={manifest.version}"]})
    candidates = [i for i in candidates if i.labels.get(LABEL_FLAVOR) in flavors]
    matching = [i for i in candidates if i.labels.get(LABEL_MANIFEST) == manifest.sha256]
    if not matching:
        stale = f" ({len(candidates)} image(s) carry another manifest sha256)" if candidates else ""
        raise ToolchainError(f"No '{flavors[0]}' image for toolchain {manifest.version}{stale}",
                             hint=f"build it with: {build_command(flavors[0], manifest.version)}")
    return max(matching, key=lambda i: (-flavors.index(i.labels[LABEL_FLAVOR]), *_preference(i)))


def _preference(image: Any) -> tuple[bool, str]:
    from importlib.metadata import version

    same = image.labels.get("org.opencontainers.image.version") == version("pypto")
    return same, image.attrs.get("Created", "")


def forwarded_env(settings: Settings) -> dict[str, str]:
    """Settings the container must share with the host, as ``PYPTO_*`` variables (defaults left out,
    except the platform, runtime and toolchain, which always travel)."""
    env = {}
    for name in FORWARDED_SETTINGS:
        value = getattr(settings, name)
        if value is None or (name not in ALWAYS_FORWARDED and settings.source_of(name) == "default"):
            continue
        env[env_var(name)] = str(value).lower() if isinstance(value, bool) else str(value)
    return env


def _is_rootless(client: Any) -> bool:
    try:
        return any("rootless" in opt for opt in client.info().get("SecurityOptions") or [])
    except Exception:  # noqa: BLE001 - an info failure only loses the rootless refinement
        return False


def plan_run(argv: Sequence[str], *, settings: Settings, source_dir: Path, output_dir: Path, image: str,
             rootless: bool = False, extra_mounts: Sequence[Mount] = ()) -> RunSpec:
    """Decide mounts, user and environment for one run (pure; no engine calls)."""
    uid, gid = os.getuid(), os.getgid()
    # Rootless engines map container root to the caller, so files written as root there are the caller's.
    # podman run by a non-root user is rootless (podman's keep-id would do the same, but the docker SDK
    # refuses any userns mode other than "host").
    rootless = rootless or (settings.container_engine == "podman" and uid != 0)
    user = None if rootless else f"{uid}:{gid}"
    userns = None
    # The image's /opt/pypto/cache is read-only here; new kernel builds go to the tmpfs.
    env = {"HOME": CONTAINER_HOME, "XDG_CACHE_HOME": "/tmp/cache", "PYPTO_CACHE_DIR": CONTAINER_CACHE,
           "PYPTO_PROG_BUILD_DIR": CONTAINER_OUT, **forwarded_env(settings)}
    mounts = (Mount(str(source_dir.resolve()), CONTAINER_SRC, True),
              Mount(str(output_dir.resolve()), CONTAINER_OUT, False), *extra_mounts)
    env[env_var("container_image")] = image  # error messages inside name the image they ran in
    return RunSpec(image, tuple(argv), user, mounts, env, CONTAINER_SRC, userns)


def to_container_path(path: Path, source_dir: Path, output_dir: Path) -> str:
    """A host path under the source or output dir, as seen inside the container."""
    path = path.resolve()
    for host, inside in ((output_dir.resolve(), CONTAINER_OUT), (source_dir.resolve(), CONTAINER_SRC)):
        if path == host or host in path.parents:
            return f"{inside}/{path.relative_to(host).as_posix()}".rstrip("/.") or inside
    raise UserError(f"{path} is outside the directories mounted into the container ({source_dir}, {output_dir})",
                    hint="pass a source dir that contains it, or copy it there")


@contextmanager
def _identity_files(uid: int, gid: int) -> Iterator[tuple[Mount, ...]]:
    """A passwd/group pair naming the caller (so whoami and ~ work), mounted read-only."""
    with tempfile.TemporaryDirectory(prefix="pypto-id-") as tmp:
        passwd, group = Path(tmp) / "passwd", Path(tmp) / "group"
        passwd.write_text(f"root:x:0:0:root:/root:/bin/sh\npypto:x:{uid}:{gid}:pypto:{CONTAINER_HOME}:/bin/sh\n")
        group.write_text(f"root:x:0:\npypto:x:{gid}:\n")
        for f in (passwd, group):
            f.chmod(0o644)
        Path(tmp).chmod(0o755)
        yield (Mount(str(passwd), "/etc/passwd", True), Mount(str(group), "/etc/group", True))


def _writer(stream: IO[Any]) -> Any:
    buffer = getattr(stream, "buffer", None)
    if buffer is not None:
        return lambda data: (buffer.write(data), buffer.flush())
    return lambda data: (stream.write(data.decode(errors="replace")), stream.flush())


class HostPaths:
    """Rewrites container mount paths (``/out``, ``/src``) to host paths in complete output lines.

    What the CLI prints (the artifact path, ``--json`` results on stdout; diagnostics naming
    ``file:line`` on stderr) then names files the caller can open; partial lines are held until
    their newline arrives. One instance per stream.
    """

    def __init__(self, mounts: tuple[Mount, ...]) -> None:
        pairs = sorted(((m.container.encode(), m.host.encode()) for m in mounts
                        if m.container in (CONTAINER_OUT, CONTAINER_SRC)), key=lambda p: -len(p[0]))
        self.pattern = re.compile(rb"(?<![\w/.-])(" + b"|".join(re.escape(c) for c, _ in pairs) + rb")(?=/|\b|$)") \
            if pairs else None
        self.hosts = dict(pairs)
        self.pending = b""

    def feed(self, data: bytes) -> bytes:
        """The complete lines of ``pending + data``, rewritten; the rest waits for :meth:`flush`."""
        text = self.pending + data
        cut = text.rfind(b"\n") + 1
        self.pending = text[cut:]
        return self._map(text[:cut])

    def flush(self) -> bytes:
        rest, self.pending = self.pending, b""
        return self._map(rest)

    def _map(self, text: bytes) -> bytes:
        if self.pattern is None or not text:
            return text
        return self.pattern.sub(lambda m: self.hosts[m.group(1)], text)


def _pump(client: Any, container_id: str, paths: HostPaths | None = None,
          err_paths: HostPaths | None = None) -> None:
    out, err = _writer(sys.stdout), _writer(sys.stderr)
    try:
        for stdout, stderr in client.api.attach(container_id, stdout=True, stderr=True, stream=True, logs=True,
                                                demux=True):
            if stdout:
                out(paths.feed(stdout) if paths else stdout)
            if stderr:
                err(err_paths.feed(stderr) if err_paths else stderr)
        if paths is not None:
            out(paths.flush())
        if err_paths is not None:
            err(err_paths.flush())
    except (OSError, ValueError):  # our stdout closed, or the engine dropped the stream after a kill
        pass


def _kill(container: Any) -> None:
    try:
        container.kill()
    except Exception:  # noqa: BLE001 - already exited or engine gone; removal below still runs
        pass


def _remove(container: Any) -> None:
    try:
        container.remove(force=True)
    except Exception:  # noqa: BLE001 - removal already in progress or container gone
        pass


def execute(client: Any, spec: RunSpec, timeout: float | None = None) -> int:
    """Create, start, stream, wait; kill on Ctrl-C/timeout; always remove. Returns the exit code."""
    import requests

    docker = docker_sdk()

    try:
        container = client.containers.create(**spec.create_kwargs())
    except docker.errors.ImageNotFound:
        raise ToolchainError(f"Image '{spec.image}' is not present", repro=spec.repro()) from None
    except docker.errors.APIError as exc:
        raise ToolchainError(f"The engine refused to create the container: {exc.explanation or exc}",
                             repro=spec.repro()) from None
    pump: threading.Thread | None = None
    try:
        container.start()
        # pypto's own output names artifact dirs: show host paths; a custom entrypoint's output is left as is
        # (diagnostics on stderr then name file:line as the caller knows the file)
        paths = HostPaths(spec.mounts) if spec.entrypoint is None else None
        err_paths = HostPaths(spec.mounts) if spec.entrypoint is None else None
        pump = threading.Thread(target=_pump, args=(client, container.id, paths, err_paths), daemon=True)
        pump.start()
        try:
            result = container.wait(timeout=timeout) if timeout else container.wait()
        except requests.exceptions.RequestException:
            _kill(container)
            raise ToolchainError(f"The container did not finish within {timeout:g}s and was killed",
                                 repro=spec.repro(), hint="raise the timeout, or run the repro command") from None
        except KeyboardInterrupt:
            _kill(container)
            raise
        pump.join(timeout=KILL_TIMEOUT_S)
        return _exit_code(result, spec)
    except docker.errors.APIError as exc:
        raise ToolchainError(f"The engine failed running the container: {exc.explanation or exc}",
                             repro=spec.repro()) from None
    finally:
        _remove(container)
        if pump is not None:
            pump.join(timeout=KILL_TIMEOUT_S)


def _exit_code(result: dict[str, Any], spec: RunSpec) -> int:
    code = int(result.get("StatusCode", 125))
    if result.get("Error"):
        raise ToolchainError(f"The engine reported an error: {result['Error']}", repro=spec.repro())
    if code in ENGINE_EXIT_CODES:
        raise ToolchainError(f"Container exit {code}: {ENGINE_EXIT_CODES[code]}", repro=spec.repro(),
                             hint="check the image with `pypto doctor` inside it, or rebuild it")
    if code > 128:
        raise ToolchainError(f"Container exit {code}: pypto was killed by signal {code - 128}", repro=spec.repro())
    return code


def run_in_container(argv: Sequence[str], *, settings: Settings, source_dir: Path, output_dir: Path,
                     image: str | None = None, timeout: float | None = None, labels: dict[str, str] | None = None,
                     entrypoint: tuple[str, ...] | None = None) -> int:
    """Run ``pypto <argv>`` in the toolchain image; return its exit code.

    Args:
        argv: arguments after ``pypto`` (paths already mapped with :func:`to_container_path`).
        settings: resolved settings; selects the toolchain/flavor and is forwarded as ``PYPTO_*``.
        source_dir: mounted read-only at ``/src`` (the working directory).
        output_dir: created if missing, mounted read-write at ``/out``.
        image: image reference (default: ``settings.container_image``, else the newest matching image).
        timeout: seconds before the container is killed (ToolchainError).
        labels: extra container labels.
        entrypoint: run this instead of the image's ``pypto`` (argv are then its arguments).

    Raises:
        ToolchainError: engine unreachable, image missing or not matching the manifest, engine exit
            codes 125/126/127/137, timeout.
    """
    check_image_argument(image)
    client = docker_client(settings.docker_timeout_s, engine=settings.container_engine)
    with engine_deadline(settings.docker_timeout_s, "docker info"):  # each engine request has a deadline
        return _run_with(client, argv, settings=settings, source_dir=source_dir, output_dir=output_dir,
                         image=image, timeout=timeout, labels=labels, entrypoint=entrypoint)


def _run_with(client: Any, argv: Sequence[str], *, settings: Settings, source_dir: Path, output_dir: Path,
              image: str | None, timeout: float | None, labels: dict[str, str] | None,
              entrypoint: tuple[str, ...] | None) -> int:
    selected = select_image(client, settings, image)
    output_dir.mkdir(parents=True, exist_ok=True)
    ref = selected.tags[0] if selected.tags else selected.id
    with _identity_files(os.getuid(), os.getgid()) as ids:
        spec = plan_run(argv, settings=settings, source_dir=source_dir, output_dir=output_dir, image=ref,
                        rootless=_is_rootless(client), extra_mounts=ids)
        spec = replace(spec, labels=dict(labels or {}), entrypoint=entrypoint)
        return execute(client, spec, timeout)


def remove_labelled(label: str, value: str, engine: str = "docker") -> int:
    """Force-remove every container labelled ``label=value`` (left by killed callers); returns the count."""
    client = docker_client(engine=engine)
    found = client.containers.list(all=True, filters={"label": f"{label}={value}"})
    for container in found:
        _remove(container)
    return len(found)


def shell_command(*, settings: Settings, source_dir: Path, output_dir: Path, image: str | None = None) -> list[str]:
    """``docker run -it`` argv for an interactive shell in the image, with the same sandbox."""
    check_image_argument(image)
    client = docker_client(engine=settings.container_engine)
    selected = select_image(client, settings, image)
    output_dir.mkdir(parents=True, exist_ok=True)
    ref = selected.tags[0] if selected.tags else selected.id
    spec = plan_run([], settings=settings, source_dir=source_dir, output_dir=output_dir, image=ref,
                    rootless=_is_rootless(client))
    return spec.cli_argv(interactive=sys.stdin.isatty(), entrypoint="/bin/bash")


def open_shell(*, settings: Settings, source_dir: Path, output_dir: Path, image: str | None = None) -> int:
    """Start an interactive shell in the image (``pypto toolchain shell``); returns its exit code."""
    import subprocess

    argv = shell_command(settings=settings, source_dir=source_dir, output_dir=output_dir, image=image)
    print("+ " + shlex.join(argv), file=sys.stderr)
    return subprocess.run(argv).returncode
