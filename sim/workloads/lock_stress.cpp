#include "workloads/lock_stress.hpp"

#include <string>

#include "machine/placement.hpp"

namespace semsim::workloads {

LockStressState::LockStressState(const LockStressParams& p, const machine::Topology& t,
                                 std::uint64_t seed)
    : params(p),
      topo(t),
      lock(machine::user_lock_kind(p.lock, "workload.lock"), t.cpus(),
           machine::lock_stress_contention(), seed),
      critical(machine::cycles_to_ticks(t, static_cast<double>(p.critical_cycles))),
      delay(machine::cycles_to_ticks(t, static_cast<double>(p.delay_cycles))) {
  for (int i = 0; i < p.data_lines; ++i)
    data.emplace_back("lock_stress_data" + std::to_string(i))
        .set_contention(machine::lock_stress_contention());
}

std::function<void(machine::Task&)> lock_stress_body(std::shared_ptr<LockStressState> state,
                                                     machine::Scheduler& sched) {
  return [state, &sched](machine::Task& t) {
    auto& s = *state;
    sched.start(t);
    for (;;) {
      s.lock.lock(s.topo, t);
      {
        machine::InFunc in(t, machine::Func::User);
        t.charge(s.critical);
        for (auto& line : s.data)
          t.advance_to(line.access(s.topo, t.cpu, machine::Access::Write, t.cursor));
      }
      s.lock.unlock(s.topo, t);
      ++t.semops;
      machine::InFunc in(t, machine::Func::User);
      t.charge(s.delay);
    }
  };
}

}  // namespace semsim::workloads
