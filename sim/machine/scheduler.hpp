// CPUs and scheduling: one running task per CPU, a FIFO run queue per CPU
// when tasks outnumber CPUs, time slices for tasks that never block (never
// while a spinlock is held), a context-switch cost when a task blocks, and a
// wakeup path that costs the waker and delays the wakee (IPI when the target
// CPU is idle), with each CPU's runqueue lock as a cache line.
//
// Costs (machine file): a context switch costs `context_switch` of CPU time
// on the switching CPU, half charged to the task going out (schedule()) and
// half to the task coming in, whether the outgoing task blocked or was
// preempted at the end of its slice. try_to_wake_up costs the waker an
// atomic on the target runqueue's lock line plus `wakeup_waker` when it
// wakes an idle CPU (the IPI, or on a VM the exit that wakes the halted
// vCPU, included), and `wakeup_waker - ipi` when it kicks no idle CPU (the
// wakee has not slept yet, or it is queued behind a running task; a model
// with ipi >= wakeup_waker charges wakeup_waker for both); a wakee
// sent to an idle CPU runs `wakeup_latency` later (IPI, idle exit and
// schedule-in are all in that figure), or when that CPU has finished
// switching out and in, if that is later; a wakee sent to a busy CPU waits in
// its run queue and pays the switch in. schedule() (block or preemption)
// takes its own runqueue lock: one atomic on that line.
//
// Where the model gives them (presets; 0 keeps the behaviour above):
//   rq_hold_wake / rq_hold_schedule: rq->lock is a spinlock of the kernel's kind
//     (machine/spinlock.hpp) held for the enqueue of a wake-up (out of
//     wakeup_waker) and for the dequeue and pick of schedule() (out of the switch
//     out's half of context_switch): wakers that target one CPU, and that CPU's own
//     schedule(), serialise by those holds;
//   ipi_target: a wake-up onto a CPU of another last-level cache goes through that
//     CPU's wake list (ttwu_queue, TTWU_QUEUE): the waker takes no rq->lock and pays
//     no enqueue, and a busy target's running task pays ipi_target (the IPI's
//     handler, which enqueues) when its work reaches the IPI's date
//     (machine/ipi_queue.hpp);
//   migration_cost / newidle_balance_cost: newidle balancing is gated as CFS gates
//     it: no pull while the CPU's avg_idle is below either, and no cache-hot task
//     (one that left a CPU less than migration_cost ago) is pulled.
//
// Placement:
//   pinned:   a task only ever runs on home_cpu;
//   unpinned: at start, the least loaded CPU (running + queued), ties to one
//             on a wholly idle core, then to the CPU nearest home_cpu, then the
//             lowest id; on wakeup (select_idle_sibling), its own CPU if idle,
//             else an idle CPU (in `idle_search_share` of the wake-ups): one of
//             its own last-level cache before any other, a wholly idle core
//             before an idle SMT sibling of a busy one (select_idle_core), the
//             nearest, the lowest id; else its own CPU's run queue, except in
//             `busy_pull_share` of the wake-ups whose own CPU is another, busy
//             one: then the waker's CPU (measured on this kind of host, where
//             partners that wake each other end up on one CPU); a CPU going idle
//             pulls the most recently queued unpinned task from the longest run
//             queue (newidle balancing; gated where the model has migration_cost).
// Simplifications (assumptions, stated not hidden): no periodic load
// balancing and no migration of a running task; wakeup preemption (when the
// model says the host does it: `wakeup_preemption`) takes effect at the
// running task's next preemption point, not at once, and never within the first
// `wakeup_protection` of a run that began with a wake-up (EEVDF's run to parity;
// a run resumed after a preemption is not protected); a migrated task pays no
// cache-refill cost; `ipi` is the share of wakeup_waker that kicking an idle CPU
// costs the waker, `resched_ipi` what preempting the task of a busy remote CPU
// costs it (the reschedule IPI; 0 in models without that probe). A wake-up that
// kicks an idle CPU costs the mean of its probe, or, where the model has
// `wakeup_jitter`, the mean times a draw from the probe's measured spread (the
// waker's cost and the wakee's latency drawn apart): a real hand-off is never twice
// the same, and constant costs can lock the simulated tasks into a phase that the
// real ones drift out of.
//
// CPU time: every charge a task makes while a CPU is its own is also
// accounted to that CPU, by function; cpu_breakdown() folds it into
// user / syscall / kernel / spin / context switch and idle.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "core/rng.hpp"
#include "machine/cache_line.hpp"
#include "machine/ipi_queue.hpp"
#include "machine/smt.hpp"
#include "machine/spinlock.hpp"
#include "machine/task.hpp"
#include "machine/topology.hpp"

