"""`semsim machine import`: a machine model from a measured core-to-core latency matrix.

Synthetic matrices with a known topology (2 sockets x 2 dies x 4 cores x 2 threads, scrambled
numbering, noise; a 4-socket ring) check the cluster inference, both file layouts and the
round trip of the latencies; the shared reference files (../shared/reference/data, skipped when
absent) check the real mctop and nviennot layouts and that the committed opteron-48,
westmere-ex-80 and westmere-ex-160 are exactly what their recorded commands produce; the
imported models load and simulate in the C++ engine; bad input is one line with exit 2.
"""

from __future__ import annotations

import importlib.util
import json
import random
import shlex

import pytest

import semsim
from conftest import REPO
from semsim import cli
from semsim import machine_import as mi

DATA = REPO.parent / "shared" / "reference" / "data"
MCTOP = DATA / "mctop"
NVIENNOT = DATA / "c2c_nviennot"
needs_mctop = pytest.mark.skipif(not (MCTOP / "mctop_lpd48core.csv").is_file(),
                                 reason="shared reference data (../shared/reference/data/mctop) not present")
needs_nviennot = pytest.mark.skipif(not NVIENNOT.is_dir(),
                                    reason="shared reference data (../shared/reference/data/c2c_nviennot) not present")

TRUE_NS = {"smt": 5.0, "same_die": 20.0, "same_socket": 40.0, "one_hop": 100.0, "two_hops": 150.0}


# ----------------------------------------------------------------------------- synthetic machines


def truth_class(la, lb, hops=None):
    if la[:3] == lb[:3]:
        return "smt"
    if la[:2] == lb[:2]:
        return "same_die"
    if la[0] == lb[0]:
        return "same_socket"
    return "two_hops" if hops and hops[la[0]][lb[0]] == 2 else "one_hop"


def synthetic(shape=(2, 2, 4, 2), hops=None, scramble=None, noise=0.0):
    """(matrix in ns, location per file CPU): smt-adjacent ids, optionally permuted by a seeded
    shuffle, each entry times 1 +- noise (seeded, symmetric)."""
    S, D, C, T = shape
    locs = [(s, d, c, t) for s in range(S) for d in range(D) for c in range(C) for t in range(T)]
    if scramble is not None:
        random.Random(scramble).shuffle(locs)
    rng = random.Random(7)
    n = len(locs)
    m = [[0.0] * n for _ in range(n)]
    for a in range(n):
        for b in range(a + 1, n):
            v = TRUE_NS[truth_class(locs[a], locs[b], hops)] * (1 + rng.uniform(-noise, noise))
            m[a][b] = m[b][a] = round(v, 3)
    return m, locs


def write_nviennot(path, m, name="Dual Test CPU @ 2.50GHz"):
    lines = ["# SOURCE: test, synthetic", f"# MACHINE: '{name}' (synthetic)", "# UNIT: ns",
             "cpu_i,cpu_j,latency_ns"]
    lines += [f"{i},{j},{m[i][j]}" for i in range(len(m)) for j in range(i)]
    path.write_text("\n".join(lines) + "\n")
    return path


def write_mctop(path, m_cycles, nodes, smt, mem=None, clock="2.0 GHz"):
    n = len(m_cycles)
    lines = [f"# SOURCE: test, synthetic; file header line: '#test #HWCs {n} #Nodes {nodes} SMT {int(smt)}'",
             f"# MACHINE: a synthetic machine at {clock}", "# UNITS: cycles", "table,i,j,value"]
    lines += [f"c2c_cas_latency_cycles,{i},{j},{m_cycles[i][j]:g}" for i in range(n) for j in range(n)]
    for (i, j), v in sorted((mem or {}).items()):
        lines.append(f"mem_latency_cycles,{i},{j},{v}")
    lines.append("cache_level1_latency_cycles,,,4")
    path.write_text("\n".join(lines) + "\n")
    return path


