// lock-stress placements (machine/placement.hpp): cores-first is mctop's
// MCTOP_ALLOC_MIN_LAT_CORES. Oracles derived from the policy's definition
// before running: one hardware thread of each core, the sockets in increasing
// latency from the first, the second hardware threads only once every core
// has one, in the same socket order.
#include <gtest/gtest.h>

#include <set>

#include "config/machine_config.hpp"
#include "machine/placement.hpp"
#include "test_machine_harness.hpp"

namespace semsim {
namespace {

using machine::Placement;

// 4 sockets x 2 cores x 2 threads; socket 0 is one hop from socket 2 and two
// hops from 1 and 3 (socket 3 nearer than 1 through its own hop count).
config::MachineParams four_sockets() {
  auto m = machine_test::uniform_machine(16, 50);
  m.sockets = 4;
  m.cores_per_die = 2;
  m.threads_per_core = 2;
  m.socket_hops = {{0, 2, 1, 2}, {2, 0, 2, 1}, {1, 2, 0, 2}, {2, 1, 2, 0}};
  m.lat_smt = ns_to_ticks(10);
  m.lat_one_hop = ns_to_ticks(200);
  m.lat_two_hops = ns_to_ticks(300);
  return m;
}

TEST(Placement, CoresFirstFillsCoresSocketBySocketInLatencyOrderThenSiblings) {
  const machine::Topology topo(four_sockets());
  const auto order = machine::placement_order(topo, Placement::CoresFirst);
  ASSERT_EQ(order.size(), 16u);
  // Sockets of the first 8 (one per core): 0 0, then the one-hop socket 2,
  // then the two-hop sockets by id: 1, 3.
  const int want_socket[] = {0, 0, 2, 2, 1, 1, 3, 3};
  std::set<std::pair<int, int>> cores;  // (socket, core)
  for (std::size_t i = 0; i < 8; ++i) {
    const auto& k = topo.coords(order[i]);
    EXPECT_EQ(k.socket, want_socket[i]) << i;
    EXPECT_EQ(k.smt, 0) << i;
    cores.insert({k.socket, k.core});
  }
  EXPECT_EQ(cores.size(), 8u);  // every core once
  // Then the second hardware threads, each the sibling of the i-th.
  for (std::size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(topo.coords(order[8 + i]).smt, 1) << i;
    EXPECT_EQ(topo.distance(order[i], order[8 + i]), machine::Distance::Smt) << i;
  }
  // The same machine without SMT: the same cores in the same order.
  auto flat = four_sockets();
  flat.cpus = 8;
  flat.threads_per_core = 1;
  const machine::Topology one(flat);
  const auto order1 = machine::placement_order(one, Placement::CoresFirst);
  for (std::size_t i = 0; i < 8; ++i) EXPECT_EQ(one.coords(order1[i]).socket, want_socket[i]);
}

// On the published machine: 80 threads take the 80 cores, 20 threads two
// sockets one hop apart, thread 80 + i the sibling of thread i.
TEST(Placement, CoresFirstOnWestmereEx160) {
  const machine::Topology topo(config::load_machine("westmere-ex-160"));
  const auto order = machine::placement_order(topo, Placement::CoresFirst);
  ASSERT_EQ(order.size(), 160u);
  std::set<int> cores, sockets20;
  for (std::size_t i = 0; i < 80; ++i) cores.insert(topo.coords(order[i]).core);
  EXPECT_EQ(cores.size(), 80u);
  for (std::size_t i = 0; i < 20; ++i) sockets20.insert(topo.coords(order[i]).socket);
  ASSERT_EQ(sockets20.size(), 2u);
  EXPECT_EQ(topo.distance(order[0], order[10]), machine::Distance::OneHop);
  for (std::size_t i = 0; i < 80; ++i)
    EXPECT_EQ(topo.distance(order[i], order[80 + i]), machine::Distance::Smt) << i;
}

// Fork-balanced (locktorture's unpinned start): thread i on socket i mod 4, and
// within a socket every core's first hardware thread before any second one --
// where spread takes a core's sibling first.
TEST(Placement, ForkBalancedDealsSocketsAndTakesIdleCoresBeforeSiblings) {
  const machine::Topology topo(four_sockets());
  const auto order = machine::placement_order(topo, Placement::ForkBalanced);
  ASSERT_EQ(order.size(), 16u);
  std::set<int> cpus(order.begin(), order.end());
  EXPECT_EQ(cpus.size(), 16u);  // every CPU once
  std::set<std::pair<int, int>> cores;
  for (std::size_t i = 0; i < 16; ++i) {
    const auto& k = topo.coords(order[i]);
    EXPECT_EQ(k.socket, static_cast<int>(i % 4)) << i;
    EXPECT_EQ(k.smt, i < 8 ? 0 : 1) << i;  // 8 cores: their first threads, then the second
    if (i < 8) cores.insert({k.socket, k.core});
  }
  EXPECT_EQ(cores.size(), 8u);
  // spread on the same machine puts thread 4 on socket 0's first core's sibling.
  const auto spread = machine::placement_order(topo, Placement::Spread);
  EXPECT_EQ(topo.distance(spread[0], spread[4]), machine::Distance::Smt);
  EXPECT_NE(topo.distance(order[0], order[4]), machine::Distance::Smt);
}

}  // namespace
}  // namespace semsim
