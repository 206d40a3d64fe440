"""The client side of ``forkserver.py``: one warm interpreter that forks a CLI call per request."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SERVER = Path(__file__).resolve().parent / "forkserver.py"


class ForkClient:
    """Starts the fork server with the caller's environment minus every ``PYPTO_*``, plus ``env``."""

    def __init__(self, env: dict[str, str], cwd: Path | None = None, drop: tuple[str, ...] = ()) -> None:
        base = {k: v for k, v in os.environ.items() if not k.startswith("PYPTO_") and k not in drop}
        base["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])
        self.proc = subprocess.Popen([sys.executable, str(SERVER)], env={**base, **env}, text=True, cwd=cwd,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def run(self, argv: list[str], cwd: Path, timeout: float, env: dict[str, str | None] | None = None) -> dict:
        """One ``pypto`` call in ``cwd`` (``env``: variables to set, or to unset with None)."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        request = {"argv": argv, "cwd": str(cwd), "timeout": timeout, **({"env": env} if env is not None else {})}
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        assert line, f"fork server died (exit {self.proc.poll()})"
        return json.loads(line)

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        self.proc.wait(timeout=30)
