"""semsim.sweep: the cartesian product, each point in a fresh process, on any executor."""

from __future__ import annotations

import concurrent.futures as cf
import json
import sys

import pandas as pd
import pandas.testing as pdt
import pytest

import semsim
from conftest import DEFAULT_SCENARIO
from semsim import _worker, sweeps

TINY = dict(duration_ms=0.5, warmup_ms=0.1, repeats=1, progress=False)


def small_sweep(**kw):
    args = dict(threads=[1, 2, 4], kernel=["global_lock", "hysteresis"], **TINY)
    args.update(kw)
    return semsim.sweep(DEFAULT_SCENARIO, **args)


@pytest.fixture(scope="module")
def process_result():
    return small_sweep(max_workers=2)


def test_product_in_order_with_every_column(process_result):
    res = process_result
    assert isinstance(res, semsim.Result)
    assert res.side == "simulated"
    df = res.to_frame()
    assert len(df) == 6
    # kernel outer, threads inner: each curve's points are adjacent.
    assert list(df["kernel"]) == ["global_lock"] * 3 + ["hysteresis"] * 3
    assert list(df["threads"]) == [1, 2, 4, 1, 2, 4]
    assert df.columns[:4].tolist() == ["threads", "kernel", "machine", "ops_per_s"]
    for col in ("workload.semaphores", "workload.type", "duration_ms", "seed", "repeats", "side",
                "cpu_breakdown.user", "cpu_breakdown.spin", "hot_lines"):
        assert col in df.columns, col
    assert (df["ops_per_s"] > 0).all()
    assert (df["duration_ms"] == 0.5).all()
    assert res.doc["sweep"]["axes"]["threads"] == [1, 2, 4]
    assert res.doc["sweep"]["axes"]["kernel"] == ["global_lock", "hysteresis"]
    assert set(res.doc["provenance"]["kernels"]) == {"global_lock", "hysteresis"}


def test_each_point_is_what_simulate_gives(process_result):
    # Same scenario, same numbers: a fresh process per point changes nothing but isolation.
    for point in process_result.points:
        alone = semsim.simulate(point["scenario"])
        assert len(alone.points) == 1
        assert alone.points[0]["ops_per_s"] == point["ops_per_s"]
        assert alone.points[0]["cpu_breakdown"] == point["cpu_breakdown"]


def test_deterministic_bytes_and_round_trip(process_result, tmp_path):
    again = small_sweep(max_workers=1)
    assert again.to_json() == process_result.to_json()
    path = tmp_path / "sweep.json"
    process_result.to_json(path)
    back = semsim.Result.from_json(path)
    pdt.assert_frame_equal(back.to_frame(), process_result.to_frame())


def test_dask_local_cluster_gives_the_same_frame(process_result):
    pytest.importorskip("distributed")
    res = small_sweep(executor="dask", max_workers=2)
    pdt.assert_frame_equal(res.to_frame(), process_result.to_frame(), check_exact=True)
    assert res.to_json() == process_result.to_json()


def test_given_dask_client_and_concurrent_executor(process_result):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        res = small_sweep(executor=client)
        assert client.status == "running"  # a given client is left open
    pdt.assert_frame_equal(res.to_frame(), process_result.to_frame(), check_exact=True)
    with cf.ThreadPoolExecutor(max_workers=2) as pool:
        res = small_sweep(executor=pool)
    assert res.to_json() == process_result.to_json()


def test_axes_machine_semaphores_and_grid():
    res = semsim.sweep(DEFAULT_SCENARIO, threads=[2, 4], machine=["host-default", "laptop-4"],
                       semaphores=[1, "threads"], grid={"workload.pattern": ["stride", "own"]},
                       kernel="hysteresis", **TINY)
    df = res.to_frame()
    assert len(df) == 2 * 2 * 2 * 2
    assert list(df["machine"].unique()) == ["host-default", "laptop-4"]
    first = df[(df["machine"] == "host-default") & (df["workload.pattern"] == "stride")]
    assert list(first["workload.semaphores"]) == [1, 1, 2, 4]  # "threads": as many as threads
    assert list(first["threads"]) == [2, 4, 2, 4]
    assert set(df["workload.pattern"]) == {"stride", "own"}


def test_scenario_threads_used_when_no_axis():
    res = semsim.sweep(DEFAULT_SCENARIO, threads=None, **TINY, max_workers=2)
    assert [p["threads"] for p in res.points] == [1, 2, 4, 8]


@pytest.mark.parametrize(
    "kw,words",
    [
        (dict(threads=[1, 0]), ["threads=0", "threads"]),
        (dict(kernel=["hysteresis", "no_such_kernel"]), ["kernel=no_such_kernel", "allowed"]),
        (dict(machine="no-such-machine"), ["no-such-machine"]),
        (dict(semaphores=[0]), ["semaphores"]),
        (dict(threads=[]), ["threads", "empty"]),
        (dict(repeats=0), ["repeats"]),
        (dict(max_workers=0), ["max_workers"]),
        (dict(executor="threads"), ["executor"]),
    ],
)
def test_bad_input_is_an_input_error_naming_the_point(kw, words):
    args = dict(threads=[1, 2], **TINY)
    args.update(kw)
    with pytest.raises(semsim.InputError) as info:
        semsim.sweep(DEFAULT_SCENARIO, **args)
    for word in words:
        assert word in str(info.value)
    assert "\n" not in str(info.value)


