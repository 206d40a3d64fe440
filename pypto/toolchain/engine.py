"""The Docker engine connection shared by the launcher (``docker``) and the image builds (``images``)."""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from pypto.errors import ToolchainError, ToolTimeoutError, UserError

DAEMON_HINT = "start the engine (`sudo dockerd &` or `systemctl start docker`), then check with `pypto doctor`"
SDK_HINT = "pip install 'docker>=7.0' (a pypto dependency; reinstall pypto)"


def docker_sdk() -> Any:
    """The docker SDK module; a missing or shadowed SDK becomes a ToolchainError saying what happened.

    ``import docker`` can pick up a directory named ``docker`` (such as this repository's
    ``docker/`` folder, from the current directory) as a namespace package when the SDK is absent.
    """
    try:
        import docker
    except ImportError as exc:
        raise ToolchainError(f"The docker SDK (PyPI 'docker') cannot be imported: {exc}", hint=SDK_HINT) from exc
    if not hasattr(docker, "from_env"):
        where = ", ".join(str(p) for p in getattr(docker, "__path__", [])) or getattr(docker, "__file__", "?")
        raise ToolchainError(
            f"'import docker' found {where}, not the docker SDK (PyPI 'docker'): the SDK is not installed in "
            f"this environment ({sys.executable}), so a directory named 'docker' on sys.path shadowed it",
            hint=SDK_HINT)
    return docker


def check_image_argument(ref: str | None, what: str = "--image") -> None:
    """A UserError naming ``ref`` and the reference grammar when it is not an image reference (no engine call)."""
    from pypto.toolchain.image_ref import reference_problem

    problem = reference_problem(ref) if ref is not None else None
    if problem:
        raise UserError(f"{what}: {problem}", hint="name an image as `docker images` lists it, e.g. "
                                                    "pypto-0.1.0-sim:<tag>, or its id")


def _runtime_dir(env: Mapping[str, str]) -> str:
    return env.get("XDG_RUNTIME_DIR") or f"/run/user/{os.getuid()}"


def podman_socket(env: Mapping[str, str]) -> str | None:
    """The podman API socket to use (``CONTAINER_HOST`` / ``DOCKER_HOST``, else the usual places), or None."""
    for var in ("CONTAINER_HOST", "DOCKER_HOST"):
        if env.get(var):
            return env[var]
    for path in (Path(_runtime_dir(env)) / "podman" / "podman.sock", Path("/run/podman/podman.sock")):
        if path.is_socket():
            return f"unix://{path}"
    return None


def _podman_missing(runtime_dir: str) -> UserError:
    cli = shutil.which("podman")
    what = (f"podman is installed ({cli}) but its API socket is not running" if cli else
            "podman is not installed (no `podman` on PATH) and no podman API socket was found")
    return UserError(
        f"the container engine is podman (setting container_engine / PYPTO_CONTAINER_ENGINE), but {what} "
        f"(looked at CONTAINER_HOST, DOCKER_HOST, {runtime_dir}/podman/podman.sock, /run/podman/podman.sock)",
        hint="start podman's socket (`systemctl --user start podman.socket`), or set PYPTO_CONTAINER_ENGINE=docker")


def docker_client(timeout: float | None = None, engine: str = "docker") -> Any:
    """A docker SDK client of ``engine`` (docker, or podman through its Docker-compatible API).

    Requests time out after ``timeout`` s (default: the ``docker_timeout_s`` setting); a silent engine
    is a ToolTimeoutError naming the setting. A missing SDK or an unreachable Docker engine is a
    ToolchainError (exit 4, like a missing compiler); podman selected where there is none is a
    UserError (exit 3: the setting does not fit this machine).
    """
    docker = docker_sdk()
    if timeout is None:
        from pypto.toolchain.settings import tool_timeout

        timeout = tool_timeout("docker_timeout_s")
    base_url = None
    if engine == "podman":
        from pypto.toolchain.settings import engine_env

        env = engine_env()
        base_url = podman_socket(env)
        if base_url is None:
            raise _podman_missing(_runtime_dir(env))
    name = "podman" if engine == "podman" else "Docker"
    try:
        with engine_deadline(timeout, f"{engine} info"):
            client = docker.DockerClient(base_url=base_url, timeout=timeout) if base_url else docker.from_env(timeout=timeout)
            client.ping()
    except ToolchainError:
        raise
    except docker.errors.DockerException as exc:
        if _timed_out(exc):  # the SDK wraps the version probe's timeout
            raise _deadline_error(timeout, f"{engine} info") from None
        hint = "start podman's socket (`systemctl --user start podman.socket`)" if engine == "podman" else DAEMON_HINT
        raise ToolchainError(f"Cannot reach the {name} engine: {exc}", repro=f"{engine} info", hint=hint) from None
    except Exception as exc:  # noqa: BLE001 - a malformed DOCKER_HOST and the like: the environment, not pypto
        raise UserError(f"Cannot connect to the {name} engine: {type(exc).__name__}: {exc}",
                        hint="check DOCKER_HOST (unix:///path/to/docker.sock or tcp://HOST:PORT), or unset it") \
            from None
    return client


def _timed_out(exc: BaseException) -> bool:
    import requests

    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            return False
        if isinstance(seen, requests.exceptions.Timeout):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _deadline_error(timeout: float, repro: str) -> ToolTimeoutError:
    from pypto.toolchain.settings_sources import env_var

    return ToolTimeoutError("the container engine", timeout, "docker_timeout_s", env_var("docker_timeout_s"),
                            repro=repro, outcome="did not answer a request within {limit} s")


@contextlib.contextmanager
def engine_deadline(timeout: float, repro: str) -> Iterator[None]:
    """A request to the engine that timed out becomes a ToolTimeoutError (the engine hangs)."""
    import requests

    try:
        yield
    except requests.exceptions.Timeout:
        raise _deadline_error(timeout, repro) from None
