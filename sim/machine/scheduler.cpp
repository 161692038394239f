#include "machine/scheduler.hpp"

#include <algorithm>

namespace semsim::machine {

Scheduler::Scheduler(const Topology& topo) : topo_(topo), cpus_(static_cast<std::size_t>(topo.cpus())) {}

void Scheduler::start(Task& task) {
  auto& c = cpus_[static_cast<std::size_t>(task.cpu)];
  if (c.current == nullptr) {
    c.current = &task;
    task.slice_start = task.cursor;
    return;
  }
  c.runqueue.push_back(&task);
  task.actor->park();  // dispatch_next() sets our cursor and unparks us
}

void Scheduler::dispatch_next(int cpu, Tick t) {
  auto& c = cpus_[static_cast<std::size_t>(cpu)];
  c.current = nullptr;
  if (c.runqueue.empty()) {
    c.free_at = t;
    return;
  }
  Task* next = c.runqueue.front();
  c.runqueue.pop_front();
  c.current = next;
  next->cpu = cpu;
  next->idle_until(t);
  {
    InFunc in(*next, Func::Schedule);
    next->charge(topo_.params().context_switch);  // switching the new task in
  }
  next->slice_start = next->cursor;
  next->actor->unpark_at(next->cursor);
}

void Scheduler::maybe_preempt(Task& task) {
  if (task.lock_depth > 0) return;
  auto& c = cpus_[static_cast<std::size_t>(task.cpu)];
  if (c.runqueue.empty() || task.cursor - task.slice_start < topo_.params().time_slice) return;
  ++task.involuntary_switches;
  c.runqueue.push_back(&task);
  dispatch_next(task.cpu, task.cursor);
  task.actor->park();
}

void Scheduler::block(Task& task) {
  ++task.voluntary_switches;
  {
    InFunc in(task, Func::Schedule);
    task.charge(topo_.params().context_switch / 2);  // schedule() on the way out
  }
  dispatch_next(task.cpu, task.cursor);
  task.actor->park();  // wake() + dispatch set our cursor and unpark us
}

int Scheduler::pick_cpu_for_wakeup(const Task& wakee) const {
  if (wakee.pinned) return wakee.home_cpu;
  // select_idle_sibling() in spirit: stay where we ran if that CPU is idle,
  // else take the nearest idle CPU, else go back to our own CPU's queue.
  const auto& own = cpus_[static_cast<std::size_t>(wakee.cpu)];
  if (own.current == nullptr) return wakee.cpu;
  int best = -1;
  for (int c = 0; c < cpus(); ++c) {
    if (cpus_[static_cast<std::size_t>(c)].current != nullptr) continue;
    if (best < 0 || topo_.transfer(wakee.cpu, c) < topo_.transfer(wakee.cpu, best)) best = c;
  }
  return best >= 0 ? best : wakee.cpu;
}

void Scheduler::wake(Task& waker, Task& wakee) {
  const auto& p = topo_.params();
  {
    InFunc in(waker, Func::Wakeup);
    waker.charge(p.wakeup_waker);
  }
  int cpu = pick_cpu_for_wakeup(wakee);
  auto& c = cpus_[static_cast<std::size_t>(cpu)];
  wakee.cpu = cpu;
  if (c.current == nullptr) {
    // Idle target: an IPI (or the idle loop's polling) then the switch in.
    c.current = &wakee;
    wakee.idle_until(std::max(waker.cursor + p.wakeup_latency, c.free_at + p.context_switch));
    wakee.slice_start = wakee.cursor;
    wakee.actor->unpark_at(wakee.cursor);
    return;
  }
  c.runqueue.push_back(&wakee);
  // The wakee's cursor is set by dispatch_next when its turn comes; it must
  // not start before it was woken.
  wakee.idle_until(waker.cursor);
}

void Scheduler::exit(Task& task) {
  auto& c = cpus_[static_cast<std::size_t>(task.cpu)];
  if (c.current == &task) dispatch_next(task.cpu, task.cursor);
}

}  // namespace semsim::machine
