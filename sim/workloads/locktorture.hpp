// The simulated locktorture writers (locktorture_def.hpp): one kernel Spinlock
// of the run's kernel kind and the lines the writers touch under it, shared by
// the run's tasks through the SimContext; the registry entry is in locktorture.cpp.
#pragma once

#include "workloads/sim_tasks.hpp"

namespace semsim::workloads {

// Writer `index`: placed by the spec's pin mode (unpinned: where fork balancing
// puts a new kthread on an idle machine, machine/placement.hpp), then the
// module's loop for ever; each acquisition counts as one op (task.semops, so
// ops_per_s = acquisitions/s).
TaskBody locktorture_task_body(SimContext& ctx, int index);

}  // namespace semsim::workloads
