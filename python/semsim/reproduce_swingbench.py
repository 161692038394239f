"""`semsim reproduce` target 4: Oracle swingbench DSS users against the ipc lock.

What is published (seed 001, Davidlohr Bueso, March 2013, and the same figures for
3.9-rc1 in commit 16df3674efe3 "ipc,sem: do not hold ipc lock more than necessary"):
on "an 8 socket machine", "the percentages of %sys time incurred in the ipc lock"
are 8.74 / 21.86 / 84.35 % for 100 / 400 / 800 swingbench users on 3.9 (vanilla)
and 3.17 / 5.23 / 7.39 % with Rik van Riel's v3 series (per_sem_lock), where the
figure is perf's `_raw_spin_lock` row; TPS 1257 / 1438 / 1237 (vanilla) and
2805 / 2665 / 2751 (v3); "the lock's user is mostly semctl_main()" with v3.

The figure. A share of kernel (%sys) time, not of all CPU time: spin (the
`_raw_spin_lock` row: the atomic and the spinning on the semaphore locks; rq->lock
is in the scheduler's rows) over syscall + kernel + spin + context switch.

The users. Each user is one Oracle process (a dedicated server, Oracle's default:
one process per session; ASSUMPTION: no parallel-query slaves, no background
processes modelled). Oracle's post/wait: a process waits on its OWN semaphore
(semop -1: it sleeps) until another process posts it by setting that semaphore to 1
with semctl(SETVAL) (an strace of an Oracle 12.2 commit, soocs.de 2019: the waiter in
`semtimedop(id, {{54, -1, 0}}, 1, {3, 0})`, the committer's `semctl(id, 54, SETVAL, 1)`;
ASSUMPTION: the Oracle of 2013 posted the same way). A semctl() takes the array lock
(3.9: ipc_lock; the v3 series: the array lock and every semaphore's lock), which is
where the seed's "the lock's user is mostly semctl_main()" points. The users here form
rings of 1 / CPU_DUTY processes that pass one post around: woken, a process does its
CPU work, posts the next one and waits again. So every wait sleeps, every post wakes
a sleeper (the kernel model's wake-up path), and a process is on a CPU CPU_DUTY of
its time: the rest it sleeps on its semaphore, which stands for all its time off the
CPU (its reads, the client; a DSS query waits for its reads most of the time).

The sets. Oracle asks PROCESSES + 4 semaphores; above SEMMSL (250, Oracle's
documented kernel.sem minimum) it makes sets of 125 (ipcs at processes=247:
ora1034.blogspot.com, 2013), so 100 / 400 / 800 users have 1 / 4 / 7 sets
(ASSUMPTION: PROCESSES = users; the range runs one set, as with SEMMSL >= PROCESSES
+ 10, the Metalink rule Red Hat's Oracle tuning guide quotes).

The kernels. "v3 patchset" is Rik van Riel's series as posted (20 March 2013), which
seed 001 answers, as merged in 6062a8dc0517 (3.10-rc1): a complex op or semctl takes
the array lock and then every semaphore's lock (kernel {"base": "per_sem_lock",
"sem_lock": "lock_all"}, sim/ipc/gen_lock_all.cpp). 3.10 as released
(per_sem_lock) replaced that by spin_unlock_wait() on every semaphore's lock and a
spin_is_locked() back-off in simple ops; `ranges()` runs it too.

The rates, from the seed and marked assumptions (each with the range `ranges()` runs):
- 100 users do 1257.21 transactions/s (seed 001, vanilla): one transaction per user
  every 100 / 1257.21 s = 79.5 ms. The demand per user is taken at the smallest user
  count and held fixed (a closed system: the users' own time does not change with their
  number; queueing does).
- POSTWAITS_PER_TX: post/wait cycles of a process per transaction. ASSUMPTION, not in
  the seed: 16, range 4-64. One cycle is then 79.5 ms / 16 = 5.0 ms.
- CPU_DUTY: the share of a user's time on a CPU (its user-space work). ASSUMPTION:
  0.10, range 0.05-0.20 (rings of 10, 20 and 5); the work of each cycle is drawn
  exponentially (a query's work varies; the draws also spread the rings' phases).
- POST: "setval" (above); the range runs "semop" (+1) with one 2-sop op on the own
  semaphore (the array lock) every GLOBAL_EVERY = 10 cycles, the target's older
  workload (ASSUMPTION without a source).
- The machine: westmere-ex-80 (8 sockets, from the mctop matrix of an 8-socket
  Westmere-EX). The socket count is the commit's; the processor is an ASSUMPTION
  (an HP 8-socket box of 2013); `ranges()` also runs xeon-24, the target's old machine.
"""
from __future__ import annotations

