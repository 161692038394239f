// Simulated workloads: each task runs its Workload's program (the same one the
// native runner executes), here against the simulated kernel, with the
// user-space work charged from the machine model.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ipc/sem_kernel.hpp"
#include "machine/scheduler.hpp"
#include "workloads/workload.hpp"

namespace semsim::workloads {

// Everything one run shares: the workload, the machine, the arrays.
struct SimContext {
  const Workload& workload;
  const machine::Topology& topo;
  machine::Scheduler& sched;
  std::vector<std::unique_ptr<ipc::SemKernel>>& arrays;
  std::uint64_t seed;
  int threads;                        // the counted tasks
  std::vector<std::uint64_t> rounds;  // each task's own-figure counter
  std::vector<char> ready;            // sembench's worklist flags
  int finished = 0;                   // tasks whose program ended
  // Runs a parent ends call this when the measured run is over.
  std::function<void(Tick start, Tick end)> on_complete;
  // What a workload whose tasks are not semaphore programs shares (lock-stress).
  std::shared_ptr<void> workload_state{};
  // The kind of the kernel's spinlocks (the scenario's kernel: locktorture's lock).
  machine::LockKind spinlock = machine::LockKind::Queued;
  // Kernel locks and lines a workload keeps outside the arrays (locktorture's),
  // for the window's lock table and hot lines: named as lock_stat would.
  std::vector<std::pair<std::string, machine::Spinlock*>> kernel_locks;
  std::vector<machine::CacheLine*> kernel_lines;
};

using TaskBody = std::function<void(machine::Task&)>;

// The run's tasks: `threads` counted tasks, the workload's extra ones
// (sembench's waker), then the parent of a run a parent starts and ends
// (sem-lockunlock).
int sim_task_count(const Workload& w, int threads);
TaskBody make_task_body(SimContext& ctx, int index);

}  // namespace semsim::workloads
