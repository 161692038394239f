// CPUs and scheduling: one running task per CPU, a FIFO run queue per CPU
// when tasks outnumber CPUs, time slices for tasks that never block (never
// while a spinlock is held), a context-switch cost when a task blocks, and a
// wakeup path that costs the waker and delays the wakee (IPI when the target
// CPU is idle).
//
// Simplifications (stated, not hidden): no migration of running tasks (an
// unpinned task is placed at start and, when woken, on an idle CPU if its own
// is busy); no wakeup preemption; a woken task whose CPU is busy waits in
// that CPU's run queue.
#pragma once

#include <deque>
#include <vector>

#include "machine/task.hpp"
#include "machine/topology.hpp"

namespace semsim::machine {

struct CpuState {
  Task* current = nullptr;
  std::deque<Task*> runqueue;
  Tick free_at = 0;  // when the CPU became (or becomes) idle
  std::array<Tick, kCategoryCount> time{};
};

class Scheduler {
 public:
  explicit Scheduler(const Topology& topo);

  // First placement at t = 0: runs now, or waits in the run queue. The
  // caller is the task's own actor.
  void start(Task& task);
  // A time-slice check at a safe point (no spinlock held): yields the CPU if
  // the slice is used up and another task is waiting for it.
  void maybe_preempt(Task& task);
  // The task blocks (schedule() from a sleeping semop); returns when it has
  // been woken and runs again, with its cursor at that date.
  void block(Task& task);
  // wake_up_process(wakee) executed by `waker` at its cursor.
  void wake(Task& waker, Task& wakee);
  // The task's body returns: give the CPU to the next one.
  void exit(Task& task);

  const CpuState& cpu(int c) const { return cpus_[static_cast<std::size_t>(c)]; }
  int cpus() const { return static_cast<int>(cpus_.size()); }

 private:
  // Give `cpu` to the next queued task from date t, or leave it idle.
  void dispatch_next(int cpu, Tick t);
  int pick_cpu_for_wakeup(const Task& wakee) const;
  const Topology& topo_;
  std::vector<CpuState> cpus_;
};

}  // namespace semsim::machine
