"""Parameter sweeps: the cartesian product of threads, kernels, machines, semaphores.

Every point is simulated in a fresh process (``python -m semsim._worker``):
SimGrid's clock is process-global and never reset, only one engine may exist per
process, and a crash inside the engine must not take the caller down. The points
run on a local pool (one worker process per CPU by default) or on a Dask cluster;
each point is deterministic, so the result is the same whichever ran it, and the
points come back in the product's order whatever order they finished in.

>>> res = semsim.sweep("scenarios/default.json", threads=[1, 2, 4],
...                    kernel=["global_lock", "hysteresis"], duration_ms=1)
>>> res.to_frame()[["threads", "kernel", "ops_per_s"]]
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import copy
import gc
import itertools
import json
import logging
import os
import signal
import sys
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Union

from . import _worker
from .api import (
    MAX_JOBS,
    MAX_REPEATS,
    MAX_SEMAPHORES,
    MAX_THREADS,
    InputError,
    Result,
    ScenarioLike,
    SimulationError,
    _sets,
    check_int,
    load_scenario,
)

if TYPE_CHECKING:  # pragma: no cover
    from distributed import Client

#: What ``executor=`` accepts: None or "process" (a local pool of fresh processes),
#: "dask" (a new LocalCluster), a Dask scheduler address ("tcp://host:8786"), a
#: ``dask.distributed.Client``, or any ``concurrent.futures.Executor``.
ExecutorLike = Union[None, str, "Client", cf.Executor]

#: ``semaphores="threads"`` (or a list containing it): as many semaphores as threads.
SEMAPHORES_PER_THREAD = "threads"

#: The most points one sweep may have (the product of its axes): each is checked before
#: any runs (about 1.5 ms each) and simulated in a process of its own.
MAX_SWEEP_POINTS = 10_000

_log = logging.getLogger(__name__)


# ---------------------------------------------------------------------------- the points


def _axis(value: Any, what: str, *, mapping_is_value: bool = False) -> list[Any] | None:
    """An axis given as one value or a sequence of values; None when not given."""
    if value is None:
        return None
    if isinstance(value, (str, bytes, int, float)) or (mapping_is_value and isinstance(value, Mapping)):
        return [value]
    if hasattr(value, "tolist") and callable(value.tolist):  # numpy arrays, pandas series
        try:
            size = int(getattr(value, "size", 0))
        except (TypeError, ValueError):
            size = 0
        if size > MAX_SWEEP_POINTS:
            raise InputError(f"sweep: {what}: {size:,} values; a sweep has at most {MAX_SWEEP_POINTS:,} points")
        value = value.tolist()
    if isinstance(value, Iterable):
        # At most one value past the limit is taken: range(10**12) is refused, not expanded.
        values = list(itertools.islice(value, MAX_SWEEP_POINTS + 1))
        if not values:
            raise InputError(f"sweep: {what}: the list of values is empty")
        if len(values) > MAX_SWEEP_POINTS:
            raise InputError(f"sweep: {what}: more than {MAX_SWEEP_POINTS:,} values; a sweep has at most "
                             f"{MAX_SWEEP_POINTS:,} points")
        return values
    return [value]


def _label_value(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), sort_keys=True, default=str)


def _short(value: Any) -> str:
    """A value as a point's label shows it, cut to 40 characters."""
    text = _label_value(value) if not isinstance(value, int) or abs(value) < 10**15 else f"{value:.3g}"
    return text if len(text) <= 40 else text[:40] + "..."