namespace semsim::machine {

struct CpuState {
  Task* current = nullptr;
  std::deque<Task*> runqueue;
  Tick free_at = 0;               // when the CPU became (or becomes) idle
  bool resched = false;           // need_resched: a wakee preempts `current` at its next safe point
  std::int64_t switch_ins = 0;    // tasks switched in here so far (reuse distances)
  int last_process = -1;          // the process of the task last switched in here
  FuncTimes time{};               // CPU time of what ran here, by function
  CacheLine rq_lock;              // this CPU's rq->lock (its line; a spinlock on it: rq_hold_*)
  IpiQueue ipis;                  // cross-LLC wake-up IPIs its running task has still to handle
  Tick avg_idle = 0;              // CFS rq->avg_idle (migration_cost > 0)
  Tick idle_stamp = -1;           // when it went idle without pulling (-1: not idle since)
  std::optional<CpuNoise> noise;  // its interruptions, where the model has OS noise
};

class Scheduler {
 public:
  // `seed` drives the scheduler's random choices: the idle-CPU search
  // (idle_search_share), the pull to the waker's CPU (busy_pull_share) and, on
  // streams of their own, the wake-up costs (wakeup_jitter) and each CPU's
  // interruptions (os_noise).
  // `rq_lock` is the kind of spinlock each rq->lock is (the kernel's), where the
  // model holds it (rq_hold_wake, rq_hold_schedule).
  explicit Scheduler(const Topology& topo, std::uint64_t seed = 1,
                     LockKind rq_lock = LockKind::Queued);

  // First placement: runs now, or waits in the run queue. The caller is the
  // task's own actor.
  void start(Task& task);
  // How many tasks the run has (each calls start() once): until every one has
  // started, and without this call, no CPU counts as its task's alone.
  void expect_tasks(int n) { expected_ = n; }
  // A preemption point (no spinlock held): yields the CPU if another task is
  // waiting for it and either the slice is used up or a wake-up asked for it
  // (wakeup_preemption). A task alone on its CPU (alone_on()) passes it without
  // a turn: nothing another task does can queue a task there, so there is
  // nothing to read at its date.
  void maybe_preempt(Task& task);
  // Is `cpu` the home of exactly one task, pinned, with every task started and
  // none unpinned? Then only that task ever runs there, its run queue stays
  // empty, and no wake-up marks it for preemption or posts it an IPI.
  bool alone_on(int cpu) const {
    return started_ == expected_ && unpinned_tasks_ == 0 &&
           pinned_on_[static_cast<std::size_t>(cpu)] == 1;
  }
  // The task blocks (schedule() from a sleeping semop); returns when it has
  // been woken and runs again, with its cursor at that date. If it was woken
  // before it got here (it was still running), returns at once.
  void block(Task& task);
  // wake_up_process(wakee) executed by `waker` at its cursor.
  void wake(Task& waker, Task& wakee);
  // The task's body returns: give the CPU to the next one.
  void exit(Task& task);

  const CpuState& cpu(int c) const { return cpus_[static_cast<std::size_t>(c)]; }
  // CPU c's rq->lock as a spinlock (used where the model gives it a hold time).
  const Spinlock& rq_spinlock(int c) const { return rq_locks_[static_cast<std::size_t>(c)]; }
  int cpus() const { return static_cast<int>(cpus_.size()); }
  // CPU c's time by category over `elapsed` (idle = elapsed - busy).
  CpuBreakdown cpu_breakdown(int c, Tick elapsed) const {
    return breakdown_of(cpu(c).time, elapsed);
  }

