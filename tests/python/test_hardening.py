"""Issue 17's defects, one test each: never touch what is not ours, never crash or hang
on bad input, never say one model and use another.

The native tests run `semsim native` in subprocesses with their own XDG_RUNTIME_DIR, so
the ownership records they read (sim/native/ownership.hpp) are theirs alone.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

import semsim
from conftest import DEFAULT_SCENARIO, REPO, SCENARIOS

LIBC = ctypes.CDLL(None, use_errno=True)
IPC_CREAT, IPC_EXCL, IPC_RMID = 0o1000, 0o2000, 0
GETVAL = 12


def semget(key: int, nsems: int) -> int:
    return LIBC.semget(ctypes.c_int(key), nsems, IPC_CREAT | IPC_EXCL | 0o600)


def exists(semid: int) -> bool:
    return LIBC.semctl(semid, 0, GETVAL) >= 0


def arrays() -> dict[int, int]:
    """semid -> key of every SysV array on the host (/proc/sysvipc/sem)."""
    out = {}
    for line in Path("/proc/sysvipc/sem").read_text().splitlines()[1:]:
        fields = line.split()
        out[int(fields[1])] = int(fields[0]) & 0xFFFFFFFF
    return out


def records(runtime: Path) -> list[tuple[int, int, int]]:
    """(semid, key, creator) of the live records in the ownership files under runtime."""
    live = []
    for f in (runtime / "semsim").glob("*.arrays"):
        data = f.read_bytes()
        for off in range(128, len(data), 32):
            state, semid, key, creator = struct.unpack_from("<iiii", data, off)
            if state == 2:
                live.append((semid, key & 0xFFFFFFFF, creator))
    return live


def runner_key(pid: int, index: int = 0) -> int:
    return (ord("S") << 24) | (index << 22) | pid


@pytest.fixture
def runtime(tmp_path):
    d = tmp_path / "runtime"
    d.mkdir(mode=0o700)
    return d


def semsim_cmd(*args, runtime: Path, **kw) -> subprocess.Popen:
    env = dict(os.environ, XDG_RUNTIME_DIR=str(runtime))
    env.pop("SEMSIM_DEBUG", None)
    return subprocess.Popen([sys.executable, "-m", "semsim", *map(str, args)], env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, preexec_fn=lambda: [signal.signal(s, signal.SIG_DFL) for s in
                                                           (signal.SIGINT, signal.SIGHUP, signal.SIGQUIT)],
                            **kw)


def wait_for(pred, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = pred()
        if value:
            return value
        time.sleep(0.02)
    return None


# --------------------------------------------------------------------------- 1, 2: data safety


@pytest.fixture
def foreign():
    """Arrays of "another program" with keys that look like the runner's: 0x53031234
    (issue 17's reproduction), an ftok(path, 'S')-style key, the runner key of a dead pid."""
    dead = subprocess.run(["true"]).returncode or os.getpid() + 1
    child = subprocess.Popen(["true"])
    child.wait()
    keys = [0x53031234, 0x5300BEEF, runner_key(child.pid)]
    ids = [semget(k, 2) for k in keys]
    assert all(i >= 0 for i in ids), "a key of the test was already taken"
    yield ids
    for i in ids:
        LIBC.semctl(i, 0, IPC_RMID)
    del dead


def test_foreign_arrays_with_colliding_keys_survive_runs_and_cleanup(foreign, runtime):
    p = semsim_cmd("native", "--cleanup", runtime=runtime)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    assert out.strip() == "removed 0 leftover semaphore arrays"
    assert all(exists(i) for i in foreign)
    p = semsim_cmd("native", "--cleanup", DEFAULT_SCENARIO, "--set", "threads=[1]", "--set", "duration_ms=5",
                   "--set", "warmup_ms=0", "--set", "repeats=1", runtime=runtime)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    assert all(exists(i) for i in foreign), "semsim removed another program's array"


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT],
                         ids=["INT", "TERM", "HUP", "QUIT"])
