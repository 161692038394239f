// The lock-curve harness of issue 19 on the machine layer alone: n threads,
// one per CPU in placement order, each taking one UserLock, working
// `critical` cycles and storing into the protected data line(s) (which
// therefore move with the lock), releasing, then waiting `delay` cycles.
// Returns acquisitions per simulated second in the window.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "machine/placement.hpp"
#include "machine/user_lock.hpp"
#include "test_machine_harness.hpp"

namespace semsim::machine_test {

struct CurveLoad {
  double critical_cycles = 1000;
  double delay_cycles = 0;
  int data_lines = 1;
  Tick warmup = 200 * kTicksPerUs;
  Tick window = 2 * kTicksPerMs;
  std::uint64_t seed = 1;
  machine::Placement placement = machine::Placement::Compact;
  machine::LineContention contention{};
};

struct CurveRun {
  double ops_per_s = 0;
  machine::UserLockStats stats;
  std::vector<machine::LineStats> data;  // the protected lines' counters over the window
};

inline CurveRun run_lock_curve(const config::MachineParams& m, machine::UserLockKind kind, int n,
                               const CurveLoad& load) {
  machine::Topology topo(m);
  machine::UserLock lock(kind, topo.cpus(), load.contention, load.seed);
  std::deque<machine::CacheLine> data;
  for (int i = 0; i < load.data_lines; ++i) {
    data.emplace_back("data" + std::to_string(i)).set_contention(load.contention);
  }
  const auto order = machine::placement_order(topo, load.placement);
  const Tick critical = machine::cycles_to_ticks(topo, load.critical_cycles);
  const Tick delay = machine::cycles_to_ticks(topo, load.delay_cycles);
  TaskSet set;
  for (int i = 0; i < n; ++i) {
    set.add(order[static_cast<std::size_t>(i) % order.size()], [&](machine::Task& t) {
      for (;;) {
        lock.lock(topo, t);
        {
          machine::InFunc in(t, machine::Func::User);
          t.charge(critical);
          for (auto& d : data)
            t.advance_to(d.access(topo, t.cpu, machine::Access::Write, t.cursor));
        }
        lock.unlock(topo, t);
        machine::InFunc in(t, machine::Func::User);
        t.charge(delay);
      }
    });
  }
  CurveRun out;
  set.sim.spawn("timekeeper", [&](core::Actor& self) {
    self.sleep_until(load.warmup);
    lock.reset_stats();
    for (auto& d : data) d.reset_stats();
    self.sleep_until(load.warmup + load.window);
    out.stats = lock.stats();
    for (auto& d : data) out.data.push_back(d.stats());
    set.sim.stop_all();
  });
  set.sim.run();
  out.ops_per_s = static_cast<double>(out.stats.acquisitions) / ticks_to_seconds(load.window);
  return out;
}

}  // namespace semsim::machine_test
