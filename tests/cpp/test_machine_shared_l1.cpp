// SMT siblings share their core's L1 (LineContention::smt_shared_l1,
// machine/cache_line.hpp): oracles on a 2-core x 2-thread machine (CPUs 0-1
// core 0, 2-3 core 1; sibling transfer 10 ns, other core 100 ns, memory 80 ns,
// atomic 10 ns, L1 hit 1 ns), the dates derived from the rules before running.
#include <gtest/gtest.h>

#include "machine/cache_line.hpp"
#include "test_machine_harness.hpp"

namespace semsim {
namespace {

using machine::Access;

machine::Topology smt_topology() {
  return machine::Topology(machine_test::smt_pairs_machine(4, 100));
}

Tick ns(double v) { return ns_to_ticks(v); }

// CPU 2 owns the line (its RMW from memory: 80 + 10, done at 90). At 100 CPU 0
// stores (from CPU 2: 100 + 100 = 200), at 101 CPU 2 RMWs (behind it: 200 +
// 100 + 10 = 310), at 102 CPU 1, CPU 0's sibling, RMWs. Shared: CPU 0's fill
// is in flight, CPU 1's RMW rides it and takes the line from its sibling at
// the SMT latency right after: 200 + 10 = 210, with no home-agent slot of its
// own. (A request rides a sibling's fill only once, and only while nothing
// else is queued does the core's own line serve a sibling without the home
// agent.) Not shared: it queues behind CPU 2's and fetches from it: 310 + 100
// + 10.
TEST(SharedL1, ASiblingsRmwRidesTheCoresFillInFlight) {
  const auto topo = smt_topology();
  for (const bool shared : {true, false}) {
    machine::CacheLine line("l");
    machine::LineContention c;
    c.smt_shared_l1 = shared;
    c.rmw_conflict = 0;  // a queued RMW's conflict is test_machine_rmw_conflict.cpp's
    line.set_contention(c);
    EXPECT_EQ(line.access(topo, 2, Access::Rmw, 0), ns(90));
    EXPECT_EQ(line.access(topo, 0, Access::Write, ns(100)), ns(200));
    EXPECT_EQ(line.access(topo, 2, Access::Rmw, ns(101)), ns(310));
    EXPECT_EQ(line.access(topo, 1, Access::Rmw, ns(102)), shared ? ns(210) : ns(420)) << shared;
    // One request rides a fill: CPU 0's next RMW (at 103) queues behind CPU 2's
    // and fetches from it: 310 + 100 + 10. Not shared: behind CPU 1's, from its
    // sibling: 420 + 10 + 10.
    EXPECT_EQ(line.access(topo, 0, Access::Rmw, ns(103)), shared ? ns(420) : ns(440)) << shared;
  }
}

// A locked RMW keeps its line (Intel SDM vol. 3A, 8.1.4): CPU 0's RMW at 100
// (from CPU 2: 100 + 100 + 10 = 210) is in flight when CPU 2 RMWs at 101
// (behind it: 210 + 100 + 10 = 320) and CPU 1, its sibling, stores or RMWs at
// 102. Neither rides CPU 0's locked fill (that would be 210 + 1 / 210 + 10):
// each queues behind CPU 2's and fetches from it, shared L1 or not: a store
// 320 + 100, an RMW 320 + 100 + 10. A read still rides it: 210 + 1.
TEST(SharedL1, NoStoreOrRmwRidesASiblingsLockedRmw) {
  const auto topo = smt_topology();
  struct Case {
    Access kind;
    Tick shared, alone;
  };
  for (const Case k : {Case{Access::Write, ns(420), ns(420)}, Case{Access::Rmw, ns(430), ns(430)},
                       Case{Access::Read, ns(211), ns(420)}}) {
    for (const bool shared : {true, false}) {
      machine::CacheLine line("l");
      machine::LineContention c;
      c.smt_shared_l1 = shared;
      c.rmw_conflict = 0;  // the ride alone: the queued RMWs' conflict is its own test's
      line.set_contention(c);
      EXPECT_EQ(line.access(topo, 2, Access::Rmw, 0), ns(90));
      EXPECT_EQ(line.access(topo, 0, Access::Rmw, ns(100)), ns(210));
      EXPECT_EQ(line.access(topo, 2, Access::Rmw, ns(101)), ns(320));
      EXPECT_EQ(line.access(topo, 1, k.kind, ns(102)), shared ? k.shared : k.alone)
          << shared << " kind " << static_cast<int>(k.kind);
    }
  }
}

// Reads: CPU 0 reads CPU 2's modified line at 100 (done 200); its sibling's
// read at 101 merges into that fill: 200 + 1. Not shared: it is served after
// it, from the last writer: 200 + 100. Then, with the line still only in core
// 0's L1 (shared), a store by CPU 1 at 400 is an upgrade of the core's copy
// that must still invalidate CPU 2: the normal path (400 + 100). Not shared,
// CPU 1's own read was the line's latest miss: the upgrade overlaps it
// (write_after_read 0.45: 400 + 45).
TEST(SharedL1, ASiblingsReadRidesTheCoresFill) {
  const auto topo = smt_topology();
  for (const bool shared : {true, false}) {
    machine::CacheLine line("l");
    machine::LineContention c;
    c.smt_shared_l1 = shared;
    line.set_contention(c);
    EXPECT_EQ(line.access(topo, 2, Access::Write, 0), ns(80));
    EXPECT_EQ(line.access(topo, 0, Access::Read, ns(100)), ns(200));
    EXPECT_EQ(line.access(topo, 1, Access::Read, ns(101)), shared ? ns(201) : ns(300)) << shared;
    EXPECT_EQ(line.access(topo, 1, Access::Write, ns(400)), shared ? ns(500) : ns(445)) << shared;
  }
}

// The core owns the line and nothing is in flight: a sibling's RMW takes it at
// the SMT latency from its date, a read hits the L1 (1 ns).
TEST(SharedL1, TheCoresOwnLineIsASiblingsHit) {
  const auto topo = smt_topology();
  machine::CacheLine line("l");
  machine::LineContention c;
  c.smt_shared_l1 = true;
  line.set_contention(c);
  EXPECT_EQ(line.access(topo, 0, Access::Rmw, 0), ns(90));
  EXPECT_EQ(line.access(topo, 1, Access::Rmw, ns(200)), ns(210));
  EXPECT_EQ(line.access(topo, 0, Access::Read, ns(300)), ns(301));
  // Another core's request is not shared: it fetches from core 0 (100 + 10).
  EXPECT_EQ(line.access(topo, 3, Access::Rmw, ns(400)), ns(510));
}

}  // namespace
}  // namespace semsim
