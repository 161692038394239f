"""Progress: the engine's hook (simulated time done of the ceiling), the same bytes with
or without it, and the CLI's live line only on a terminal (a real pty here)."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
import time

import pytest

import semsim
from conftest import DEFAULT_SCENARIO
from semsim import _core
from semsim.progress import Status


def _text(**overrides):
    return json.dumps(semsim.load_scenario(DEFAULT_SCENARIO, **overrides))


def _reports(text):
    seen = []
    out = _core.simulate(text, lambda *a: seen.append(a), 0.0)  # every report, unthrottled
    return out, seen


@pytest.mark.parametrize("precision", [0, 0.01], ids=["fixed", "adaptive"])
def test_hook_reports_monotone_simulated_time_and_keeps_the_bytes(precision):
    text = _text(machine="laptop-4", threads=[1, 4], repeats=2, duration_ms=2, warmup_ms=0.5, precision=precision)
    with_hook, seen = _reports(text)
    assert with_hook == _core.simulate(text)  # the hook cannot change the result
    runs = [r[0] for r in seen]
    assert runs == sorted(runs) and set(runs) == {1, 2, 3, 4}  # two thread counts x two seeds
    for run in set(runs):
        mine = [r for r in seen if r[0] == run]
        # An attempt: from 0, monotone, its last report says finished. laptop-4 makes no
        # random draw here, so with adaptive run length each point's first run is made
        # again alone, at the full precision (report/run_length.hpp, Repeats): run 1 and
        # run 3 (the points' first seeds) then have two attempts; the copies one.
        ends = [i for i, r in enumerate(mine) if r[4]]
        assert ends and ends[-1] == len(mine) - 1
        assert len(ends) == (2 if precision > 0 and run in (1, 3) else 1)
        start = 0
        for end in ends:
            done = [r[1] for r in mine[start:end + 1]]
            assert done == sorted(done) and done[0] == 0
            assert 0 < done[-1] <= 2_500_000
            start = end + 1
        assert all(r[2] == 2_500_000 for r in mine)  # the ceiling: warm-up + duration, in ns
        assert all(r[3] == (precision > 0) for r in mine)
    assert len(seen) > 4 * 3  # reported along the way, not only at the ends


def test_hook_on_a_run_to_completion_reports_no_ceiling():
    text = json.dumps(semsim.load_scenario(
        DEFAULT_SCENARIO, machine="laptop-4", threads=[2],
        workload={"type": "sem-lockunlock", "semaphores": 2, "loops": 2000, "busy_in": 0, "busy_out": 0}))
    with_hook, seen = _reports(text)
    assert with_hook == _core.simulate(text)
    assert seen and all(r[2] == 0 for r in seen) and seen[-1][4]
    assert {r[0] for r in seen} == {1, 2, 3}  # the default scenario's three seeds
    for run in (1, 2, 3):
        done = [r[1] for r in seen if r[0] == run]
        assert done == sorted(done) and done[-1] > 0


def test_api_progress_names_point_and_seed(monkeypatch):
    monkeypatch.setattr(semsim.api, "PROGRESS_INTERVAL_S", 0.0)
    got = []
    # jobs=1: the runs one after the other, so the reports come in order (with more jobs
    # they interleave: test_parallel_runs.py).
    res = semsim.simulate(DEFAULT_SCENARIO, sets=["machine=laptop-4", "threads=[1,2]"], repeats=2,
                          duration_ms=2, warmup_ms=0.5, progress=got.append, jobs=1)
    plain = semsim.simulate(DEFAULT_SCENARIO, sets=["machine=laptop-4", "threads=[1,2]"], repeats=2,
                            duration_ms=2, warmup_ms=0.5)
    assert res.to_json() == plain.to_json()
    assert got
    for p in got:
        assert isinstance(p, semsim.RunProgress)
        assert p.points == 2 and p.seeds == 2 and p.threads == [1, 2][p.point - 1]
        assert 0 <= p.simulated_ns <= p.target_ns == 2_500_000
    assert "ms simulated" in str(got[-1]) and str(got[-1]).startswith("point ")
    runs = [(p.point, p.seed) for p in got]
    assert runs == sorted(runs)
    # Within an attempt (a seed-free point's first run is made twice: RunProgress),
    # the simulated time only grows.
    start = 0
    for end in [i for i, p in enumerate(got) if p.finished]:
        done = [p.simulated_ns for p in got[start:end + 1]]
        assert done == sorted(done)
        start = end + 1


def test_a_raising_callback_is_raised_after_the_run():
    def boom(*_args):
        raise ZeroDivisionError("from the callback")

    with pytest.raises(ZeroDivisionError, match="from the callback"):
        _core.simulate(_text(machine="laptop-4", threads=[1], duration_ms=1), boom, 0.0)
    with pytest.raises(semsim.InputError, match="progress"):
        semsim.simulate(DEFAULT_SCENARIO, threads=[1], duration_ms=0.1, progress="yes")


def test_status_lines_always_live_line_only_on_a_terminal(capsys):
    status = Status(live=False)
    assert status.run("x", lambda progress=None: progress, detail=True) is None  # no live line: no callback
    status.note("a note")
    status.warn("careful")
    assert capsys.readouterr().err == "semsim: a note\nsemsim: warning: careful\n"
    live = Status(live=True)
    assert live.run("working", lambda progress: (progress("step 1"), time.sleep(0.4), 7)[-1], detail=True) == 7
    err = capsys.readouterr().err
    assert "\rsemsim: working: " in err and "step 1, " in err and err.endswith("\r\033[K")
    assert Status(quiet=True, live=True).live_on is False


def _on_a_pty(*args, timeout=120):
    """Runs `python -m semsim ARGS` with stderr on a pseudo-terminal; returns (status, stderr text)."""
    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k not in ("SEMSIM_DEBUG", "SEMSIM_NO_PROGRESS")}
    proc = subprocess.Popen([sys.executable, "-m", "semsim", *map(str, args)], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=slave, env=env)
    os.close(slave)
    chunks = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                data = os.read(master, 65536)
            except OSError:  # the child closed its end
                break
            if not data:
                break
            chunks.append(data)
        elif proc.poll() is not None:
            break
    os.close(master)
    return proc.wait(timeout=10), b"".join(chunks).decode("utf-8", "replace")


# A few seconds of wall time (six runs of up to 61 ms simulated, the ceiling; one run
# at a time, so that the throttled progress, a few times a second, is seen).
RUN = ["run", DEFAULT_SCENARIO, "--set", "machine=laptop-4", "--set", "threads=[1,3,4]", "--set", "duration_ms=60",
       "--set", "warmup_ms=1", "--set", "repeats=2", "--set", "precision=0.0001", "-j", "1", "-o", os.devnull]


def test_run_shows_simulated_time_on_a_terminal_only(run_cli):
    status, err = _on_a_pty(*RUN)
    assert status == 0, err
    assert "\rsemsim: simulating default.json: point " in err
    # done / the ceiling (warm-up + duration), and that the run may stop before it
    assert re.search(r"point [123]/3 \([134] threads?\), seed [12]/2: \d+\.\d\d/61\.00 ms simulated "
                     r"\(adaptive\), \d+\.\d s", err), err
    proc = run_cli(*RUN)  # stderr a pipe
    assert proc.returncode == 0, proc.stderr
    assert "\r" not in proc.stderr and "ms simulated" not in proc.stderr


def test_reproduce_shows_points_done_on_a_terminal(tmp_path):
    status, err = _on_a_pty("reproduce", "--only", "aim9", "--duration-ms", "1", "--seeds", "1", "-j", "2",
                            "-o", tmp_path / "report")
    assert status == 0, err
    assert "\rsemsim: reproducing the seeds' comparisons: " in err
    assert re.search(r"aim9: [123]/3 points done", err), err
