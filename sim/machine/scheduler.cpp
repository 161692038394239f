#include "machine/scheduler.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <string>
#include <tuple>

namespace semsim::machine {

namespace {
// Rng::derive() stream ids: 1 is the wake-up jitter; CPU c's noise is this + c.
constexpr std::uint64_t kNoiseStreams = 16;
// CPU c's rq->lock spinlock (its ticket hand-off order) draws from this + c.
constexpr std::uint64_t kRqLockStreams = std::uint64_t{1} << 32;
}  // namespace

Scheduler::Scheduler(const Topology& topo, std::uint64_t seed, LockKind rq_lock)
    : topo_(topo),
      cpus_(static_cast<std::size_t>(topo.cpus())),
      smt_(topo),
      idle_((cpus_.size() + 63) / 64, 0),
      unpinned_(cpus_.size(), 0),
      core_running_(static_cast<std::size_t>(topo.coords(topo.cpus() - 1).core) + 1, 0),
      pinned_on_(cpus_.size(), 0),
      rng_(seed),
      jitter_rng_(Rng::derive(seed, 1)) {
  const auto& p = topo.params();
  for (int c = 0; c < cpus(); ++c) set_current(c, nullptr);  // every CPU starts idle
  for (int c = 0; c < cpus(); ++c) {
    state(c).rq_lock.set_name("rq->lock cpu" + std::to_string(c));
    if (p.noise_per_s > 0 && !p.noise_durations.empty())
      state(c).noise.emplace(p.noise_per_s, p.noise_durations,
                             Rng::derive(seed, kNoiseStreams + static_cast<std::uint64_t>(c)));
    // CFS starts every rq's avg_idle at 2 x sysctl_sched_migration_cost (sched_init).
    state(c).avg_idle = 2 * p.migration_cost;
  }
  for (int c = 0; c < cpus(); ++c)
    rq_locks_.emplace_back(
        rq_lock, &state(c).rq_lock,
        Rng::derive(seed, kRqLockStreams + static_cast<std::uint64_t>(c)).next());
}

void Scheduler::rq_lock(Task& task, int cpu, Tick hold) {
  if (hold <= 0) {
    // One atomic on the lock's line (it drains the store buffer); nobody is
    // modelled holding it.
    rmw(topo_, task, state(cpu).rq_lock);
    return;
  }
  // Its wait may be owed (Settle::AtIssue): nothing is read under the lock before
  // the hold's charge takes the turn. The release is not: what follows it reads
  // the tasks' states, which wakers read before they take the lock.
  rq_locks_[static_cast<std::size_t>(cpu)].lock(topo_, task, Settle::AtIssue);
  task.charge(hold);
}

void Scheduler::rq_unlock(Task& task, int cpu, Tick hold) {
  if (hold > 0) rq_locks_[static_cast<std::size_t>(cpu)].unlock(topo_, task);
}

bool Scheduler::newidle_allowed(const CpuState& c) const {
  const auto& p = topo_.params();
  if (p.migration_cost <= 0) return true;
  // idle_balance(): "will wake up very soon" (2.6.35 rate limit), and the pass would
  // cost more than the idle time it fills (3.13's max_newidle_lb_cost).
  return c.avg_idle >= p.migration_cost && c.avg_idle >= p.newidle_balance_cost;
}

bool Scheduler::cache_hot(const Task& task, Tick t) const {
  // task_hot(): it left a CPU less than sysctl_sched_migration_cost ago. A task that
  // never ran has no exec_start: cold.
  const Tick cost = topo_.params().migration_cost;
  return cost > 0 && task.last_ran >= 0 && t - task.last_ran < cost;
}

void Scheduler::end_idle_period(CpuState& c, Tick t) {
  const auto& p = topo_.params();
  if (p.migration_cost <= 0 || c.idle_stamp < 0) return;
  // update_avg(): avg += (sample - avg) / 8, capped at 2 x max_idle_balance_cost
  // (which never falls below the migration cost).
  const Tick sample = std::max<Tick>(0, t - c.idle_stamp);
  c.avg_idle += (sample - c.avg_idle) / 8;
  c.avg_idle = std::min(c.avg_idle, 2 * std::max(p.migration_cost, p.newidle_balance_cost));
  c.idle_stamp = -1;
}

void Scheduler::set_current(int cpu, Task* task) {
  Task*& current = state(cpu).current;
  auto& running = core_running_[static_cast<std::size_t>(topo_.coords(cpu).core)];
  if (current == nullptr && task != nullptr) ++running;
  if (current != nullptr && task == nullptr) --running;
  current = task;
  smt_.set_task(cpu, task);
  const auto c = static_cast<std::size_t>(cpu);
  const std::uint64_t bit = std::uint64_t{1} << (c % 64);
  if (task == nullptr)
    idle_[c / 64] |= bit;
  else
    idle_[c / 64] &= ~bit;
}

void Scheduler::push_runnable(int cpu, Task& task) {
  const auto c = static_cast<std::size_t>(cpu);
  cpus_[c].runqueue.push_back(&task);
  if (!task.pinned) ++unpinned_[c], ++unpinned_total_;
}

Task* Scheduler::pop_runnable(int cpu) {
  const auto c = static_cast<std::size_t>(cpu);
  Task* task = cpus_[c].runqueue.front();
  cpus_[c].runqueue.pop_front();
  if (!task->pinned) --unpinned_[c], --unpinned_total_;
  return task;
}

void Scheduler::run_on(Task& task, int cpu) {
  auto& c = state(cpu);
  set_current(cpu, &task);
  if (task.cpu != cpu && task.state != TaskState::New) ++task.migrations;
  task.cpu = cpu;
  task.cpu_time = &c.time;
  task.noise = c.noise ? &*c.noise : nullptr;
  task.ipis = &c.ipis;
  task.smt = smt_.active() ? &smt_ : nullptr;
  task.state = TaskState::Running;
}

int Scheduler::place_new(const Task& task) const {
  const auto load = [&](int c) {
    const auto& s = cpu(c);
    return s.runqueue.size() + (s.current != nullptr ? 1 : 0);
  };
  // Busy cores: a CPU whose core has a loaded hardware thread is not on an idle core.
  std::vector<char> core_busy(static_cast<std::size_t>(cpus()), 0);
  for (int c = 0; c < cpus(); ++c)
    if (load(c) > 0) core_busy[static_cast<std::size_t>(topo_.coords(c).core)] = 1;
  int best = -1;
  std::size_t best_load = 0;
  char best_busy = 0;
  for (int c = 0; c < cpus(); ++c) {
    const std::size_t l = load(c);
    const char busy = core_busy[static_cast<std::size_t>(topo_.coords(c).core)];
    if (best < 0 || l < best_load || (l == best_load && busy < best_busy) ||
        (l == best_load && busy == best_busy &&
         topo_.transfer(task.home_cpu, c) < topo_.transfer(task.home_cpu, best))) {
      best = c;
      best_load = l;
      best_busy = busy;
    }
  }
  return best;
}

Tick Scheduler::switch_in_refill(Task& task, int cpu) {
  auto& c = state(cpu);
  // A switch to another process's task changes the address space as well.
  const bool mm_switch = c.last_process >= 0 && c.last_process != task.process;
  c.last_process = task.process;
  const auto& p = topo_.params();
  const auto& table =
      mm_switch && !p.switch_refill_process.empty() ? p.switch_refill_process : p.switch_refill;
  auto& seen = task.last_switch_in;
  const bool first_run = seen.empty();
  if (first_run) seen.assign(static_cast<std::size_t>(cpus()), -1);
  const std::int64_t last = seen[static_cast<std::size_t>(cpu)];
  seen[static_cast<std::size_t>(cpu)] = c.switch_ins++;
  if (table.empty() || first_run) return 0;
  if (last < 0) return table.back().second;            // its state is on another CPU
  const std::int64_t d = c.switch_ins - 1 - last - 1;  // switch-ins of others since
  if (d <= table.front().first)  // linear from 0 at distance 0 (distances are >= 1)
    return table.front().second * std::max<std::int64_t>(d, 0) / table.front().first;
  for (std::size_t i = 1; i < table.size(); ++i) {
    const auto [d1, e1] = table[i];
    if (d > d1) continue;
    const auto [d0, e0] = table[i - 1];
    // Linear in log2(distance) between the probed ring sizes.
    const double f = (std::log2(static_cast<double>(d)) - std::log2(static_cast<double>(d0))) /
                     (std::log2(static_cast<double>(d1)) - std::log2(static_cast<double>(d0)));
    return e0 + static_cast<Tick>(f * static_cast<double>(e1 - e0));
  }
  return table.back().second;
}

void Scheduler::start(Task& task) {
  task.pay_turn();
  ++started_;
  if (task.pinned)
    ++pinned_on_[static_cast<std::size_t>(task.home_cpu)];
  else
    ++unpinned_tasks_;
  const int target = task.pinned ? task.home_cpu : place_new(task);
  auto& c = state(target);
  if (c.current == nullptr) {
    run_on(task, target);
    switch_in_refill(task, target);  // its first run: only starts the count
    const Tick now = task.cursor;    // the CPU may still be switching a sleeper out
    task.idle_until(c.free_at);
    smt_.set_busy(target, true, task.cursor, now);
    task.slice_start = task.cursor;
    return;
  }
  task.cpu = target;
  task.state = TaskState::Runnable;
  push_runnable(target, task);
  if (task.trace != nullptr) task.trace->runqueues(*this, task.cursor);
  task.park();  // dispatch_next() sets our cursor and unparks us
}

void Scheduler::pull_for_idle(int cpu, Tick t) {
  // idle_balance() stamps the CPU idle whether or not it then pulls.
  if (topo_.params().migration_cost > 0) state(cpu).idle_stamp = t;
  if (!newidle_allowed(this->cpu(cpu))) return;
  // No other queue holds an unpinned task (every pinned workload): nothing to pull.
  if (unpinned_total_ == unpinned_[static_cast<std::size_t>(cpu)]) return;
  const auto movable = [&](const Task* task) { return !task->pinned && !cache_hot(*task, t); };
  // Without a migration cost no task is cache-hot: a queue has a movable task iff it
  // has an unpinned one, and the queues' tasks need not be looked at.
  const bool any_unpinned_moves = topo_.params().migration_cost <= 0;
  int from = -1;
  std::size_t longest = 0;
  for (int c = 0; c < cpus(); ++c) {
    const auto& q = this->cpu(c).runqueue;
    // A queue with no unpinned task has nothing movable; one shorter than the longest so
    // far cannot be taken: neither needs a look at its tasks.
    if (c == cpu || unpinned_[static_cast<std::size_t>(c)] == 0 ||
        (from >= 0 && q.size() < longest))
      continue;
    if (!any_unpinned_moves && std::none_of(q.begin(), q.end(), movable)) continue;
    if (from < 0 || q.size() > longest || topo_.transfer(cpu, c) < topo_.transfer(cpu, from)) {
      from = c;
      longest = q.size();
    }
  }
  if (from < 0) return;
  auto& q = state(from).runqueue;
  for (auto it = q.rbegin(); it != q.rend(); ++it) {
    if (!movable(*it)) continue;
    Task* pulled = *it;
    q.erase(std::next(it).base());
    --unpinned_[static_cast<std::size_t>(from)], --unpinned_total_;
    push_runnable(cpu, *pulled);
    state(cpu).idle_stamp = -1;  // pulled: not idle after all
    return;
  }
}

void Scheduler::dispatch_next(int cpu, Tick t, Tick now) {
  auto& c = state(cpu);
  set_current(cpu, nullptr);
  c.resched = false;
  if (c.runqueue.empty()) pull_for_idle(cpu, t);
  if (c.runqueue.empty()) {
    c.free_at = t;
    c.ipis.drop();  // its idle loop handles what is left
    smt_.set_busy(cpu, false, t, now < 0 ? t : now);
    return;
  }
  Task* next = pop_runnable(cpu);
  if (next->trace != nullptr) next->trace->runqueues(*this, t);
  run_on(*next, cpu);
  next->idle_until(t);
  // Run to parity: a woken task is picked with a fresh slice it may use up before a
  // wake-up takes the CPU; a task resumed after a preemption has no such protection.
  next->protected_until = next->woken ? next->cursor + topo_.params().wakeup_protection : 0;
  next->woken = false;
  {
    InFunc in(*next, Func::Schedule);
    const Tick cs = topo_.params().context_switch;
    next->charge(cs - cs / 2);  // switching the new task in
    next->charge(switch_in_refill(*next, cpu));
  }
  next->slice_start = next->cursor;
  next->resume_at_cursor();
}

Tick Scheduler::rq_section(Task& task) {
  // The dequeue and pick under the CPU's own rq->lock, the rest of the switch out after.
  const auto& p = topo_.params();
  const Tick half = p.context_switch / 2;
  const Tick hold = std::min(p.rq_hold_schedule, half);
  rq_lock(task, task.cpu, hold);
  rq_unlock(task, task.cpu, hold);
  return half - hold;
}

void Scheduler::switch_out(Task& task) {
  InFunc in(task, Func::Schedule);
  task.charge(rq_section(task));
  task.last_ran = task.cursor;
}

void Scheduler::maybe_preempt(Task& task) {
  // Not in reference mode, which takes every turn: the equivalence tests hold
  // this shortcut to the strict order. With SMT, a run goes on past the point only
  // where the turn would not have re-dated it (SmtCores::settled_through()): the
  // rest of it is then dated from the same history as after that turn.
  if (alone_on(task.cpu) && task.actor != nullptr && !task.actor->reference_order() &&
      (task.smt == nullptr || !task.turn_owed() ||
       task.smt->settled_through(task.cpu, task.cursor)))
    return;
  task.pay_turn();
  if (task.lock_depth > 0) return;
  auto& c = state(task.cpu);
  if (c.runqueue.empty()) return;
  if (!c.resched && task.cursor - task.slice_start < topo_.params().time_slice) return;
  ++task.involuntary_switches;
  switch_out(task);
  task.state = TaskState::Runnable;
  push_runnable(task.cpu, task);
  if (task.trace != nullptr) task.trace->runqueues(*this, task.cursor);
  dispatch_next(task.cpu, task.cursor);
  task.park();
}

void Scheduler::block(Task& task) {
  task.pay_turn();
  if (task.wake_pending) {
    // Woken between deciding to sleep and schedule(): it stays runnable.
    task.wake_pending = false;
    return;
  }
  ++task.voluntary_switches;
  InFunc in(task, Func::Schedule);
  const int cpu = task.cpu;
  // __schedule() dequeues the sleeper (deactivate_task) and picks the next task
  // under its CPU's rq->lock, then switches: a wake-up that came before the end of
  // that section found it still on the run queue (ttwu_runnable(): TASK_RUNNING
  // again, no IPI); one after it is a real wake-up, even while this CPU is still
  // switching out. (The kernel's window closes at the dequeue, early in the hold:
  // modelled as the whole hold, zero on models without one.)
  const Tick out = rq_section(task);
  if (task.wake_pending) {
    // schedule() finds it TASK_RUNNING again and picks it back.
    task.wake_pending = false;
    task.charge(out);
    task.last_ran = task.cursor;
    return;
  }
  task.state = TaskState::Blocked;
  // The rest of the switch-out runs on this CPU after the sleeper left its run
  // queue: its CPU time without moving its cursor (a waker dates it from now on),
  // and the CPU is free once it is done.
  const Tick done = task.cursor + out;
  task.switched_out_at = done;
  task.last_ran = done;
  task.record(Func::Schedule, out);
  dispatch_next(cpu, done, task.cursor);  // busy (switching out) until done
  task.park();                            // wake() + dispatch set our cursor and unpark us
}

int Scheduler::pick_cpu_for_wakeup(const Task& waker, const Task& wakee) {
  if (wakee.pinned) return wakee.home_cpu;
  // select_idle_sibling(): stay where we ran if that CPU is idle; else an idle CPU,
  // searched in the last-level cache we ran in first, and there a wholly idle core
  // before an idle SMT sibling of a busy one (select_idle_core() before
  // select_idle_cpu(); 3.10's search of the LLC's groups did the same); nearest
  // first, then the lowest id. An idle CPU beyond the LLC (which CFS reaches only
  // through wake_affine or the idle balancer, neither modelled) comes last, by the
  // same order; else the wakee goes back to its own CPU's queue.
  if (cpu(wakee.cpu).current == nullptr) return wakee.cpu;
  const int llc = topo_.coords(wakee.cpu).die;
  int best = -1;
  std::tuple<bool, bool, Tick> best_key{};
  for (std::size_t w = 0; w < idle_.size(); ++w)  // the idle CPUs in id order
    for (std::uint64_t bits = idle_[w]; bits != 0; bits &= bits - 1) {
      const int c = static_cast<int>(w * 64 + static_cast<std::size_t>(std::countr_zero(bits)));
      const auto& at = topo_.coords(c);
      const std::tuple<bool, bool, Tick> key{at.die != llc,
                                             core_running_[static_cast<std::size_t>(at.core)] > 0,
                                             topo_.transfer(wakee.cpu, c)};
      if (best < 0 || key < best_key) best = c, best_key = key;
    }
  if (best >= 0) {
    // The search is not always made (SIS_UTIL): then the wakee queues where it ran.
    const double share = topo_.params().idle_search_share;
    if (share >= 1.0 || rng_.uniform() < share) return best;
  }
  // No idle CPU taken: the wakee queues where it ran, or, in a share of the wake-ups
  // whose previous CPU is another busy one, on the waker's CPU (busy_pull_share).
  const double pull = topo_.params().busy_pull_share;
  if (pull > 0 && waker.cpu != wakee.cpu && cpu(wakee.cpu).current != nullptr &&
      rng_.uniform() < pull)
    return waker.cpu;
  return wakee.cpu;
}

Tick Scheduler::jittered(Tick mean, const std::vector<double>& shape) {
  if (shape.empty()) return mean;
  const double f = shape[static_cast<std::size_t>(jitter_rng_.below(shape.size()))];
  return static_cast<Tick>(std::llround(static_cast<double>(mean) * f));
}

void Scheduler::wake(Task& waker, Task& wakee) {
  waker.pay_turn();
  const auto& p = topo_.params();
  InFunc in(waker, Func::Wakeup);
  // wakeup_waker is try_to_wake_up() that kicks an idle CPU, the IPI (on a VM:
  // the exit that wakes the halted vCPU) included; `ipi` is that kick's share.
  // A wake-up that kicks no idle CPU (the wakee is still running, or it is
  // queued behind a running task) costs the rest. A model whose ipi is not
  // below wakeup_waker does not give ipi as that share (hand-written models
  // that predate it): there every wake-up costs wakeup_waker.
  const Tick no_kick = p.ipi < p.wakeup_waker ? p.wakeup_waker - p.ipi : p.wakeup_waker;
  if (wakee.state != TaskState::Blocked) {
    // try_to_wake_up() finds it TASK_RUNNING: it has not reached schedule() yet.
    // Marked before the waker's cost is charged: the wakee may block meanwhile.
    if (wakee.state == TaskState::Running) wakee.wake_pending = true;
    waker.charge(no_kick);
    return;
  }
  const int target = pick_cpu_for_wakeup(waker, wakee);
  auto& c = state(target);
  // ttwu_queue() (Linux 3.5+): to a CPU of another last-level cache the waker only
  // puts the wakee on that CPU's wake list (an atomic on its run queue) and sends an
  // IPI, whose handler enqueues it there under the target's own rq->lock; within one
  // cache the waker takes the target's rq->lock and enqueues it itself (the hold).
  const bool remote_queue = p.ipi_target > 0 && target != waker.cpu &&
                            topo_.coords(target).die != topo_.coords(waker.cpu).die;
  const Tick enqueue = std::min(p.rq_hold_wake, no_kick);
  // A timer's wake-up (a calendar callback: no task of its own, so it cannot
  // wait) takes the lock with one atomic at its date and is not modelled as
  // holding it: a hold would be a request dated after the clock (assumption:
  // the interrupt-context enqueue never waits for the lock).
  const bool in_interrupt = waker.actor == nullptr;
  const Tick hold = remote_queue || in_interrupt ? 0 : enqueue;
  rq_lock(waker, target, hold);
  rq_unlock(waker, target, hold);
  if (wakee.state != TaskState::Blocked) {
    // Another waker got it while this one waited for the lock.
    waker.charge(no_kick - hold);
    return;
  }
  const bool kick = c.current == nullptr && target != waker.cpu;
  ++(target == waker.cpu ? waker.wakes_same_cpu
                         : (kick ? waker.wakes_remote_idle : waker.wakes_remote_busy));
  if (waker.trace != nullptr) waker.trace->wake(waker, wakee, waker.cursor);
  // The enqueue was paid under the lock, or falls to the target's IPI handler.
  const Tick cost = kick ? jittered(p.wakeup_waker, p.wakeup_jitter_waker) : no_kick;
  waker.charge(std::max<Tick>(0, cost - (p.rq_hold_wake > 0 ? enqueue : 0)));
  end_idle_period(c, waker.cursor);
  if (c.current == nullptr) {
    // Idle target: an IPI (or the idle loop's polling) then the switch in,
    // all in wakeup_latency; a CPU still switching out finishes that first.
    run_on(wakee, target);
    const Tick cs = p.context_switch;
    // (An idle target is never the waker's CPU, where the waker runs: this is a kick.)
    const Tick latency = jittered(p.wakeup_latency, p.wakeup_jitter_wakee);
    wakee.idle_until(
        std::max({waker.cursor + latency, c.free_at + (cs - cs / 2), wakee.switched_out_at}));
    smt_.set_busy(target, true, wakee.cursor, waker.cursor);  // busy once it runs there
    {
      InFunc refill(wakee, Func::Schedule);
      wakee.charge(switch_in_refill(wakee, target));
    }
    wakee.slice_start = wakee.cursor;
    wakee.protected_until = wakee.cursor + p.wakeup_protection;
    wakee.resume_at_cursor();
    return;
  }
  if (wakee.cpu != target) ++wakee.migrations;
  wakee.cpu = target;
  wakee.state = TaskState::Runnable;
  wakee.woken = true;
  push_runnable(target, wakee);
  if (waker.trace != nullptr) waker.trace->runqueues(*this, waker.cursor);
  // Across caches the busy target's running task takes the IPI and does the enqueue.
  if (remote_queue) c.ipis.post(waker.cursor, p.ipi_target);
  // check_preempt_wakeup(): a woken task (it slept, so its lag is not negative)
  // preempts the running one when it next leaves the kernel or takes an
  // interrupt; modelled as its next preemption point. Not while the running task
  // is within its protected slice (run to parity). On a remote CPU, setting
  // need_resched sends the reschedule IPI, which the waker pays (once: a CPU
  // already marked is not sent another).
  if (p.wakeup_preemption && c.current->protected_until <= waker.cursor) {
    if (!c.resched && target != waker.cpu) waker.charge(p.resched_ipi);
    c.resched = true;
  }
  // The wakee's cursor is set by dispatch_next when its turn comes; it must
  // not start before it was woken.
  wakee.idle_until(std::max(waker.cursor, wakee.switched_out_at));
}

void Scheduler::exit(Task& task) {
  task.pay_turn();
  task.state = TaskState::Exited;
  if (cpu(task.cpu).current == &task) dispatch_next(task.cpu, task.cursor);
  task.cpu_time = nullptr;
  task.smt = nullptr;
}

}  // namespace semsim::machine
