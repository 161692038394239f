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
  auto m = machine_test::uniform_machine(4, 100);
  m.cores_per_die = 2;
  m.threads_per_core = 2;
  m.smt_adjacent = true;
  m.lat_smt = ns_to_ticks(10);
  return machine::Topology(m);
}

Tick ns(double v) { return ns_to_ticks(v); }

// CPU 2 owns the line (its RMW from memory: 80 + 10, done at 90). At 100 CPU 0
// RMWs (from CPU 2: 100 + 100 + 10 = 210), at 101 CPU 2 again (behind it: 210
// + 100 + 10 = 320), at 102 CPU 1, CPU 0's sibling. Shared: CPU 0's fill is in
// flight, CPU 1's RMW rides it and takes the line from its sibling at the SMT
// latency right after: 210 + 10 = 220, with no home-agent slot of its own.
// (A request rides a sibling's fill only once, and only while nothing else is
// queued does the core's own line serve a sibling without the home agent.)
// Not shared: it queues behind CPU 2's and fetches from it: 320 + 100 + 10.
TEST(SharedL1, ASiblingsRmwRidesTheCoresFillInFlight) {
  const auto topo = smt_topology();
  for (const bool shared : {true, false}) {
    machine::CacheLine line("l");
    machine::LineContention c;
    c.smt_shared_l1 = shared;
    c.rmw_conflict = 0;  // a queued RMW's conflict is test_machine_rmw_conflict.cpp's
    line.set_contention(c);
    EXPECT_EQ(line.access(topo, 2, Access::Rmw, 0), ns(90));
    EXPECT_EQ(line.access(topo, 0, Access::Rmw, ns(100)), ns(210));
    EXPECT_EQ(line.access(topo, 2, Access::Rmw, ns(101)), ns(320));
    EXPECT_EQ(line.access(topo, 1, Access::Rmw, ns(102)), shared ? ns(220) : ns(430)) << shared;
    // One request rides a fill: CPU 0's next RMW (at 103) queues behind CPU 2's
    // and fetches from it: 320 + 100 + 10. Not shared: behind CPU 1's, from its
    // sibling: 430 + 10 + 10.
    EXPECT_EQ(line.access(topo, 0, Access::Rmw, ns(103)), shared ? ns(430) : ns(450)) << shared;
  }
}

// Reads: CPU 0 reads CPU 2's modified line at 100 (done 200); its sibling's
// read at 101 merges into that fill: 200 + 1. Not shared: it is served after
// it, from the last writer: 200 + 100. Then, with the line still only in core
// 0's L1 (shared), a store by CPU 1 at 400 is an upgrade of the core's copy
// that must still invalidate CPU 2: the normal path (400 + 100).
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
    EXPECT_EQ(line.access(topo, 1, Access::Write, ns(400)), ns(500)) << shared;
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
