"""The Python API: scenarios in, Results out, DataFrames, errors as exceptions."""

from __future__ import annotations

import json
import os

import pandas as pd
import pytest

import semsim
from conftest import DEFAULT_SCENARIO

TINY = dict(threads=[1, 2], duration_ms=2, warmup_ms=0.5)
NATIVE_TINY = dict(threads=[1, 2], duration_ms=20, warmup_ms=2, repeats=1)


def test_exceptions_are_standard_types():
    assert issubclass(semsim.InputError, ValueError)
    assert issubclass(semsim.SimulationError, RuntimeError)


def test_uses_the_installed_extension():
    assert semsim._core.__name__ == "semsim._core"  # type: ignore[attr-defined]
    assert semsim.core_version()


def test_load_scenario_normalizes():
    sc = semsim.load_scenario(DEFAULT_SCENARIO)
    assert sc["name"] == "default"
    assert sc["machine"] == "host-default"
    assert sc["workload"]["semaphores"] == 8
    assert sc["threads"] == [1, 2, 4, 8]
    # A dict and overrides ("__" for ".") give the same as the file with --set.
    again = semsim.load_scenario(json.loads(DEFAULT_SCENARIO.read_text()), workload__semaphores=64, threads=3)
    assert again["workload"]["semaphores"] == 64
    assert again["threads"] in (3, [3])
    # Dotted keys work too.
    assert semsim.load_scenario(DEFAULT_SCENARIO, **{"workload.pattern": "own"})["workload"]["pattern"] == "own"


def test_default_scenario_is_the_packaged_one():
    assert semsim.default_scenario() == semsim.load_scenario(DEFAULT_SCENARIO)


def test_simulate_to_frame():
    res = semsim.simulate(DEFAULT_SCENARIO, **TINY)
    assert res.side == "simulated"
    assert len(res.points) == 2
    df = res.to_frame()
    assert len(df) == 2
    for col in ("threads", "kernel", "machine", "ops_per_s", "workload.semaphores", "workload.type",
                "duration_ms", "seed", "side"):
        assert col in df.columns, col
    assert list(df["threads"]) == [1, 2]
    assert (df["kernel"] == "hysteresis").all()
    assert (df["workload.semaphores"] == 8).all()
    assert (df["ops_per_s"] > 0).all()


def test_overrides_reach_the_frame():
    df = semsim.simulate(DEFAULT_SCENARIO, workload__semaphores=4, kernel="global_lock", **TINY).to_frame()
    assert (df["workload.semaphores"] == 4).all()
    assert (df["kernel"] == "global_lock").all()


def test_simulate_is_deterministic_in_one_process():
    a = semsim.simulate(DEFAULT_SCENARIO, **TINY).to_json()
    b = semsim.simulate(DEFAULT_SCENARIO, **TINY).to_json()
    assert a == b


def test_result_json_round_trip(tmp_path):
    res = semsim.simulate(DEFAULT_SCENARIO, **TINY)
    path = tmp_path / "r.json"
    res.to_json(path)
    back = semsim.Result.from_json(path)
    assert back.doc == res.doc
    assert back.to_json() == res.to_json()
    # A Result can seed another run with its own scenario.
    assert semsim.simulate(back).to_json() == res.to_json()


@pytest.mark.parametrize(
    "overrides,word",
    [
        (dict(kernel="no_such_kernel"), "kernel"),
        (dict(threads=0), "threads"),
        (dict(threads="x"), "threads"),
        (dict(workload__semaphores=-1), "semaphores"),
        (dict(colour="blue"), "colour"),
    ],
)
def test_bad_input_raises_value_error(overrides, word):
    with pytest.raises(ValueError, match=word) as info:
        semsim.simulate(DEFAULT_SCENARIO, **overrides)
    assert isinstance(info.value, semsim.InputError)


def test_missing_file_raises_input_error(tmp_path):
    with pytest.raises(semsim.InputError, match="nope.json"):
        semsim.load_scenario(tmp_path / "nope.json")


def test_wrong_python_type():
    # The README promises InputError for bad input, wrong Python types included.
    with pytest.raises(semsim.InputError, match="scenario"):
        semsim.simulate(42)  # type: ignore[arg-type]


def test_catalog():
    cat = semsim.catalog()
    assert "host-default" in [m["name"] for m in cat["machines"]]
    assert {"global_lock", "hysteresis"} <= {k["id"] for k in cat["kernels"]}
    assert "semop-multi" in [w["type"] for w in cat["workloads"]]


