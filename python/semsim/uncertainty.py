"""Uncertainty as data: a prediction over the ranges a machine file gives its assumptions,
and over the scenario's start order.

A machine file may give a parameter that is an assumption a ``range`` and a guessed
topology ``alternatives`` (syntax: cpu_models/README.md, "Ranges and alternatives";
parsed and checked only by the C++ loader, sim/config/machine_ranges.cpp). Here the
scenario is simulated once per variant -- each range's low and high end and each
alternative topology, one parameter at a time (a tornado: which assumption moves the
answer how much), and with ``corners`` also every range at its low end and every one
at its high end -- and each point gets the nominal prediction and the range.

The variants run in fresh processes through the sweeps' runner (semsim._worker); an
end equal to the nominal value is not re-run. The section added to the result,
``uncertainty``, holds numbers and names only (no temporary paths): the same scenario
gives the same bytes.
"""
from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from . import api

MODES = ("each", "corners")


def machine_uncertainty(machine: str, corners: bool = False) -> dict[str, Any]:
    """A machine's uncertain parameters and its variants (each with its machine file as
    ``document``): what the C++ loader reads from the file, after every check."""
    if not isinstance(machine, str):
        raise api.InputError(f"machine: expected a preset name or a file path, not {type(machine).__name__}")
    return json.loads(api._require_core().machine_uncertainty(machine, bool(corners)))


def _mode(mode: Any) -> bool:
    """``corners`` for a mode name (True: "each", the default)."""
    if mode is True or mode is None:
        return False
    if mode not in MODES:
        raise api.InputError(f"uncertainty: {mode!r}: allowed: {', '.join(MODES)} (or True for each)")
    return mode == "corners"


#: The scenario's own uncertain assumption, beside the machine's: the tasks' start
#: order (scenario field ``start_order``), which a saturated FIFO lock keeps for the
#: whole run (validation/lock-rotation.md). Its variant is the other order.
START_ORDERS = ("spawn", "shuffled")
START_ORDER_SOURCE = ("assumption (scenario): spawn starts every task at date 0 with ties "
                      "by task id, the benchmark's thread order; shuffled breaks them at "
                      "random from the seed (validation/lock-rotation.md)")


