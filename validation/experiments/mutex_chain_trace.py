"""Classes the hand-offs of a mutex_chain_trace.c trace: the wakee's previous CPU (where it
called lock) against the waker's (where the releaser called unlock) and where the wakee ran,
split by whether another thread was between its unlock call and return on the waker's CPU
(a thread the wakee had preempted: the waker not alone)."""

import sys
from collections import Counter


def main(path: str) -> None:
    events = []
    with open(path) as f:
        for line in f:
            t, task, cpu, what = line.split()
            events.append((int(t), int(task), int(cpu), what))
    state = {}  # task -> (last event, its cpu)
    lock_call = {}  # task -> (cpu, ns) of its last lock call
    last_unlock = None  # (task, cpu, others) of the latest unlock call
    counts = Counter()
    for t, task, cpu, what in events:
        if what == "U":
            others = sum(1 for j, (w, c) in state.items() if j != task and c == cpu and w == "U")
            last_unlock = (task, cpu, others)
        if what == "G" and task in lock_call and t - lock_call[task][1] > 400 and last_unlock:
            prev = lock_call[task][0]
            _, waker_cpu, others = last_unlock
            alone = "waker alone" if others == 0 else "waker not alone"
            if prev != waker_cpu:
                kind = "prev other, " + ("pulled" if cpu == waker_cpu else "kicked to prev")
            else:
                kind = "prev=waker's, " + ("stayed" if cpu == waker_cpu else "moved to idle")
            counts[(alone, kind)] += 1
        if what == "L":
            lock_call[task] = (cpu, t)
        state[task] = (what, cpu)
    for alone in ("waker alone", "waker not alone"):
        sub = {k[1]: v for k, v in counts.items() if k[0] == alone}
        total = sum(sub.values())
        shares = {k: f"{v / total:.2f}" for k, v in sorted(sub.items())} if total else {}
        print(alone, total, shares)


if __name__ == "__main__":
    main(sys.argv[1])