def test_signals_leave_no_array_of_ours(sig, runtime):
    p = semsim_cmd("native", DEFAULT_SCENARIO, "--set", "threads=[2]", "--set", "duration_ms=30000",
                   "--set", "warmup_ms=0", "--set", "repeats=1", runtime=runtime)
    ours = wait_for(lambda: records(runtime))
    assert ours, "the runner recorded no array"
    time.sleep(0.2)
    p.send_signal(sig)
    _, err = p.communicate(timeout=30)
    assert p.returncode in (-sig, 128 + sig), (p.returncode, err)
    assert "Traceback" not in err
    assert not any(exists(semid) for semid, _, _ in ours)
    assert not records(runtime)


@pytest.mark.parametrize("workload", [
    {"type": "sem-lockunlock", "semaphores": 2, "loops": 10**9},
    {"type": "aim9-shm"},
], ids=["sem-lockunlock", "aim9-shm"])
def test_sigkill_of_the_runner_then_cleanup_leaves_no_array_of_ours(workload, runtime):
    p = semsim_cmd("native", DEFAULT_SCENARIO, "--set", f"workload={json.dumps(workload)}",
                   "--set", "threads=[4]", "--set", "duration_ms=30000", "--set", "warmup_ms=0",
                   "--set", "repeats=1", runtime=runtime)
    ours = wait_for(lambda: records(runtime))
    assert ours
    time.sleep(0.3)
    seen = {r[0] for r in records(runtime)} | {r[0] for r in ours}
    p.kill()
    p.communicate(timeout=30)
    c = semsim_cmd("native", "--cleanup", runtime=runtime)
    out, err = c.communicate(timeout=60)
    assert c.returncode == 0, err
    # One --cleanup is enough, even while the orphaned task processes are zombies.
    left = [semid for semid in seen if exists(semid) and semid in arrays()]
    assert not left, (out, left)
    assert not records(runtime)


def test_a_task_killed_from_outside_is_a_host_error(runtime):
    p = semsim_cmd("native", DEFAULT_SCENARIO, "--set",
                   'workload={"type": "sem-lockunlock", "semaphores": 2, "loops": 1000000000}',
                   "--set", "threads=[2]", "--set", "repeats=1", runtime=runtime)
    assert wait_for(lambda: records(runtime))
    children = wait_for(lambda: [int(x) for x in Path(f"/proc/{p.pid}/task/{p.pid}/children").read_text().split()])
    assert children
    time.sleep(0.2)
    os.kill(children[0], signal.SIGKILL)
    _, err = p.communicate(timeout=30)
    assert p.returncode == 3, err
    # (A busy-host warning may come first: other processes here, e.g. parallel tests.)
    last = err.splitlines()[-1]
    assert last.startswith("semsim: host error: ") and "Traceback" not in err, err


# --------------------------------------------------------------------------- 3, 4, 5: crashes, hangs


def one_line_error(proc, *parts):
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert proc.stderr.startswith("semsim: error: ") and proc.stderr.count("\n") == 1, proc.stderr
    for part in parts:
        assert part in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


DEEP = "[" * 100_000 + "]" * 100_000