def _start_order_parameter(scenario: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The start order as an uncertain parameter, and its variant (the other order)."""
    nominal = scenario.get("start_order", "spawn")
    other = next(o for o in START_ORDERS if o != nominal)
    param = {"parameter": "start_order", "nominal": nominal, "alternatives": [other],
             "unit": None, "source": START_ORDER_SOURCE}
    variant = {"id": f"start_order={other}", "parameter": "start_order", "setting": other,
               "value": other}
    return param, variant


def _tasks_at_most(doc: Mapping[str, Any]) -> int:
    """The largest thread count of a scenario document."""
    threads = doc.get("threads", 1)
    return max(int(t) for t in threads) if isinstance(threads, list) else int(threads)


def _rates(doc: Mapping[str, Any]) -> list[float]:
    return [float(p.get("ops_per_s", 0.0)) for p in doc.get("points", [])]


def _tornado(param: Mapping[str, Any], variants: list[dict[str, Any]], nominal: float,
             i: int) -> dict[str, Any]:
    """One bar of point i's tornado: the prediction at each setting of one parameter."""
    by_setting = {v["setting"]: v["ops_per_s"][i] for v in variants if v["parameter"] == param["parameter"]}
    values = [nominal, *by_setting.values()]
    lo, hi = min(values), max(values)
    return {"parameter": param["parameter"], "ops_per_s": by_setting, "min": lo, "max": hi,
            "swing_rel": (hi - lo) / nominal if nominal else 0.0}


def uncertainty_section(result: api.Result, corners: bool = False, workers: int | None = None,
                        progress: bool | Callable[[int, int], Any] = False) -> dict[str, Any]:
    """The ``uncertainty`` section for a simulated ``result`` (its scenario re-run on each
    variant of its machine)."""
    from .sweeps import run_scenarios

    scenario = result.scenario
    info = machine_uncertainty(str(scenario.get("machine")), corners)
    nominal_rates = _rates(result.doc)
    nominal_value = {p["parameter"]: p["nominal"] for p in info["parameters"]}
    parameters = list(info["parameters"])
    variants: list[dict[str, Any]] = []
    to_run: list[tuple[int, dict[str, Any]]] = []
    with tempfile.TemporaryDirectory(prefix="semsim-uncertainty-") as tmp:
        for k, v in enumerate(info["variants"]):
            entry = {key: v[key] for key in ("id", "parameter", "setting", "value", "model_hash")}
            # A range end at the nominal value is the nominal model: not simulated again.
            entry["simulated"] = not (v["parameter"] in nominal_value and v["setting"] in ("low", "high")
                                      and v["value"] == nominal_value[v["parameter"]])
            entry["ops_per_s"] = list(nominal_rates)
            variants.append(entry)
            if entry["simulated"]:
                path = Path(tmp) / f"{k:03d}" / f"{info['machine']}.json"
                path.parent.mkdir()
                path.write_text(json.dumps(v["document"], indent=2) + "\n", encoding="utf-8")
                doc = dict(scenario)
                doc["machine"] = str(path)
                to_run.append((k, doc))
        order_param, order_variant = _start_order_parameter(scenario)
        if _tasks_at_most(scenario) > 1:  # one task has no order
            order_variant.update(model_hash=info["model_hash"], simulated=True,
                                 ops_per_s=list(nominal_rates))
            variants.append(order_variant)
            to_run.append((len(variants) - 1, dict(scenario, start_order=order_variant["setting"])))
            parameters.append(order_param)
        docs = run_scenarios([d for _, d in to_run], max_workers=workers, progress=progress,
                             kind="uncertainty variant")
    for (k, _), doc in zip(to_run, docs):
        variants[k]["ops_per_s"] = _rates(doc)
    points = []
    for i, p in enumerate(result.points):
        nominal = nominal_rates[i]
        all_rates = [(nominal, "nominal")] + [(v["ops_per_s"][i], v["id"]) for v in variants]
        lo = min(all_rates, key=lambda x: x[0])
        hi = max(all_rates, key=lambda x: x[0])
        bars = [_tornado(param, variants, nominal, i) for param in parameters]
        bars.sort(key=lambda b: (-b["swing_rel"], b["parameter"]))
        points.append({"threads": p.get("threads"), "kernel": p.get("kernel"), "ops_per_s": nominal,
                       "low": lo[0], "high": hi[0], "low_variant": lo[1], "high_variant": hi[1],
                       "tornado": bars})
    return {"machine": info["machine"], "model_hash": info["model_hash"], "corners": corners,
            "parameters": parameters, "variants": variants, "points": points}


def with_uncertainty(result: api.Result, mode: Any = True, workers: int | None = None,
                     progress: bool | Callable[[int, int], Any] = False) -> api.Result:
    """``result`` with its ``uncertainty`` section (see :func:`simulate_uncertainty`)."""
    corners = _mode(mode)
    doc = dict(result.doc)
    doc["uncertainty"] = uncertainty_section(result, corners, workers, progress)
    return api.Result(doc)


def simulate_uncertainty(scenario: api.ScenarioLike, *, mode: Any = True, sets: Sequence[str] = (),
                         workers: int | None = None, progress: bool | Callable[[int, int], Any] = False,
                         **overrides: Any) -> api.Result:
    """Simulates ``scenario`` as :func:`semsim.simulate` does, then on every variant of its
    machine's ranged assumptions; the result carries an ``uncertainty`` section:

    - ``parameters``: each ranged parameter (``parameter``, ``unit``, ``nominal``,
      ``range`` [low, high], ``source``) and the topology with its ``alternatives``;
    - ``variants``: each machine simulated (``id`` such as ``costs_ns.full_fence=high``,
      ``parameter``, ``setting``, ``value``, ``model_hash``, ``simulated``: false for an
      end equal to the nominal value) with its ``ops_per_s`` per point;
    - ``points``: per point ``ops_per_s`` (nominal), ``low`` and ``high`` over every
      variant, the variants that gave them, and ``tornado``: per parameter the
      prediction at each setting, ``min``, ``max`` and ``swing_rel`` ((max - min) /
      nominal), widest first.

    The scenario's own assumption comes last: its ``start_order`` (a ``parameters`` entry
    with ``alternatives``, and a variant run in the other order), unless every point has
    one thread.

    ``mode``: ``"each"`` (or True) one parameter at a time; ``"corners"`` also every
    range at its low end and every one at its high end. A machine with no range gives
    empty lists.
    """
    corners = _mode(mode)
    result = api.simulate(scenario, sets=sets, **overrides)
    return with_uncertainty(result, "corners" if corners else "each", workers, progress)


def _pct(x: float, nominal: float) -> str:
    return f"{100 * (x / nominal - 1):+.1f}%" if nominal else "-"


def table(section: Mapping[str, Any], out: Any, top: int = 3) -> None:
    """The stderr table: per point the nominal prediction, the range, and the
    parameters that move it most."""
    params, variants = section.get("parameters", []), section.get("variants", [])
    ran = sum(1 for v in variants if v.get("simulated"))
    out.write(f"uncertainty of {section.get('machine')}: {len(params)} uncertain parameter"
              f"{'s' if len(params) != 1 else ''}, {ran} variant{'s' if ran != 1 else ''} simulated"
              f"{' (with corners)' if section.get('corners') else ''}\n")
    if not params:
        out.write("  the machine file gives no parameter a range or alternatives\n")
        return
    rows = [["threads", "kernel", "ops/s", "low..high", "range", f"widest (top {top})"]]
    for p in section.get("points", []):
        nominal = p["ops_per_s"]
        widest = ", ".join(f"{b['parameter']} {100 * b['swing_rel']:.1f}%" for b in p["tornado"][:top])
        kernel = p.get("kernel")
        rows.append([str(p.get("threads")), kernel if isinstance(kernel, str) else json.dumps(kernel),
                     f"{nominal:,.0f}", f"{p['low']:,.0f}..{p['high']:,.0f}",
                     f"{_pct(p['low'], nominal)}..{_pct(p['high'], nominal)}", widest])
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        cells = [c.rjust(w) if i in (0, 2, 3, 4) else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))]
        out.write("  ".join(cells).rstrip() + "\n")


