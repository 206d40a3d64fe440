"""The Docker engine connection shared by the launcher (``docker``) and the image builds (``images``)."""

from __future__ import annotations

from typing import Any

from pypto.errors import ToolchainError

DAEMON_HINT = "start the engine (`sudo dockerd &` or `systemctl start docker`), then check with `pypto doctor`"


def docker_client(timeout: int = 60) -> Any:
    """A docker SDK client; an unreachable engine becomes a ToolchainError."""
    try:
        import docker
    except ImportError as exc:
        raise ToolchainError("The docker SDK is not installed", hint="pip install 'pypto[container]'") from exc
    try:
        client = docker.from_env(timeout=timeout)
        client.ping()
    except docker.errors.DockerException as exc:
        raise ToolchainError(f"Cannot reach the Docker engine: {exc}", repro="docker info", hint=DAEMON_HINT) from None
    return client
