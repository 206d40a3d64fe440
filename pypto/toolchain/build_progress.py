"""Progress of an image build a person can follow: a rich display on a TTY, plain lines otherwise.

The engine's build stream (``docker build`` output through the SDK) is parsed for ``Step N/M : ...``
lines. On a terminal a rich progress bar shows the step, its instruction and the latest output
line; elsewhere (CI logs) each step is one plain line with the elapsed time, and the output is kept
so a failure can show its tail. Both end with a one-line summary (tag, id, size, time).
"""

from __future__ import annotations

import re
import sys
import time
from collections import deque
from typing import IO, Any

_STEP = re.compile(r"^Step (\d+)/(\d+) : (.*)$")
_IMAGE = re.compile(r"^\s*---> ([0-9a-f]{12,64})$")
_NAMED_FROM = re.compile(r"^FROM\s+\S+\s+AS\s+(\S+)\s*$", re.IGNORECASE)
_TAIL_LINES = 60


def _short(text: str, width: int = 90) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 3] + "..."


class BuildProgress:
    """Consumes build output lines; renders them as a rich progress bar or as plain step lines.

    Args:
        title: what is being built (the tag).
        stream: where to render (stderr).
        rich: None: rich when ``stream`` is a TTY; True/False forces the mode.
        verbose: also echo every output line (plain mode).
    """

    def __init__(self, title: str, stream: IO[str] | None = None, rich: bool | None = None,
                 verbose: bool = False) -> None:
        self.title = title
        self.stream = stream or sys.stderr
        self.rich = self.stream.isatty() if rich is None else rich
        self.verbose = verbose
        self.start = time.monotonic()
        self.step_start = self.start
        self.step = 0
        self.total = 0
        self.cached = 0
        self.tail: deque[str] = deque(maxlen=_TAIL_LINES)
        self.pending = ""
        self.stages: dict[str, str] = {}
        """Named stage (``FROM x AS name``) -> the id of its last image, from the legacy builder's stream."""
        self._stage: str | None = None
        self._progress: Any = None
        self._task: Any = None

    def __enter__(self) -> BuildProgress:
        if self.rich:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._progress = Progress(TextColumn("[bold]{task.fields[title]}"), BarColumn(), MofNCompleteColumn(),
                                      TimeElapsedColumn(), TextColumn("{task.description}"),
                                      console=Console(file=self.stream), transient=False)
            self._progress.start()
            self._task = self._progress.add_task("starting", total=None, title=self.title)
        else:
            self._line(f"building {self.title}")
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        self.feed("\n")
        if self._progress is not None:
            if exc_type is None and self.total:
                self._progress.update(self._task, completed=self.total, description="done")
            self._progress.stop()

    def feed(self, chunk: str) -> None:
        """One piece of the build stream (may hold several or partial lines)."""
        text = self.pending + chunk
        *lines, self.pending = text.split("\n")
        for line in lines:
            self._handle(line.rstrip("\r"))

    def _handle(self, line: str) -> None:
        if not line.strip():
            return
        self.tail.append(line)
        match = _STEP.match(line)
        if match:
            self._next_step(int(match.group(1)), int(match.group(2)), match.group(3))
            return
        if line.strip() == "---> Using cache":
            self.cached += 1
        image = _IMAGE.match(line)
        if image and self._stage:
            self.stages[self._stage] = image.group(1)
        if self._progress is not None:
            self._progress.update(self._task, description=f"step {self.step}: {_short(line, 70)}")
        elif self.verbose:
            self._line(f"  {line}")

    def _next_step(self, step: int, total: int, instruction: str) -> None:
        now = time.monotonic()
        self.step, self.total, self.step_start = step, total, now
        if instruction.upper().startswith("FROM"):
            named = _NAMED_FROM.match(instruction)
            self._stage = named.group(1).lower() if named else None
        if self._progress is not None:
            self._progress.update(self._task, total=total, completed=step - 1,
                                  description=_short(instruction, 70))
        else:
            self._line(f"step {step}/{total} [{now - self.start:6.1f}s] {_short(instruction)}")

    def note(self, text: str) -> None:
        """A line about work outside the engine's build stream (e.g. post-processing)."""
        if self._progress is not None:
            self._progress.update(self._task, description=_short(text, 70))
        else:
            self._line(text)

    def failure_tail(self, lines: int = 30) -> str:
        """The last build output lines (for an error message)."""
        return "\n".join(list(self.tail)[-lines:])

    def summary(self, tag: str, image_id: str, size_mb: float, cached_image: bool = False) -> str:
        """Print and return the final line: tag, id, size, time, steps."""
        seconds = time.monotonic() - self.start
        if cached_image:
            text = f"{tag} already built from these inputs ({image_id[:19]}, {size_mb:.0f} MB); reused"
        else:
            text = (f"built {tag} ({image_id[:19]}): {size_mb:.0f} MB in {seconds:.0f}s "
                    f"({self.total} steps, {self.cached} from the layer cache)")
        if self._progress is not None:
            self._progress.console.print(text)
        else:
            self._line(text)
        return text

    def _line(self, text: str) -> None:
        print(f"pypto-images: {text}", file=self.stream, flush=True)