def test_measure_and_compare_tiny():
    res = semsim.measure(DEFAULT_SCENARIO, **NATIVE_TINY)
    df = res.to_frame()
    assert len(df) == 2 and (df["machine"] == "host").all() and (df["ops_per_s"] > 0).all()
    cmp = semsim.compare(DEFAULT_SCENARIO, **NATIVE_TINY)
    frame = cmp.to_frame()
    assert list(frame["threads"]) == [1, 2]
    assert {"predicted_ops_per_s", "measured_ops_per_s", "error_pct", "exceeds_spread"} <= set(frame.columns)
    fig = cmp.plot()
    assert fig.axes and fig.axes[0].get_xlabel() == "threads"


def test_calibrate_writes_a_model_or_says_why_not(tmp_path):
    if not semsim.calibration_available():
        with pytest.raises(semsim.CalibrationUnavailable, match="calibrat") as info:
            semsim.calibrate(tmp_path / "host.json", quick=True)
        assert isinstance(info.value, semsim.InputError)
        assert isinstance(info.value, NotImplementedError)
        assert not (tmp_path / "host.json").exists()
        return
    model = semsim.calibrate(tmp_path / "host.json", quick=True)
    assert (tmp_path / "host.json").is_file()
    assert isinstance(model, dict) and model
    # The written model is a machine a scenario can name by path.
    sc = semsim.load_scenario(DEFAULT_SCENARIO, machine=str(tmp_path / "host.json"))
    assert sc["machine"] == str(tmp_path / "host.json")


def test_cli_calibrate(run_cli, tmp_path):
    proc = run_cli("calibrate", "-o", tmp_path / "models" / "host.json", "--quick")
    assert "Traceback" not in proc.stderr
    if not semsim.calibration_available():
        assert proc.returncode == 2
        assert proc.stderr.startswith("semsim: error: calibrate:")
        return
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"wrote {tmp_path / 'models' / 'host.json'}"
    model = json.loads((tmp_path / "models" / "host.json").read_text())
    assert model["cpus"] >= 1
    # What the calibration warns of (the host's speed moving during it) reaches stderr.
    for warning in model["provenance"]["warnings"]:
        assert f"semsim: warning: {warning}" in proc.stderr


def test_public_api_is_typed():
    import inspect

    for fn in (semsim.load_scenario, semsim.simulate, semsim.measure, semsim.compare, semsim.calibrate,
               semsim.validate, semsim.native_refusal, semsim.load_native_scenario, semsim.sweep,
               semsim.plots.plot_scaling, semsim.plots.plot_compare,
               semsim.plots.plot_cpu_breakdown, semsim.plots.plot_hot_lines):
        sig = inspect.signature(fn)
        assert sig.return_annotation is not inspect.Signature.empty, fn.__name__
        assert fn.__doc__, fn.__name__


def test_plot_helpers_draw_without_pyplot():
    from matplotlib.figure import Figure

    res = [semsim.simulate(DEFAULT_SCENARIO, kernel=k, **TINY) for k in ("global_lock", "hysteresis")]
    fig = semsim.plots.plot_scaling(res)
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    assert ax.get_xlabel() == "threads"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["global_lock", "hysteresis"]
    # A frame works as well, and several machines give one panel each.
    frame = pd.concat([r.to_frame() for r in res] +
                      [semsim.simulate(DEFAULT_SCENARIO, machine="laptop-4", **TINY).to_frame()])
    assert len(semsim.plots.plot_scaling(frame).axes) == 2
    assert semsim.plots.plot_scaling(res, logy=True).axes[0].get_yscale() == "log"

    fig = semsim.plots.plot_cpu_breakdown(res)
    visible = [a for a in fig.axes if a.get_visible()]
    assert [a.get_title() for a in visible] == ["global_lock", "hysteresis"]
    assert semsim.plots.plot_hot_lines(res[1], top=2).axes

    rows = [dict(threads=t, predicted_ops_per_s=p, measured_ops_per_s=m, measured_min_ops_per_s=m * 0.9,
                 measured_max_ops_per_s=m * 1.1, error_pct=(p - m) / m * 100, exceeds_spread=abs(p - m) > 0.1 * m)
            for t, p, m in [(1, 5e6, 5.2e6), (2, 9e6, 7e6), (4, 8e6, 7.5e6)]]
    fig = semsim.plots.plot_compare(rows, error_panel=True, title="t")
    assert len(fig.axes) == 2 and fig.axes[1].get_ylabel() == "error %"

    with pytest.raises(ValueError, match="one ax"):
        from matplotlib.figure import Figure as F

        semsim.plots.plot_cpu_breakdown(res, ax=F().add_subplot())


