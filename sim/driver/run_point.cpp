#include "driver/run_point.hpp"

#include <fmt/format.h>

#include <deque>

#include "core/simulation.hpp"
#include "ipc/sem_kernel.hpp"
#include "machine/scheduler.hpp"
#include "report/window_stats.hpp"
#include "workloads/workload.hpp"

namespace semsim::driver {

Json run_point(const Scenario& scenario, const config::MachineParams& machine,
               const ipc::KernelPolicy& policy, int threads, std::uint64_t seed) {
  core::Simulation sim;
  machine::Topology topo(machine);
  machine::Scheduler sched(topo);
  ipc::SemKernel kernel(policy, topo, sched, workloads::array_size(scenario), seed);
  workloads::SimContext ctx{scenario, topo, sched, kernel, seed};

  std::deque<machine::Task> tasks;  // stable addresses
  for (int i = 0; i < threads; ++i) {
    auto& task = tasks.emplace_back();
    task.id = i;
    task.process = 0;  // threads of one process
    task.pinned = scenario.workload.pin == Pinning::Pinned;
    task.cpu = task.home_cpu = i % topo.cpus();
    auto body = workloads::make_task_body(ctx, i);
    task.actor = &sim.spawn(fmt::format("task{}", i), [&task, body](core::Actor&) { body(task); });
  }

  const Tick warmup_end = ns_to_ticks(scenario.warmup_ms * 1e6);
  const Tick window_end = warmup_end + ns_to_ticks(scenario.duration_ms * 1e6);
  report::WindowStats stats(topo, kernel.array(), tasks);
  sim.spawn("timekeeper", [&](core::Actor& self) {
    self.sleep_until(warmup_end);
    stats.begin(self.now());
    self.sleep_until(window_end);
    stats.end(self.now());
    sim.stop_all();
  });
  sim.run();
  return stats.to_json();
}

}  // namespace semsim::driver
