"""While pypto runs a user's file, ``os._exit`` and ``os.execv``/``os.execve`` raise a located UserError.

Both end the interpreter without unwinding: a ``pypto compile`` whose program calls ``os._exit(0)`` at
import would otherwise end with exit code 0, no artifact and nothing printed, which a caller (a shell
script, ``pypto sweep``) takes for success. Inside :func:`no_abrupt_exit` they raise instead, in the
main thread of the process that entered it; forked children and other threads get the real calls
(pypto's own rank processes end with ``os._exit``). ``sys.exit`` needs no guard: it raises
``SystemExit``, which the loader reports as a failed import.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from pypto.errors import UserError

GUARDED = ("_exit", "execv", "execve")
_HINT = ("remove the call; code meant to run only as a script belongs under `if __name__ == \"__main__\":` "
         "(pypto loads the file under another module name)")


def _refusal(name: str, args: tuple[Any, ...]) -> UserError:
    from pypto.span import Span

    caller = sys._getframe(2)
    while caller.f_back is not None and caller.f_globals.get("__name__") == "os":  # os.execl -> os.execv
        caller = caller.f_back
    line, end_line, col, end_col = list(caller.f_code.co_positions())[caller.f_lasti // 2]
    line = line or caller.f_lineno
    span = Span(caller.f_code.co_filename, line, (col or 0) + 1, line, (end_col or 0) + 1 if end_line == line else 0)
    shown = repr(args[0]) if name == "_exit" and args else "..."
    return UserError(f"the program called os.{name}({shown}), which ends the interpreter at once: a compile or "
                     "run that ends this way leaves no artifact and no result, so pypto stops it here",
                     span, hint=_HINT)


@contextmanager
def no_abrupt_exit() -> Iterator[None]:
    """Make ``os._exit`` / ``os.execv`` / ``os.execve`` (and their ``posix`` originals) raise a UserError."""
    owner, main = os.getpid(), threading.main_thread()
    modules = [m for m in (os, sys.modules.get("posix")) if m is not None]
    saved = {(m, n): getattr(m, n) for m in modules for n in GUARDED if hasattr(m, n)}

    def guard(name: str, real: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            if os.getpid() != owner or threading.current_thread() is not main:
                return real(*args, **kwargs)
            raise _refusal(name, args)

        return call

    for (module, name), real in saved.items():
        setattr(module, name, guard(name, real))
    try:
        yield
    finally:
        for (module, name), real in saved.items():
            setattr(module, name, real)
