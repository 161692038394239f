#include "workloads/workload.hpp"

namespace semsim::workloads {

TaskBody semop_multi_body(const SimContext& ctx, int index);

TaskBody make_task_body(const SimContext& ctx, int index) {
  // Only semop-multi so far; parse_scenario() rejects every other type.
  return semop_multi_body(ctx, index);
}

int array_size(const Scenario& scenario) { return scenario.workload.semaphores; }

}  // namespace semsim::workloads
