// rmw_conflict (machine/cache_line.hpp): a locked RMW that has to queue behind
// another request for its line costs (1 + c) times its two-party latency;
// one that finds the line idle, reads and plain stores keep theirs. The
// oracles: the exact dates of a few requests, and the saturated rate of a line
// hammered by locked RMWs (one per (1 + c) T + atomic) against the same line
// hammered by stores (one per T).
#include <gtest/gtest.h>

#include <vector>

#include "machine/cache_line.hpp"
#include "test_machine_harness.hpp"

namespace semsim {
namespace {

using machine::Access;
using machine::CacheLine;
using machine::Task;

constexpr double kC = machine::kRmwConflict;

Tick scaled(Tick t, double f) { return static_cast<Tick>(static_cast<double>(t) * f); }

TEST(RmwConflict, TheCalibratedValueIsOnForEveryLine) {
  EXPECT_GT(kC, 0);
  EXPECT_EQ(CacheLine().contention().rmw_conflict, kC);
  EXPECT_EQ(machine::calibrated_line_contention().rmw_conflict, kC);
}

// CPU 0 owns the line. CPUs 1, 2, 3 issue locked RMWs at the same date: the
// first finds the line idle (T + atomic); the others queue behind it, each
// ((1 + c) T + atomic). A read and a store queued the same way keep T.
TEST(RmwConflict, AQueuedLockedRmwCostsOneConflictMore) {
  const auto m = machine_test::uniform_machine(8, 100);
  machine::Topology topo(m);
  const Tick T = topo.transfer(0, 1), A = topo.params().atomic_rmw;
  ASSERT_GT(T, 0);
  CacheLine line("hot");
  const Tick owned = line.access(topo, 0, Access::Rmw, 0);
  const Tick at = owned + kTicksPerUs;
  Tick expect = at + T + A;
  EXPECT_EQ(line.access(topo, 1, Access::Rmw, at), expect);  // idle line: no conflict
  for (int cpu = 2; cpu <= 3; ++cpu) {
    expect += scaled(T, 1 + kC) + A;
    EXPECT_EQ(line.access(topo, cpu, Access::Rmw, at), expect) << "cpu " << cpu;
  }
  expect += T;
  EXPECT_EQ(line.access(topo, 4, Access::Write, at), expect);  // a store: queued, not dearer
  expect += T;
  EXPECT_EQ(line.access(topo, 5, Access::Read, at), expect);  // a read: the same
  // An RMW issued after the line went idle again: no conflict.
  const Tick later = expect + kTicksPerUs;
  EXPECT_EQ(line.access(topo, 6, Access::Rmw, later), later + T + A);
  // Off (c = 0): the queued RMWs cost T + atomic each, as before the mechanism.
  CacheLine plain("plain");
  machine::LineContention off;
  off.rmw_conflict = 0;
  plain.set_contention(off);
  (void)plain.access(topo, 0, Access::Rmw, 0);
  for (int cpu = 1; cpu <= 3; ++cpu)
    EXPECT_EQ(plain.access(topo, cpu, Access::Rmw, at), at + cpu * (T + A)) << "cpu " << cpu;
}

// n tasks hammer one line back to back (no work between accesses): with
// locked RMWs the line is always queued, so it serves one per
// (1 + c) T + atomic; with stores one per T (TAS-like vs store-only traffic).
double hammer_rate(int n, Access kind, double c) {
  const auto params = machine_test::uniform_machine(16, 100);
  machine::Topology topo(params);
  CacheLine line("hammered");
  machine::LineContention lc;
  lc.rmw_conflict = c;
  line.set_contention(lc);
  const Tick warmup = ns_to_ticks(20000), end = warmup + ns_to_ticks(1e6);
  std::uint64_t done = 0;
  machine_test::TaskSet set;
  for (int i = 0; i < n; ++i)
    set.add(i, [&](Task& t) {
      for (;;) {
        t.sync();  // issue at its date: the line sees requests in time order
        t.advance_to(line.access(topo, t.cpu, kind, t.cursor));
        if (t.cursor >= warmup && t.cursor < end) ++done;
      }
    });
  set.stop_at(end);
  set.sim.run();
  return static_cast<double>(done) / ticks_to_seconds(end - warmup);
}

TEST(RmwConflict, AHammeredLineServesOneLockedRmwPerConflictedTransfer) {
  const auto m = machine_test::uniform_machine(16, 100);
  machine::Topology topo(m);
  const double T = ticks_to_ns(topo.transfer(0, 1)), A = ticks_to_ns(topo.params().atomic_rmw);
  for (int n : {4, 12}) {
    const double rmw = hammer_rate(n, Access::Rmw, kC);
    EXPECT_NEAR(rmw, 1e9 / ((1 + kC) * T + A), 0.02 * rmw) << n;
    const double off = hammer_rate(n, Access::Rmw, 0);
    EXPECT_NEAR(off, 1e9 / (T + A), 0.02 * off) << n;
    const double stores = hammer_rate(n, Access::Write, kC);
    EXPECT_NEAR(stores, 1e9 / T, 0.02 * stores) << n;
  }
}

}  // namespace
}  // namespace semsim
