"""`semsim run --profile`, `semsim reproduce` and `semsim bench` on the command line."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEFAULT = str(ROOT / "scenarios" / "default.json")


def semsim(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "semsim", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=300)


def test_profile_prints_a_perf_report_and_writes_folded_stacks(tmp_path):
    folded = tmp_path / "out.folded"
    out = tmp_path / "r.json"
    r = semsim("run", DEFAULT, "--set", "threads=[4]", "--set", "duration_ms=0.5", "--set", "repeats=1",
               "--set", "kernel=global_lock", "--set", "machine=laptop-4", "--profile", "--folded",
               str(folded), "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert "Overhead" in r.stdout and "_raw_spin_lock" in r.stdout
    shares = [float(line.split("%")[0]) for line in r.stdout.splitlines() if "%  [" in line]
    assert abs(sum(shares) - 100.0) < 0.5  # the profile covers every busy nanosecond
    lines = folded.read_text().splitlines()
    assert any(";ipc_lock;_raw_spin_lock " in line for line in lines)  # 3.9's caller
    for line in lines:
        stack, count = line.rsplit(" ", 1)
        assert stack.startswith("semsim;threads=4;global_lock;") and int(count) > 0
    assert json.loads(out.read_text())["points"][0]["threads"] == 4


def test_folded_needs_profile():
    r = semsim("run", DEFAULT, "--folded", "x.folded")
    assert r.returncode == 2 and "--profile" in r.stderr and "Traceback" not in r.stderr


def test_reproduce_rejects_unknown_targets():
    r = semsim("reproduce", "--only", "nope")
    assert r.returncode == 2
    assert "xeon24" in r.stderr and "Traceback" not in r.stderr


def test_reproduce_writes_the_report(tmp_path):
    r = semsim("reproduce", "--only", "aim9", "--duration-ms", "1", "--seeds", "1", "-o", str(tmp_path))
    assert r.returncode == 0, r.stderr
    text = (tmp_path / "reproduce.md").read_text()
    assert "aim9 shared_memory" in text and "| check | published | predicted | result |" in text
    assert (tmp_path / "reproduce-aim9.png").exists()
    assert list((tmp_path / "scenarios" / "aim9").glob("*.json"))


def test_bench_rejects_bad_repeats():
    r = semsim("bench", "--repeats", "0")
    assert r.returncode == 2 and "repeats" in r.stderr


def test_compare_several_scenarios_writes_the_accuracy_summary(tmp_path):
    host = ROOT / "scenarios" / "host"
    r = semsim("compare", str(host / "semop-multi-s8.json"), str(host / "aim9-shm.json"),
               "--machine", "host-default", "--set", "threads=[1]", "--set", "duration_ms=10",
               "--set", "warmup_ms=2", "--set", "repeats=1", "-o", str(tmp_path))
    assert r.returncode == 0, r.stderr
    summary = json.loads((tmp_path / "accuracy.json").read_text())
    assert summary["summary"]["points"] == 2
    assert {row["scenario"] for row in summary["rows"]} == {"semop-multi-s8", "aim9-shm"}
    assert all(row["machine"] == "host-default" for row in summary["rows"])
    assert (tmp_path / "aim9-shm" / "compare.json").exists()


def test_bench_pairs_each_run_with_its_own_floor(monkeypatch):
    """x floor is the median of each run's ratio to the floor measured right before it: a
    host that doubles its speed between repeats moves the floor and the run alike, and
    the ratio stays 4 (against the median floor alone it would read 2 .. 8)."""
    import io

    from semsim import bench

    speed = iter([1.0, 2.0, 0.5] * 2)
    state = {"scale": 1.0}

    def floor(_actors, _sleeps):
        state["scale"] = next(speed)
        return 100e-9 * state["scale"]

    def run(_case):  # 1,000 semops at 4 floors each, on the host of the floor before it
        return 1000 * 400e-9 * state["scale"], 1000, 3000, 0, 0

    monkeypatch.setattr(bench, "CASES", bench.CASES[:2])
    monkeypatch.setattr(bench._core, "sleep_floor", floor)
    monkeypatch.setattr(bench, "time_case", run)
    monkeypatch.setattr(bench, "peak_memory_mib", lambda tasks=1024: 1.0)
    report = bench.run(repeats=3, out=io.StringIO())
    for case in report["cases"]:
        assert case["floor_multiple"] == 4.0
        assert case["floor_multiple_min"] == case["floor_multiple_max"] == 4.0
        assert case["handoffs_per_semop"] == 3.0
    assert report["floor_ns_per_sleep_for"]["min"] == 50.0


def test_bench_says_which_build_it_times(monkeypatch):
    import io

    from semsim import bench

    monkeypatch.setattr(bench, "CASES", bench.CASES[:1])
    monkeypatch.setattr(bench._core, "sleep_floor", lambda _actors, _sleeps: 100e-9)
    monkeypatch.setattr(bench, "time_case", lambda _case: (1e-3, 1000, 3000, 0, 0))
    monkeypatch.setattr(bench, "peak_memory_mib", lambda tasks=1024: 1.0)
    out = io.StringIO()
    report = bench.run(repeats=1, out=out)
    assert report["build"] == bench.build_kind()
    assert f"build: {report['build']}" in out.getvalue()
    for mode, start in (("use", "profile-guided"), ("off", "plain"), ("generate", "instrumented")):
        monkeypatch.setattr(bench._core, "pgo_mode", lambda mode=mode: mode)
        assert bench.build_kind().startswith(start)


def test_pgo_training_runs_every_bench_case_and_shipped_host_scenario(monkeypatch):
    """setup.sh's training run: each scenario it builds loads (a bad one would fail the
    install's second build step), and it covers the bench cases and scenarios/host/."""
    import io
    import json
    from pathlib import Path

    from semsim import bench

    seen = []
    monkeypatch.setattr(bench._core, "simulate", lambda text: seen.append(json.loads(text)) or "{}")
    out = io.StringIO()
    bench.pgo_training(out=out)
    shipped = sorted(Path(__file__).resolve().parents[2].glob("scenarios/host/*.json"))
    assert len(seen) == len(bench.CASES) + 1 + 2 * len(shipped)
    assert {s["workload"]["type"] for s in seen} >= {json.loads(p.read_text())["workload"]["type"] for p in shipped}
    assert f"{len(seen)} runs" in out.getvalue()
