// Simulated workloads: what each task does, as the benchmark's own loop.
// The definitions shared with the native runner (which semaphore, which
// sops) live in small headers both sides include.
#pragma once

#include <functional>

#include "config/scenario.hpp"
#include "ipc/sem_kernel.hpp"
#include "machine/scheduler.hpp"

namespace semsim::workloads {

struct SimContext {
  const Scenario& scenario;
  const machine::Topology& topo;
  machine::Scheduler& sched;
  ipc::SemKernel& kernel;
  std::uint64_t seed;
};

using TaskBody = std::function<void(machine::Task&)>;

// The body of task number `index` for the scenario's workload.
TaskBody make_task_body(const SimContext& ctx, int index);

// How many semaphores the workload's array has.
int array_size(const Scenario& scenario);

}  // namespace semsim::workloads
