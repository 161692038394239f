// Simulated workloads: each task runs the benchmark's own program (the
// *_def.hpp task programs that the native runner executes too), here against
// the simulated kernel, with the user-space work charged from the machine
// model. One definition per workload, two executors.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include "config/scenario.hpp"
#include "ipc/sem_kernel.hpp"
#include "machine/scheduler.hpp"

namespace semsim::workloads {

// Everything one run shares: the scenario, the machine, the arrays.
struct SimContext {
  const Scenario& scenario;
  const machine::Topology& topo;
  machine::Scheduler& sched;
  std::vector<std::unique_ptr<ipc::SemKernel>>& arrays;
  const ipc::KernelPolicy& policy;
  std::uint64_t seed;
  int threads;                        // the counted tasks
  std::vector<std::uint64_t> rounds;  // each task's own-figure counter
  std::vector<char> ready;            // sembench's worklist flags
  int finished = 0;                   // tasks whose program ended
  // Run-to-completion workloads call this when the measured run is over.
  std::function<void(Tick start, Tick end)> on_complete;
};

using TaskBody = std::function<void(machine::Task&)>;

// The bodies of the run's tasks: `threads` counted tasks, then the
// workload's extra ones (sembench's waker, sem-lockunlock's parent).
int total_tasks(const WorkloadSpec& w, int threads);
TaskBody make_task_body(SimContext& ctx, int index);

}  // namespace semsim::workloads