def model_loc(cpu, model):
    t = model["topology"]
    return mi.location(cpu, (t["sockets"], t["dies_per_socket"], t["cores_per_die"], t["threads_per_core"]),
                       t["numbering"])


def assert_classes_match_truth(model, locs, hops=None):
    """Every model CPU pair is in the class its true locations give, and carries its latency."""
    cpu_map = model["provenance"]["cpu_map"]
    t = model["topology"]
    mhops = t.get("socket_hops")
    for i, a in enumerate(cpu_map):
        for j, b in enumerate(cpu_map):
            if i != j:
                assert truth_class(model_loc(i, model), model_loc(j, model), mhops) == \
                    truth_class(locs[a], locs[b], hops), (i, j, a, b)


# ----------------------------------------------------------------------------- inference


def test_latency_classes_split_at_large_relative_gaps():
    assert mi.latency_classes([5, 5.2, 20, 21, 40, 100, 101], 0.15) == [(5, 5.2), (20, 21), (40, 40), (100, 101)]
    assert mi.latency_classes([197, 217, 300], 0.15) == [(197, 217), (300, 300)]
    assert mi.latency_classes([197, 217, 300], 0.05) == [(197, 197), (217, 217), (300, 300)]


def test_infers_two_sockets_two_dies_four_cores_smt():
    m, _ = synthetic()
    inf = mi.infer_topology(m, sockets=None, ns_per_unit=1.0)
    assert inf.shape == (2, 2, 4, 2) and inf.smt
    assert inf.cores[:2] == [(0, 1), (2, 3)]
    assert inf.dies[0] == (0, 1, 2, 3, 4, 5, 6, 7)
    assert inf.sockets == [tuple(range(16)), tuple(range(16, 32))]
    assert inf.socket_hops == [[0, 1], [1, 0]]


def test_a_noisy_outlier_pair_does_not_break_the_levels():
    # nviennot's files often time the first pair high (CPU 0 and its sibling).
    m, _ = synthetic(noise=0.05)
    m[0][1] = m[1][0] = 13.0
    inf = mi.infer_topology(m, ns_per_unit=1.0)
    assert inf.shape == (2, 2, 4, 2)


def test_no_smt_when_the_closest_groups_are_large_or_slow():
    m, _ = synthetic(shape=(2, 1, 6, 1))
    assert mi.infer_topology(m, ns_per_unit=1.0).shape == (2, 1, 6, 1)
    # pairs at 41 ns against 91 (Xeon Phi tiles): too slow for SMT siblings
    m, _ = synthetic(shape=(1, 4, 2, 1))
    for row in m:
        for j, v in enumerate(row):
            row[j] = {20.0: 41.0, 40.0: 91.0}.get(v, v)
    assert not mi.infer_topology(m, ns_per_unit=1.0).smt


def test_nviennot_file_scrambled_and_noisy_round_trips(tmp_path):
    m, locs = synthetic(scramble=3, noise=0.03)
    model = mi.import_matrix(write_nviennot(tmp_path / "x.csv", m), "nviennot", name="x")
    t = model["topology"]
    assert (t["sockets"], t["dies_per_socket"], t["cores_per_die"], t["threads_per_core"]) == (2, 2, 4, 2)
    assert model["cpus"] == 32
    assert_classes_match_truth(model, locs)
    cpu_map = model["provenance"]["cpu_map"]
    assert sorted(cpu_map) == list(range(32))
    matrix = model["latency_matrix_ns"]["matrix"]
    for i in range(32):
        assert matrix[i][i] == 0
        for j in range(32):
            if i != j:
                assert matrix[i][j] == pytest.approx(m[cpu_map[i]][cpu_map[j]], abs=5e-4)
    for cls, true in TRUE_NS.items():
        if cls in model["latency_ns"]:
            assert model["latency_ns"][cls]["value"] == pytest.approx(true, rel=0.03)
    assert "two_hops" not in model["latency_ns"]
    assert model["clock_ghz"]["value"] == 2.5  # the nominal clock in the CPU name
    assert "Dual" in t["source"] and "renumbered" in t["source"]