 private:
  CpuState& state(int c) { return cpus_[static_cast<std::size_t>(c)]; }
  // Give `cpu` to the next queued task from date t, or leave it idle.
  // `now`: the caller's date when it is earlier than t (block(): the CPU is still
  // switching the sleeper out until t); -1: t.
  void dispatch_next(int cpu, Tick t, Tick now = -1);
  // Put `task` on `cpu` as its current task.
  void run_on(Task& task, int cpu);
  // Every change of a CPU's current task or run queue goes through these, which keep
  // the idle set and the queue counts below in step with it.
  void set_current(int cpu, Task* task);
  void push_runnable(int cpu, Task& task);
  Task* pop_runnable(int cpu);
  // schedule() on the way out: the runqueue lock and half a context switch.
  // schedule()'s rq->lock section (the hold); returns the rest of the switch-out.
  Tick rq_section(Task& task);
  void switch_out(Task& task);
  // The task switches in on `cpu`: the cache refill its reuse distance there costs
  // (switch_refill_ns, or switch_refill_process_ns when the CPU last ran another
  // process's task; 0 on its first run anywhere, the table's last value on a CPU it
  // never ran on), and the count that the next distance is measured from.
  Tick switch_in_refill(Task& task, int cpu);
  // Where a new unpinned task starts: the least loaded CPU; among those, one on a
  // wholly idle core (select_idle_core(): CFS puts a new or woken task on an idle
  // core before an idle SMT sibling of a busy one), then the nearest to its home.
  int place_new(const Task& task) const;
  // Where a woken unpinned task runs (select_idle_sibling()): see the header, Placement.
  int pick_cpu_for_wakeup(const Task& waker, const Task& wakee);
  void pull_for_idle(int cpu, Tick t);
  // CFS's newidle gates (migration_cost > 0): may `cpu` balance at t, may it take `task`.
  bool newidle_allowed(const CpuState& c) const;
  bool cache_hot(const Task& task, Tick t) const;
  // A wake-up lands on `c`: the idle period it ends enters avg_idle (ttwu_do_wakeup).
  void end_idle_period(CpuState& c, Tick t);
  // Take / release `cpu`'s rq->lock for `task` at its cursor, holding it `hold`
  // (0: the old single atomic on the line, nothing held).
  void rq_lock(Task& task, int cpu, Tick hold);
  void rq_unlock(Task& task, int cpu, Tick hold);
  // `mean` scaled by one draw from `shape` (multiples of the mean; empty: `mean`).
  Tick jittered(Tick mean, const std::vector<double>& shape);
  const Topology& topo_;
  std::vector<CpuState> cpus_;
  std::deque<Spinlock> rq_locks_;  // on cpus_[c].rq_lock (a deque: a Spinlock does not move)
  SmtCores smt_;                   // which CPUs are busy when, for their siblings' work
  // Derived state, for speed only (the choices are those of a scan over every CPU): the
  // idle CPUs (current == nullptr) one bit each, so the wake-up's idle search visits only
  // them, in id order; and per CPU how many queued tasks are unpinned (and in all), so
  // newidle balancing skips a queue with none without looking at its tasks, and the
  // whole scan when no other queue has one.
  std::vector<std::uint64_t> idle_;
  std::vector<std::uint32_t> unpinned_;
  std::uint64_t unpinned_total_ = 0;
  std::vector<std::uint16_t> core_running_;  // per core: its CPUs with a current task
  // For alone_on(): tasks started, tasks expected (-1: not said), pinned tasks
  // per home CPU and unpinned tasks, as start() found them.
  int started_ = 0, expected_ = -1, unpinned_tasks_ = 0;
  std::vector<int> pinned_on_;
  Rng rng_;
  Rng jitter_rng_;
};

}  // namespace semsim::machine
