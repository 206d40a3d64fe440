"""Pass instruments: IR dumps, property verification and print/parse round trips.

The PassManager calls ``before_pipeline`` once, ``after_pass`` after every pass and
``after_pipeline`` at the end; passes themselves never dump, verify or time anything.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pypto.diagnostics import Diagnostic
from pypto.errors import VerificationError
from pypto.ir.function import Program
from pypto.ir.options import PassDumpLevel
from pypto.ir.printer import python_print
from pypto.ir.properties import STRUCTURAL, VERIFIED, IRProperty

if TYPE_CHECKING:
    from pypto.passes.base import Pass


@dataclass
class PassStep:
    """What an instrument sees after one pass: its 1-based index, the pass, input and output."""

    index: int
    pass_: Pass
    before: Program
    after: Program
    warnings: list[Diagnostic] = field(default_factory=list)


class Instrument:
    """Base instrument: every hook is a no-op."""

    name = "Instrument"

    def before_pipeline(self, program: Program) -> None:
        return None

    def after_pass(self, step: PassStep) -> None:
        return None

    def after_pipeline(self, program: Program) -> None:
        return None


class CallbackInstrument(Instrument):
    """An instrument built from plain callables ``after_pass(pass, program)``."""

    def __init__(self, after_pass: Callable[[Any, Program], None] | None = None,
                 before_pipeline: Callable[[Program], None] | None = None, name: str = "CallbackInstrument"):
        self.name = name
        self._after = after_pass
        self._before = before_pipeline

    def before_pipeline(self, program: Program) -> None:
        if self._before is not None:
            self._before(program)

    def after_pass(self, step: PassStep) -> None:
        if self._after is not None:
            self._after(step.pass_, step.after)


class DumpInstrument(Instrument):
    """Writes ``00_frontend.py`` and ``NN_after_<Pass>.py`` (plus ``.log`` when warnings fired).

    A pass that returns its input unchanged gets the previous dump's text (printed once, encoded once);
    each file is written with one open/write/close (:mod:`pypto.toolchain.files`).
    """

    name = "DumpInstrument"

    def __init__(self, out_dir: Path, level: PassDumpLevel, prefix: str = "pl") -> None:
        self.out_dir = Path(out_dir)
        self.level = level
        self.prefix = prefix
        self._last: tuple[Program, str] | None = None
        self._last_bytes: tuple[str, bytes] | None = None

    def _write(self, file_name: str, text: str) -> None:
        from pypto.toolchain.files import text_bytes, write_file

        if self._last_bytes is None or self._last_bytes[0] is not text:
            self._last_bytes = (text, text_bytes(text))
        write_file(os.path.join(self.out_dir, file_name), self._last_bytes[1])

    def _text(self, program: Program) -> str:
        if self._last is not None and self._last[0] is program:
            return self._last[1]
        text = python_print(program, prefix=self.prefix, explicit_layout=self.level is PassDumpLevel.EXPLICIT)
        self._last = (program, text)
        return text

    def before_pipeline(self, program: Program) -> None:
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self._write("00_frontend.py", self._text(program))

    def after_pass(self, step: PassStep) -> None:
        stem = f"{step.index:02d}_after_{step.pass_.name}"
        self._write(f"{stem}.py", self._text(step.after))
        if step.warnings:
            self._write(f"{stem}.log", "\n".join(d.render() for d in step.warnings) + "\n")


class VerifyInstrument(Instrument):
    """BASIC verification: structural properties at input, then each newly produced property."""

    name = "VerificationInstrument"

    def __init__(self) -> None:
        self.verified: set[IRProperty] = set()

    def before_pipeline(self, program: Program) -> None:
        from pypto.ir.verifier import verify_or_raise

        verify_or_raise(program, STRUCTURAL, where="pipeline input")
        self.verified = set(STRUCTURAL)

    def after_pass(self, step: PassStep) -> None:
        p = step.pass_
        self.verified -= p.invalidates
        todo = (p.produces & VERIFIED) - self.verified
        if todo:
            from pypto.ir.verifier import verify_or_raise

            verify_or_raise(step.after, todo, where=f"after pass {p.name}")
            self.verified |= todo


class RoundtripInstrument(Instrument):
    """Prints every intermediate program, re-parses it and asserts structural equality."""

    name = "RoundtripInstrument"

    def __init__(self, prefix: str = "pl") -> None:
        self.prefix = prefix

    def _check(self, program: Program, where: str) -> None:
        from pypto.ir.structural import structural_diff
        from pypto.language import parse

        text = python_print(program, prefix=self.prefix)
        try:
            reparsed = parse(text, filename=f"<{where}>")
        except Exception as exc:  # the printed text must parse; report which dump failed
            raise VerificationError(f"round trip {where}: printed IR does not parse: {exc}\n{text}") from exc
        diff = structural_diff(program, reparsed)
        if diff is not None:
            raise VerificationError(f"round trip {where}: reparsed IR differs {diff}\n{text}")

    def before_pipeline(self, program: Program) -> None:
        self._check(program, "pipeline input")

    def after_pass(self, step: PassStep) -> None:
        if step.after is not step.before:
            self._check(step.after, f"after pass {step.pass_.name}")


def make_roundtrip_instrument(prefix: str = "pl") -> RoundtripInstrument:
    """The print -> parse -> structural_equal instrument (upstream ``make_roundtrip_instrument``)."""
    return RoundtripInstrument(prefix)