def test_file_numbering_is_kept_when_it_is_a_scheme(tmp_path):
    m, _ = synthetic()  # smt-adjacent ids
    model = mi.import_matrix(write_nviennot(tmp_path / "x.csv", m), "nviennot")
    assert model["topology"]["numbering"] == "smt-adjacent"
    assert model["provenance"]["cpu_map"] == list(range(32))
    assert model["name"] == "x"
    # asked for linux numbering, the same machine is renumbered into it
    linux = mi.import_matrix(tmp_path / "x.csv", "nviennot", numbering="linux")
    assert linux["topology"]["numbering"] == "linux"
    _, locs = synthetic()
    assert_classes_match_truth(linux, locs)


def test_socket_count_from_the_clusters_without_a_name(tmp_path):
    m, _ = synthetic()
    grid = "\n".join(",".join("" if j >= i else f"{m[i][j]}" for j in range(32)) for i in range(32))
    (tmp_path / "grid.csv").write_text(grid + "\n")
    model = mi.import_matrix(tmp_path / "grid.csv", "nviennot")
    assert model["topology"]["sockets"] == 2 and model["topology"]["dies_per_socket"] == 2
    assert "assumption" in model["topology"]["source"]
    # a name without "Dual" reads as one socket: the two groups are dies of it
    one = mi.import_matrix(write_nviennot(tmp_path / "y.csv", m, "Test CPU"), "nviennot")
    assert (one["topology"]["sockets"], one["topology"]["dies_per_socket"]) == (1, 4)
    assert set(one["latency_ns"]) == {"smt", "same_die", "same_socket"}
    assert mi.import_matrix(tmp_path / "y.csv", "nviennot", sockets=2)["topology"]["sockets"] == 2


def test_mctop_ring_of_four_sockets_with_memory(tmp_path):
    hops = [[0, 1, 2, 1], [1, 0, 1, 2], [2, 1, 0, 1], [1, 2, 1, 0]]
    m, locs = synthetic(shape=(4, 1, 3, 1), hops=hops, scramble=5)
    cycles = [[v * 2 for v in row] for row in m]  # at 2 GHz
    mem = {}
    for i, loc in enumerate(locs):
        for node in range(4):
            mem[(i, node)] = 200 if node == loc[0] else 260 + 60 * (hops[loc[0]][node] - 1)
    model = mi.import_matrix(write_mctop(tmp_path / "ring.csv", cycles, 4, False, mem), "mctop", name="ring")
    t = model["topology"]
    assert (t["sockets"], t["cores_per_die"], t["threads_per_core"]) == (4, 3, 1)
    assert sorted(map(sorted, t["socket_hops"])) == [[0, 1, 1, 2]] * 4
    assert_classes_match_truth(model, locs, hops)
    assert model["latency_ns"]["same_die"]["value"] == 20.0
    assert model["latency_ns"]["same_die"]["source"].endswith("40 cycles / 2 GHz")
    assert model["latency_ns"]["two_hops"]["value"] == 150.0
    assert model["memory_latency_ns"]["value"] == 100.0  # 200 cycles / 2 GHz
    numa = model["numa_distance"]["matrix"]
    for a in range(4):
        for b in range(4):
            assert numa[a][b] == {0: 10, 1: 13, 2: 16}[t["socket_hops"][a][b]]
    assert model["costs_ns"]["l1_hit"]["value"] == 2.0  # the file's 4 cycles: uniform-64's is an assumption
    assert model["clock_ghz"]["source"].startswith("assumption:")
    given = mi.import_matrix(tmp_path / "ring.csv", "mctop", ghz=4.0)
    assert given["latency_ns"]["same_die"]["value"] == 10.0 and given["clock_ghz"]["value"] == 4.0


