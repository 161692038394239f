// The simulated lock-stress tasks (lock_stress_def.hpp): one UserLock and
// the protected data lines, shared by the run's tasks through the
// SimContext; the workload's registry entry is in lock_stress.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/time.hpp"
#include "machine/placement.hpp"
#include "workloads/sim_tasks.hpp"

namespace semsim::workloads {

// Task `index`: placed by the spec's pin mode (compact / spread in topology
// order, pinned: CPU index mod cpus), then acquire, work, store the data
// lines, release, delay, for ever; each acquisition counts as one op
// (task.semops, so ops_per_s = acquisitions/s).
TaskBody lock_stress_task_body(SimContext& ctx, int index);

// When task `index` of a run with seed `seed` first reaches the lock, after
// its start: a seeded draw in [0, 1 us), so the tasks' first requests reach
// the lock in a random order (the why is at the definition).
Tick lock_stress_first_arrival(std::uint64_t seed, int index);

// What lock-stress and locktorture share. The CPUs in the order such a workload
// places its tasks (machine/placement.hpp): compact, spread or cores-first by
// topology; unpinned by `unpinned` when the workload gives one; else none (pinned:
// CPU index mod cpus, as the driver places it; unpinned: the scheduler's choice).
std::vector<int> lock_task_order(const machine::Topology& topo, Pinning pin,
                                 std::optional<machine::Placement> unpinned = std::nullopt);
// Starts task `index`: on order[index] when there is an order (set before
// start(), which places the task on home_cpu), then until its first arrival at
// the lock (lock_stress_first_arrival).
void start_lock_task(SimContext& ctx, machine::Task& t, const std::vector<int>& order, int index);

}  // namespace semsim::workloads
