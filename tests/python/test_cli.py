"""The `semsim` command: output formats, determinism, and one-line errors with exit 2."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import semsim
from conftest import DEFAULT_SCENARIO, NATIVE_TINY, SIM_TINY


def assert_no_traceback(proc):
    assert "Traceback" not in proc.stderr
    assert "Traceback" not in proc.stdout


def test_version(run_cli):
    proc = run_cli("--version")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("semsim ")
    assert_no_traceback(proc)


def test_help(run_cli):
    proc = run_cli("--help")
    assert proc.returncode == 0
    for command in ("run", "native", "compare", "demo", "list", "validate"):
        assert command in proc.stdout


def test_list(run_cli):
    proc = run_cli("list")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    for section in ("machines:", "kernels:", "workloads:"):
        assert section in lines
    entries = {line.split()[0]: line for line in lines if line.startswith("  ")}
    for name in ("global_lock", "hysteresis", "host-default", "semop-multi"):
        assert name in entries, proc.stdout
        assert len(entries[name].split()) > 1, f"no description for {name}"


def test_list_policies(run_cli):
    proc = run_cli("list", "--policies")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    ids = lines[0].split()
    assert ids[0] == "global_lock" and ids[-1] == "hysteresis", lines[0]
    rows = {line.split()[0]: line.split()[1:] for line in lines[2:]}
    assert rows["blocking_store"] == ["false"] * 6 + ["true"] * 3, rows["blocking_store"]
    assert rows["two_pass"] == ["false"] * 8 + ["true"], rows["two_pass"]
    assert rows["spinlock"][ids.index("complex_mode")] == "queued"
    assert set(rows) == set(semsim.catalog()["kernels"][0]["policy"])


def check_simulated_doc(doc, threads):
    assert doc["side"] == "simulated"
    assert doc["scenario"]["threads"] == threads
    assert doc["scenario"]["duration_ms"] == 2
    assert doc["scenario"]["workload"]["type"] == "semop-multi"
    prov = doc["provenance"]
    for key in ("semsim_version", "machine", "kernel"):
        assert prov[key], key
    assert any(k.startswith("machine_model") and prov[k] for k in prov), prov  # the model's hash
    assert [p["threads"] for p in doc["points"]] == threads
    for p in doc["points"]:
        assert p["kernel"] == "hysteresis"
        assert p["machine"] == "host-default"
        assert p["ops_per_s"] > 0


def test_run_format_and_determinism(run_cli, tmp_path):
    a = run_cli("run", DEFAULT_SCENARIO, *SIM_TINY, "-o", tmp_path / "a.json")
    assert a.returncode == 0, a.stderr
    assert a.stdout == ""
    assert "ops/s" in a.stderr and "hysteresis" in a.stderr  # the human table
    b = run_cli("run", DEFAULT_SCENARIO, *SIM_TINY, "-o", tmp_path / "b.json")
    assert b.returncode == 0, b.stderr
    first = (tmp_path / "a.json").read_bytes()
    assert first == (tmp_path / "b.json").read_bytes(), "simulation output differs between runs"
    check_simulated_doc(json.loads(first), [1, 2])
    # Without -o, the same bytes go to stdout.
    c = run_cli("run", DEFAULT_SCENARIO, *SIM_TINY)
    assert c.returncode == 0, c.stderr
    assert c.stdout.encode() == first
    assert_no_traceback(c)


def test_validate(run_cli):
    proc = run_cli("validate", DEFAULT_SCENARIO)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok: default"


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


# (arguments after the scenario, words the one-line message must contain)
BAD_OVERRIDES = [
    (["--set", "colour=blue"], ["colour"]),
    (["--set", "kernel=no_such_kernel"], ["kernel", "global_lock", "hysteresis"]),
    (["--set", "threads=x"], ["threads"]),
    (["--set", 'threads="4"'], ["threads"]),
    (["--set", "threads=0"], ["threads"]),
    (["--set", "threads=-3"], ["threads"]),
    (["--set", "threads=[]"], ["threads"]),
    (["--set", "threads=[1,0]"], ["threads"]),
    (["--set", "workload.semaphores=-1"], ["semaphores"]),
    (["--set", "workload.semaphores=0"], ["semaphores"]),
    (["--set", "workload.semaphore=4"], ["semaphore"]),
    (["--set", "workload.type=no-such-workload"], ["workload", "semop-multi"]),
    (["--set", "workload.pattern=diagonal"], ["pattern", "stride"]),
    (["--set", "duration_ms=0"], ["duration_ms"]),
    (["--set", "duration_ms=-5"], ["duration_ms"]),
    (["--set", "repeats=0"], ["repeats"]),
    (["--set", "seed=-1"], ["seed"]),
    (["--set", "machine=no-such-machine"], ["machine", "no-such-machine"]),
    (["--set", "threads"], ["--set"]),
    (["--set", "=3"], ["--set"]),
    (["--bogus-flag"], ["--bogus-flag"]),
]


def assert_one_line_error(proc, words):
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert_no_traceback(proc)
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("semsim: error: "), lines[0]
    for word in words:
        assert word in lines[0], (word, lines[0])
    assert proc.stdout == ""


@pytest.mark.parametrize("extra,words", BAD_OVERRIDES, ids=[" ".join(a) for a, _ in BAD_OVERRIDES])
def test_bad_override_run(run_cli, extra, words):
    assert_one_line_error(run_cli("run", DEFAULT_SCENARIO, *SIM_TINY, *extra), words)


@pytest.mark.parametrize("command", ["validate", "native", "compare"])
def test_bad_kernel_other_commands(run_cli, command):
    proc = run_cli(command, DEFAULT_SCENARIO, "--set", "kernel=linux-2.4")
    assert_one_line_error(proc, ["kernel", "global_lock", "hysteresis"])


def test_unknown_field_in_file(run_cli, tmp_path):
    doc = json.loads(DEFAULT_SCENARIO.read_text())
    doc["durration_ms"] = 5
    path = _write(tmp_path, "typo.json", json.dumps(doc))
    assert_one_line_error(run_cli("run", path), ["durration_ms"])


def test_wrong_type_in_file(run_cli, tmp_path):
    doc = json.loads(DEFAULT_SCENARIO.read_text())
    doc["threads"] = "x"
    path = _write(tmp_path, "type.json", json.dumps(doc))
    assert_one_line_error(run_cli("validate", path), ["threads"])


def test_missing_file(run_cli, tmp_path):
    missing = tmp_path / "no-such-scenario.json"
    assert_one_line_error(run_cli("run", missing), ["no-such-scenario.json"])


def test_malformed_json(run_cli, tmp_path):
    path = _write(tmp_path, "broken.json", '{"name": "broken", "threads": [1, 2,\n')
    assert_one_line_error(run_cli("run", path), ["broken.json"])


def test_not_an_object(run_cli, tmp_path):
    path = _write(tmp_path, "list.json", "[1, 2, 3]")
    assert_one_line_error(run_cli("validate", path), [])


def test_missing_arguments(run_cli):
    assert_one_line_error(run_cli(), ["command"])
    assert_one_line_error(run_cli("run"), ["SCENARIO"])
    assert_one_line_error(run_cli("frobnicate"), ["frobnicate"])


def test_unwritable_output(run_cli, tmp_path):
    blocker = _write(tmp_path, "file", "")
    proc = run_cli("run", DEFAULT_SCENARIO, *SIM_TINY, "-o", blocker / "out.json")
    assert proc.returncode == 2, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert_no_traceback(proc)


def test_native_tiny(run_cli, tmp_path):
    out = tmp_path / "native.json"
    proc = run_cli("native", DEFAULT_SCENARIO, *NATIVE_TINY, "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert "ops/s" in proc.stderr
    doc = json.loads(out.read_text())
    assert doc["side"] == "measured"
    assert doc["scenario"]["machine"] == "host-default"  # recorded, not measured
    assert doc["host"]["kernel_release"] == os.uname().release
    assert doc["host"]["cpus"] >= 1
    assert [p["threads"] for p in doc["points"]] == [1, 2]
    for p in doc["points"]:
        assert p["machine"] == "host"
        assert p["ops_per_s"] > 0
        assert p["ops_per_s_min"] <= p["ops_per_s"] <= p["ops_per_s_max"]


def test_native_cleanup(run_cli):
    proc = run_cli("native", "--cleanup")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("removed ")


def test_compare_tiny(run_cli, tmp_path):
    out = tmp_path / "cmp"
    proc = run_cli("compare", DEFAULT_SCENARIO, *NATIVE_TINY, "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert "predicted" in proc.stdout and "error %" in proc.stdout
    doc = json.loads((out / "compare.json").read_text())
    assert [r["threads"] for r in doc["points"]] == [1, 2]
    for r in doc["points"]:
        assert r["predicted_ops_per_s"] > 0 and r["measured_ops_per_s"] > 0
        assert isinstance(r["error_pct"], float)
        assert isinstance(r["exceeds_spread"], bool)
    assert doc["simulated"]["side"] == "simulated" and doc["measured"]["side"] == "measured"
    assert (out / "default.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_demo_tiny(run_cli, tmp_path):
    # The main job on the embedded default scenario, shrunk by overrides.
    out = tmp_path / "demo"
    proc = run_cli("demo", "--set", "threads=[1]", "--set", "duration_ms=20", "--set", "warmup_ms=2",
                   "--set", "repeats=1", "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert "1 threads" in proc.stdout
    assert (out / "compare.json").exists()
    assert (out / "default.png").exists()
    # Predicted with a model of this host: a calibrated one, or a quick calibration
    # made for the demo (none in a fresh directory unless the package ships one).
    machine = json.loads((out / "compare.json").read_text())["scenario"]["machine"]
    if (out / "host.json").exists():
        assert machine == str(out / "host.json") and "quick calibration" in proc.stderr
        assert json.loads((out / "host.json").read_text())["name"] == "host"
    else:
        assert machine == "host"


def test_demo_keeps_a_machine_it_is_given(run_cli, tmp_path):
    out = tmp_path / "demo"
    proc = run_cli("demo", "--set", "machine=host-default", "--set", "threads=[1]", "--set", "duration_ms=5",
                   "--set", "warmup_ms=1", "--set", "repeats=1", "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert "calibration" not in proc.stderr and not (out / "host.json").exists()
    assert json.loads((out / "compare.json").read_text())["scenario"]["machine"] == "host-default"


def test_native_interrupted_quietly(tmp_path):
    # Ctrl-C during a measurement: the runner removes its array and the process ends
    # as SIGINT does, without a traceback or a partial result.
    proc = subprocess.Popen(
        [sys.executable, "-m", "semsim", "native", str(DEFAULT_SCENARIO), "--set", "threads=[2]",
         "--set", "duration_ms=20000", "--set", "warmup_ms=0", "--set", "repeats=1"],
        cwd=tmp_path, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        # As at a terminal, even when this test runs where SIGINT is ignored (a background job).
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    time.sleep(2.0)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode in (-signal.SIGINT, 130), (proc.returncode, err)
    assert "Traceback" not in err
    assert out == ""


def test_calibrate_reports_a_model_far_from_the_one_it_replaces(tmp_path, monkeypatch, capsys):
    from semsim import api, cli

    def model(one_way):
        return {"latency_ns": {"same_die": {"value": one_way / 1.45}},
                "provenance": {"date": "2026-12-07T09:07:30Z", "warnings": [],
                               "probes": {"line_pingpong": [{"class": "same_die", "cpus": [0, 1],
                                                             "one_way_ns": {"median": one_way}}]},
                               "checks": {"semop_uncontended_ns": {"median": 283.0}}}}

    path = tmp_path / "host.json"
    path.write_text(json.dumps(model(39.8)))

    def fake_calibrate(out_path, quick=False, progress=None):  # the probes' result, without probing
        path.write_text(json.dumps(model(186.8)))
        return model(186.8)

    monkeypatch.setattr(api, "calibrate", fake_calibrate)
    assert cli.main(["calibrate", "-o", str(path)]) == 0
    err = capsys.readouterr().err
    assert ("semsim: warning: the cache-line transfer (line_pingpong, one way) measured 186.8 ns, 4.7 x the "
            "previous calibration's 39.8 ns") in err, err
    # Without a previous model there is nothing to compare.
    path.unlink()
    assert cli.main(["calibrate", "-o", str(path)]) == 0
    assert "previous calibration" not in capsys.readouterr().err


def _compare_on_a_calibrated_host(tmp_path, monkeypatch, host_drift) -> int:
    """`semsim compare` of the default scenario (1 thread, 5 ms) on machine "host", with a
    calibrated model in the per-user place "host" means and `host_drift` as the check."""
    import importlib
    from pathlib import Path

    from semsim import cli

    compare_module = importlib.import_module("semsim.compare")  # semsim.compare is the function
    data = tmp_path / "data"
    (data / "semsim").mkdir(parents=True)
    repo = Path(__file__).resolve().parents[2]
    default = json.loads((repo / "cpu_models" / "host-default.json").read_text())
    default["name"] = "host"
    (data / "semsim" / "host.json").write_text(json.dumps(default))
    monkeypatch.setenv("XDG_DATA_HOME", str(data))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(compare_module, "host_drift", host_drift)
    return cli.main(["compare", str(DEFAULT_SCENARIO), "--machine", "host", "--set", "threads=[1]",
                     "--set", "duration_ms=5", "--set", "warmup_ms=1", "--set", "repeats=1",
                     "-o", str(tmp_path / "out")])


def test_compare_checks_the_host_before_and_after_measuring(tmp_path, monkeypatch, capsys):
    # A host that moves while the points are measured is caught by the check after
    # them: the points are marked and both checks are printed and kept.
    checks = iter([
        {"semop_ns": {"calibrated": 100.0, "now": 101.0, "change_pct": 1.0}, "drift_pct": 1.0, "drifted": False},
        {"semop_ns": {"calibrated": 100.0, "now": 150.0, "change_pct": 50.0}, "drift_pct": 50.0, "drifted": True},
    ])
    code = _compare_on_a_calibrated_host(tmp_path, monkeypatch, lambda _model: next(checks))
    out = capsys.readouterr().out
    assert code == 0
    assert ("host check before measuring: semop 101 ns (calibrated 100, +1 %); after: semop 150 ns "
            "(calibrated 100, +50 %); drifted from its calibration: these points are marked") in out
    doc = json.loads((tmp_path / "out" / "compare.json").read_text())
    assert doc["host_check"]["after"]["drifted"] and doc["host_check"]["drifted"]
    assert doc["points"][0]["host_drifted"] is True


def test_compare_goes_on_when_the_host_check_fails(tmp_path, monkeypatch, capsys):
    # The quick probes before measuring are a check: if they fail, the points go
    # unchecked, and the compare (minutes for a validation set) still finishes.
    import semsim

    def failing(_model):
        raise semsim.InputError("the calibrated model.wakeup_jitter.value.wakee: must be positive")

    code = _compare_on_a_calibrated_host(tmp_path, monkeypatch, failing)
    err = capsys.readouterr().err
    assert code == 0, err
    assert "semsim: warning: no host check before measuring" in err
    assert "semsim: warning: no host check after measuring" in err
    assert (tmp_path / "out" / "compare.json").exists()


def test_reference_order_gives_the_same_bytes(tmp_path):
    """`run --reference-order` takes every turn through the calendar; the
    result bytes are those of the fast path (the time core's invariant)."""
    fast, ref = tmp_path / "fast.json", tmp_path / "ref.json"
    base = [sys.executable, "-m", "semsim", "run", "scenarios/host/sem-scalebench-m2.json",
            "--set", "machine=laptop-4", "--set", "threads=[2,6]", "--set", "duration_ms=0.3",
            "--set", "warmup_ms=0.05"]
    root = Path(__file__).resolve().parents[2]
    subprocess.run(base + ["-o", str(fast)], check=True, cwd=root, capture_output=True)
    subprocess.run(base + ["--reference-order", "-o", str(ref)], check=True, cwd=root,
                   capture_output=True)
    assert fast.read_bytes() == ref.read_bytes()