import math
import random
from typing import Any

USERS = [100, 400, 800]
PUBLISHED = {  # seed 001 (and 16df3674efe3 for vanilla): % of %sys time in the ipc lock
    "global_lock": [8.74, 21.86, 84.35],
    "per_sem_lock": [3.17, 5.23, 7.39],
}
PUBLISHED_TPS = {"global_lock": [1257.21, 1437.57, 1236.89], "per_sem_lock": [2805.06, 2664.67, 2750.73]}
KERNELS = ["global_lock", "per_sem_lock"]
# The kernels run for the two columns. "v3 patchset" is the series as posted and merged
# in 6062a8dc0517 (3.10-rc1): its complex path takes the array lock and every
# semaphore's lock (sim/ipc/gen_lock_all.cpp), not 3.10's spin_unlock_wait() scan.
KERNEL_DOCS: dict[str, Any] = {
    "global_lock": "global_lock",
    "per_sem_lock": {"base": "per_sem_lock", "sem_lock": "lock_all"},
}

MACHINE = "westmere-ex-80"
TPS_AT_FIRST = PUBLISHED_TPS["global_lock"][0]  # 100 users, vanilla
POSTWAITS_PER_TX = 16  # assumption, range 4-64
CPU_DUTY = 0.10  # assumption, range 0.05-0.20
POST = "setval"  # how a process posts another: "setval" (semctl SETVAL, observed) or "semop"
GLOBAL_EVERY = 10  # post "semop" only: cycles per 2-sop array-lock op; assumption
SEMMSL = 250  # Oracle's documented kernel.sem minimum (250 32000 100 128)
SETS = "oracle"  # "oracle": Oracle's sizing under SEMMSL (below); "one": one set of them all
CYCLES_PER_SCRIPT = 10  # distinct I/O draws per process before its script repeats


def cycle_ns(postwaits: int = POSTWAITS_PER_TX) -> float:
    """One post/wait cycle of a user: the transaction time per user at the smallest
    user count (USERS[0] / TPS), over the post/wait cycles per transaction."""
    return 1e9 * USERS[0] / TPS_AT_FIRST / postwaits


def ring_size(duty: float = CPU_DUTY) -> int:
    return round(1 / duty)


def set_size(users: int, sets: str = SETS) -> int:
    """Semaphores per set. Oracle asks PROCESSES + 4 semaphores (ipcs: 132 for
    processes=128, 250 for 246); when that exceeds SEMMSL it makes sets of SEMMSL / 2
    (125 each for processes=247; ora1034.blogspot.com, 2013). The users' semaphores
    are the first `users` of them, in order. "one": one set of users + 4 (SEMMSL raised
    to PROCESSES + 10 or more, Red Hat's tuning guide for Oracle 9i/10g citing
    Metalink 187405.1)."""
    need = users + 4
    if sets == "one" or need <= SEMMSL:
        return need
    return SEMMSL // 2


def _work_draws(mean_ns: float, rng: random.Random) -> list[int]:
    """CYCLES_PER_SCRIPT exponential work times of mean `mean_ns`: stratified quantiles
    in a random order, scaled so that their mean is exactly `mean_ns`."""
    q = [-math.log(1.0 - (j + 0.5) / CYCLES_PER_SCRIPT) for j in range(CYCLES_PER_SCRIPT)]
    scale = mean_ns / (sum(q) / len(q))
    rng.shuffle(q)
    return [round(x * scale) for x in q]


