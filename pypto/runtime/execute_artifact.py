"""Upstream's ``pypto.runtime.execute_artifact``: run a compiled directory once (``python -m`` this module).

``python -m pypto.runtime.execute_artifact DIR [--platform a5sim] [--device-id N] [--no-validate]``
prints ``PYPTO_EXEC_RESULT=PASS|FAIL|INFRA``. It builds and runs, so it lives in
:mod:`pypto.flows.execute_artifact` and is re-exported through ``_LAZY``.
"""

from __future__ import annotations

import sys

from pypto.lazy import lazy_getattr

_LAZY = {"ArtifactSetupError": "pypto.flows.execute_artifact", "execute_artifact_dir": "pypto.flows.execute_artifact",
         "execute_batch_manifest": "pypto.flows.execute_artifact", "main": "pypto.flows.execute_artifact"}


__getattr__ = lazy_getattr(__name__, _LAZY, globals())


__all__ = ["ArtifactSetupError", "execute_artifact_dir", "execute_batch_manifest", "main"]  # noqa: F822 - the _LAZY names load on first use

if __name__ == "__main__":
    sys.exit(__getattr__("main")())