# ---------------------------------------------------------------------------- reproduce


def _check_number(text: str) -> float | None:
    from .reproduce import _number

    return _number(text)


def reproduce_ranges(target: Any, scenarios: list[dict[str, Any]], results: list[dict[str, Any]],
                     checks: list[Any], workers: int | None = None,
                     progress: Callable[[int, int], Any] | None = None) -> list[str]:
    """Adds to each of a reproduce target's ``checks`` the predicted range over the
    variants of the machines its scenarios use and over the scenarios' start order
    (``low``, ``high``, ``widest``: the variant furthest from the nominal prediction)
    and whether the published value lies in it (``within``; None where the check has
    no single published number). Each machine variant re-runs only the scenarios on its
    machine, the start-order variant every scenario with more than one task; the others
    keep their nominal results. Returns the ids of the variants simulated, in order."""
    from .reproduce import run_all

    machines = sorted({str(doc["machine"]) for doc in scenarios})
    per_check: list[list[tuple[float, str]]] = [[] for _ in checks]
    ran: list[str] = []
    jobs: list[tuple[str, list[int], list[dict[str, Any]]]] = []
    with tempfile.TemporaryDirectory(prefix="semsim-uncertainty-") as tmp:
        for m, machine in enumerate(machines):
            info = machine_uncertainty(machine)
            nominal = {p["parameter"]: p["nominal"] for p in info["parameters"]}
            mine = [i for i, doc in enumerate(scenarios) if str(doc["machine"]) == machine]
            for k, v in enumerate(info["variants"]):
                if v["setting"] in ("low", "high") and v["value"] == nominal.get(v["parameter"]):
                    continue  # the nominal model: its results are the nominal ones
                path = Path(tmp) / f"{m:02d}-{k:03d}" / f"{info['machine']}.json"
                path.parent.mkdir()
                path.write_text(json.dumps(v["document"], indent=2) + "\n", encoding="utf-8")
                docs = []
                for i in mine:
                    doc = dict(scenarios[i])
                    doc["machine"] = str(path)
                    docs.append(doc)
                jobs.append((f"{machine}: {v['id']}", mine, docs))
        # The scenarios' own assumption: every one with more than one task, started in the
        # other order (START_ORDERS), as one more variant.
        many = [i for i, doc in enumerate(scenarios) if _tasks_at_most(doc) > 1]
        if many:
            _, order = _start_order_parameter(scenarios[many[0]])
            jobs.append((order["id"], many,
                         [dict(scenarios[i], start_order=order["setting"]) for i in many]))
        # One pool for every variant's scenarios.
        flat = [doc for _, _, docs in jobs for doc in docs]
        outs = run_all(flat, workers, progress)
    at = 0
    for vid, mine, _docs in jobs:
        variant_results = list(results)
        for i in mine:
            variant_results[i] = outs[at]
            at += 1
        variant_checks, _rows = target.evaluate(variant_results)
        if len(variant_checks) != len(checks):
            continue  # a check list that depends on the numbers: no range for it
        for j, c in enumerate(variant_checks):
            x = _check_number(c.predicted)
            if x is not None:
                per_check[j].append((x, vid))
        ran.append(vid)
    for c, values in zip(checks, per_check):
        nominal = _check_number(c.predicted)
        if nominal is None or not values:
            continue
        c.low = min(nominal, *(x for x, _ in values))
        c.high = max(nominal, *(x for x, _ in values))
        far = max(values, key=lambda xv: abs(xv[0] - nominal))
        c.widest = far[1]
        published = _check_number(c.published)
        c.within = None if published is None else (c.low <= published <= c.high)
    return ran


