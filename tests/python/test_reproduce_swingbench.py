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


def _where(p, users, sets=sb.SETS):
    size = sb.set_size(users, sets)
    return p // size, p % size


def test_every_wait_sleeps_and_is_posted_by_the_previous_process_of_its_ring():
    m = sb.ring_size()
    users = 30 * m  # 300 users: more than one set of 125
    w = sb.workload(users)
    assert len(w["tasks"]) == users and w["semaphores"] == 125 and w["sets"] == 3
    for p, script in enumerate(w["tasks"]):
        nxt = (p // m) * m + (p % m + 1) % m
        my_set, me = _where(p, users)
        nxt_set, target = _where(nxt, users)
        waits = [op for op in script["ops"] if op.get("sops") == [[me, -1]] and op["set"] == my_set]
        # Oracle posts with semctl(SETVAL, 1) (strace of a commit), not with semop +1.
        posts = [op for op in script["ops"] if op.get("setval") == [target, 1] and op["set"] == nxt_set]
        assert len(waits) == len(posts) == sb.CYCLES_PER_SCRIPT == len(script["ops"]) // 2
        # Only the first of a ring starts with a post: one post goes round each ring.
        assert ("setval" in script["ops"][0]) == (p % m == 0)
        # Its CPU work is the duty's share of its cycles.
        work = sum(op.get("think_ns", 0) for op in script["ops"])
        assert work == pytest.approx(sb.CPU_DUTY * sb.cycle_ns() * sb.CYCLES_PER_SCRIPT, rel=1e-3)
    assert sb.workload(users) == w  # deterministic
    with pytest.raises(ValueError, match="multiple of the ring size"):
        sb.workload(m + 1)
    # The older variant: semop +1 posts, and a 2-sop op on the own semaphore every 10 cycles.
    old = sb.workload(2 * m, post="semop")["tasks"][1]["ops"]
    assert sum(len(op["sops"]) == 2 for op in old) == sb.CYCLES_PER_SCRIPT // sb.GLOBAL_EVERY
    assert all("sops" in op for op in old)


def test_oracle_sizes_its_semaphore_sets_under_semmsl():
    # PROCESSES + 4 semaphores; one set while that fits SEMMSL 250, else sets of 125.
    assert [sb.set_size(u) for u in sb.USERS] == [104, 125, 125]
    assert [sb.workload(u)["sets"] for u in sb.USERS] == [1, 4, 7]
    assert sb.set_size(246) == 250 and sb.set_size(247) == 125
    assert [sb.set_size(u, "one") for u in sb.USERS] == [104, 404, 804]
    assert sb.workload(800, sets="one")["sets"] == 1


def test_the_v3_column_runs_the_series_as_posted():
    docs = sb.scenarios(type("S", (), {"duration_ms": 1.0, "seeds": 1})())
    assert [d["kernel"] for d in docs] == ["global_lock"] * 3 + [
        {"base": "per_sem_lock", "sem_lock": "lock_all"}] * 3


def test_the_cycle_comes_from_the_published_tps():
    # 100 users at 1257.21 TPS: 79.5 ms per transaction and user, over 16 cycles.
    assert sb.cycle_ns(16) == pytest.approx(100 / 1257.21 / 16 * 1e9)


def _lock(r):
    return next(x for x in r["points"][0]["lockstat"] if x["name"] == "sma->sem_perm.lock")


def _figures(users, postwaits, kernel="global_lock", post="semop"):
    doc = sb.doc(kernel, users, 2.0, 1, machine="xeon-24", postwaits=postwaits, post=post)
    assert (doc["duration_ms"], doc["warmup_ms"]) == sb.window_ms(2.0, postwaits)
    r = _run(doc)
    return sb.contention(r), _lock(r)["contended_share"]


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


def test_a_setval_post_scans_every_sleeper_of_the_set_under_the_3_9_lock():
    # 3.9's semctl(SETVAL) runs do_smart_update(sma, NULL): update_queue() over the
    # array's whole pending list, every sleeper of the set, under the array lock. So the
    # lock's hold per post grows with the sleepers in the set; a semop +1 post only
    # looks at its semaphore's list. The v3 series as posted takes every semaphore's
    # lock for the same semctl: one acquisition of each per post.
    def hold(users, post, kernel="global_lock"):
        doc = sb.doc(kernel, users, 2.0, 1, machine="xeon-24", postwaits=1600, post=post, sets="one")
        doc["duration_ms"], doc["warmup_ms"] = 1.0, 0.2
        return _run(doc)
    # (The average is over every acquisition: the waits' short ones too.)
    small, large = hold(40, "setval"), hold(200, "setval")
    assert _lock(large)["hold_avg_ns"] > 1.8 * _lock(small)["hold_avg_ns"]
    by_semop = hold(200, "semop")
    assert _lock(large)["hold_avg_ns"] > 3 * _lock(by_semop)["hold_avg_ns"]
    v3 = hold(40, "setval", {"base": "per_sem_lock", "sem_lock": "lock_all"})
    sem = next(x for x in v3["points"][0]["lockstat"] if x["name"] == "sem->lock")
    assert sem["acquisitions"] >= 44 * _lock(v3)["acquisitions"]  # 44 semaphores each
