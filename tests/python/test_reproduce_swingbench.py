"""The swingbench target's workload and figure (python/semsim/reproduce_swingbench.py)."""
from __future__ import annotations

import pytest

from semsim import reproduce_swingbench as sb
from semsim.reproduce import run_all


def _run(doc):
    return run_all([doc], workers=1)[0]


def test_the_figure_is_the_share_of_sys_time_not_of_busy_time():
    # 16df3674efe3: "the percentages of %sys time incurred in the ipc lock": user time
    # and idle are outside the denominator.
    b = {"user": 0.5, "syscall": 0.1, "kernel": 0.2, "spin": 0.1, "context_switch": 0.1, "idle": 0.0}
    assert sb.sys_share_of_spin(b) == pytest.approx(20.0)
    b["user"], b["idle"] = 0.1, 0.4  # the same kernel time, less user time: the same figure
    assert sb.sys_share_of_spin(b) == pytest.approx(20.0)


def test_every_wait_sleeps_and_is_posted_by_the_previous_process_of_its_ring():
    m = sb.ring_size()
    w = sb.workload(2 * m)
    assert len(w["tasks"]) == 2 * m and w["semaphores"] == 2 * m
    for p, script in enumerate(w["tasks"]):
        nxt = (p // m) * m + (p % m + 1) % m
        waits = [op for op in script["ops"] if op["sops"] == [[p, -1]]]
        posts = [op for op in script["ops"] if op["sops"] == [[nxt, 1]]]
        assert len(waits) == len(posts) == sb.CYCLES_PER_SCRIPT
        # Only the first of a ring starts with a post: one post goes round each ring.
        assert (script["ops"][0]["sops"] == [[nxt, 1]]) == (p % m == 0)
        # Its CPU work is the duty's share of its cycles.
        work = sum(op.get("think_ns", 0) for op in script["ops"])
        assert work == pytest.approx(sb.CPU_DUTY * sb.cycle_ns() * sb.CYCLES_PER_SCRIPT, rel=1e-3)
    assert sb.workload(2 * m) == w  # deterministic
    with pytest.raises(ValueError, match="multiple of the ring size"):
        sb.workload(m + 1)


def test_the_cycle_comes_from_the_published_tps():
    # 100 users at 1257.21 TPS: 79.5 ms per transaction and user, over 16 cycles.
    assert sb.cycle_ns(16) == pytest.approx(100 / 1257.21 / 16 * 1e9)


def _figures(users, postwaits, kernel="global_lock"):
    doc = sb.doc(kernel, users, 2.0, 1, machine="xeon-24", postwaits=postwaits)
    assert (doc["duration_ms"], doc["warmup_ms"]) == sb.window_ms(2.0, postwaits)
    r = _run(doc)
    lock = next(x for x in r["points"][0]["lockstat"] if x["name"] == "sma->sem_perm.lock")
    return sb.contention(r), lock["contended_share"]


def test_oracle_long_think_time_leaves_the_lock_uncontended_and_load_contends_it():
    # 100 users (10 rings) with a post/wait cycle every 5 ms each: some 40,000 semops/s
    # against a lock that passes ~300,000/s on xeon-24 (seed 001's plateau): almost no
    # acquisition waits (lock_stat's contended share), and the figure is what the
    # uncontended atomic costs of the semop path's kernel time. Cycles 100 times shorter
    # make the same users queue at the lock: most acquisitions wait, the figure triples.
    idle, idle_contended = _figures(100, 16)
    busy, busy_contended = _figures(100, 1600)
    assert idle_contended < 0.05 and idle < 20.0
    assert busy_contended > 0.5 and busy > 3 * idle