def _side(side, points):
    return semsim.Result({"side": side, "scenario": {"name": "s"}, "points": points})


def test_compare_flags_points_measured_on_a_busy_host():
    from semsim.compare import HOST_BUSY_SHARE, Comparison

    sim = _side("simulated", [{"threads": t, "ops_per_s": 100.0} for t in (1, 2, 4)])
    meas = _side("measured", [
        {"threads": 1, "ops_per_s": 100.0, "foreign_cpu_share": 0.01},
        {"threads": 2, "ops_per_s": 50.0, "foreign_cpu_share": HOST_BUSY_SHARE + 0.3},
        {"threads": 4, "ops_per_s": 80.0, "foreign_cpu_share": None},  # window too short to tell
    ])
    c = Comparison(sim, meas)
    assert [r["host_busy"] for r in c.rows] == [False, True, None]
    assert c.rows[1]["error_pct"] == pytest.approx(100.0)
    lines = c.table().splitlines()
    assert lines[0].endswith("host busy")
    assert lines[3].endswith("0.45 busy") and lines[2].endswith("0.01") and lines[4].endswith("-")


def test_compare_marks_points_whose_measured_repeats_disagree():
    from semsim.compare import UNSTABLE_SPREAD, Comparison

    sim = _side("simulated", [{"threads": t, "ops_per_s": 100.0} for t in (1, 2, 4)])
    meas = _side("measured", [
        {"threads": 1, "ops_per_s": 100.0, "ops_per_s_min": 90.0, "ops_per_s_max": 110.0},
        {"threads": 2, "ops_per_s": 100.0, "ops_per_s_min": 50.0,
         "ops_per_s_max": 50.0 * UNSTABLE_SPREAD + 1},  # two modes
        {"threads": 4, "ops_per_s": 100.0},  # one run: no spread to judge
    ])
    c = Comparison(sim, meas)
    assert [r["measured_unstable"] for r in c.rows] == [False, True, False]
    lines = c.table().splitlines()
    assert "unstable" in lines[3] and "unstable" not in lines[2]


def test_compare_notes_predictions_that_missed_their_precision():
    from semsim.compare import Comparison

    missed = {"applicable": True, "precision": 0.01, "reached": False, "not_reached": "too few batches"}
    sim = _side("simulated", [
        {"threads": 1, "ops_per_s": 100.0, "run_length": {"precision": 0.01, "reached": True,
                                                           "not_reached": None}},
        {"threads": 2, "ops_per_s": 100.0, "run_length": missed},
        {"threads": 4, "ops_per_s": 100.0, "run_length": {**missed, "precision": 0}},  # none asked
    ])
    meas = _side("measured", [{"threads": t, "ops_per_s": 100.0} for t in (1, 2, 4)])
    c = Comparison(sim, meas)
    assert [r["predicted_not_reached"] for r in c.rows] == [None, "too few batches", None]
    lines = c.table().splitlines()
    assert lines[-1] == "2 threads: predicted precision not reached: too few batches"
    assert len(lines) == 2 + 3 + 1


def _checked_model(transfer, semop):
    """The two figures a host check reads from a model: a same-die transfer and the semop check (ns)."""
    return {"latency_ns": {"same_die": {"value": transfer, "source": "p"}},
            "provenance": {"checks": {"semop_uncontended_ns": {"median": semop}}}}


def test_drift_between_compares_transfer_and_semop_with_the_calibration():
    from semsim.compare import HOST_DRIFT_LIMIT, Comparison, drift_between

    same = drift_between(_checked_model(60.0, 120.0), _checked_model(63.0, 114.0))
    assert same["transfer_ns"]["change_pct"] == pytest.approx(5.0)
    assert same["semop_ns"]["change_pct"] == pytest.approx(-5.0)
    assert same["drift_pct"] == pytest.approx(5.0) and not same["drifted"]
    moved = drift_between(_checked_model(60.0, 120.0), _checked_model(60.0 * (1 + HOST_DRIFT_LIMIT + 0.1), 120.0))
    assert moved["drifted"]
    assert drift_between({}, _checked_model(1.0, 1.0)) == {"drift_pct": 0.0, "drifted": False}
    # A comparison carries the check and marks its points.
    sim = _side("simulated", [{"threads": 1, "ops_per_s": 1.0}])
    meas = _side("measured", [{"threads": 1, "ops_per_s": 1.0}])
    c = Comparison(sim, meas, moved)
    assert c.rows[0]["host_drifted"] is True and c.to_doc()["host_check"]["drifted"]


