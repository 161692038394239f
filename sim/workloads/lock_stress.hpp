// The simulated lock-stress task bodies (lock_stress_def.hpp): one UserLock
// and the protected data lines shared by the run's tasks.
#pragma once

#include <deque>
#include <functional>
#include <memory>

#include "machine/scheduler.hpp"
#include "machine/task.hpp"
#include "machine/user_lock.hpp"
#include "workloads/lock_stress_def.hpp"

namespace semsim::workloads {

struct LockStressState {
  LockStressState(const LockStressParams& p, const machine::Topology& topo, std::uint64_t seed);
  const LockStressParams params;
  const machine::Topology& topo;
  machine::UserLock lock;
  std::deque<machine::CacheLine> data;
  Tick critical, delay;
};

// Task body: acquire, work, store the data lines, release, delay, for ever;
// each acquisition counts as one op (task.semops).
std::function<void(machine::Task&)> lock_stress_body(std::shared_ptr<LockStressState> state,
                                                     machine::Scheduler& sched);

}  // namespace semsim::workloads
