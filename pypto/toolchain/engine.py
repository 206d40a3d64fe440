"""The Docker engine connection shared by the launcher (``docker``) and the image builds (``images``)."""

from __future__ import annotations

import sys
from typing import Any

from pypto.errors import ToolchainError

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


def docker_client(timeout: int = 60) -> Any:
    """A docker SDK client; a missing SDK or an unreachable engine becomes a ToolchainError."""
    docker = docker_sdk()
    try:
        client = docker.from_env(timeout=timeout)
        client.ping()
    except docker.errors.DockerException as exc:
        raise ToolchainError(f"Cannot reach the Docker engine: {exc}", repro="docker info", hint=DAEMON_HINT) from None
    return client
