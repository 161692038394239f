// Issue 19, item 1: the user-space locks of lock-stress (TAS, TTAS, ticket,
// MCS) built from cache-line requests. Oracles: one thread uncontended costs
// the sum of its (hit) accesses and its work; one hand-off between two CPUs at
// a known distance T costs the transfers the algorithm makes (derived in the
// comments below, before running); MCS throughput is flat in thread count
// while ticket and TAS degrade; placement orders.
#include <gtest/gtest.h>

#include <cmath>

#include "core/errors.hpp"
#include "test_machine_lock_curve.hpp"

namespace semsim {
namespace {

using machine::Access;
using machine::Placement;
using machine::UserLock;
using machine::UserLockKind;
using machine_test::CurveLoad;
using machine_test::run_lock_curve;

// uniform_machine with a 1 GHz clock: one cycle = 1 ns; l1_hit 1 ns, atomic 10 ns.
config::MachineParams machine_1ghz(int cpus, double transfer_ns) {
  auto m = machine_test::uniform_machine(cpus, transfer_ns);
  m.clock_ghz = 1;
  return m;
}

// One thread: every access after the first round hits. Per acquisition:
//   TAS: xchg 10 + C + data store 1 + release store 1            = C + 12
//   TTAS: read 1 + xchg 10 + C + 1 + 1                           = C + 13
//   ticket: xadd 10 + read now_serving 1 + C + 1 + 1             = C + 13
//   MCS: node store 1 + xchg tail 10 + C + 1 + read next 1 + cmpxchg tail 10 = C + 23
TEST(UserLocks, UncontendedCostIsTheSumOfItsHits) {
  const auto m = machine_1ghz(4, 100);
  const std::pair<UserLockKind, double> cases[] = {{UserLockKind::Tas, 1012},
                                                   {UserLockKind::Ttas, 1013},
                                                   {UserLockKind::Ticket, 1013},
                                                   {UserLockKind::Mcs, 1023}};
  for (auto [kind, period_ns] : cases) {
    CurveLoad load;
    load.critical_cycles = 1000;
    const auto run = run_lock_curve(m, kind, 1, load);
    const double expected = ticks_to_seconds(load.window) * 1e9 / period_ns;
    EXPECT_NEAR(static_cast<double>(run.stats.acquisitions), expected, 1.0)
        << machine::user_lock_name(kind);
  }
}

// One hand-off between CPUs 0 and 1 at distance T. Warm-up: A takes and
// releases the lock at 0, B at 5 us (B's CPU then owns every line it last
// wrote). A takes it at 10 us and holds it for 1000 cycles plus the data
// store; B asks at 10.8 us (A holds it by then). Hand-off = B's acquisition - A's release start:
//   ticket: A's store of now_serving invalidates B's copy (T); B re-reads (T)  = 2T
//   MCS: A reads its node's next, which B's link wrote (T); stores into B's
//        node, invalidating B's spinning copy (T); B re-reads its node (T)     = 3T
//   TTAS: A's store invalidates B (T); B re-reads (T); B's xchg takes the line
//        back from A's shared copy (T) plus the atomic (10)                      = 3T + 10
//   TAS: A's store takes the line from B (T) while B loops on xchg hits every
//        10 ns; B's next xchg, issued 0-10 ns after A's, waits for A's store and
//        then fetches the line (T) plus its atomic (10)                         = 2T + 10..20
struct HandOff {
  Tick release = 0, acquired = 0;
};

HandOff one_hand_off(UserLockKind kind, double transfer_ns) {
  const auto m = machine_1ghz(2, transfer_ns);
  machine::Topology topo(m);
  UserLock lock(kind, topo.cpus(), {}, 7);
  machine::CacheLine data("data");
  HandOff out;
  machine_test::TaskSet set;
  auto critical = [&](machine::Task& t) {
    t.charge(machine::cycles_to_ticks(topo, 1000));
    t.advance_to(data.access(topo, t.cpu, Access::Write, t.cursor));
  };
  set.add(0, [&](machine::Task& t) {
    lock.lock(topo, t);
    lock.unlock(topo, t);
    t.idle_until(10 * kTicksPerUs);
    lock.lock(topo, t);
    critical(t);
    out.release = t.cursor;
    lock.unlock(topo, t);
  });
  set.add(1, [&](machine::Task& t) {
    t.idle_until(5 * kTicksPerUs);
    lock.lock(topo, t);
    lock.unlock(topo, t);
    t.idle_until(10 * kTicksPerUs + 800 * kTicksPerNs);
    lock.lock(topo, t);
    out.acquired = t.cursor;
    lock.unlock(topo, t);
  });
  set.sim.run();
  return out;
}

TEST(UserLocks, HandOffCostsTheTransfersAtTheDistance) {
  for (double tr : {100.0, 250.0}) {
    const Tick T = ns_to_ticks(tr), atomic = ns_to_ticks(10);
    auto h = [&](UserLockKind k) {
      const auto r = one_hand_off(k, tr);
      return r.acquired - r.release;
    };
    EXPECT_EQ(h(UserLockKind::Ticket), 2 * T) << tr;
    EXPECT_EQ(h(UserLockKind::Mcs), 3 * T) << tr;
    // TTAS: the CAS right after the spinner's read of the free word overlaps it
    // (write_after_read, machine/cache_line.hpp).
    const double w = machine::MachineParams{}.write_after_read;
    EXPECT_EQ(h(UserLockKind::Ttas), 2 * T + static_cast<Tick>(static_cast<double>(T) * w) + atomic)
        << tr;
    // TAS: the retried xchg queues behind the release store, so it pays the
    // conflict too (rmw_conflict, machine/cache_line.hpp).
    const Tick tas = h(UserLockKind::Tas);
    const Tick conflict = static_cast<Tick>(machine::kRmwConflict * static_cast<double>(T));
    EXPECT_GE(tas, 2 * T + atomic) << tr;
    EXPECT_LE(tas, 2 * T + conflict + 2 * atomic) << tr;
  }
}

// Each spinner's re-read is priced at its own distance: on a machine whose
// second socket is far, a ticket hand-off to a far CPU costs more than one to
// a near CPU (the releaser is the same).
TEST(UserLocks, SpinnerReReadsAtItsOwnDistance) {
  auto m = machine_1ghz(4, 100);
  m.sockets = 2;
  m.cores_per_die = 2;
  m.socket_hops = {{0, 1}, {1, 0}};
  m.lat_one_hop = ns_to_ticks(400);
  machine::Topology topo(m);
  int near = -1, remote = -1;
  for (int c = 1; c < topo.cpus(); ++c)
    (topo.coords(c).socket == topo.coords(0).socket ? near : remote) = c;
  ASSERT_EQ(topo.transfer(0, near), ns_to_ticks(100));
  ASSERT_EQ(topo.transfer(0, remote), ns_to_ticks(400));
  for (int far : {near, remote}) {
    UserLock lock(UserLockKind::Ticket, topo.cpus(), {}, 3);
    Tick release = 0, acquired = 0;
    machine_test::TaskSet set;
    set.add(0, [&](machine::Task& t) {
      lock.lock(topo, t);
      t.charge(2 * kTicksPerUs);
      release = t.cursor;
      lock.unlock(topo, t);
    });
    set.add(far, [&](machine::Task& t) {
      t.idle_until(kTicksPerUs);
      lock.lock(topo, t);
      acquired = t.cursor;
      lock.unlock(topo, t);
    });
    set.sim.run();
    // Invalidation of the spinner's copy plus its re-read, both at its distance.
    EXPECT_EQ(acquired - release, 2 * topo.transfer(0, far)) << far;
  }
}

double ops(UserLockKind kind, int n) {
  CurveLoad load;
  load.window = kTicksPerMs;
  return run_lock_curve(machine_1ghz(48, 100), kind, n, load).ops_per_s;
}

// MCS hands over with a constant number of transfers whatever the number of
// waiters; ticket spinners all re-read on every write, TAS spinners' xchgs
// queue ahead of the release: both degrade with the thread count.
TEST(UserLocks, McsFlatTicketAndTasDegrade) {
  const double mcs4 = ops(UserLockKind::Mcs, 4), mcs48 = ops(UserLockKind::Mcs, 48);
  EXPECT_NEAR(mcs48 / mcs4, 1.0, 0.05);
  for (auto k : {UserLockKind::Ticket, UserLockKind::Tas, UserLockKind::Ttas}) {
    const double r = ops(k, 48) / ops(k, 4);
    EXPECT_LT(r, 0.5) << machine::user_lock_name(k);
  }
}

TEST(UserLocks, PlacementOrders) {
  auto m = machine_1ghz(8, 100);
  m.sockets = 2;
  m.cores_per_die = 2;
  m.threads_per_core = 2;
  m.socket_hops = {{0, 1}, {1, 0}};
  m.lat_smt = ns_to_ticks(20);
  m.lat_one_hop = ns_to_ticks(300);
  machine::Topology topo(m);
  const auto compact = machine::placement_order(topo, Placement::Compact);
  ASSERT_EQ(compact.size(), 8u);
  for (std::size_t i = 0; i + 1 < compact.size(); i += 2)  // siblings first
    EXPECT_EQ(topo.distance(compact[i], compact[i + 1]), machine::Distance::Smt);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(topo.coords(compact[i]).socket, 0);
  const auto spread = machine::placement_order(topo, Placement::Spread);
  for (std::size_t i = 0; i < spread.size(); ++i)
    EXPECT_EQ(topo.coords(spread[i]).socket, static_cast<int>(i % 2));
}

TEST(UserLocks, UnknownKindIsAnInputError) {
  EXPECT_THROW(machine::user_lock_kind("clh", "workload.lock"), InputError);
  EXPECT_EQ(machine::user_lock_kind("mcs", "x"), UserLockKind::Mcs);
}

}  // namespace
}  // namespace semsim