def test_a_calibration_far_from_the_previous_one_is_reported():
    from semsim.compare import calibration_changes

    def model(one_way, semop, date="2026-12-07T09:07:30Z"):
        return {"latency_ns": {"same_die": {"value": one_way / 1.45}},
                "provenance": {"date": date,
                               "probes": {"line_pingpong": [
                                   {"class": "same_die", "cpus": [0, 1],
                                    "one_way_ns": {"min": one_way * 0.95, "median": one_way, "max": one_way * 1.05}}]},
                               "checks": {"semop_uncontended_ns": {"median": semop}}}}

    assert calibration_changes(None, model(39.8, 283.0)) == []
    assert calibration_changes(model(39.8, 283.0), model(44.0, 300.0)) == []  # the host's usual spread
    # The twentieth stop's two calibrations two minutes apart: the vCPUs' other placement.
    (line,) = calibration_changes(model(39.8, 283.0), model(186.8, 285.0))
    assert line.startswith("the cache-line transfer (line_pingpong, one way) measured 186.8 ns, 4.7 x the "
                           "previous calibration's 39.8 ns (2026-12-07T09:07:30Z)"), line
    assert len(calibration_changes(model(186.8, 600.0), model(39.8, 283.0))) == 2


def test_drift_is_measured_from_the_spread_the_calibration_itself_saw():
    from semsim.compare import drift_between

    calibrated = {
        "latency_ns": {"smt": {"value": 12.0, "source": "p"}, "same_die": {"value": 36.8, "source": "p"}},
        "provenance": {
            "probes": {"line_pingpong": [
                {"class": "same_die", "cpus": [0, 1], "one_way_ns": {"min": 35.0, "median": 36.8, "max": 40.3}},
                {"class": "smt", "cpus": [0, 2], "one_way_ns": {"min": 11.0, "median": 12.0, "max": 13.0}}]},
            "checks": {"semop_uncontended_ns": {"min": 423.5, "median": 423.7, "max": 437.7}}}}

    def now(same_die, semop, smt=12.0):
        return {"latency_ns": {"smt": {"value": smt}, "same_die": {"value": same_die}},
                "provenance": {"checks": {"semop_uncontended_ns": {"median": semop}}}}

    # 47 ns is +28 % of the calibrated 36.8 but +17 % of the largest repeat (40.3): not drifted.
    normal = drift_between(calibrated, now(47.0, 430.0))
    assert normal["transfer_ns"]["change_pct"] == pytest.approx(27.7, abs=0.1)
    assert normal["transfer_ns"]["outside_pct"] == pytest.approx(16.6, abs=0.1)
    assert normal["semop_ns"]["outside_pct"] == 0.0 and not normal["drifted"]
    # The other mode of the vCPUs' placement, and a slow phase of the semop, are drifts.
    assert drift_between(calibrated, now(165.0, 430.0))["drifted"]
    assert drift_between(calibrated, now(38.0, 560.0))["drifted"]
    assert drift_between(calibrated, now(38.0, 300.0))["semop_ns"]["outside_pct"] < -25
    # The same class on both sides (same_die), whatever the nearest class measured.
    assert drift_between(calibrated, now(38.0, 430.0, smt=90.0))["transfer_ns"]["calibrated"] == 36.8
    # The check re-runs the probe: it compares with the probe's one-way time, not with the
    # model's transfer derived from it (one-way over 1 + write_after_read).
    derived = {**calibrated, "latency_ns": {"smt": {"value": 12.0 / 1.45}, "same_die": {"value": 36.8 / 1.45}}}
    check = drift_between(derived, now(38.0, 430.0))
    assert check["transfer_ns"]["calibrated"] == 36.8 and not check["drifted"]


def test_a_host_check_after_measuring_marks_a_host_that_moved_during_it():
    from semsim.compare import HOST_DRIFT_LIMIT, combine_checks, drift_between

    calibrated = _checked_model(60.0, 120.0)
    quiet = drift_between(calibrated, _checked_model(61.0, 121.0))
    slow = drift_between(calibrated, _checked_model(60.0, 120.0 * (1 + HOST_DRIFT_LIMIT + 0.2)))
    both = combine_checks(quiet, slow)
    assert both["transfer_ns"] == quiet["transfer_ns"]  # the figures before measuring
    assert both["after"] == slow
    assert both["drifted"] and both["drift_pct"] == pytest.approx(slow["drift_pct"])
    assert not combine_checks(quiet, quiet)["drifted"]
    assert combine_checks(slow, quiet)["drifted"]
    assert combine_checks(quiet, None) == quiet
    assert combine_checks(None, slow)["before_missing"] and combine_checks(None, slow)["drifted"]
    assert combine_checks(None, None) is None