def test_drop_smt_and_given_topology(tmp_path):
    m, locs = synthetic()
    path = write_nviennot(tmp_path / "x.csv", m)
    dropped = mi.import_matrix(path, "nviennot", drop_smt=True)
    assert dropped["cpus"] == 16 and dropped["topology"]["threads_per_core"] == 1
    assert sorted(dropped["provenance"]["cpu_map"]) == list(range(0, 32, 2))
    given = mi.import_matrix(path, "nviennot", topology=(2, 2, 4, 2), numbering="smt-adjacent")
    assert given["topology"]["source"].count("given on the command line") == 1
    assert_classes_match_truth(given, locs)


def test_costs_come_from_the_named_preset_in_cycles(tmp_path):
    m, _ = synthetic()
    model = mi.import_matrix(write_nviennot(tmp_path / "x.csv", m), "nviennot", costs_from="opteron-48")
    for key, p in model["costs_ns"].items():
        if key != "time_slice":
            assert p["source"].startswith("assumption: preset opteron-48's value for another machine")
    # opteron-48's 425 cycles of kernel path, at this model's 2.5 GHz
    assert model["costs_ns"]["semop_kernel_path"]["value"] == 170.0
    assert model["costs_ns"]["time_slice"]["value"] == 3_000_000


# ----------------------------------------------------------------------------- the C++ engine


def scenario(machine, threads=(1, 2)):
    return {"name": "import", "machine": str(machine), "kernel": "hysteresis",
            "workload": {"type": "semop-multi", "semaphores": 8, "pattern": "stride"},
            "threads": list(threads), "duration_ms": 2, "warmup_ms": 0.5, "seed": 1, "repeats": 1}


def test_imported_model_loads_and_its_matrix_drives_the_simulation(tmp_path):
    m, _ = synthetic()
    model = mi.import_matrix(write_nviennot(tmp_path / "x.csv", m), "nviennot", name="x")
    # SMT sharing off (the synthetic machine has SMT): only the matrix differs below.
    model["smt_compute_slowdown"] = {"value": 1, "source": "test: SMT sharing off"}
    (tmp_path / "x.json").write_text(mi.dump(model))
    base = semsim.simulate(scenario(tmp_path / "x.json")).points
    assert all(p["ops_per_s"] > 0 for p in base)
    # semop-multi pins thread i to CPU i: make the 0 <-> 1 transfer 20x dearer
    slow = json.loads(mi.dump(model))
    slow["name"] = "slow"
    for a, b in ((0, 1), (1, 0)):
        slow["latency_matrix_ns"]["matrix"][a][b] *= 20
    (tmp_path / "slow.json").write_text(json.dumps(slow))
    slowed = semsim.simulate(scenario(tmp_path / "slow.json")).points
    assert slowed[0]["ops_per_s"] == base[0]["ops_per_s"]  # one thread: no transfers
    # measured: -8 % before the store buffer, -4 % with it (the store misses no longer stall)
    assert slowed[1]["ops_per_s"] < 0.98 * base[1]["ops_per_s"]