def workload(users: int, postwaits: int = POSTWAITS_PER_TX, duty: float = CPU_DUTY,
             global_every: int = GLOBAL_EVERY, post: str = POST, sets: str = SETS) -> dict[str, Any]:
    """The custom workload of `users` Oracle processes in post/wait rings (module doc).
    Process p's semaphore is p-th of the sets (set p // size, number p % size); the
    first of each ring holds the post at the start. A wait is semop(-1) on the own
    semaphore; a post sets the next one's semaphore to 1 with semctl(SETVAL) (post
    "setval") or adds 1 with semop (post "semop", which then also does the 2-sop
    array-lock op once in `global_every` cycles)."""
    m = ring_size(duty)
    if m < 2 or users % m:
        raise ValueError(f"swingbench: users must be a multiple of the ring size {m} (1 / duty, >= 2)")
    if post not in ("setval", "semop"):
        raise ValueError(f"swingbench: post must be setval or semop, got {post}")
    size = set_size(users, sets)
    nsets = -(-(users + 4) // size)
    work_mean = duty * cycle_ns(postwaits)  # CPU per process and cycle
    scripts = []
    for p in range(users):
        ring, pos = divmod(p, m)
        nxt = ring * m + (pos + 1) % m
        my_set, me = divmod(p, size)
        nxt_set, target = divmod(nxt, size)
        rng = random.Random(1000003 * users + p)  # fixed: the same scenario every run
        work = _work_draws(work_mean, rng)
        glob_at = rng.randrange(global_every)
        ops: list[dict[str, Any]] = []
        for c in range(CYCLES_PER_SCRIPT):
            if post == "setval":
                post_op: dict[str, Any] = {"setval": [target, 1], "set": nxt_set}
            else:
                post_op = {"sops": [[target, 1]], "set": nxt_set}
            wait = {"sops": [[me, -1]], "set": my_set}
            if post == "semop" and c % global_every == glob_at:  # the 2-sop op, after being woken
                cycle_ops = [wait, {"sops": [[me, 1], [me, -1]], "set": my_set, "think_ns": work[c]}, post_op]
            else:
                cycle_ops = [dict(wait, think_ns=work[c]), post_op]
            if pos == 0:  # the ring's first posts, then waits
                cycle_ops = cycle_ops[-1:] + cycle_ops[:-1]
            ops += cycle_ops
        scripts.append({"ops": ops, "repeat": 0, "process": "own"})
    return {"type": "custom", "semaphores": size, "sets": nsets, "tasks": scripts, "pin": "unpinned"}


def window_ms(duration_ms: float, postwaits: int = POSTWAITS_PER_TX) -> tuple[float, float]:
    """(duration, warm-up) in ms: at least 8 cycles measured after 2 of warm-up (the rings
    start in phase; their work draws spread them out), whatever shorter window was asked."""
    cyc = cycle_ns(postwaits) / 1e6
    return max(duration_ms, 8 * cyc), max(duration_ms / 10, 2 * cyc)


def doc(kernel: Any, users: int, duration_ms: float, seeds: int, machine: str = MACHINE,
        postwaits: int = POSTWAITS_PER_TX, duty: float = CPU_DUTY,
        global_every: int = GLOBAL_EVERY, post: str = POST, sets: str = SETS) -> dict[str, Any]:
    duration, warmup = window_ms(duration_ms, postwaits)
    return {"name": "reproduce", "machine": machine, "kernel": kernel,
            "workload": workload(users, postwaits, duty, global_every, post, sets), "threads": users,
            "duration_ms": duration, "warmup_ms": warmup, "seed": 1, "repeats": seeds}


def scenarios(s: Any) -> list[dict[str, Any]]:
    return [doc(KERNEL_DOCS[k], u, s.duration_ms, s.seeds) for k in KERNELS for u in USERS]


def sys_share_of_spin(breakdown: dict[str, float]) -> float:
    """The published figure: % of kernel (%sys) time in the semaphore locks' spinlock
    (_raw_spin_lock). The breakdown's shares are of elapsed CPU time; user and idle
    time are outside %sys."""
    sys = sum(float(breakdown[k]) for k in ("syscall", "kernel", "spin", "context_switch"))
    return 100.0 * float(breakdown["spin"]) / max(1e-12, sys)


def contention(result: dict[str, Any]) -> float:
    return sys_share_of_spin(result["points"][0]["cpu_breakdown"])


def calls_per_cycle(post: str = POST, global_every: int = GLOBAL_EVERY) -> float:
    """The semop() calls a cycle makes (ops_total counts semop calls, not semctl): the
    wait, and with post "semop" the post and, once in `global_every` cycles, the 2-sop op."""
    return 1.0 if post == "setval" else 2 + 1 / global_every


def tps(result: dict[str, Any], postwaits: int = POSTWAITS_PER_TX, post: str = POST,
        global_every: int = GLOBAL_EVERY) -> float:
    """Transactions/s: the window's semop calls over the calls per cycle, over the
    cycles per transaction (script passes are too few in a window to count)."""
    point = result["points"][0]
    cycles = float(point["ops_total"]) / calls_per_cycle(post, global_every)
    return cycles / postwaits / max(1e-12, float(point["window_s"]))


def evaluate(results: list[dict[str, Any]]) -> tuple[list[Any], list[str]]:
    from .reproduce import Check

    n = len(USERS)
    g = [contention(r) for r in results[:n]]
    p = [contention(r) for r in results[n:]]
    checks = [
        Check("global_lock: contention grows steeply with users", "8.7 -> 21.9 -> 84.4 %",
              " -> ".join(f"{x:.1f} %" for x in g), g[0] < g[1] < g[2] and g[2] > 2 * g[0]),
        Check("per_sem_lock: contention stays low", "3.2 -> 5.2 -> 7.4 %",
              " -> ".join(f"{x:.1f} %" for x in p), max(p) < min(g[2], 0.5 * g[2])),
    ]
    rows = [f"Contention: % of %sys time in the ipc lock (_raw_spin_lock), as 16df3674efe3 defines it. "
            f"Users: one process each, post/wait rings on {MACHINE}, posts by semctl(SETVAL), "
            f"Oracle's sets of 125 semaphores above SEMMSL 250; v3 = the series as posted (lock_all); "
            f"{POSTWAITS_PER_TX} post/wait cycles per transaction and {CPU_DUTY:.0%} CPU duty are "
            "assumptions (python/semsim/reproduce_swingbench.py).", "",
            "| users | global_lock pub | pred | per_sem_lock pub | pred | TPS vanilla pub | pred "
            "| TPS v3 pub | pred | idle vanilla |", "|---|---|---|---|---|---|---|---|---|---|"]
    for i, u in enumerate(USERS):
        idle = float(results[i]["points"][0]["cpu_breakdown"]["idle"])
        rows.append(f"| {u} | {PUBLISHED['global_lock'][i]} % | {g[i]:.1f} % | "
                    f"{PUBLISHED['per_sem_lock'][i]} % | {p[i]:.1f} % | "
                    f"{PUBLISHED_TPS['global_lock'][i]:,.0f} | {tps(results[i]):,.0f} | "
                    f"{PUBLISHED_TPS['per_sem_lock'][i]:,.0f} | {tps(results[n + i]):,.0f} | {idle:.0%} |")
    return checks, rows


# The assumptions' ranges: each varied alone around the nominal. "v3" names the kernel
# run for the v3 column instead of the posted series.
RANGES: list[tuple[str, dict[str, Any]]] = [
    ("nominal", {}),
    ("4 post/waits per transaction", {"postwaits": 4}),
    ("64 post/waits per transaction", {"postwaits": 64}),
    ("CPU duty 0.05", {"duty": 0.05}),
    ("CPU duty 0.20", {"duty": 0.20}),
    ("one set of users + 4 semaphores", {"sets": "one"}),
    ("post by semop +1, 2-sop op every 10 cycles", {"post": "semop"}),
    ("v3 column: 3.10 as released (per_sem_lock)", {"v3": "per_sem_lock"}),
    ("machine xeon-24", {"machine": "xeon-24"}),
]


def _variant_docs(over: dict[str, Any], duration_ms: float, seeds: int) -> list[dict[str, Any]]:
    kw = {k: v for k, v in over.items() if k != "v3"}
    kernels = [KERNEL_DOCS["global_lock"], over.get("v3", KERNEL_DOCS["per_sem_lock"])]
    return [doc(k, u, duration_ms, seeds, **kw) for k in kernels for u in USERS]


def ranges(duration_ms: float = 20.0, seeds: int = 1, workers: int | None = None) -> list[str]:
    """The global_lock and per_sem_lock contention and TPS over each assumption's range,
    as markdown rows (not part of `semsim reproduce`: 54 runs)."""
    from .reproduce import run_all

    docs = [d for _, over in RANGES for d in _variant_docs(over, duration_ms, seeds)]
    results = run_all(docs, workers)
    n = len(KERNELS) * len(USERS)
    rows = ["| variant | global_lock 100 / 400 / 800 | per_sem_lock 100 / 400 / 800 | TPS vanilla | TPS v3 |",
            "|---|---|---|---|---|"]
    for v, (label, over) in enumerate(RANGES):
        mine = results[v * n:(v + 1) * n]
        pw = over.get("postwaits", POSTWAITS_PER_TX)
        g = " / ".join(f"{contention(r):.1f}" for r in mine[:len(USERS)])
        p = " / ".join(f"{contention(r):.1f}" for r in mine[len(USERS):])
        kw = {"postwaits": pw, "post": over.get("post", POST)}
        tg = " / ".join(f"{tps(r, **kw):,.0f}" for r in mine[:len(USERS)])
        tp = " / ".join(f"{tps(r, **kw):,.0f}" for r in mine[len(USERS):])
        rows.append(f"| {label} | {g} % | {p} % | {tg} | {tp} |")
    rows.append(f"| published | {' / '.join(str(x) for x in PUBLISHED['global_lock'])} % | "
                f"{' / '.join(str(x) for x in PUBLISHED['per_sem_lock'])} % | "
                f"{' / '.join(f'{x:,.0f}' for x in PUBLISHED_TPS['global_lock'])} | "
                f"{' / '.join(f'{x:,.0f}' for x in PUBLISHED_TPS['per_sem_lock'])} |")
    return rows
