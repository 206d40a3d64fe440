"""Exception hierarchy: user errors, toolchain problems and compiler bugs are distinct classes.

Floor: above ``span`` and ``diagnostics`` only; every other room may raise these.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pypto.span import Span


class PyptoError(Exception):
    """Base of every error pypto raises on purpose."""


class UserError(PyptoError, ValueError):
    """The user's program, arguments or settings are wrong; the message says how to fix them."""

    def __init__(self, message: str, span: Span | None = None, hint: str | None = None) -> None:
        self.message = message
        self.span = span
        self.hint = hint
        super().__init__(self.render())

    def render(self) -> str:
        """gcc-style text: ``file:line:col: error: msg``, source line, caret, hint."""
        from pypto.diagnostics import render_message

        return render_message("error", self.message, self.span, self.hint)


class ParserError(UserError):
    """Base of DSL frontend errors (codes E0xx-E3xx upstream)."""


class ParserSyntaxError(ParserError):
    """Malformed DSL source."""


class PythonSyntaxError(ParserSyntaxError, SyntaxError):
    """The DSL text is not valid Python: also the builtin ``SyntaxError`` (``except SyntaxError`` works)."""

    def __init__(self, message: str, span: Span | None = None, hint: str | None = None) -> None:
        super().__init__(message, span, hint)
        self.msg = message
        if span is not None and span.is_known():
            self.filename, self.lineno, self.offset = span.file, span.line, span.col

    def __str__(self) -> str:
        return self.render()


class ParserTypeError(ParserError):
    """A type annotation or an operand type is wrong."""


class UndefinedVariableError(ParserError):
    """A name is used that is not defined."""


class SSAViolationError(ParserError):
    """A name is rebound under ``strict_ssa=True``."""


class UnsupportedFeatureError(ParserError):
    """A Python construct the DSL does not support."""


class InvalidOperationError(ParserError):
    """An op used where it is not allowed (wrong level, wrong memory space, ...)."""


class ScopeIsolationError(ParserError):
    """A scope refers to something it cannot see."""


class SettingsError(UserError):
    """A setting has a bad value, or two settings disagree; ``setting`` and ``source`` name the first
    bad one and where it came from (``"env PYPTO_X"``, ``"file <path>"``, ``"argument"``), when known."""

    setting: str | None = None
    source: str | None = None


class StorageError(UserError):
    """A file pypto must write cannot be written: the disk is full, the file system read-only, the
    directory not writable. Not a pypto bug: the message names the path and the cause."""

    def __init__(self, path: object, cause: str, *, errno: int | None = None, hint: str | None = None) -> None:
        self.path = str(path)
        self.cause = cause
        self.errno = errno
        super().__init__(f"cannot write {self.path}: {cause}", hint=hint or STORAGE_HINT)


STORAGE_HINT = ("free some space, or write somewhere else: -o/--output-dir (output_dir=) for artifacts, --save "
                "for run-pto outputs, PYPTO_CACHE_DIR for the build cache, PYPTO_PROG_BUILD_DIR for default "
                "output dirs")


class VerificationError(PyptoError):
    """The IR breaks a property a pass relies on."""

    def __init__(self, message: str, diagnostics: list | None = None) -> None:
        self.diagnostics = list(diagnostics or [])
        super().__init__(message)


class ToolchainError(PyptoError, RuntimeError):
    """An external tool is missing or failed; carries its stderr and a repro command."""

    def __init__(self, message: str, *, stderr: str = "", repro: str = "", hint: str = "") -> None:
        self.message = message
        self.stderr = stderr
        self.repro = repro
        self.hint = hint
        parts = [message]
        if stderr.strip():
            parts.append(stderr.rstrip())
        if repro:
            parts.append(f"Repro command:\n  {repro}")
        if hint:
            parts.append(f"hint: {hint}")
        super().__init__("\n".join(parts))


class ToolTimeoutError(ToolchainError):
    """An external tool (ptoas, g++, the container engine) ran past its deadline and was killed."""

    def __init__(self, tool: str, limit: float, setting: str, env: str, *, repro: str = "", stderr: str = "",
                 outcome: str = "did not finish within {limit} s and was killed (with its child processes)") -> None:
        self.tool, self.limit, self.setting, self.env = tool, limit, setting, env
        super().__init__(f"{tool} {outcome.format(limit=f'{limit:g}')}", stderr=stderr, repro=repro,
                         hint=f"if it needs longer, raise the limit: {env}=<seconds> (setting '{setting}', now "
                              f"{limit:g} s); if it hangs, run the repro command to see where")


class PartialCodegenError(ToolchainError):
    """Code generation stopped after some units were produced; ``files`` holds what was produced.

    Upstream raises it for any codegen failure, a mistake in the program included; ``user_error`` then
    holds that mistake (the CLI exits 3 for it, as for any user error, not 4). A refusal upstream makes in
    codegen but pypto makes while lowering (two co-live slots of a declared buffer under the PTOAS planner,
    see ``pypto.passes.lower_pipeline_loops``) raises it too, with no files.
    """

    def __init__(self, message: str, files: dict[str, str] | None = None, *, user_error: UserError | None = None,
                 **kw: str) -> None:
        self.files = dict(files or {})
        self.user_error = user_error
        super().__init__(message, **kw)


class InternalError(PyptoError, RuntimeError):
    """A pypto bug: an invariant the compiler itself should guarantee was broken.

    A ``RuntimeError`` as upstream's ``pypto.InternalError`` is, and a ``pypto.Error`` like every error
    pypto raises on purpose.
    """


def check(condition: bool, message: str) -> None:
    """Upstream's ``pypto.check``: raise ``ValueError`` (a :class:`UserError`) when ``condition`` is false."""
    if not condition:
        raise UserError(message)


def internal_check(condition: bool, message: str) -> None:
    """Upstream's ``pypto.internal_check``: raise :class:`InternalError` when an invariant is false."""
    if not condition:
        raise InternalError(message)


def internal_check_span(condition: bool, message: str, span: Span) -> None:
    """:func:`internal_check` naming the IR source location ``span`` (``file:line:col: message``)."""
    if not condition:
        where = f"{span.file}:{span.line}:{span.col}: " if span is not None and span.is_known() else ""
        raise InternalError(where + message)
