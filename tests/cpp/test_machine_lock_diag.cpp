// The lock-curve diagnosis (issue 19 item 3, validation/lock-curves.md): the
// published mctop setup run the way the lock-stress workload runs it
// (workloads/lock_stress.cpp: cores-first placement, the calibrated line
// contention, 4 protected lines stored through the store buffer, the
// scheduler's SMT accounting), printing per acquisition what the model spends:
// cycles, the holder's time from acquisition to release, the hand-over (a
// release's visibility to the next acquisition), RMWs on the lock's line,
// the lock line's and the data lines' transfers, and the next acquirer's
// distance from the releaser. Skipped unless SEMSIM_LOCK_DIAG is set;
// SEMSIM_DIAG_LOCKS=tas,ticket and SEMSIM_DIAG_HOST=opteron|westmere narrow it.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <deque>
#include <string>

#include "config/machine_config.hpp"
#include "machine/placement.hpp"
#include "machine/scheduler.hpp"
#include "machine/store_buffer.hpp"
#include "machine/user_lock.hpp"
#include "test_machine_harness.hpp"
#include "workloads/lock_stress.hpp"

namespace semsim {
namespace {

struct Diag {
  double ops_per_s = 0;
  machine::UserLockStats lock;
  machine::LineStats line;
  machine::LineStats data;  // summed over the protected lines
};

Diag run_diag(const config::MachineParams& m, machine::UserLockKind kind, int n) {
  machine::Topology topo(m);
  machine::Scheduler sched(topo);
  machine::UserLock lock(kind, topo.cpus(), machine::lock_stress_contention(), 1);
  std::deque<machine::CacheLine> data;
  for (int i = 0; i < 4; ++i)
    data.emplace_back("data" + std::to_string(i)).set_contention(machine::lock_stress_contention());
  const auto order = machine::placement_order(topo, machine::Placement::CoresFirst);
  const Tick critical = machine::cycles_to_ticks(topo, 1000);
  // The workload's first arrivals (seed 1); SEMSIM_DIAG_THREAD_ORDER=1: in thread order.
  const bool thread_order = std::getenv("SEMSIM_DIAG_THREAD_ORDER") != nullptr;
  machine_test::TaskSet set;
  for (int i = 0; i < n; ++i) {
    set.add(order[static_cast<std::size_t>(i)], [&, i](machine::Task& t) {
      sched.start(t);
      t.advance_to(t.cursor + (thread_order ? i * ns_to_ticks(1)
                                            : workloads::lock_stress_first_arrival(1, i)));
      for (;;) {
        lock.lock(topo, t);
        {
          machine::InFunc in(t, machine::Func::User);
          t.charge(critical);
          for (auto& d : data) machine::store(topo, t, d);
        }
        lock.unlock(topo, t);
      }
    });
  }
  const Tick warmup = 1 * kTicksPerMs, window = 4 * kTicksPerMs;
  Diag out;
  set.sim.spawn("timekeeper", [&](core::Actor& self) {
    self.sleep_until(warmup);
    lock.reset_stats();
    lock.line().reset_stats();
    for (auto& d : data) d.reset_stats();
    self.sleep_until(warmup + window);
    out.lock = lock.stats();
    out.line = lock.line().stats();
    for (auto& d : data) {
      const auto& s = d.stats();
      out.data.accesses += s.accesses;
      out.data.from_memory += s.from_memory;
      out.data.queued += s.queued;
      for (std::size_t c = 0; c < s.transfers.size(); ++c) out.data.transfers[c] += s.transfers[c];
    }
    set.sim.stop_all();
  });
  set.sim.run();
  out.ops_per_s = static_cast<double>(out.lock.acquisitions) / ticks_to_seconds(window);
  return out;
}

bool wanted(const char* env, const std::string& what) {
  const char* v = std::getenv(env);
  return v == nullptr || std::string(v).find(what) != std::string::npos;
}

TEST(LockCurveDiag, PerAcquisition) {
  if (std::getenv("SEMSIM_LOCK_DIAG") == nullptr) GTEST_SKIP() << "set SEMSIM_LOCK_DIAG=1";
  const std::string dir = std::string(SEMSIM_SOURCE_DIR) + "/cpu_models/";
  struct Point {
    const char* host;
    const char* machine;
    int threads;
  };
  const Point points[] = {
      {"opteron", "opteron-48", 6},         {"opteron", "opteron-48", 12},
      {"opteron", "opteron-48", 24},        {"opteron", "opteron-48", 48},
      {"westmere", "westmere-ex-80", 20},   {"westmere", "westmere-ex-80", 40},
      {"westmere", "westmere-ex-80", 60},   {"westmere", "westmere-ex-80", 80},
      {"westmere", "westmere-ex-160", 100}, {"westmere", "westmere-ex-160", 120},
      {"westmere", "westmere-ex-160", 160}};
  std::printf(
      "lock   machine          N   kops/s  cyc/acq   hold  handover  rmw/acq  "
      "line xfer/acq [smt die sock 1hop 2hop]  data xfer/acq  winner%% [self smt die sock 1h "
      "2h]\n");
  for (auto kind : {machine::UserLockKind::Tas, machine::UserLockKind::Ttas,
                    machine::UserLockKind::Ticket, machine::UserLockKind::Mcs}) {
    if (!wanted("SEMSIM_DIAG_LOCKS", machine::user_lock_name(kind))) continue;
    for (const auto& p : points) {
      if (!wanted("SEMSIM_DIAG_HOST", p.host)) continue;
      const auto m = config::load_machine(dir + p.machine + ".json");
      const auto d = run_diag(m, kind, p.threads);
      const double acq = static_cast<double>(std::max<std::uint64_t>(1, d.lock.acquisitions));
      const double ho = static_cast<double>(std::max<std::uint64_t>(1, d.lock.handovers));
      auto cyc = [&](Tick t, double per) { return ticks_to_ns(t) * m.clock_ghz / per; };
      std::printf("%-6s %-15s %4d %8.1f %8.0f %6.0f %9.0f %8.2f  ", machine::user_lock_name(kind),
                  p.machine, p.threads, d.ops_per_s / 1000, m.clock_ghz * 1e9 / d.ops_per_s,
                  cyc(d.lock.hold, acq), cyc(d.lock.handover, ho),
                  static_cast<double>(d.lock.rmws) / acq);
      for (int c = 1; c < machine::kDistanceClasses; ++c)
        std::printf("%5.2f",
                    static_cast<double>(d.line.transfers[static_cast<std::size_t>(c)]) / acq);
      std::printf("   %5.2f        ", static_cast<double>(d.data.misses()) / acq);
      for (int c = 0; c < machine::kDistanceClasses; ++c)
        std::printf("%4.0f",
                    100.0 * static_cast<double>(d.lock.winner[static_cast<std::size_t>(c)]) / ho);
      std::printf("\n");
      std::fflush(stdout);
    }
  }
}

}  // namespace
}  // namespace semsim
