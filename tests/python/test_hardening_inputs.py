"""The input-handling findings of the fuzzing pass (A2-A6, B7, B8, C11-C13, D14, D15), one
test each: bad input gets one line naming the field or flag and what is allowed (exit 2
from the CLI, semsim.InputError from the API), checked before any expensive work; never a
traceback, a crash, a hang or a silent default.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import semsim
from semsim import lockstat, plots, sweeps
from semsim import trace as semtrace

BASE = {"name": "b", "machine": "laptop-4", "kernel": "hysteresis",
        "workload": {"type": "semop-multi", "semaphores": 2}, "threads": [1, 2], "duration_ms": 1,
        "warmup_ms": 0.2, "seed": 1, "repeats": 1}
B1 = {**BASE, "threads": 2}


@pytest.fixture
def base(tmp_path: Path) -> Path:
    path = tmp_path / "base.json"
    path.write_text(json.dumps(BASE))
    return path


def usage_error(proc, *words: str) -> str:
    """Exit 2 with one line `semsim: error: ...` that holds every word."""
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("semsim: error: "), proc.stderr
    assert "Traceback" not in proc.stderr
    for word in words:
        assert word in lines[0], (word, lines[0])
    return lines[0]


def mctop_file(path: Path, clock: str) -> Path:
    path.write_text(f"# MACHINE: foo {clock}\ntable,i,j,value\n"
                    "c2c_cas_latency_cycles,0,1,100\nc2c_cas_latency_cycles,1,0,100\n")
    return path


# ---------------------------------------------------------------------------- A2: the file's clock


@pytest.mark.parametrize("clock", ["0GHz", "0.0GHz", "0.01GHz", "500GHz"])
def test_machine_import_checks_the_clock_the_file_states(run_cli, tmp_path, clock):
    matrix = mctop_file(tmp_path / "mc.csv", clock)
    line = usage_error(run_cli("machine", "import", "--format", "mctop", matrix, "-o", "out.json"),
                       "mc.csv", "between 0.1 and 10 GHz", "--ghz")
    assert clock.replace("GHz", "").rstrip("0").rstrip(".") in line or "0 GHz" in line
    assert not (tmp_path / "out.json").exists()


def test_machine_import_ghz_overrides_a_bad_file_clock(tmp_path):
    from semsim import machine_import as mi

    model = mi.import_matrix(mctop_file(tmp_path / "mc.csv", "0GHz"), "mctop", ghz=2.0)
    assert model["clock_ghz"]["value"] == 2.0


# ---------------------------------------------------------------------------- A3: huge integers


@pytest.mark.parametrize("value", ["2147483648", "99999999999999999999999"])
def test_run_jobs_too_big(run_cli, base, value):
    usage_error(run_cli("run", "-j", value, base), "--jobs", "1 to 1024")


def test_reproduce_and_sweep_workers_too_big(run_cli, base):
    usage_error(run_cli("reproduce", "--only", "locktorture", "--seeds", "1", "--duration-ms", "0.2",
                        "-j", "2147483648", "-o", "rp"), "--workers", "1 to 1024")
    usage_error(run_cli("sweep", "--no-progress", "-j", "2147483648", base), "--workers", "1 to 1024")
    usage_error(run_cli("sweep", "--no-progress", "--repeats", "2147483648", base), "--repeats", "1 to 1000")


def test_trace_limit_too_big(run_cli, base):
    usage_error(run_cli("run", "--trace", "t.perfetto-trace", "--set", "threads=2", "--trace-limit",
                        "99999999999999999999", base), "--trace-limit", "100,000,000")


def test_api_jobs_and_trace_limit_too_big():
    with pytest.raises(semsim.InputError, match=r"jobs: expected an integer from 1 to 1024"):
        semsim.simulate(B1, jobs=2**70)
    with pytest.raises(semsim.InputError, match=r"limit: expected an integer from 1 to 100,000,000"):
        semtrace.record(B1, limit=2**70)
    with pytest.raises(semsim.InputError, match="max_workers"):
        sweeps.sweep(B1, max_workers=2**40, progress=False)


# ---------------------------------------------------------------------------- A4: huge sweeps


@pytest.mark.parametrize("spec", ["1..100000", "1..1000000000000", "4097", "0..4"])
def test_sweep_threads_range_refused_before_expanding(run_cli, base, spec):
    usage_error(run_cli("sweep", "--no-progress", "--threads", spec, base, timeout=30),
                "--threads", "from 1 to 4096")


def test_sweep_too_many_points(run_cli, base):
    usage_error(run_cli("sweep", "--no-progress", "--threads", "1..4096", "--kernel", "global_lock,hysteresis,x",
                        base, timeout=30), "12,288 points", "at most 10,000")


def test_api_sweep_axes_bounded():
    with pytest.raises(semsim.InputError, match="more than 10,000 values"):
        sweeps.plan(B1, threads=range(1, 10**12))
    with pytest.raises(semsim.InputError, match=r"sweep point threads=5000: expected an integer from 1 to 4096"):
        sweeps.plan(B1, threads=[5000])
    with pytest.raises(semsim.InputError, match=r"semaphores=1000000000: expected an integer from 1 to 32000"):
        sweeps.plan(B1, semaphores=[10**9])


def test_max_threads_is_the_engines():
    assert semsim.load_scenario(B1, threads=semsim.api.MAX_THREADS)["threads"] == semsim.api.MAX_THREADS
    with pytest.raises(semsim.InputError, match="threads"):
        semsim.load_scenario(B1, threads=semsim.api.MAX_THREADS + 1)


# ---------------------------------------------------------------------------- A5: --only ''


@pytest.mark.parametrize("only", ["", " ", " , "])
def test_reproduce_only_empty(run_cli, only):
    usage_error(run_cli("reproduce", "--only", only, "-o", "rp", timeout=30), "--only", "locktorture")


# ---------------------------------------------------------------------------- A6, C13: the Python API


@pytest.mark.parametrize("window", ["0..1", (None, None), (0, 1, 2), (0, float("inf")), (0, float("nan")),
                                    (-1, 1), (2, 1), (True, 2)])
def test_trace_record_window(window):
    with pytest.raises(semsim.InputError, match=r"window_ms: expected \(A, B\)"):
        semtrace.record(B1, window_ms=window)


@pytest.mark.parametrize("limit", ["x", 1.5, 0, -1, True])
def test_trace_record_limit(limit):
    with pytest.raises(semsim.InputError, match="limit: expected an integer from 1 to"):
        semtrace.record(B1, limit=limit)


def test_write_trace_path(tmp_path):
    with pytest.raises(semsim.InputError, match="is a directory"):
        semtrace.write_trace(B1, tmp_path)
    with pytest.raises(semsim.InputError, match="trace: path: expected a file path, not NoneType"):
        semtrace.write_trace(B1, None)


def test_read_trace_bad_input(tmp_path, base):
    with pytest.raises(semsim.InputError, match="not a Perfetto trace"):
        semtrace.read_trace(b"junk")
    with pytest.raises(semsim.InputError, match="base.json: not a Perfetto trace"):
        semtrace.read_trace(base)
    with pytest.raises(semsim.InputError, match="no such file"):
        semtrace.read_trace(tmp_path / "nope")
    with pytest.raises(semsim.InputError, match="is a directory"):
        semtrace.read_trace(tmp_path)
    with pytest.raises(semsim.InputError, match="expected a trace file path or its bytes, not NoneType"):
        semtrace.read_trace(None)


def test_result_from_json_and_constructor(tmp_path):
    with pytest.raises(semsim.InputError, match="'junk': no such file"):
        semsim.Result.from_json("junk")
    with pytest.raises(semsim.InputError, match="not a result document"):
        semsim.Result.from_json("[]")
    with pytest.raises(semsim.InputError, match="not JSON"):
        semsim.Result.from_json("{oops")
    with pytest.raises(semsim.InputError, match="is a directory"):
        semsim.Result.from_json(tmp_path)
    with pytest.raises(semsim.InputError, match="not NoneType"):
        semsim.Result.from_json(None)
    with pytest.raises(semsim.InputError, match="Result: doc: expected a result document"):
        semsim.Result(None)


def test_result_methods(tmp_path):
    result = semsim.simulate(B1, jobs=1)
    with pytest.raises(semsim.InputError, match="Result.to_json: path .*is a directory"):
        result.to_json(tmp_path)
    with pytest.raises(semsim.InputError, match="hot_lines: top: expected an integer"):
        result.hot_lines(top="x")
    with pytest.raises(semsim.InputError, match="hot_lines: by 'bogus': allowed: misses, misses_per_op"):
        result.hot_lines(by="bogus")
    assert len(result.hot_lines(top=1, by="accesses")) >= 1


def test_lockstat_and_plots_bad_input():
    with pytest.raises(semsim.InputError, match="lockstat.frame: result: expected"):
        lockstat.frame(None)
    with pytest.raises(semsim.InputError, match="point_table: point: expected"):
        lockstat.point_table(None)
    with pytest.raises(semsim.InputError, match=r"format_table: rows\[0\]: expected a lock row"):
        lockstat.format_table([5])
    for data in (None, 5):
        with pytest.raises(semsim.InputError, match="plot_scaling: data: expected a semsim.Result"):
            plots.plot_scaling(data)


def test_diff_dict_without_points(tmp_path):
    with pytest.raises(semsim.InputError, match="A: the dict is not a result document"):
        semsim.diff({}, {})


# ---------------------------------------------------------------------------- B7: reproduce's numbers


@pytest.mark.parametrize("flags, words", [
    (["--seeds", "1001"], ["--seeds 1001", "from 1 to 1000"]),
    (["--seeds", "0"], ["--seeds 0", "from 1 to 1000"]),
    (["--duration-ms", "nan"], ["--duration-ms nan", "finite", "one hour"]),
    (["--duration-ms", "inf"], ["--duration-ms inf", "finite"]),
    (["--duration-ms", "1e308"], ["--duration-ms 1e+308", "at most 3,272,727"]),
    (["--duration-ms", "0"], ["--duration-ms 0", "> 0"]),
])
def test_reproduce_numbers_refused_up_front(run_cli, tmp_path, flags, words):
    usage_error(run_cli("reproduce", "--only", "locks", *flags, "-o", "rp", timeout=30), *words)
    assert not (tmp_path / "rp").exists()


# ---------------------------------------------------------------------------- B8: import checks its model


def test_machine_import_refuses_a_model_the_loader_refuses(run_cli, tmp_path):
    (tmp_path / "nv.csv").write_text("0,1e300\n1e300,0\n")
    usage_error(run_cli("machine", "import", "--format", "nviennot", "nv.csv", "-o", "nv.json"),
                "nothing written", "latency_ns.same_die.value")
    assert not (tmp_path / "nv.json").exists()
    (tmp_path / "ok.csv").write_text("0,50\n50,0\n")
    usage_error(run_cli("machine", "import", "--format", "nviennot", "ok.csv", "--name", "a" * 5000,
                        "-o", "long.json"), "name: must be 1 to 255 characters")
    assert not (tmp_path / "long.json").exists()


# ---------------------------------------------------------------------------- C11: empty values


@pytest.mark.parametrize("args, words", [
    (["sweep", "--no-progress", "--kernel", ""], ["--kernel", "empty name"]),
    (["sweep", "--no-progress", "--machine", ""], ["--machine", "empty name"]),
    (["sweep", "--no-progress", "--kernel", "hysteresis,,global_lock"], ["--kernel", "empty name"]),
    (["compare", "--machine", "", "-o", "cmp"], ["compare: --machine: empty value"]),
    (["run", "-o", ""], ["run: -o: the path is empty"]),
    (["native", "-o", ""], ["native: -o: the path is empty"]),
    (["sweep", "--no-progress", "-o", ""], ["sweep: -o: the path is empty"]),
    (["run", "--profile", "--folded", ""], ["--folded: the path is empty"]),
    (["run", "--set", "threads=2", "--trace", ""], ["--trace: the path is empty"]),
    (["compare", "-o", ""], ["compare: -o: the path is empty"]),
])
def test_empty_flag_values_refused(run_cli, base, args, words):
    usage_error(run_cli(*args, base), *words)


@pytest.mark.parametrize("flag", ["--costs-from", "--description", "--note"])
def test_machine_import_empty_text_flags(run_cli, tmp_path, flag):
    (tmp_path / "ok.csv").write_text("0,50\n50,0\n")
    usage_error(run_cli("machine", "import", "--format", "nviennot", "ok.csv", flag, ""), flag, "empty value")


def test_empty_calibrate_and_reproduce_outputs(run_cli):
    usage_error(run_cli("calibrate", "-o", ""), "calibrate: -o: the path is empty")
    usage_error(run_cli("reproduce", "--only", "locks", "-o", ""), "reproduce: -o: the path is empty")


# ---------------------------------------------------------------------------- C12: --threads before checks


def test_sweep_threads_apply_before_the_scenario_is_checked(run_cli, base):
    proc = run_cli("sweep", "--no-progress", "-j", "1", "--threads", "2", "--set", 'workload={"type":"lat-sem"}',
                   "--set", "duration_ms=0.5", base)
    assert proc.returncode == 0, proc.stderr
    assert [p["threads"] for p in json.loads(proc.stdout)["points"]] == [2]


def test_api_plan_threads_axis_replaces_the_scenarios():
    base, points = sweeps.plan({**BASE, "workload": {"type": "lat-sem"}}, threads=[2])
    assert base["threads"] == [2] and len(points) == 1


# ---------------------------------------------------------------------------- C13: trace windows


@pytest.mark.parametrize("window", ["0..inf", "0..1e308", "nan..1", "-1..1"])
def test_trace_window_bounds(run_cli, base, window):
    usage_error(run_cli("run", "--trace", "t.perfetto-trace", "--set", "threads=2", f"--trace-window={window}",
                        base), "--trace-window", "0 <= A < B <= 3600000")


def test_trace_window_negative_without_equals_says_how(run_cli, base):
    usage_error(run_cli("run", "--trace", "t.perfetto-trace", "--set", "threads=2", "--trace-window", "-1..1",
                        base), "--trace-window=VALUE")


def test_trace_window_past_the_end_is_noted(run_cli, base):
    proc = run_cli("run", "--trace", "t.perfetto-trace", "--set", "threads=2", "--trace-window", "5..6", base)
    assert proc.returncode == 0, proc.stderr
    assert "starts after the run's end, 1.2 ms" in proc.stderr


# ---------------------------------------------------------------------------- D14: messages


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_full_disk_names_the_path(run_cli, base):
    usage_error(run_cli("run", "-o", "/dev/full", base), "/dev/full", "No space left")


def test_diff_directory_is_not_missing(run_cli, tmp_path, base):
    a = tmp_path / "A.json"
    a.write_text(semsim.simulate(B1, jobs=1).to_json())
    (tmp_path / "d").mkdir()
    usage_error(run_cli("diff", a, tmp_path / "d"), "diff: B:", "is a directory")


def test_costs_from_host_is_the_hosts_model(run_cli, tmp_path):
    (tmp_path / "ok.csv").write_text("0,50\n50,0\n")
    line = usage_error(run_cli("machine", "import", "--format", "nviennot", "ok.csv", "--costs-from", "host"),
                       "--costs-from host", "semsim calibrate")
    assert "no such preset" not in line


def test_costs_from_host_calibrated(calibrated_host, run_cli, tmp_path):
    (tmp_path / "ok.csv").write_text("0,50\n50,0\n")
    proc = run_cli("machine", "import", "--format", "nviennot", "ok.csv", "--costs-from", "host", "-o", "m.json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "m.json").read_text())["provenance"]["costs_from"]["preset"] == "host"


# ---------------------------------------------------------------------------- D15: checks before work


def test_compare_checks_every_scenario_first(run_cli, tmp_path, base):
    bad = tmp_path / "bad.json"
    bad.write_text('{"machine":"laptop-4","kernel":"hysteresis","workload":{"type":"semop-multi"},"threads":1,'
                   '"duration_ms":NaN}')
    proc = run_cli("compare", "-o", "cmp", "--set", "threads=1", base, bad, timeout=60)
    usage_error(proc, "bad.json")
    assert proc.stdout == "" and not (tmp_path / "cmp").exists()


@pytest.mark.parametrize("args, words", [
    (["compare", "-o", "{base}", "{base}"], ["compare: -o", "not a directory"]),
    (["native", "-o", "{dir}", "{base}"], ["native: -o", "is a directory"]),
    (["bench", "-o", "{dir}"], ["bench: -o", "is a directory"]),
    (["run", "-o", "{dir}", "{base}"], ["run: -o", "is a directory"]),
    (["diff", "{base}", "{base}", "-o", "{base}"], ["diff: -o", "not a directory"]),
])
def test_output_paths_checked_before_work(run_cli, tmp_path, base, args, words):
    (tmp_path / "dir").mkdir()
    argv = [a.format(base=base, dir=tmp_path / "dir") for a in args]
    proc = run_cli(*argv, timeout=30)
    usage_error(proc, *words)
    assert proc.stdout == ""


def test_nul_in_a_scenario_path_is_named_whole():
    with pytest.raises(semsim.InputError, match=r"'base\\x00.json': a file path cannot hold a NUL"):
        semsim.simulate("base\x00.json")


@pytest.mark.parametrize("kernel", [b"hysteresis", object(), {"base": "complex_mode", "fence": {1, 2}}])
def test_kernel_label_refuses_what_is_not_a_kernel(kernel):
    with pytest.raises(semsim.InputError, match="kernel: expected a generation id or a policy object"):
        semsim.kernel_label(kernel)


def test_kernel_label_names_ids_and_policy_objects():
    assert semsim.kernel_label("hysteresis") == "hysteresis"
    assert semsim.kernel_label({"base": "complex_mode"}) == "complex_mode"
    assert semsim.kernel_label({"base": "complex_mode", "fence": "none"}) == 'complex_mode+{"fence":"none"}'


@pytest.fixture(scope="module")
def result() -> semsim.Result:
    return semsim.simulate(BASE)


@pytest.mark.parametrize("labels", [["x"], ("a", "b", "c"), "ab", {"a": 1}, 5, ["x", ""], [1, 2]])
def test_diff_labels_are_two_names(result, labels):
    with pytest.raises(semsim.InputError, match="diff: labels: expected two non-empty names"):
        semsim.diff(result, result, labels=labels)


@pytest.mark.parametrize("kernel", [5, True, object(), "hysteresis", {"base": "hysteresis"}, ["hysteresis"]])
def test_diff_kernel_is_a_pair(kernel):
    with pytest.raises(semsim.InputError, match="diff: kernel: expected two kernels"):
        semsim.diff(BASE, kernel=kernel)


@pytest.mark.parametrize("call, words", [
    (lambda r: plots.plot_scaling(r, y=[]), "plot_scaling: y: expected a column name"),
    (lambda r: plots.plot_scaling(r, by=5), "plot_scaling: by: expected a column name or a list"),
    (lambda r: plots.plot_scaling(r, facet=["machine"]), "plot_scaling: facet: expected a column name"),
    (lambda r: plots.plot_cpu_breakdown(r, by=[]), "plot_cpu_breakdown: by: expected a column name"),
    (lambda r: plots.plot_hot_lines(r, top=1.5), "plot_hot_lines: top: expected an integer from 1 to 1000"),
    (lambda r: plots.plot_hot_lines(r, top=0), "plot_hot_lines: top: expected an integer"),
    (lambda r: plots.plot_hot_lines(r, rank_by={}), "plot_hot_lines: rank_by: expected a column name"),
    (lambda r: plots.hot_lines_table(r, metric={}), "hot_lines_table: metric: expected a column name"),
    (lambda r: plots.hot_lines_table(r, top=True), "hot_lines_table: top: expected an integer"),
    (lambda r: plots.plot_compare(None), "plot_compare: comparison: expected a semsim.Comparison"),
    (lambda r: plots.plot_compare(5), "plot_compare: comparison: expected a semsim.Comparison"),
    (lambda r: plots.plot_compare([0]), "plot_compare: comparison: a row is not a dict"),
    (lambda r: plots.plot_compare([{"threads": "2"}]), "plot_compare: comparison: a row is not a dict"),
    (lambda r: plots.plot_diff(r), "plot_diff: d: expected the semsim.Diff"),
    (lambda r: plots.plot_diff(semsim.diff(r, r), top=-1), "plot_diff: top: expected an integer"),
    (lambda r: semtrace.build(None), "trace.build: events: expected what semsim.trace.record"),
    (lambda r: semtrace.build({"trace": 1}), "trace.build: events: expected what semsim.trace.record"),
])
def test_view_helpers_name_the_bad_argument(result, call, words):
    with pytest.raises(semsim.InputError, match=words):
        call(result)


@pytest.mark.parametrize("out", [None, 3, b"x", "", "a\0b"])
def test_diff_write_names_a_bad_directory(result, out):
    with pytest.raises(semsim.InputError, match="Diff.write: out_dir"):
        semsim.diff(result, result).write(out)


def test_diff_write_refuses_a_file_in_the_way(result, tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(semsim.InputError, match="exists and is not a directory"):
        semsim.diff(result, result).write(tmp_path / "f")


@pytest.mark.parametrize("top", [1.5, "3", 0, True, None])
def test_diff_table_top_is_a_count(result, top):
    with pytest.raises(semsim.InputError, match="Diff.table: top: expected an integer from 1 to 1000"):
        semsim.diff(result, result).table(top)


def _comparison(result) -> semsim.Comparison:
    from semsim.compare import Comparison

    return Comparison(result, result)


@pytest.mark.parametrize("call, words", [
    (lambda c, d: c.write(d / "f"), "Comparison.write: out_dir .*exists and is not a directory"),
    (lambda c, d: c.to_json(d), "Comparison.to_json: path .*is a directory"),
    (lambda c, d: c.to_json(5), "Comparison.to_json: path: expected a file path"),
    (lambda c, d: c.plot(d / "f" / "x.png"), "Comparison.plot: path .*is not a directory"),
    (lambda c, d: c.plot(d / "x.nosuchformat"), "Comparison.plot: path"),
])
def test_comparison_outputs_name_a_bad_path(result, tmp_path, call, words):
    (tmp_path / "f").write_text("x")
    with pytest.raises(semsim.InputError, match=words):
        call(_comparison(result), tmp_path)


@pytest.mark.parametrize("key, shown", [
    ("descripti:on", '"descripti:on": unknown field'),   # found by test_fuzz_inputs.py, seed 1002
    ("p\x00in", '"p\\u0000in": unknown field'),           # a NUL cut the message at the field
    ("a\nb: c", '"a\\nb: c": unknown field'),
    ("x\ry", '"x\\ry": unknown field'),
])
def test_odd_field_names_are_quoted_in_one_line(run_cli, tmp_path, key, shown):
    path = tmp_path / "odd.json"
    path.write_text(json.dumps({**B1, "workload": {**B1["workload"], key: 1}}))
    line = usage_error(run_cli("validate", str(path)), "workload." + shown, "allowed fields here: type,")
    assert "\r" not in line and "\x00" not in line


@pytest.mark.parametrize("name, shown", [
    ("sem-locku\nlock-s64", "ok: sem-locku\\nlock-s64"),  # test_fuzz_inputs.py, seed 2003
    ("a\x1b[2Jb", "ok: a\\x1b[2Jb"),                        # a terminal escape, not acted on
])
def test_validate_prints_the_scenario_name_on_one_line(run_cli, tmp_path, name, shown):
    path = tmp_path / "named.json"
    path.write_text(json.dumps({**B1, "name": name}))
    proc = run_cli("validate", str(path))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == shown + "\n"


def test_a_long_odd_field_name_is_capped_and_its_quote_closed(run_cli, tmp_path):
    # test_fuzz_inputs.py, seeds 1002 and 1004: a key cut at the cap left its quote open.
    path = tmp_path / "odd.json"
    path.write_text(json.dumps({**B1, "na" + "[" * 3000: 1}))
    line = usage_error(run_cli("validate", str(path)), '"na' + "[" * 58 + '...": unknown field')
    assert len(line) < 400


@pytest.mark.parametrize("args, words", [
    # argparse dropped the "--" and handed the command an empty list (exit 1, internal error);
    # found by a throwaway fuzz of the commands' flags.
    (["validate", "BASE", "--set=--"], "validate: --set: '--' is not a value"),
    (["run", "BASE", "-j=--"], "run: -j: '--' is not a value"),
    (["run", "BASE", "-j--"], "run: -j: '--' is not a value"),
    (["sweep", "BASE", "--threads=--"], "sweep: --threads: '--' is not a value"),
    (["reproduce", "--only=--"], "reproduce: --only: '--' is not a value"),
    (["diff", "BASE", "--kernel=--", "--kernel=global_lock"], "diff: --kernel: '--' is not a value"),
    (["machine", "import", "--format=--", "x.csv"], "machine import: --format: '--' is not a value"),
])
def test_a_double_dash_value_is_refused(run_cli, base, args, words):
    usage_error(run_cli(*[str(base) if a == "BASE" else a for a in args]), words)


@pytest.mark.parametrize("args, words", [
    # test_fuzz_flags.py at seeds 46 and 49: the machine axis took a JSON object as a kernel's
    # and each sweep point failed on its own, naming the point, not the flag.
    (["sweep", "BASE", "--machine", '{"base":1}'], "sweep: --machine '{\"base\":1}': a JSON object; expected"),
    (["sweep", "BASE", '--machine={"base":"complex_mode"}'], "sweep: --machine"),
    (["sweep", "BASE", "--kernel", "{nope"], "sweep: --kernel '{nope': malformed JSON"),
])
def test_sweep_axis_objects_only_where_the_flag_takes_them(run_cli, base, args, words):
    usage_error(run_cli(*[str(base) if a == "BASE" else a for a in args]), words)


def test_a_double_dash_after_the_flags_is_positional(run_cli, base):
    # After a bare "--" everything is positional: argparse's own error, not this check's.
    line = usage_error(run_cli("validate", str(base), "--", "--set=--"))
    assert "is not a value" not in line
