"""What a long call tells its user while it runs: status lines and a live progress line.

:class:`Status` is what ``semsim run``, ``compare``, ``demo``, ``calibrate`` and
``reproduce`` print on stderr, and what :func:`semsim.compare` prints in a notebook:

- ``note()`` and ``warn()``: whole lines (``semsim: ...``, ``semsim: warning: ...``),
  always written (a log of what the command did, also in a pipe);
- ``live()``: one line redrawn in place (``\\r``) while a call runs, only on a terminal,
  never in a pipe, a file, CI or a notebook, and not with ``SEMSIM_NO_PROGRESS`` set.
  It shows the elapsed wall time, and what the engine reports of a simulation (point,
  seed, simulated time done of the ceiling, ``adaptive`` where the run may stop early)
  or of a batch of points run in other processes (points done of the total).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO, TypeVar

T = TypeVar("T")

#: The live line is redrawn at most this often (seconds of wall time).
REDRAW_S = 0.25


def _on_terminal(stream: TextIO) -> bool:
    if os.environ.get("SEMSIM_NO_PROGRESS"):
        return False
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


class Live:
    """One line redrawn in place: ``semsim: <what>: <detail>, 12.3 s[ of about N s]``."""

    def __init__(self, status: Status, what: str, expected_s: float | None = None) -> None:
        self.status, self.what, self.expected_s = status, what, expected_s
        self.detail = ""
        self.start = time.monotonic()
        self.shown = 0.0
        self._lock = threading.Lock()

    def update(self, detail: Any = None) -> None:
        """New detail (a :class:`semsim.RunProgress`, a string), then redraw if it is time."""
        if detail is not None:
            self.detail = str(detail)
        self.draw()

    def points_done(self, done: int, total: int) -> None:
        """For points run in other processes: ``N/M points done``, drawn at once (a
        finished point is news, and there are only as many as points)."""
        self.detail_from(f"{done}/{total} point{'s' if total != 1 else ''} done")

    def detail_from(self, progress: Any) -> None:
        """The progress callback: notes the detail; the ticking thread draws the engine's
        frequent reports. A text (``<target>: N/M points done``, a finished point) is
        drawn at once: there are only as many as points, and the last ones may come
        between two ticks."""
        self.detail = str(progress)
        if isinstance(progress, str):
            self.draw(force=True)

    def draw(self, force: bool = False) -> None:
        now = time.monotonic()
        with self._lock:
            if not force and now - self.shown < REDRAW_S:
                return
            self.shown = now
            elapsed = now - self.start
            expected = self.expected_s
            tail = f" of about {expected:.0f} s" if expected and expected >= 10 else (
                f" of about {expected:.1f} s" if expected else "")
            detail = f"{self.detail}, " if self.detail else ""
            self.status.stream.write(f"\rsemsim: {self.what}: {detail}{elapsed:.1f} s{tail}\033[K")
            self.status.stream.flush()

    def clear(self) -> None:
        with self._lock:
            if self.shown:
                self.status.stream.write("\r\033[K")
                self.status.stream.flush()
                self.shown = 0.0


class _Off:
    """The live line where there is no terminal: takes every update, shows nothing."""

    def update(self, detail: Any = None) -> None:
        pass

    def points_done(self, done: int, total: int) -> None:
        pass


class Status:
    """Status lines and a live progress line on ``stream`` (default: stderr).

    ``quiet`` writes nothing at all; ``live`` forces the live line on or off (default:
    on a terminal only).
    """

    def __init__(self, stream: TextIO | None = None, *, quiet: bool = False, live: bool | None = None) -> None:
        self._stream = stream
        self.quiet = quiet
        self._live = live

    @property
    def stream(self) -> TextIO:
        return self._stream if self._stream is not None else sys.stderr

    @property
    def live_on(self) -> bool:
        if self.quiet:
            return False
        return self._live if self._live is not None else _on_terminal(self.stream)

    def note(self, text: str) -> None:
        if not self.quiet:
            self.stream.write(f"semsim: {text}\n")
            self.stream.flush()

    def warn(self, text: str) -> None:
        self.note(f"warning: {text}")

    @contextmanager
    def live(self, what: str, expected_s: float | None = None) -> Iterator[Live | _Off]:
        """A live line for the block (nothing off a terminal): update it from callbacks."""
        if not self.live_on:
            yield _Off()
            return
        line = Live(self, what, expected_s)
        try:
            yield line
        finally:
            line.clear()

    def run(self, what: str, fn: Callable[..., T], *args: Any, expected_s: float | None = None,
            detail: bool = False, **kwargs: Any) -> T:
        """Calls ``fn(*args, **kwargs)`` under a live line that ticks every REDRAW_S.

        ``fn`` runs in a thread (the engine releases the GIL) while this thread redraws
        the elapsed time. With ``detail``, ``fn`` also gets ``progress=``, a callable whose
        argument's text is shown beside the time (the engine's :class:`semsim.RunProgress`
        reports, a count of points done). Off a terminal ``fn`` runs here, with no line
        and no ``progress``.
        """
        if not self.live_on:
            return fn(*args, **kwargs)
        with self.live(what, expected_s) as line:
            assert isinstance(line, Live)
            if detail:
                kwargs["progress"] = line.detail_from
            box: dict[str, Any] = {}

            def work() -> None:
                try:
                    box["result"] = fn(*args, **kwargs)
                except BaseException as exc:  # re-raised in the caller
                    box["error"] = exc

            worker = threading.Thread(target=work, name="semsim-work", daemon=True)
            worker.start()
            while worker.is_alive():
                line.draw()
                worker.join(0.05)
        if "error" in box:
            raise box["error"]
        return box["result"]

QUIET = Status(quiet=True)


def status_for(progress: bool | Status | None) -> Status:
    """``True``/None: lines on stderr (live on a terminal); ``False``: nothing; or a Status."""
    if isinstance(progress, Status):
        return progress
    return QUIET if progress is False else Status()
