#include "driver/trace_point.hpp"

#include <fmt/format.h>

#include "config/machine_config.hpp"
#include "core/errors.hpp"
#include "driver/run_point.hpp"
#include "driver/simulate.hpp"
#include "machine/topology.hpp"
#include "workloads/registry.hpp"
#include "workloads/sim_tasks.hpp"

namespace semsim::driver {

Json trace_point(const Scenario& scenario, double from_ms, double to_ms, std::uint64_t limit) {
  if (scenario.threads.size() != 1)
    throw InputError(fmt::format(
        "trace: a trace is of one point, and the scenario has {} thread counts: give one "
        "(--set threads=[N])",
        scenario.threads.size()));
  if (!(from_ms >= 0) || !(to_ms > from_ms))
    throw InputError(fmt::format("trace: window {}..{} ms: expected 0 <= A < B", from_ms, to_ms));
  if (limit < 1) throw InputError("trace: limit: expected at least 1 event");
  const auto machine = config::load_machine(scenario.machine);
  check_placement(scenario, machine);
  const auto& policy = scenario.kernel;
  const int threads = scenario.threads.front();
  report::TraceRecorder recorder(ns_to_ticks(from_ms * 1e6), ns_to_ticks(to_ms * 1e6), limit);
  // A trace is of the window it names: the point runs its full duration (no
  // adaptive stop), so the trace and the point's counts cover the same run.
  Scenario fixed = scenario;
  fixed.precision = 0;
  Json point = run_point(fixed, machine, policy, threads, scenario.seed, &recorder);
  point["threads"] = threads;
  point["kernel"] = policy.id;
  point["machine"] = machine.name;
  point["seed"] = scenario.seed;
  const machine::Topology topo(machine);
  Json out;
  out["point"] = point;
  out["trace"] = recorder.to_json(
      topo.cpus(),
      workloads::sim_task_count(*workloads::make_workload(scenario.workload), threads));
  out["overflowed"] = recorder.overflowed();
  return out;
}

}  // namespace semsim::driver