def test_a_model_of_32_dies_per_socket_loads(tmp_path):
    # A 64-core Xeon Phi (32 tiles of 2 cores) and a 64-core EPYC (16 CCXs a socket, 32 when
    # the importer sees one socket) import as 32 dies a socket; the loader took at most 16,
    # so `semsim machine import` wrote a model `semsim run` refused.
    m = [[0.0 if a == b else (50.0 if a // 2 == b // 2 else 110.0) for b in range(64)] for a in range(64)]
    model = mi.import_matrix(write_nviennot(tmp_path / "phi.csv", m, "Test Phi @ 1.30GHz"), "nviennot", name="phi")
    assert model["topology"]["dies_per_socket"] == 32
    (tmp_path / "phi.json").write_text(mi.dump(model))
    assert semsim.simulate(scenario(tmp_path / "phi.json", threads=(2,))).points[0]["ops_per_s"] > 0


def test_cli_writes_a_model_that_validates_and_runs(run_cli, tmp_path):
    m, _ = synthetic()
    write_nviennot(tmp_path / "m.csv", m)
    proc = run_cli("machine", "import", "m.csv", "--format", "nviennot", "-o", "imported-x.json")
    assert proc.returncode == 0, proc.stderr
    assert "imported-x: 32 CPUs = 2 x 2 x 4 x 2" in proc.stderr
    assert json.loads((tmp_path / "imported-x.json").read_text())["name"] == "imported-x"
    (tmp_path / "s.json").write_text(json.dumps(scenario("imported-x.json", threads=[1])))
    proc = run_cli("validate", "s.json")
    assert proc.returncode == 0 and proc.stdout.startswith("ok"), proc.stderr
    proc = run_cli("run", "s.json", "-o", "r.json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "r.json").read_text())["points"][0]["ops_per_s"] > 0


# ----------------------------------------------------------------------------- bad input


def error_of(capsys, *argv):
    status = cli.main(["machine", "import", *map(str, argv)])
    err = capsys.readouterr().err
    assert status == 2, err
    assert err.count("\n") == 1 and err.startswith("semsim: error: ") and "Traceback" not in err
    return err


def test_bad_input_is_one_line_with_exit_2(tmp_path, capsys):
    m, _ = synthetic(shape=(1, 1, 4, 1))
    good = write_nviennot(tmp_path / "good.csv", m)
    assert "no such file" in error_of(capsys, tmp_path / "nope.csv", "--format", "nviennot")
    assert "--format" in error_of(capsys, good, "--format", "ccbench")
    assert "mctop header row" in error_of(capsys, good, "--format", "mctop")
    cyc = write_mctop(tmp_path / "c.csv", [[v * 2 for v in row] for row in m], 1, False, clock="")
    assert "use --format mctop" in error_of(capsys, cyc, "--format", "nviennot")
    assert "give --ghz" in error_of(capsys, cyc, "--format", "mctop")
    lines = good.read_text().splitlines()
    (tmp_path / "missing.csv").write_text("\n".join(lines[:-1]) + "\n")
    assert "not square" in error_of(capsys, tmp_path / "missing.csv", "--format", "nviennot")
    (tmp_path / "neg.csv").write_text("\n".join(lines[:-1] + ["3,2,-5"]) + "\n")
    err = error_of(capsys, tmp_path / "neg.csv", "--format", "nviennot")
    assert "negative" in err and "line" in err
    (tmp_path / "nan.csv").write_text("\n".join(lines[:-1] + ["3,2,fast"]) + "\n")
    assert "not a number" in error_of(capsys, tmp_path / "nan.csv", "--format", "nviennot")
    (tmp_path / "ragged.csv").write_text("0,1,2\n1,0\n2,1,0\n")
    assert "ragged" in error_of(capsys, tmp_path / "ragged.csv", "--format", "nviennot")
    (tmp_path / "rect.csv").write_text("0,1,2\n1,0,1\n")
    assert "not square" in error_of(capsys, tmp_path / "rect.csv", "--format", "nviennot")
    (tmp_path / "empty.csv").write_text("# nothing\n")
    assert "no data rows" in error_of(capsys, tmp_path / "empty.csv", "--format", "nviennot")
    assert "--topology" in error_of(capsys, good, "--format", "nviennot", "--topology", "2,2")
    assert "has 16 CPUs" in error_of(capsys, good, "--format", "nviennot", "--topology", "2,2,2,2")
    assert "--sockets" in error_of(capsys, good, "--format", "nviennot", "--sockets", "3")
    assert "--name" in error_of(capsys, good, "--format", "nviennot", "--name", "Bad Name")
    assert "--ghz" in error_of(capsys, good, "--format", "nviennot", "--ghz", "-1")
    assert "--costs-from" in error_of(capsys, good, "--format", "nviennot", "--costs-from", "no-such")
    assert "--format" in error_of(capsys, good)  # required
    assert cli.main(["machine"]) == 2 and "an action is required" in capsys.readouterr().err


# ----------------------------------------------------------------------------- the shared files


@needs_mctop
def test_real_mctop_opteron():
    model = mi.import_matrix(MCTOP / "mctop_lpd48core.csv", "mctop", costs_from="opteron-48", name="opteron-48")
    t = model["topology"]
    assert (t["sockets"], t["dies_per_socket"], t["cores_per_die"], t["threads_per_core"]) == (8, 1, 6, 1)
    assert t["numbering"] == "smt-adjacent" and model["provenance"]["cpu_map"] == list(range(48))
    assert {k: v["value"] for k, v in model["latency_ns"].items()} == {
        "same_die": 55.71, "one_hop": 103.33, "two_hops": 142.86}
    matrix = model["latency_matrix_ns"]["matrix"]
    assert matrix[0][6] == 93.81 and matrix[0][12] == 103.33 and matrix[0][18] == 142.86  # 197/217/300 cycles
    assert model["memory_latency_ns"]["value"] == 67.14  # 141 cycles
    assert model["numa_distance"]["matrix"][0] == [10, 17, 18, 24, 18, 24, 19, 24]


@needs_mctop
def test_real_mctop_westmere_with_smt():
    model = mi.import_matrix(MCTOP / "mctop_diassrv8.csv", "mctop", numbering="linux")
    t = model["topology"]
    assert (t["sockets"], t["cores_per_die"], t["threads_per_core"], model["cpus"]) == (8, 10, 2, 160)
    assert model["latency_ns"]["smt"]["value"] == 13.15  # 28 cycles / 2.13 GHz
    preset = json.loads((REPO / "cpu_models" / "westmere-ex-80.json").read_text())
    assert t["socket_hops"] == preset["topology"]["socket_hops"]
    m = mi.read_mctop(MCTOP / "mctop_diassrv8.csv").matrix
    cpu_map = model["provenance"]["cpu_map"]
    for i in range(80):  # linux numbering: model CPU c + 80 is c's sibling
        assert m[cpu_map[i]][cpu_map[i + 80]] == 28


@needs_mctop
@pytest.mark.parametrize("preset", ["opteron-48", "westmere-ex-80", "westmere-ex-160"])
def test_committed_presets_are_what_their_recorded_command_writes(preset, tmp_path, monkeypatch, capsys):
    committed = (REPO / "cpu_models" / f"{preset}.json").read_text()
    argv = shlex.split(json.loads(committed)["provenance"]["command"])
    assert argv[:3] == ["semsim", "machine", "import"]
    argv[3] = str(MCTOP / argv[3])
    monkeypatch.chdir(REPO)  # --costs-from names the preset in ./cpu_models
    assert cli.main(argv[1:] + ["-o", str(tmp_path / f"{preset}.json")]) == 0, capsys.readouterr().err
    assert (tmp_path / f"{preset}.json").read_text() == committed


@needs_nviennot
def test_real_nviennot_files(tmp_path):
    x5650 = mi.import_matrix(NVIENNOT / "c2c_Dual_Intel_R_Xeon_R_CPU_X5650_2_67GHz.csv", "nviennot")
    t = x5650["topology"]
    assert (t["sockets"], t["dies_per_socket"], t["cores_per_die"], t["threads_per_core"]) == (2, 1, 6, 2)
    assert x5650["clock_ghz"]["value"] == 2.67
    sky = mi.import_matrix(NVIENNOT / "c2c_Intel_Core_i7_6700K.csv", "nviennot")
    assert sky["cpus"] == 8 and sky["topology"]["threads_per_core"] == 2
    zen = mi.import_matrix(NVIENNOT / "c2c_AMD_Ryzen_7_2700X_Eight_Core_Processor.csv", "nviennot")
    assert (zen["topology"]["dies_per_socket"], zen["topology"]["cores_per_die"]) == (2, 4)
    # every matrix imports; a few of the shapes load and simulate
    files = sorted(p for p in NVIENNOT.glob("c2c_*.csv") if "readme" not in p.name and "summary" not in p.name)
    assert len(files) == 38
    for p in files:
        model = mi.import_matrix(p, "nviennot")
        assert model["cpus"] == len(model["latency_matrix_ns"]["matrix"])
        # and the simulator takes every model the importer writes
        (tmp_path / "m.json").write_text(mi.dump(model))
        semsim.load_scenario(scenario(tmp_path / "m.json", threads=(2,)))


@needs_nviennot
def test_imported_nviennot_models_simulate(tmp_path):
    for name in ("c2c_Dual_Intel_R_Xeon_R_CPU_X5650_2_67GHz.csv", "c2c_AMD_Ryzen_7_2700X_Eight_Core_Processor.csv",
                 "c2c_Intel_Core_i9_12900K.csv"):
        model = mi.import_matrix(NVIENNOT / name, "nviennot", name="m")
        (tmp_path / "m.json").write_text(mi.dump(model))
        points = semsim.simulate(scenario(tmp_path / "m.json", threads=(2,))).points
        assert points[0]["ops_per_s"] > 0, name


@needs_nviennot
@needs_mctop
def test_importer_against_the_published_figures_carried_in_validation():
    spec = importlib.util.spec_from_file_location("check", REPO / "validation" / "machine-import" / "check.py")
    check = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(check)
    rows = check.nviennot_rows(DATA)
    assert len(rows) == 66
    ok = [r for r in rows if r["ok"]]
    # validation/machine-import/README.md: the misses are hybrid parts (12900K, M1 Pro), the 7950X's
    # SMT pairs timed at two levels, a 2-socket EPYC named as one socket, and two README medians
    # taken over a wider set of pairs (Kunpeng 920, 5900X).
    assert len(ok) >= 57
    assert all(r["found"] for r in check.mctop_rows(DATA))


# ----------------------------------------------------------------------------- the committed presets


def _preset(name):
    return json.loads((REPO / "cpu_models" / f"{name}.json").read_text())


def test_committed_matrices_hold_the_carried_mctop_levels():
    """Without the shared data: the presets' matrices are the published levels of
    validation/machine-import/mctop_figures.csv at the file's clock, with their pair counts."""
    import csv

    with open(REPO / "validation" / "machine-import" / "mctop_figures.csv", encoding="utf-8") as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    for name in ("opteron-48", "westmere-ex-160"):
        model = _preset(name)
        ghz = float(next(r["value"] for r in rows if r["machine"] == name and r["figure"] == "clock_ghz"))
        assert model["clock_ghz"]["value"] == ghz
        levels = {float(r["value"]): int(r["pairs"]) for r in rows
                  if r["machine"] == name and r["figure"] == "c2c_latency_level_cycles"}
        counts: dict[float, int] = {}
        for i, row in enumerate(model["latency_matrix_ns"]["matrix"]):
            for j, ns in enumerate(row):
                if i != j:
                    cycles = min(levels, key=lambda c: abs(c / ghz - ns))
                    assert ns == pytest.approx(cycles / ghz, abs=0.006), (name, i, j)
                    counts[cycles] = counts.get(cycles, 0) + 1
        assert counts == levels
        local = float(next(r["value"] for r in rows
                           if r["machine"] == name and r["figure"] == "local_memory_cycles_median"))
        assert model["memory_latency_ns"]["value"] == pytest.approx(local / ghz, abs=0.006)


def test_westmere_160_extends_westmere_80():
    w80, w160 = _preset("westmere-ex-80"), _preset("westmere-ex-160")
    assert w160["provenance"]["cpu_map"][:80] == w80["provenance"]["cpu_map"]
    m80, m160 = w80["latency_matrix_ns"]["matrix"], w160["latency_matrix_ns"]["matrix"]
    assert all(m160[i][:80] == m80[i] for i in range(80))
    assert all(m160[c][c + 80] == w160["latency_ns"]["smt"]["value"] for c in range(80))
    assert w160["numa_distance"] == w80["numa_distance"]
    assert w160["costs_ns"] == w80["costs_ns"]