# ---------------------------------------------------------------------------- plot


def plot_tornado(result: api.Result, point: int = 0, ax: Any = None, top: int | None = None) -> Any:
    """A tornado of one point of a result with an ``uncertainty`` section: per parameter
    (widest first) a bar from its lowest to its highest prediction, around the nominal
    one (a vertical line); each setting's prediction marked and named. Returns the
    figure (as the helpers of semsim.plots do: into ``ax`` or a new Figure)."""
    from matplotlib.ticker import EngFormatter

    from .plots import _axes

    section = result.doc.get("uncertainty")
    if not isinstance(section, Mapping):
        raise api.InputError("plot_tornado: the result has no uncertainty section (simulate_uncertainty)")
    points = section.get("points", [])
    if not isinstance(point, int) or not 0 <= point < len(points):
        raise api.InputError(f"plot_tornado: point: expected 0 to {len(points) - 1}, not {point!r}")
    p = points[point]
    bars = p["tornado"][:top] if top else p["tornado"]
    fig, ax = _axes(ax)
    nominal = p["ops_per_s"]
    ys = list(range(len(bars)))
    ax.barh(ys, [b["max"] - b["min"] for b in bars], left=[b["min"] for b in bars], height=0.5,
            color="tab:blue", alpha=0.6)
    for y, b in zip(ys, bars):
        if b["swing_rel"] < 0.005:
            continue  # no visible bar: its settings' names would only overlap
        for setting, value in b["ops_per_s"].items():
            ax.plot([value], [y], marker="|", color="black", markersize=12)
            ax.annotate(str(setting)[:28], (value, y), xytext=(0, 7), textcoords="offset points",
                        ha="center", fontsize=6)
    ax.axvline(nominal, color="tab:red", linewidth=1, label=f"nominal {nominal:,.0f}")
    ax.set_yticks(ys, [b["parameter"] for b in bars], fontsize=7)
    ax.invert_yaxis()
    ax.xaxis.set_major_formatter(EngFormatter())
    kernel = p.get("kernel")
    ax.set_title(f"{section.get('machine')}, {p.get('threads')} threads, "
                 f"{kernel if isinstance(kernel, str) else json.dumps(kernel)}: ops/s over the ranges", fontsize=9)
    ax.legend(fontsize=7)
    return fig