namespace semsim {
namespace {

// The diagnostics of validation/lock-curves.md count what the lock did. MCS,
// 4 CPUs at one distance T = 100 ns: every acquisition but the window's first
// follows a release by another CPU (the queue hands on), at distance SameDie;
// the holder's time is the critical section (1000 ns) plus its store to the
// data line (this harness's store stalls: the line comes from the last holder,
// T, plus the L1 write, 1 ns) = 1101 ns; the hand-over (release visible -> next acquisition) is the
// successor's re-read of its node, T, plus the hit that returns. TAS, 2 CPUs:
// at least one xchg per acquisition, and every hand-over goes to the other CPU
// (the releaser's own xchg queues behind the spinner's).
TEST(UserLocks, DiagnosticsCountHandOversHoldsAndWinners) {
  CurveLoad load;
  load.critical_cycles = 1000;
  const auto mcs = run_lock_curve(machine_1ghz(4, 100), UserLockKind::Mcs, 4, load);
  const auto& s = mcs.stats;
  ASSERT_GT(s.acquisitions, 100u);
  EXPECT_NEAR(static_cast<double>(s.handovers), static_cast<double>(s.acquisitions), 1.0);
  EXPECT_EQ(s.winner[static_cast<std::size_t>(machine::Distance::SameDie)], s.handovers);
  EXPECT_EQ(s.rmws, 0u);  // counted for TAS / TTAS only
  const double hold_ns = ticks_to_ns(s.hold) / static_cast<double>(s.acquisitions);
  const double handover_ns = ticks_to_ns(s.handover) / static_cast<double>(s.handovers);
  EXPECT_GE(hold_ns, 1101.0);
  EXPECT_LT(hold_ns, 1102.0);
  EXPECT_GE(handover_ns, 100.0);
  EXPECT_LT(handover_ns, 110.0);

  const auto tas = run_lock_curve(machine_1ghz(2, 100), UserLockKind::Tas, 2, load);
  EXPECT_GE(tas.stats.rmws, tas.stats.acquisitions);
  EXPECT_EQ(tas.stats.winner[static_cast<std::size_t>(machine::Distance::SameDie)],
            tas.stats.handovers);
}

}  // namespace
}  // namespace semsim
