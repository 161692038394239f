// The lock-curve bench (issue 19, item 2): the published mctop lock curves'
// setup on opteron-48 and westmere-ex-80/160, printed for iterating on the
// contended-line mechanisms before the workload exists. Skipped unless
// SEMSIM_LOCK_BENCH is set (it takes tens of seconds); knobs from the
// environment: SEMSIM_QF (queue_factor), SEMSIM_NEAREST (0/1), SEMSIM_DELAY,
// SEMSIM_LINES, SEMSIM_WINDOW_US, SEMSIM_RMWC (rmw_conflict).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "test_machine_lock_curve.hpp"

namespace semsim {
namespace {

double env(const char* name, double fallback) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::atof(v) : fallback;
}

TEST(LockCurveBench, PublishedSetup) {
  if (std::getenv("SEMSIM_LOCK_BENCH") == nullptr) GTEST_SKIP() << "set SEMSIM_LOCK_BENCH=1";
  const std::string dir = std::string(SEMSIM_SOURCE_DIR) + "/cpu_models/";
  machine_test::CurveLoad load;
  load.critical_cycles = 1000;
  load.delay_cycles = env("SEMSIM_DELAY", 0);
  load.data_lines = static_cast<int>(env("SEMSIM_LINES", 1));
  load.window = static_cast<Tick>(env("SEMSIM_WINDOW_US", 2000)) * kTicksPerUs;
  load.contention.queue_factor = env("SEMSIM_QF", 0);
  load.contention.rmw_conflict = env("SEMSIM_RMWC", machine::kRmwConflict);
  load.contention.nearest_sharer = env("SEMSIM_NEAREST", 0) != 0;
  load.critical_cycles = env("SEMSIM_CRIT", 1000);
  load.contention.read_occupancy = env("SEMSIM_READ_OCC", 1);
  const double llc_cycles = env("SEMSIM_LLC_CYCLES", 0);
  struct Point {
    const char* machine;
    int threads;
  };
  const Point opteron[] = {
      {"opteron-48", 6}, {"opteron-48", 12}, {"opteron-48", 24}, {"opteron-48", 48}};
  const Point westmere[] = {{"westmere-ex-80", 20},   {"westmere-ex-80", 40},
                            {"westmere-ex-80", 60},   {"westmere-ex-80", 80},
                            {"westmere-ex-160", 100}, {"westmere-ex-160", 120},
                            {"westmere-ex-160", 140}, {"westmere-ex-160", 160}};
  for (auto kind : {machine::UserLockKind::Tas, machine::UserLockKind::Ttas,
                    machine::UserLockKind::Ticket, machine::UserLockKind::Mcs}) {
    for (const auto* set : {&opteron[0], &westmere[0]}) {
      const int n = set == &opteron[0] ? 4 : 8;
      std::printf("%-6s", machine::user_lock_name(kind));
      for (int i = 0; i < n; ++i) {
        const auto m = config::load_machine(dir + set[i].machine + ".json");
        auto l = load;
        if (set == &westmere[0]) l.contention.llc_hit = ns_to_ticks(llc_cycles / m.clock_ghz);
        const auto r = machine_test::run_lock_curve(m, kind, set[i].threads, l);
        std::printf(" %d:%.0f", set[i].threads, r.ops_per_s / 1000);
        std::fflush(stdout);
      }
      std::printf("\n");
    }
  }
}

}  // namespace
}  // namespace semsim