def _set_path(doc: dict[str, Any], path: str, value: Any) -> None:
    parts = path.split(".")
    node = doc
    for part in parts[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = {}
            node[part] = child
        node = child
    node[parts[-1]] = value


def _resolve_machine(machine: Any) -> Any:
    # A machine given as a file path travels to other processes (and Dask
    # workers) as an absolute path; a preset name stays a name.
    if isinstance(machine, str) and (os.sep in machine or machine.endswith(".json")) and os.path.exists(machine):
        return os.path.abspath(machine)
    return machine


class SweepPoint:
    """One scenario to simulate in a fresh process: its index in the batch, its axis values
    (which name it in errors) and its normalized scenario. ``kind`` names the batch in
    errors ("sweep point", "reproduce scenario")."""

    __slots__ = ("index", "values", "scenario_json", "kind")

    def __init__(self, index: int, values: dict[str, Any], scenario_json: str, kind: str = "sweep point") -> None:
        self.index = index
        self.values = values
        self.scenario_json = scenario_json
        self.kind = kind

    @property
    def label(self) -> str:
        """``threads=4 kernel=hysteresis machine=xeon-24 semaphores=4`` (names the point in errors)."""
        return " ".join(f"{k}={_label_value(v)}" for k, v in self.values.items())

    def __repr__(self) -> str:
        return f"<semsim.SweepPoint #{self.index}: {self.label}>"


def plan(
    scenario: ScenarioLike,
    *,
    threads: int | Iterable[int] | None = None,
    kernel: str | Mapping[str, Any] | Iterable[str | Mapping[str, Any]] | None = None,
    machine: str | Iterable[str] | None = None,
    semaphores: int | str | Iterable[int | str] | None = None,
    repeats: int | None = None,
    grid: Mapping[str, Iterable[Any]] | None = None,
    sets: Sequence[str] = (),
    **overrides: Any,
) -> tuple[dict[str, Any], list[SweepPoint]]:
    """The normalized base scenario and the sweep's points, each validated, in product order.

    The order is machine, kernel, the ``grid`` axes (in the order given),
    semaphores, then threads (innermost), so that each curve's points are adjacent.
    ``sets`` are ``--set`` assignments (``"workload.pattern=own"``), applied before
    ``overrides``. Bad input raises :class:`InputError` naming the point.
    """
    # The axes first (cheap, bounded), so that a huge or bad one fails before any scenario
    # is loaded; then the base scenario with the threads axis in place of its own list
    # (which the sweep replaces: it must not be checked against the workload).
    given_threads = _axis(threads, "threads")
    for t in given_threads or []:
        check_int(t, f"sweep point threads={_short(t)}", 1, MAX_THREADS, " (tasks)")
    machine_axis = _axis(machine, "machine")
    kernel_axis = _axis(kernel, "kernel", mapping_is_value=True)
    sems_axis = _axis(semaphores, "semaphores")
    if sems_axis is None:
        sems_axis = [None]
    for s in sems_axis:
        if s is not None and s != SEMAPHORES_PER_THREAD:
            check_int(s, f"sweep point semaphores={_short(s)}", 1, MAX_SEMAPHORES, f" or {SEMAPHORES_PER_THREAD!r}")
    if repeats is not None:
        check_int(repeats, "sweep: repeats", 1, MAX_REPEATS, " (seeds per point)")
    base_sets: Sequence[str] = sets
    if given_threads is not None:
        base_sets = [*_sets(sets), f"threads={json.dumps([int(t) for t in given_threads])}"]
    base = load_scenario(scenario, sets=base_sets, **overrides)
    if repeats is not None:
        base["repeats"] = repeats
    machines = machine_axis or [base["machine"]]
    machines = [_resolve_machine(m) for m in machines]
    kernels = kernel_axis or [base["kernel"]]
    threads_axis = given_threads or _axis(base["threads"], "threads") or []
    extra: list[tuple[str, list[Any]]] = []
    if grid is not None and not isinstance(grid, Mapping):
        raise InputError(f"sweep: grid: expected a mapping of field path to values "
                         f"(e.g. {{'workload.pattern': ['stride', 'own']}}), got {type(grid).__name__}")
    for path, values in (grid or {}).items():
        if not isinstance(path, str):
            raise InputError(f"sweep: grid: field paths are strings, got {path!r}")
        axis = _axis(values, path, mapping_is_value=True)
        if axis is None:
            continue
        extra.append((path.replace("__", "."), axis))

    base["threads"] = [t for t in threads_axis]
    points: list[SweepPoint] = []
    axes = [machines, kernels, *(v for _, v in extra), sems_axis, threads_axis]
    total = 1
    for axis_values in axes:
        total *= len(axis_values)
    if total > MAX_SWEEP_POINTS:
        sizes = " x ".join(str(len(a)) for a in axes if len(a) > 1)
        raise InputError(f"sweep: {total:,} points ({sizes}); a sweep has at most {MAX_SWEEP_POINTS:,} points: "
                         "split it")
    for index, combo in enumerate(itertools.product(*axes)):
        m, k, *rest = combo
        extra_values, s, t = rest[: len(extra)], rest[-2], rest[-1]
        doc = copy.deepcopy(base)
        doc["machine"] = m
        doc["kernel"] = copy.deepcopy(k)
        doc["threads"] = [t]
        values: dict[str, Any] = {"threads": t, "kernel": k, "machine": m}
        for (path, _), value in zip(extra, extra_values):
            _set_path(doc, path, copy.deepcopy(value))
            values[path] = value
        if s is not None:
            count = t if s == SEMAPHORES_PER_THREAD else s
            _set_path(doc, "workload.semaphores", count)
            values["semaphores"] = count
        point = SweepPoint(index, values, "")
        try:
            point.scenario_json = json.dumps(load_scenario(doc), indent=2)
        except InputError as exc:
            raise InputError(f"sweep point {point.label}: {exc}") from None
        points.append(point)
    return base, points


# ---------------------------------------------------------------------------- running


def _decode(point: SweepPoint, reply: Mapping[str, Any]) -> dict[str, Any]:
    """The point's result document, or the exception its failure deserves."""
    status = reply.get("returncode")
    out = reply.get("stdout") or ""
    err = (reply.get("stderr") or "").strip()
    if status == _worker.EXIT_OK:
        try:
            return json.loads(out)
        except ValueError:
            raise SimulationError(
                f"{point.kind} {point.label}: the simulator process returned no result document"
            ) from None
    if isinstance(status, int) and status < 0:
        try:
            name = signal.Signals(-status).name
        except ValueError:
            name = f"signal {-status}"
        tail = " ".join(err.splitlines()[-3:])
        raise SimulationError(
            f"{point.kind} {point.label}: the simulator process crashed ({name})"
            + (f": {tail}" if tail else "")
        )
    try:
        info = json.loads(out)
        kind, message = str(info["error_type"]), str(info["message"])
    except (ValueError, KeyError, TypeError):
        tail = " ".join(err.splitlines()[-3:])
        raise SimulationError(
            f"{point.kind} {point.label}: the simulator process exited with status {status}"
            + (f": {tail}" if tail else "")
        ) from None
    if kind == "InputError":
        raise InputError(f"{point.kind} {point.label}: {message}")
    if kind == "KeyboardInterrupt":
        raise KeyboardInterrupt
    if kind == "SimulationError":
        raise SimulationError(f"{point.kind} {point.label}: {message}")
    raise SimulationError(f"{point.kind} {point.label}: {kind}: {message}")


class _CallbackBar:
    """progress(done, total) after each finished point."""

    def __init__(self, total: int, callback: Callable[[int, int], Any]) -> None:
        self.total, self.done, self.callback = total, 0, callback

    def update(self, n: int = 1) -> None:
        self.done += n
        self.callback(self.done, self.total)

    def close(self) -> None:
        pass


def _progress_bar(total: int, progress: bool | None | Callable[[int, int], Any]) -> Any:
    if callable(progress):
        return _CallbackBar(total, progress)
    enabled = bool(progress)
    if enabled:
        try:
            tty = sys.stderr.isatty()
        except (AttributeError, ValueError):
            tty = False
        # A terminal, or a Jupyter kernel (whose stderr is no tty but shows \r bars).
        enabled = tty or _in_jupyter_kernel()
    if not enabled:
        return _NoBar()
    if _in_jupyter_kernel():
        # In Jupyter, tqdm.auto's bar is a widget (ipywidgets); without them it falls back to text.
        try:
            import warnings

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                from tqdm.auto import tqdm as auto_tqdm

                return auto_tqdm(total=total, desc="semsim sweep", unit="point")
        except ImportError:  # pragma: no cover - tqdm is a dependency
            return _NoBar()
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover - tqdm is a dependency
        return _NoBar()
    return tqdm(total=total, desc="semsim sweep", unit="point", file=sys.stderr, dynamic_ncols=True)


def _in_jupyter_kernel() -> bool:
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    try:
        shell = ipython.get_ipython()
    except Exception:  # any doubt: not a kernel
        return False
    return shell is not None and getattr(shell, "kernel", None) is not None


class _NoBar:
    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


def _cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _workers(max_workers: int | None, npoints: int) -> int:
    if max_workers is not None:
        return check_int(max_workers, "sweep: max_workers", 1, MAX_JOBS, " (processes at once)")
    return max(1, min(_cpu_count(), npoints))


def _run_local(points: list[SweepPoint], pool: cf.Executor, bar: Any, own_children: bool,
               command: Sequence[str] | None) -> list[dict[str, Any]]:
    results: list[dict[str, Any] | None] = [None] * len(points)
    futures = {pool.submit(_worker.run_point, p.scenario_json, command): p for p in points}
    try:
        for fut in cf.as_completed(futures):
            point = futures[fut]
            results[point.index] = _decode(point, fut.result())
            bar.update(1)
    except BaseException:
        for fut in futures:
            fut.cancel()
        if own_children:
            _worker.kill_live()
        raise
    return results  # type: ignore[return-value]


def _run_dask(points: list[SweepPoint], client: Any, bar: Any, command: Sequence[str] | None,
              own_children: bool = False) -> list[dict[str, Any]]:
    from distributed import as_completed

    token = uuid.uuid4().hex[:12]
    futures = [
        client.submit(_worker.run_point, p.scenario_json, command, key=f"semsim-point-{token}-{p.index}",
                      pure=False, retries=0)
        for p in points
    ]
    by_key = {f.key: p for f, p in zip(futures, points)}
    results: list[dict[str, Any] | None] = [None] * len(points)
    try:
        for fut in as_completed(futures):
            point = by_key[fut.key]
            results[point.index] = _decode(point, fut.result())
            bar.update(1)
    except BaseException:
        try:
            client.cancel(futures)
        except Exception:  # best effort while failing
            pass
        if own_children:  # a local cluster's workers are our threads: end their subprocesses
            _worker.kill_live()
        raise
    return results  # type: ignore[return-value]


def _dask_client(executor: Any, nworkers: int) -> tuple[Any, Callable[[], None]]:
    """A Dask client for ``executor`` and how to release what this call started."""
    try:
        from distributed import Client, LocalCluster
    except ImportError as exc:  # pragma: no cover - dask[distributed] is a dependency
        raise InputError(f"sweep: executor {executor!r} needs dask.distributed ({exc})") from None
    if isinstance(executor, Client):
        return executor, lambda: None
    if executor == "dask":
        # Each point runs in a subprocess of its own already, so the local workers are
        # threads of this process that start those subprocesses (processes=False): no
        # worker process re-imports the caller's __main__, which is what made a cluster of
        # processes fail ("Nanny failed to start") from a script without an
        # `if __name__ == "__main__":` guard, from standard input or from a notebook.
        try:
            cluster = LocalCluster(n_workers=nworkers, threads_per_worker=1, processes=False,
                                   dashboard_address=None, silence_logs=logging.ERROR)
        except Exception as exc:  # whatever stops it, say so in one line
            message = " ".join(str(exc).split()) or type(exc).__name__
            raise SimulationError(f"sweep: executor 'dask': the local Dask cluster could not start: "
                                  f"{type(exc).__name__}: {message}") from None
        try:
            client = Client(cluster)
        except Exception as exc:
            cluster.close()
            message = " ".join(str(exc).split()) or type(exc).__name__
            raise SimulationError(f"sweep: executor 'dask': cannot connect to the local Dask cluster: "
                                  f"{type(exc).__name__}: {message}") from None

        def close() -> None:
            client.close()
            cluster.close()

        return client, close
    try:
        client = Client(executor, timeout="10s")
    except (OSError, ValueError, TimeoutError) as exc:
        raise InputError(f"sweep: executor: cannot reach the Dask scheduler at {executor!r}: {exc}") from None
    return client, client.close


def _is_dask_client(obj: Any) -> bool:
    cls = type(obj)
    return cls.__name__ == "Client" and cls.__module__.startswith("distributed")


def run_points(points: list[SweepPoint], *, executor: ExecutorLike = None, max_workers: int | None = None,
               progress: bool | None | Callable[[int, int], Any] = True,
               command: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Simulates each point in a fresh process; returns their result documents in point order.

    The one way semsim runs points in fresh processes (sweeps, ``semsim reproduce``, the
    golden guard). ``progress``: a bar on a terminal or in Jupyter (True), none (False),
    or a callable told ``(done, total)`` after each finished point.
    """
    if not points:
        return []
    bar = _progress_bar(len(points), progress)
    try:
        if executor is None or executor == "process":
            nworkers = _workers(max_workers, len(points))
            # Threads only wait: each starts one `python -m semsim._worker` per point.
            with cf.ThreadPoolExecutor(max_workers=nworkers, thread_name_prefix="semsim-sweep") as pool:
                return _run_local(points, pool, bar, True, command)
        if isinstance(executor, cf.Executor):
            return _run_local(points, executor, bar, isinstance(executor, cf.ThreadPoolExecutor), command)
        if executor == "dask" or isinstance(executor, str) or _is_dask_client(executor):
            if isinstance(executor, str) and executor != "dask" and ":" not in executor:
                raise InputError(
                    f"sweep: executor {executor!r}: expected 'process', 'dask', a Dask scheduler address "
                    "(tcp://host:8786), a dask.distributed.Client or a concurrent.futures.Executor"
                )
            nworkers = _workers(max_workers, len(points)) if max_workers is not None else _cpu_count()
            client, close = _dask_client(executor, nworkers)
            try:
                return _run_dask(points, client, bar, command, own_children=executor == "dask")
            finally:
                close()
        raise InputError(
            f"sweep: executor: expected 'process', 'dask', a Dask scheduler address, a "
            f"dask.distributed.Client or a concurrent.futures.Executor, not {type(executor).__name__}"
        )
    finally:
        bar.close()


# ---------------------------------------------------------------------------- the result


def run_scenarios(docs: Sequence[ScenarioLike], *, max_workers: int | None = None,
                  progress: bool | None | Callable[[int, int], Any] = False,
                  kind: str = "scenario") -> list[dict[str, Any]]:
    """Simulates each scenario in a fresh process (as :func:`run_points`, on a local pool);
    returns their result documents in input order. Bad input raises :class:`InputError`
    before anything runs."""
    points = []
    for index, doc in enumerate(docs):
        point = SweepPoint(index, {"#": index}, "", kind)
        try:
            point.scenario_json = json.dumps(load_scenario(doc), indent=2)
        except InputError as exc:
            raise InputError(f"{kind} {point.label}: {exc}") from None
        points.append(point)
    return run_points(points, max_workers=max_workers, progress=progress)


def simulate_scenarios(docs: Sequence[ScenarioLike], *, jobs: int | None = None,
                       done: Callable[[int], Any] | None = None, kind: str = "scenario",
                       labels: Sequence[str] | None = None) -> list[dict[str, Any] | Exception]:
    """Simulates every run of every scenario (one per thread count and seed), ``jobs`` at a
    time (default: one per CPU) in worker processes forked from this one, the longest
    (by estimate) first: a batch of scenarios keeps every CPU busy to its end and pays no
    interpreter start-up per scenario, and one fork per worker, not per run. A run that
    crashes ends only its worker (a fresh one takes the next run).

    Returns, in input order, each scenario's result document (the bytes
    :func:`semsim.simulate` gives it) or the exception its failure deserves
    (:class:`InputError` or :class:`SimulationError`, naming the scenario). Bad input
    raises :class:`InputError` before anything runs. ``done(i)`` is called when scenario
    i's outcome is known. Messages name scenario i as ``labels[i]`` (default ``<kind> #i``).
    """
    from . import api

    api.check_jobs(jobs)
    names = list(labels) if labels is not None else [f"{kind} #{i}" for i in range(len(docs))]
    texts = []
    with gc_paused():
        for index, doc in enumerate(docs):
            try:
                texts.append(api._load_text(doc, []))
            except InputError as exc:
                raise InputError(f"{names[index]}: {exc}") from None
    return simulate_normalized(texts, jobs=jobs, done=done, names=names)


def simulate_normalized(texts: Sequence[str], *, jobs: int | None = None,
                        done: Callable[[int], Any] | None = None,
                        names: Sequence[str] | None = None) -> list[dict[str, Any] | Exception]:
    """:func:`simulate_scenarios` for scenarios given as the text ``api._load_text`` (the
    normalization :func:`semsim.load_scenario` does) returned for them: a caller that has
    checked its scenarios that way already (``semsim reproduce``) does not pay for it
    twice. Messages name scenario i as ``names[i]`` (default ``scenario #i``)."""
    from . import api

    njobs = api.check_jobs(jobs)
    names = list(names) if names is not None else [f"scenario #{i}" for i in range(len(texts))]
    with gc_paused():
        outcomes = api._require_core().simulate_batch(list(texts), njobs, done)
        out: list[dict[str, Any] | Exception] = []
        for index, outcome in enumerate(outcomes):
            if outcome[0]:
                out.append(json.loads(outcome[1]))
            elif outcome[1] == "InputError":
                out.append(InputError(f"{names[index]}: {outcome[2]}"))
            else:
                out.append(SimulationError(f"{names[index]}: {outcome[2]}"))
    return out


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for the block (as it was, after it).

    A batch's scenarios and results can be millions of small objects (the swingbench
    target's programs), and the collector's passes over them cost seconds in the
    process that forks the runs; they make no cycles worth collecting meanwhile
    (reference counting frees them). Its passes also write to every object's header,
    which makes the kernel copy the pages each live worker still shares."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def assemble(base: Mapping[str, Any], points: list[SweepPoint], docs: list[dict[str, Any]],
             axes: Mapping[str, Any]) -> Result:
    """One simulated :class:`Result` from the points' documents, in point order.

    Each point keeps its own normalized ``scenario``; ``provenance`` lists the
    machine models' hashes and the kernels' releases; ``sweep`` records the axes.
    """
    out_points: list[dict[str, Any]] = []
    machines: dict[str, Any] = {}
    kernels: dict[str, Any] = {}
    version = None
    for point, doc in zip(points, docs):
        prov = doc.get("provenance", {})
        version = version or prov.get("semsim_version")
        if "machine" in prov:
            machines.setdefault(str(prov["machine"]), prov.get("machine_model_hash"))
        if "kernel" in prov:
            kernels.setdefault(_label_value(prov["kernel"]), prov.get("kernel_releases"))
        for p in doc.get("points", []):
            row = dict(p)
            row["scenario"] = doc.get("scenario", json.loads(point.scenario_json))
            out_points.append(row)
    result_doc = {
        "side": "simulated",
        "scenario": dict(base),
        "sweep": {"axes": dict(axes), "order": list(axes), "points": len(points)},
        "provenance": {"semsim_version": version, "machines": machines, "kernels": kernels},
        "points": out_points,
    }
    text = json.dumps(result_doc, indent=2, sort_keys=True, allow_nan=False)
    return Result(result_doc, text)


def sweep(
    scenario: ScenarioLike,
    *,
    threads: int | Iterable[int] | None = None,
    kernel: str | Mapping[str, Any] | Iterable[str | Mapping[str, Any]] | None = None,
    machine: str | Iterable[str] | None = None,
    semaphores: int | str | Iterable[int | str] | None = None,
    repeats: int | None = None,
    grid: Mapping[str, Iterable[Any]] | None = None,
    executor: ExecutorLike = None,
    max_workers: int | None = None,
    progress: bool | None = True,
    sets: Sequence[str] = (),
    **overrides: Any,
) -> Result:
    """Simulates the cartesian product of the given axes, each point in a fresh process.

    Parameters
    ----------
    scenario:
        A scenario file, JSON text, dict or :class:`Result`; ``overrides`` (``duration_ms=1``,
        ``workload__pattern="own"``) apply to it first, as in :func:`semsim.simulate`.
    threads, kernel, machine, semaphores:
        One value or a list each; an axis left out keeps the scenario's value
        (``threads`` its list). ``kernel`` values are generation ids or
        ``{"base": id, <policy>: value}`` objects. ``semaphores="threads"`` (alone or
        in the list) gives each point as many semaphores as threads.
    repeats:
        Seeds per point (the scenario's ``repeats``).
    grid:
        More axes by dotted field path: ``{"workload.pattern": ["stride", "own"]}``.
    executor:
        None or ``"process"``: a local pool, ``max_workers`` processes at a time
        (default: one per CPU). ``"dask"``: a new Dask ``LocalCluster`` in this process
        (one worker thread per CPU, or ``max_workers``, each starting the points'
        processes), closed at the end; it works from any script, standard input or a
        notebook, with or without an ``if __name__ == "__main__":`` guard.
        A scheduler address (``"tcp://host:8786"``) or a ``dask.distributed.Client``:
        that cluster (its workers need semsim installed). Any
        ``concurrent.futures.Executor`` is used as given. Whatever runs them, each
        point is simulated in a fresh ``python -m semsim._worker`` process.
    progress:
        A progress bar on stderr (shown on a terminal or in Jupyter); False for none.
    sets:
        ``--set`` style assignments (``["workload.pattern=own"]``), as on the command line.

    Returns
    -------
    Result
        One point per combination, in product order (machine, kernel, grid axes,
        semaphores, threads innermost), whatever order they finished in; each point
        carries its own ``scenario``, so ``to_frame()`` has every parameter as columns.
        The same axes give the same bytes (``to_json()``) on any executor.

    Raises
    ------
    InputError
        Bad input, naming the point (``sweep point threads=0 kernel=...: threads: ...``).
    SimulationError
        A point failed or its process crashed (the message names the point and the signal).
    """
    base, points = plan(scenario, threads=threads, kernel=kernel, machine=machine, semaphores=semaphores,
                        repeats=repeats, grid=grid, sets=sets, **overrides)
    docs = run_points(points, executor=executor, max_workers=max_workers, progress=progress)
    axes: dict[str, Any] = {
        "machine": _axis(machine, "machine") or [base["machine"]],
        "kernel": _axis(kernel, "kernel", mapping_is_value=True) or [base["kernel"]],
    }
    for path, values in (grid or {}).items():
        axes[path.replace("__", ".")] = _axis(values, path, mapping_is_value=True)
    if semaphores is not None:
        axes["semaphores"] = _axis(semaphores, "semaphores")
    axes["threads"] = list(base["threads"])
    return assemble(base, points, docs, axes)
