"""The Docker engine connection shared by the launcher (``docker``) and the image builds (``images``)."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any

from pypto.errors import ToolchainError, ToolTimeoutError

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


def docker_client(timeout: float | None = None) -> Any:
    """A docker SDK client whose requests time out after ``timeout`` s (default: the ``docker_timeout_s``
    setting); a missing SDK or an unreachable engine becomes a ToolchainError, a silent one a
    ToolTimeoutError naming the setting."""
    docker = docker_sdk()
    if timeout is None:
        from pypto.toolchain.settings import tool_timeout

        timeout = tool_timeout("docker_timeout_s")
    try:
        with engine_deadline(timeout, "docker info"):
            client = docker.from_env(timeout=timeout)
            client.ping()
    except docker.errors.DockerException as exc:
        if _timed_out(exc):  # the SDK wraps the version probe's timeout
            raise _deadline_error(timeout, "docker info") from None
        raise ToolchainError(f"Cannot reach the Docker engine: {exc}", repro="docker info", hint=DAEMON_HINT) from None
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