def test_a_crashing_point_is_an_exception_naming_it(monkeypatch):
    # The engine dying (abort) in a point's process must not take this one down.
    crash = [sys.executable, "-c", "import os, sys; sys.stdin.read(); os.abort()"]
    monkeypatch.setattr(_worker, "worker_command", lambda: crash)
    with pytest.raises(semsim.SimulationError) as info:
        small_sweep(max_workers=2)
    message = str(info.value)
    assert "sweep point threads=" in message and "kernel=" in message
    assert "SIGABRT" in message
    # And this interpreter still works.
    assert semsim.load_scenario(DEFAULT_SCENARIO)["name"] == "default"


def test_a_failing_point_reports_the_engine_message():
    base, points = sweeps.plan(DEFAULT_SCENARIO, threads=[1], **{k: v for k, v in TINY.items() if k != "progress"})
    points[0].scenario_json = json.dumps({"machine": "host-default"})  # invalid on purpose
    with pytest.raises(semsim.InputError, match=r"sweep point threads=1 .*(kernel|workload|threads)"):
        sweeps.run_points(points, progress=False)


def test_dask_reports_a_crash_the_same_way():
    pytest.importorskip("distributed")
    base, points = sweeps.plan(DEFAULT_SCENARIO, threads=[1, 2], **{k: v for k, v in TINY.items() if k != "progress"})
    crash = [sys.executable, "-c", "import os, sys; sys.stdin.read(); os.abort()"]
    with pytest.raises(semsim.SimulationError, match="SIGABRT"):
        sweeps.run_points(points, executor="dask", max_workers=1, progress=False, command=crash)


def test_progress_bar_only_on_a_terminal(monkeypatch, capsys):
    small_sweep(threads=[1], kernel="hysteresis", progress=True)
    assert "semsim sweep" not in capsys.readouterr().err  # stderr is no terminal here

    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    bar = sweeps._progress_bar(3, True)
    assert not isinstance(bar, sweeps._NoBar)
    bar.close()
    assert isinstance(sweeps._progress_bar(3, False), sweeps._NoBar)


def test_cpu_breakdown_and_hot_lines_frames(process_result):
    breakdown = process_result.cpu_breakdown()
    assert set(breakdown.columns) >= {"threads", "kernel", "machine", "category", "share"}
    shares = breakdown.groupby(["kernel", "threads"])["share"].sum()
    assert ((shares - 1.0).abs() < 1e-3).all()
    assert list(breakdown["category"].unique())[:2] == ["user", "syscall"]
    hot = process_result.hot_lines(top=2)
    assert set(hot.columns) >= {"threads", "kernel", "rank", "line", "misses", "misses_per_op"}
    assert hot.groupby(["kernel", "threads"])["rank"].max().max() <= 2
    table = semsim.plots.hot_lines_table(process_result, top=2)
    assert len(table) == 6 and "line 1" in table.columns


def test_cli_sweep_csv_and_json(run_cli, tmp_path):
    proc = run_cli("sweep", DEFAULT_SCENARIO, "--threads", "1..4*2", "--kernel", "global_lock,hysteresis",
                   "--semaphores", "threads", "--repeats", "1", "--set", "duration_ms=0.5",
                   "--set", "warmup_ms=0.1", "-j", "2", "-o", tmp_path / "out.csv")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    frame = pd.read_csv(tmp_path / "out.csv")
    assert list(frame["threads"]) == [1, 2, 4, 1, 2, 4]
    assert list(frame["workload.semaphores"]) == [1, 2, 4, 1, 2, 4]
    json.loads(frame["hot_lines"][0])  # nested values as JSON text
    assert "ops/s" in proc.stderr  # the table

    proc = run_cli("sweep", DEFAULT_SCENARIO, "--threads", "1,2", "--kernel", "hysteresis", "--repeats", "1",
                   "--set", "duration_ms=0.5", "--set", "warmup_ms=0.1", "-o", tmp_path / "out.json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((tmp_path / "out.json").read_text())
    assert [p["threads"] for p in doc["points"]] == [1, 2]
    assert doc["side"] == "simulated"


@pytest.mark.parametrize(
    "args,word",
    [
        (["--threads", "x"], "--threads"),
        (["--threads", "4..1"], "--threads"),
        (["--threads", "0"], "threads"),
        (["--kernel", "nope"], "nope"),
        (["--semaphores", "many"], "--semaphores"),
        (["--repeats", "0"], "--repeats"),
        (["--executor", "threads"], "--executor"),
        (["--workers", "-1"], "--workers"),
        (["--bogus"], "bogus"),
    ],
)
def test_cli_sweep_bad_input_is_one_line_exit_2(run_cli, args, word):
    proc = run_cli("sweep", DEFAULT_SCENARIO, *args, "--set", "duration_ms=0.5")
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("semsim: error: "), proc.stderr
    assert word in lines[0]


def test_cli_sweep_missing_file(run_cli, tmp_path):
    proc = run_cli("sweep", tmp_path / "nope.json")
    assert proc.returncode == 2
    assert "nope.json" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("grid", [5, "workload.pattern", [("workload.pattern", ["own"])], {3: [1]}])
def test_a_grid_that_is_not_a_mapping_of_paths_is_an_input_error(grid):
    with pytest.raises(semsim.InputError, match="grid"):
        semsim.sweep(semsim.default_scenario(), grid=grid, progress=False)