def test_the_host_check_reads_what_the_calibration_checks():
    import importlib

    compare_module = importlib.import_module("semsim.compare")
    calibrated = {"latency_ns": {"same_die": {"value": 40.0, "source": "p"},
                                 "smt": {"value": 10.0, "source": "p"}},
                  "provenance": {"checks": {"semop_uncontended_ns": {"median": 400.0}}}}
    check = compare_module.host_drift(calibrated)
    assert check["semop_ns"]["now"] > 0 and check["semop_ns"]["calibrated"] == 400.0
    assert set(check) >= {"semop_ns", "drift_pct", "drifted"}
    now = json.loads(semsim._core.host_check())
    assert now["semop_ns"] > 0
    if len(os.sched_getaffinity(0)) > 1:
        assert now["latency_ns"] and all(ns > 0 for ns in now["latency_ns"].values())


def test_sets_take_the_cli_text():
    by_sets = semsim.load_scenario(DEFAULT_SCENARIO, sets=["threads=[1,2]", "kernel=global_lock",
                                                           "workload.semaphores=64"])
    by_keywords = semsim.load_scenario(DEFAULT_SCENARIO, threads=[1, 2], kernel="global_lock",
                                       workload__semaphores=64)
    assert by_sets == by_keywords and by_sets["kernel"] == "global_lock"
    # sets first, then the keywords: a keyword wins.
    assert semsim.load_scenario(DEFAULT_SCENARIO, sets=["threads=[1]"], threads=[2])["threads"] == [2]
    a = semsim.simulate(DEFAULT_SCENARIO, sets=["threads=[1]", "duration_ms=1", "warmup_ms=0.5"])
    b = semsim.simulate(DEFAULT_SCENARIO, threads=[1], duration_ms=1, warmup_ms=0.5)
    assert a.to_json() == b.to_json()
    assert semsim.validate(DEFAULT_SCENARIO, sets=["threads=[1]"])["threads"] == [1]
    assert isinstance(semsim.native_refusal(DEFAULT_SCENARIO, sets=["threads=[1]"]), str)
    assert semsim.load_native_scenario(DEFAULT_SCENARIO, sets=["machine=host"])["machine"] == "host"
    for bad, word in (("threads=[1]", "list of KEY=VALUE"), ([5], "KEY=VALUE"), (["nokey"], "KEY=VALUE")):
        with pytest.raises(semsim.InputError, match=word):
            semsim.load_scenario(DEFAULT_SCENARIO, sets=bad)
    with pytest.raises(semsim.InputError, match="threads"):
        semsim.measure(DEFAULT_SCENARIO, sets=["threads=[0]"])


def test_compare_of_several_scenarios_gives_the_accuracy_summary(tmp_path, capsys):
    many = semsim.compare([DEFAULT_SCENARIO, DEFAULT_SCENARIO], sets=["machine=host-default"], progress=False,
                          **NATIVE_TINY)
    assert isinstance(many, semsim.ComparisonSet) and len(many) == 2
    assert capsys.readouterr().err == ""  # progress=False: silent
    summary = many.summary
    assert summary["points"] == 4 and len(many.rows) == 4
    assert {r["scenario"] for r in many.rows} == {"default"}
    errors = sorted(abs(r["error_pct"]) for r in many.rows if r["error_pct"] is not None)
    assert summary["compared"] == len(errors)
    if errors:
        assert summary["max_abs_error_pct"] == errors[-1]
        assert summary["within_35_pct"] == sum(e <= 35 for e in errors)
    path = many.write(tmp_path)
    assert json.loads(path.read_text())["summary"] == summary
    assert (tmp_path / "default" / "compare.json").is_file()
    one = semsim.compare(DEFAULT_SCENARIO, sets=["machine=host-default"], **NATIVE_TINY)  # progress on: the CLI's lines
    err = capsys.readouterr().err
    assert isinstance(one, semsim.Comparison)
    assert "semsim: simulating 'default': 2 point(s) on model 'host-default'" in err
    assert "semsim: measured in " in err and "\r" not in err  # no terminal: no live line
