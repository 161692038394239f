// Oracle 3 of issue 3: one cache line written by N CPUs back to back
// saturates at one write per transfer latency (the line's serialisation
// point); the same work on N separate lines scales linearly.
// And one line's cost rule: a write right after its own read (write_after_read).
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "machine/cache_line.hpp"
#include "test_machine_harness.hpp"

namespace semsim {
namespace {

using machine::Access;
using machine::CacheLine;
using machine::Task;

constexpr double kTransferNs = 100;
constexpr double kWorkNs = 250;  // local work between two writes

struct LineRun {
  double writes_per_s = 0;
  std::vector<machine::LineStats> stats;
};

// n tasks, one per CPU, each looping: local work, then one access to its
// line (all the same line, or one line each). Counts accesses completed in
// the window.
LineRun run_writers(int n, bool split, Access kind) {
  const auto params = machine_test::uniform_machine(64, kTransferNs);
  machine::Topology topo(params);
  std::vector<std::unique_ptr<CacheLine>> lines;
  for (int i = 0; i < (split ? n : 1); ++i) lines.push_back(std::make_unique<CacheLine>("line"));
  const Tick warmup = ns_to_ticks(20000), end = warmup + ns_to_ticks(2e6);
  std::uint64_t done = 0;
  machine_test::TaskSet set;
  for (int i = 0; i < n; ++i)
    set.add(i, [&, i](Task& t) {
      CacheLine& line = *lines[split ? static_cast<std::size_t>(i) : 0];
      for (;;) {
        t.charge(ns_to_ticks(kWorkNs));
        t.sync();  // issue the access at its date: the line sees requests in time order
        t.advance_to(line.access(topo, t.cpu, kind, t.cursor));
        if (t.cursor >= warmup && t.cursor < end) ++done;
      }
    });
  set.sim.spawn("window", [&](core::Actor& self) {
    self.sleep_until(warmup);
    for (auto& l : lines) l->reset_stats();
    self.sleep_until(end);
    set.sim.stop_all();
  });
  set.sim.run();
  LineRun out;
  out.writes_per_s = static_cast<double>(done) / ticks_to_seconds(end - warmup);
  for (auto& l : lines) out.stats.push_back(l->stats());
  return out;
}

TEST(MachineLineOracle, OneLineSaturatesAtOneWritePerTransfer) {
  const double per_transfer = 1e9 / kTransferNs;
  // One writer: every write hits its own line.
  const double one = run_writers(1, false, Access::Write).writes_per_s;
  const double l1 = ticks_to_ns(machine_test::uniform_machine(64).l1_hit);
  EXPECT_NEAR(one, 1e9 / (kWorkNs + l1), 0.001 * one);
  // Enough writers to always have a request queued: one write per transfer.
  for (int n : {8, 16, 32}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const auto run = run_writers(n, false, Access::Write);
    EXPECT_NEAR(run.writes_per_s, per_transfer, 0.002 * per_transfer);
    // Every write in the window was a transfer from another core of the die,
    // and requests queued behind each other at the line.
    const auto& s = run.stats[0];
    EXPECT_EQ(s.hits, 0U);
    EXPECT_EQ(s.transfers[static_cast<std::size_t>(machine::Distance::SameDie)], s.accesses);
    EXPECT_GT(s.queued, 0);
  }
  // An atomic RMW keeps the line locked while it executes, and one queued
  // behind another request pays the conflict (rmw_conflict, cache_line.hpp):
  // one per ((1 + c) transfer + atomic).
  const double atomic = ticks_to_ns(machine_test::uniform_machine(64).atomic_rmw);
  const double per_rmw = (1 + machine::kRmwConflict) * kTransferNs + atomic;
  EXPECT_NEAR(run_writers(16, false, Access::Rmw).writes_per_s, 1e9 / per_rmw,
              0.002 * 1e9 / per_rmw);
}

TEST(MachineLineOracle, SplittingTheDataAcrossLinesScalesLinearly) {
  const double one = run_writers(1, true, Access::Write).writes_per_s;
  for (int n : {2, 8, 32, 64}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const auto run = run_writers(n, true, Access::Write);
    EXPECT_NEAR(run.writes_per_s, n * one, 0.001 * n * one);
    for (const auto& s : run.stats) EXPECT_EQ(s.misses(), 0U);
  }
  // And the shared line at the same n is far below: the serialisation point.
  EXPECT_LT(run_writers(32, false, Access::Write).writes_per_s, 0.1 * 32 * one);
}

// write_after_read (machine/cache_line.hpp): CPU 1 reads the line CPU 0 wrote
// (a transfer T), then writes it: its request for ownership left with the read,
// so the invalidation of CPU 0's copy adds w * T, not a second T. With another
// CPU's miss between the two (CPU 2 reads it), or a write that follows no read
// of its own, the invalidation is a whole transfer again.
TEST(MachineLineWriteAfterRead, AWriteRightAfterItsOwnReadMissOverlapsTheRead) {
  const auto params = machine_test::uniform_machine(4, kTransferNs);
  machine::Topology topo(params);
  const Tick T = topo.transfer(0, 1);
  const double w = params.write_after_read;
  ASSERT_GT(w, 0);
  ASSERT_LT(w, 1);
  for (const Access kind : {Access::Write, Access::Rmw}) {
    const Tick op = kind == Access::Rmw ? params.atomic_rmw : 0;
    CacheLine own("own");
    own.access(topo, 0, Access::Write, 0);
    const Tick read = own.access(topo, 1, Access::Read, ns_to_ticks(1000));
    EXPECT_EQ(read, ns_to_ticks(1000) + T);
    EXPECT_EQ(own.access(topo, 1, kind, read),
              read + static_cast<Tick>(static_cast<double>(T) * w) + op);

    CacheLine between("between");
    between.access(topo, 0, Access::Write, 0);
    const Tick r1 = between.access(topo, 1, Access::Read, ns_to_ticks(1000));
    const Tick r2 = between.access(topo, 2, Access::Read, r1);
    EXPECT_EQ(between.access(topo, 1, kind, r2 + T), r2 + 2 * T + op);

    // The second write of a line CPU 1 read and wrote, after CPU 2 read it: a whole T.
    EXPECT_EQ(own.access(topo, 2, Access::Read, ns_to_ticks(5000)), ns_to_ticks(5000) + T);
    EXPECT_EQ(own.access(topo, 1, kind, ns_to_ticks(6000)), ns_to_ticks(6000) + T + op);
  }
}

}  // namespace
}  // namespace semsim
