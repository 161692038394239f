"""One sweep point in a fresh process: ``python -m semsim._worker``.

SimGrid keeps process-global state (its clock is never reset, only one engine
may exist per process, an uncaught error aborts the process), so
:func:`semsim.sweep` simulates every point in a process of its own. This module
is both ends of that:

- :func:`run_point` (called in the parent, in a thread of the local pool or in a
  Dask task on a worker) starts ``python -m semsim._worker``, writes the point's
  normalized scenario JSON to its stdin and returns what came back, as plain data
  (no exceptions cross a Dask boundary, so every executor reports alike);
- :func:`main` (the child) simulates the scenario and writes the result JSON to
  stdout, or a JSON error object and a non-zero status.

Child protocol: exit 0 and the result document on stdout; exit 2 (bad input) or
1 (anything else) and ``{"error_type": ..., "message": ...}`` on stdout; killed by
a signal when the engine crashed (the parent names the point and the signal).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Sequence
from typing import Any

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_INPUT = 2

# The registry of children started by run_point in this process, so that an
# interrupted or failed sweep can end the ones still running.
_live_lock = threading.Lock()
_live: set[subprocess.Popen[str]] = set()


def worker_command() -> list[str]:
    """The command that simulates one point (replaceable in tests)."""
    return [sys.executable, "-m", "semsim._worker"]


def run_point(scenario_json: str, command: Sequence[str] | None = None) -> dict[str, Any]:
    """Simulates one normalized scenario in a fresh ``python -m semsim._worker`` process.

    Returns ``{"returncode", "stdout", "stderr"}``; never raises for a failure of
    the point itself (the caller turns it into an exception naming the point).
    """
    cmd = list(command) if command is not None else worker_command()
    proc = subprocess.Popen(
        cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, encoding="utf-8",
    )
    with _live_lock:
        _live.add(proc)
    try:
        out, err = proc.communicate(scenario_json)
    finally:
        with _live_lock:
            _live.discard(proc)
    return {"returncode": proc.returncode, "stdout": out, "stderr": err}


def kill_live() -> None:
    """Ends the worker processes this process started that are still running."""
    with _live_lock:
        procs = list(_live)
    for proc in procs:
        try:
            proc.kill()
        except OSError:
            pass


def _watch_parent(parent: int) -> None:
    # The engine runs without the GIL, so this thread keeps running: when the
    # parent dies (a killed sweep, a stopped Dask worker), stop too.
    import time

    while True:
        time.sleep(0.5)
        if os.getppid() != parent:
            os._exit(EXIT_ERROR)


def main() -> int:
    """The child: reads one scenario (JSON) on stdin, writes its result on stdout."""
    # Ctrl-C in a terminal reaches the whole process group; the engine does not
    # look at Python's signal flag, so let SIGINT end this process at once.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    threading.Thread(target=_watch_parent, args=(os.getppid(),), daemon=True).start()
    # Only our JSON goes to the real stdout: anything the C++ side prints goes to stderr.
    result_fd = os.dup(1)
    os.dup2(2, 1)
    result = os.fdopen(result_fd, "w", encoding="utf-8")

    def fail(status: int, kind: str, message: str) -> int:
        result.write(json.dumps({"error_type": kind, "message": message}))
        result.flush()
        return status

    scenario_json = sys.stdin.read()
    try:
        from . import _core  # after the fd shuffle, on purpose
        from .api import _data

        data_dir = _data.data_dir()
        if data_dir is not None:
            _core.set_data_dir(str(data_dir))
        text = _core.simulate(scenario_json)
    except BaseException as exc:  # everything is reported to the parent
        kind = type(exc).__name__
        try:
            from . import _core

            if isinstance(exc, _core.InputError):
                return fail(EXIT_INPUT, "InputError", str(exc))
        except ImportError:
            pass
        return fail(EXIT_ERROR, kind, str(exc))
    result.write(text)
    result.flush()
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
