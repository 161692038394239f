"""`semsim run --trace`: the Perfetto protobuf parsed back and checked against the run's own counts."""
from __future__ import annotations

from collections import defaultdict

import pytest

import semsim
from conftest import DEFAULT_SCENARIO, SCENARIOS
from semsim import trace

PINGPONG = SCENARIOS / "host" / "sem-scalebench-m2.json"
POINT = dict(threads=[8], duration_ms=1.0, warmup_ms=0, repeats=1, machine="laptop-4")


@pytest.fixture(scope="module")
def full(tmp_path_factory):
    """A trace whose window covers the whole run: every event of the measurement window is in it."""
    path = tmp_path_factory.mktemp("trace") / "t.perfetto-trace"
    info = trace.write_trace(PINGPONG, path, window_ms=(0, 2), **POINT)
    return info, trace.read_trace(path)


def _by_track(parsed):
    out = defaultdict(list)
    for s in parsed["slices"]:
        out[parsed["tracks"][s["track"]]].append(s)
    return out


def test_tracks_slices_and_flows_match_the_runs_counts(full):
    info, parsed = full
    point = info.point
    assert parsed["unclosed"] == 0
    names = list(parsed["tracks"].values())
    assert sum(n.startswith("CPU ") for n in names) == 4  # laptop-4
    stats = {r["name"]: r for r in point["lockstat"]}
    slices = _by_track(parsed)
    held = {n: sum(s["name"] == "held" for s in sl) for n, sl in slices.items() if n.startswith("lock ")}
    assert held["lock sma->sem_perm.lock"] == stats["sma->sem_perm.lock"]["acquisitions"]
    assert sum(v for n, v in held.items() if n.startswith("lock sem->lock[")) == stats["sem->lock"]["acquisitions"]
    contended = sum(s["name"] == "contended" for s in parsed["slices"])
    assert contended == sum(r["contentions"] or 0 for r in stats.values()) == info.counts["contended_slices"]
    # Every wake-up of a sleeper is recorded; all but the last few (whose wakee runs after the
    # window) become a flow, and every flow has both ends.
    wakeups = sum(point["wakeups"].values())
    # (over 500: about 800 with laptop-4's SMT siblings sharing their cores, 1000+ before)
    assert info.counts["wakes"] == wakeups > 500
    assert wakeups - 8 <= info.counts["wake_flows"] <= wakeups
    assert len(parsed["flows"]) == info.counts["wake_flows"] + info.counts["handoff_flows"]
    assert info.counts["handoff_flows"] == info.counts["handoffs"] > 0
    # Run-queue counters per CPU; slices on one CPU never overlap.
    assert parsed["counters"] and info.counts["counter_values"] == len(parsed["counter_values"])
    for name, sl in slices.items():
        if name.startswith("CPU "):
            sl.sort(key=lambda s: s["ts"])
            assert all(a["ts"] + a["dur"] <= b["ts"] for a, b in zip(sl, sl[1:]))
            assert {c for s in sl for c in s["category"]} <= {"user", "syscall", "kernel", "spin",
                                                               "context_switch", "interrupt", "idle"}


def test_tracing_does_not_change_the_run(full):
    info, _ = full
    # A trace runs its full window (no adaptive stop): compare with the same.
    plain = semsim.simulate(PINGPONG, precision=0, **POINT).points[0]
    for key in ("ops_total", "ops_per_s", "profile", "lockstat", "wakeups", "context_switches"):
        assert info.point[key] == plain[key], key


def test_a_window_bounds_the_slices(tmp_path):
    path = tmp_path / "w.perfetto-trace"
    info = trace.write_trace(PINGPONG, path, window_ms=(0.5, 0.7), **POINT)
    parsed = trace.read_trace(path)
    assert parsed["slices"]
    assert all(500_000 <= s["ts"] and s["ts"] + s["dur"] <= 700_000 for s in parsed["slices"])
    wide = trace.write_trace(PINGPONG, tmp_path / "wide", window_ms=(0.5, 0.9), **POINT)
    assert 0 < info.counts["cpu_slices"] < wide.counts["cpu_slices"]


def test_rwlock_read_holds_go_on_per_task_tracks(tmp_path):
    path = tmp_path / "rw.perfetto-trace"
    info = trace.write_trace(DEFAULT_SCENARIO, path, window_ms=(0, 1), kernel="rwlock", threads=[4],
                             duration_ms=0.5, warmup_ms=0, repeats=1, machine="laptop-4")
    parsed = trace.read_trace(path)
    reads = [parsed["tracks"][s["track"]] for s in parsed["slices"]
             if parsed["tracks"][s["track"]].startswith("read holds: task")]
    stats = {r["name"]: r for r in info.point["lockstat"]}
    assert len(reads) == stats["sma->sem_perm.lock-R"]["acquisitions"]


def test_over_the_limit_is_a_one_line_input_error(tmp_path):
    with pytest.raises(semsim.InputError, match="holds more than 100 events"):
        trace.write_trace(PINGPONG, tmp_path / "x", window_ms=(0, 1), limit=100, **POINT)


@pytest.mark.parametrize("args, words", [
    (["--trace", "t.pftrace"], "one point"),
    (["--set", "threads=[2]", "--trace", "t.pftrace", "--trace-window", "3..1"], "0 <= A < B"),
    (["--set", "threads=[2]", "--trace", "t.pftrace", "--trace-window", "x"], "expected A..B"),
    (["--set", "threads=[2]", "--trace-window", "1..2"], "need --trace"),
    (["--set", "threads=[2]", "--trace", "t.pftrace", "--trace-limit", "10"], "holds more than 10 events"),
])
def test_cli_trace_bad_input(run_cli, args, words):
    proc = run_cli("run", DEFAULT_SCENARIO, "--set", "duration_ms=0.5", *args)
    assert proc.returncode == 2, proc.stderr
    assert words in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_cli_trace_writes_the_file_and_says_what_it_holds(run_cli, tmp_path):
    proc = run_cli("run", DEFAULT_SCENARIO, "--set", "threads=[2]", "--set", "duration_ms=0.5",
                   "--set", "warmup_ms=0.1", "--set", "repeats=1", "--trace", "t.perfetto-trace",
                   "--trace-window", "0.1..0.2", "-o", "r.json")
    assert proc.returncode == 0, proc.stderr
    assert "trace: t.perfetto-trace" in proc.stderr and "CPU slices" in proc.stderr
    parsed = trace.read_trace(tmp_path / "t.perfetto-trace")
    assert any(n.startswith("lock sem->lock[") for n in parsed["tracks"].values())