def test_deep_nesting_is_an_input_error(run_cli, tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text(DEEP)
    for command in ("run", "validate"):
        one_line_error(run_cli(command, deep), "nested deeper than")
    # (One argument may hold at most 128 KiB: 30,000 levels.)
    one_line_error(run_cli("validate", DEFAULT_SCENARIO, "--set", "workload=" + "[" * 30_000 + "]" * 30_000),
                   "nested deeper than")
    with pytest.raises(semsim.InputError, match="nested"):
        semsim.load_scenario('{"name": ' + DEEP + "}")
    nested: list = []
    for _ in range(100_000):
        nested = [nested]
    with pytest.raises(semsim.InputError):
        semsim.simulate(DEFAULT_SCENARIO, threads=nested)


def test_only_regular_files_are_read(run_cli, tmp_path):
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    one_line_error(run_cli("validate", fifo, timeout=20), "not a regular file")
    one_line_error(run_cli("validate", DEFAULT_SCENARIO, "--set", f"machine={fifo}", timeout=20),
                   "not a regular file")
    one_line_error(run_cli("validate", DEFAULT_SCENARIO, "--set", "machine=/dev/zero", timeout=20),
                   "/dev/zero", "not a regular file")
    one_line_error(run_cli("validate", tmp_path), "not a regular file")


def machine_file(tmp_path, change) -> Path:
    model = json.loads((REPO / "cpu_models" / "host-default.json").read_text())
    change(model)
    path = tmp_path / "model.json"
    path.write_text(json.dumps(model))
    return path


def test_costs_that_round_to_zero_ticks_are_refused_at_load(run_cli, tmp_path):
    def tiny(m):
        m["costs_ns"]["user_loop_iteration"]["value"] = 1e-4
    one_line_error(run_cli("validate", DEFAULT_SCENARIO, "--set", f"machine={machine_file(tmp_path, tiny)}"),
                   "costs_ns.user_loop_iteration.value", "round")


def test_ctrl_c_during_run_ends_as_sigint(tmp_path):
    p = subprocess.Popen([sys.executable, "-m", "semsim", "run", DEFAULT_SCENARIO, "--set", "machine=host-default",
                          "--set", "threads=[4]", "--set", "duration_ms=100000", "--set", "precision=0"],
                         cwd=tmp_path,
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    time.sleep(2.0)  # well inside the simulation
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=30)
    assert p.returncode in (-signal.SIGINT, 130), (p.returncode, err)
    assert out == "" and "Traceback" not in err


# --------------------------------------------------------------------------- 7, 8, 11: bad input


@pytest.mark.parametrize("key,value,field", [
    ("duration_ms", "1e309", "duration_ms"),
    ("duration_ms", "1" * 400, "duration_ms"),
    ("workload", '{"type": "sem-scalebench", "mode": 4294967297}', "workload.mode"),
    ("seed", str(2**53 + 1), "seed"),
    ("seed", str(2**64 + 1), "seed"),
    ("name", '""', "name"),
    ("name", '"' + "n" * 300 + '"', "name"),
    ("threads", "[1, 2.5]", "threads[1]"),
    ("machine", "m" * 300, "machine"),
    ("kernel", "{bad", "kernel"),
])
def test_bad_values_name_their_field(run_cli, key, value, field):
    for command in ("validate", "run"):
        one_line_error(run_cli(command, DEFAULT_SCENARIO, "--set", f"{key}={value}"), field)


def test_malformed_kernel_object_says_not_valid_json(run_cli):
    one_line_error(run_cli("validate", DEFAULT_SCENARIO, "--set", "kernel={bad"), "--set kernel", "malformed JSON")


def test_malformed_json_gives_line_column_and_field(run_cli, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"name": "x",\n "machine": "host-default",\n "kernel": tru }')
    one_line_error(run_cli("validate", bad), "line 3, column", "(in kernel)")


def test_non_utf8_set_value(tmp_path):
    proc = subprocess.run([sys.executable.encode(), b"-m", b"semsim", b"validate", os.fsencode(DEFAULT_SCENARIO),
                           b"--set", b"name=\xff\xfe"], cwd=tmp_path, capture_output=True, text=True)
    one_line_error(proc, "--set name", "UTF-8")


@pytest.mark.parametrize("change,field", [
    (lambda m: m["latency_ns"].__setitem__("same_die", {"value": 1e300, "source": "x"}), "latency_ns.same_die"),
    (lambda m: m["memory_latency_ns"].__setitem__("value", 1e300), "memory_latency_ns"),
    (lambda m: m["latency_ns"]["same_die"].__setitem__("value", 0), "latency_ns.same_die"),
    (lambda m: m["costs_ns"]["syscall"].__setitem__("value", 0), "costs_ns.syscall"),
    (lambda m: m["latency_ns"].__setitem__("far_away", {"value": 100, "source": "x"}), "latency_ns.far_away"),
    (lambda m: m.__setitem__("name", ""), "name"),
    (lambda m: m.__setitem__("name", "x" * 300), "name"),
    (lambda m: m.__setitem__("latency_matrix_ns", {"matrix": [[0, 1]], "source": "x"}), "latency_matrix_ns"),
], ids=["latency-1e300", "memory-1e300", "zero-latency", "zero-cost", "unknown-class", "empty-name",
        "long-name", "matrix-shape"])
def test_bad_machine_files_name_their_field(run_cli, tmp_path, change, field):
    one_line_error(run_cli("validate", DEFAULT_SCENARIO, "--set", f"machine={machine_file(tmp_path, change)}"),
                   field)


def test_validate_says_when_only_this_hosts_limits_stop_native(run_cli):
    cpus = len(os.sched_getaffinity(0))
    proc = run_cli("validate", SCENARIOS / "host" / "sem-scalebench-m1-pinned.json", "--set", "machine=westmere-ex-160",
                   "--set", f"threads=[{2 * cpus + 2}]", "--set", "workload.max_cpus=160")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("ok: ") and "semsim native` on this host would refuse it" in proc.stdout


def test_a_pin_beyond_the_machines_cpus_is_refused_not_wrapped(run_cli):
    # get_cpunr puts thread 3 of 4 on CPU 2: the benchmark could not bind it on 2 CPUs,
    # so the simulator does not silently run it on another CPU either.
    for command in ("validate", "run"):
        proc = run_cli(command, SCENARIOS / "host" / "sem-scalebench-m1-pinned.json", "--set", "machine=host-default",
                       "--set", "threads=[4]")
        one_line_error(proc, "workload.pin", "machine host-default has 2 CPUs")
    with pytest.raises(semsim.InputError, match="workload.max_cpus: 8 CPUs, but machine host-default has 2 CPUs"):
        semsim.load_scenario(SCENARIOS / "host" / "sem-scalebench-m1-pinned.json", machine="host-default",
                             sets=["workload.max_cpus=8"])


def test_python_api_raises_input_error():
    for call in (lambda: semsim.simulate(42), lambda: semsim.load_scenario(DEFAULT_SCENARIO, threads=object()),
                 lambda: semsim.load_scenario(DEFAULT_SCENARIO, duration_ms=10**400),
                 lambda: semsim.load_scenario(DEFAULT_SCENARIO, seed=2**70),
                 lambda: semsim.load_scenario(DEFAULT_SCENARIO, duration_ms=float("nan")),
                 lambda: semsim.calibrate(out_path=5), lambda: semsim.machine_info(5)):
        with pytest.raises(semsim.InputError):
            call()


def test_numpy_arrays_as_overrides():
    np = pytest.importorskip("numpy")
    sc = semsim.load_scenario(DEFAULT_SCENARIO, threads=np.array([1, 2]), machine="host-default")
    assert sc["threads"] == [1, 2]


# --------------------------------------------------------------------------- 9: one model, said and used


def test_host_without_a_calibrated_model_says_how_to_make_one(run_cli):
    one_line_error(run_cli("validate", DEFAULT_SCENARIO, "--set", "machine=host"), "semsim calibrate")
    with pytest.raises(semsim.InputError, match="semsim calibrate"):
        semsim.simulate(DEFAULT_SCENARIO, machine="host", threads=[1], duration_ms=0.1)


def test_native_measures_this_host_whatever_model_the_scenario_names(runtime):
    # A measurement is of this host: machine "host" need not be calibrated for it.
    p = semsim_cmd("native", DEFAULT_SCENARIO, "--set", "machine=host", "--set", "threads=[1]",
                   "--set", "duration_ms=5", "--set", "warmup_ms=0", "--set", "repeats=1", runtime=runtime)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    assert json.loads(out)["scenario"]["machine"] == "host"


def test_host_means_the_calibrated_model(calibrated_host, run_cli, tmp_path):
    info = semsim.machine_info("host")
    assert info["file"] == str(calibrated_host)
    res = semsim.simulate(DEFAULT_SCENARIO, machine="host", threads=[1], duration_ms=0.1)
    assert res.doc["provenance"]["machine_model_hash"] == info["hash"]
    proc = run_cli("run", DEFAULT_SCENARIO, "--set", "machine=host", "--set", "threads=[1]",
                   "--set", "duration_ms=0.1")
    assert proc.returncode == 0, proc.stderr
    assert f"model 'host': {calibrated_host} ({info['hash']})" in proc.stderr


def test_a_cpu_models_file_in_the_current_directory_does_not_shadow_a_preset(run_cli, tmp_path):
    shadow = json.loads((REPO / "cpu_models" / "laptop-4.json").read_text())
    shadow["description"] = "a shadow"
    (tmp_path / "cpu_models").mkdir()
    (tmp_path / "cpu_models" / "laptop-4.json").write_text(json.dumps(shadow))
    (tmp_path / "cpu_models" / "host.json").write_text(json.dumps(shadow))
    proc = run_cli("run", DEFAULT_SCENARIO, "--set", "machine=laptop-4", "--set", "threads=[1]",
                   "--set", "duration_ms=0.1")
    assert proc.returncode == 0, proc.stderr
    assert str(tmp_path) not in proc.stderr
    assert "a shadow" not in run_cli("list").stdout
    # ./cpu_models/host.json is not machine "host" either.
    one_line_error(run_cli("validate", DEFAULT_SCENARIO, "--set", "machine=host"), "semsim calibrate")


# --------------------------------------------------------------------------- 10: what a user waits for


def test_progress_on_a_terminal_and_quiet_off_one(monkeypatch, capsys, run_cli):
    from semsim import cli

    args = ["run", str(DEFAULT_SCENARIO), "--set", "machine=host-default", "--set", "threads=[4,8]",
            "--set", "duration_ms=30", "-o", os.devnull]
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    assert cli.main(args) == 0
    assert "\rsemsim: simulating default.json: " in capsys.readouterr().err
    proc = run_cli(*args[:-6], "--set", "threads=[1]", "--set", "duration_ms=1", "-o", os.devnull)  # a pipe
    assert proc.returncode == 0 and "\r" not in proc.stderr and "simulating" not in proc.stderr


def test_busy_host_warning(monkeypatch, capsys):
    import importlib

    from semsim.progress import Status

    compare = importlib.import_module("semsim.compare")  # the module (semsim.compare is the function)

    share = compare.host_busy_share(0.05)
    assert share is None or 0.0 <= share <= 1.0
    monkeypatch.setattr(compare, "host_busy_share", lambda seconds=0.3: 0.9)
    compare.warn_if_busy(Status(), "measuring")
    err = capsys.readouterr().err
    assert err.startswith("semsim: warning: this host is busy before measuring") and "90%" in err
    monkeypatch.setattr(compare, "host_busy_share", lambda seconds=0.3: 0.01)
    compare.warn_if_busy(Status(), "measuring")
    assert capsys.readouterr().err == ""


def test_compare_says_when_the_host_load_is_unknown(run_cli, tmp_path):
    # A 5 ms window is too short for /proc/stat's ticks: the load share is unknown, and
    # compare says so rather than counting the point as quiet.
    proc = run_cli("compare", DEFAULT_SCENARIO, "--machine", "host-default", "--set", "threads=[1]",
                   "--set", "duration_ms=5", "--set", "warmup_ms=1", "--set", "repeats=1", "-o", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    assert "host load unknown for 1 of 1 point(s)" in proc.stdout


def test_help_documents_the_scenario_fields_and_exit_statuses(run_cli):
    for command in ("run", "native", "compare", "validate"):
        proc = run_cli(command, "--help")
        assert proc.returncode == 0
        for field in ("machine:", "kernel:", "workload:", "threads:", "duration_ms:", "seed:", "exit status"):
            assert field in proc.stdout, (command, field)
