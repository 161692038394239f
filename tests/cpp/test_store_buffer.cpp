// Oracles of the x86-TSO store buffer (machine/store_buffer.hpp), on the
// uniform test machine: transfer 100 ns, memory 80 ns, L1 1 ns, locked RMW
// 10 ns, full fence 20 ns.
#include <gtest/gtest.h>

#include "machine/cache_line.hpp"
#include "machine/spinlock.hpp"
#include "machine/store_buffer.hpp"
#include "test_machine_harness.hpp"

namespace semsim {
namespace {

using machine::Access;
using machine::CacheLine;
using machine::Task;

constexpr double kTransfer = 100, kL1 = 1, kRmw = 10, kFence = 20;

config::MachineParams machine_with(double entries, double locked_drain_ns) {
  auto m = machine_test::uniform_machine(4, kTransfer);
  m.store_buffer_entries = entries;
  m.locked_drain = ns_to_ticks(locked_drain_ns);
  return m;
}

Tick ns(double v) { return ns_to_ticks(v); }

// A line CPU 1 owns (Modified) from 0 on; a task on CPU 0 at `at`.
struct RemoteLine {
  CacheLine line{"remote"};
  Task t;
  RemoteLine(const machine::Topology& topo, double at) {
    line.access(topo, 1, Access::Write, 0);
    t.cpu = 0;
    t.cursor = ns(at);
  }
};

TEST(StoreBuffer, FenceWithAnEmptyBufferCostsFullFence) {
  const machine::Topology topo(machine_with(36, 0));
  Task t;
  t.cursor = ns(500);
  machine::full_fence(topo, t);
  EXPECT_EQ(t.cursor, ns(500 + kFence));
}

TEST(StoreBuffer, FenceRightAfterARemoteStoreCostsTheTransferRemainder) {
  const machine::Topology topo(machine_with(36, 0));
  RemoteLine r(topo, 1000);
  const Tick visible = machine::store(topo, r.t, r.line);
  EXPECT_EQ(visible, ns(1000 + kTransfer));  // the line comes from CPU 1
  EXPECT_EQ(r.t.cursor, ns(1000 + kL1));     // the core went on after the L1 write
  r.t.charge(ns(30));                        // local work: 1031
  const Tick before = r.t.cursor;
  machine::full_fence(topo, r.t);
  // The remainder of the transfer (1100 - 1031) plus the fence itself.
  EXPECT_EQ(r.t.cursor - before, ns(1000 + kTransfer) - before + ns(kFence));
}

TEST(StoreBuffer, StoreMissFollowedByLocalWorkDoesNotStall) {
  for (const double entries : {36.0, 0.0}) {
    const machine::Topology topo(machine_with(entries, 0));
    RemoteLine r(topo, 1000);
    machine::store(topo, r.t, r.line);
    r.t.charge(ns(50));
    // Buffered: issue (1 ns) + work; no buffer: the whole transfer, then the work.
    EXPECT_EQ(r.t.cursor, entries > 0 ? ns(1000 + kL1 + 50) : ns(1000 + kTransfer + 50))
        << "entries " << entries;
  }
}

TEST(StoreBuffer, StoresBecomeVisibleInProgramOrder) {
  const machine::Topology topo(machine_with(36, 0));
  RemoteLine r(topo, 1000);
  CacheLine mine("mine");
  mine.access(topo, 0, Access::Write, 0);  // CPU 0 owns it: a hit
  machine::store(topo, r.t, r.line);       // visible at 1100
  const Tick hit_visible = machine::store(topo, r.t, mine);
  // The hit is in L1 at 1002 but cannot be seen before the earlier store.
  EXPECT_EQ(hit_visible, ns(1000 + kTransfer));
  EXPECT_EQ(r.t.cursor, ns(1000 + 2 * kL1));
}

TEST(StoreBuffer, LockedRmwWaitsForTheBufferAndAFenceForItsDrain) {
  const machine::Topology topo(machine_with(36, 15));
  RemoteLine r(topo, 1000);
  CacheLine word("word");
  word.access(topo, 0, Access::Write, 0);
  machine::store(topo, r.t, r.line);  // visible at 1100
  machine::rmw(topo, r.t, word);      // drains to 1100, then its own 10 ns (a hit)
  EXPECT_EQ(r.t.cursor, ns(1000 + kTransfer + kRmw));
  // smp_mb() right after: the RMW's store drains 15 ns more, then the fence.
  machine::full_fence(topo, r.t);
  EXPECT_EQ(r.t.cursor, ns(1000 + kTransfer + kRmw + 15 + kFence));
  // A second fence finds nothing pending.
  const Tick before = r.t.cursor;
  machine::full_fence(topo, r.t);
  EXPECT_EQ(r.t.cursor - before, ns(kFence));
}

TEST(StoreBuffer, LockedDrainDefaultsToTheAtomic) {
  auto m = machine_with(36, 0);
  m.locked_drain = -1;  // absent from the machine file
  const machine::Topology topo(m);
  Task t;
  CacheLine word("word");
  word.access(topo, 0, Access::Write, 0);
  t.cursor = ns(100);
  machine::rmw(topo, t, word);
  machine::full_fence(topo, t);
  EXPECT_EQ(t.cursor, ns(100 + kRmw + kRmw + kFence));
}

TEST(StoreBuffer, AFullBufferStallsTheNextStore) {
  const machine::Topology topo(machine_with(1, 0));
  RemoteLine r(topo, 1000);
  CacheLine other("other");
  other.access(topo, 2, Access::Write, 0);
  machine::store(topo, r.t, r.line);  // the one entry, visible at 1100
  machine::store(topo, r.t, other);   // waits for it, then issues at 1100
  EXPECT_EQ(r.t.cursor, ns(1000 + kTransfer + kL1));
}

TEST(StoreBuffer, ALoadOfALineInFlightWaitsForIt) {
  const machine::Topology topo(machine_with(36, 0));
  RemoteLine r(topo, 1000);
  machine::store(topo, r.t, r.line);
  machine::load(topo, r.t, r.line);
  EXPECT_EQ(r.t.cursor, ns(1000 + kTransfer + kL1));
}

// A release becomes visible when its store completes: the holder's earlier
// store to a remote data line delays the unlock's visibility (program order),
// the releaser does not wait for either, and the waiter takes the lock from
// the visibility date.
struct Handoff {
  Tick releaser_after_unlock = 0, waiter_acquired = 0;
};

Handoff run_handoff(double entries, bool pv_spinlock = false) {
  auto params = machine_with(entries, 0);
  params.pv_spinlock = pv_spinlock;
  const machine::Topology topo(params);
  CacheLine lock_line("lock"), data("data");
  machine::Spinlock lock(machine::LockKind::Queued, &lock_line, 1);
  Handoff out;
  machine_test::TaskSet set;
  set.add(0, [&](Task& t) {
    lock.lock(topo, t);  // from memory: 80 + 10
    t.charge(ns(1000));
    machine::store(topo, t, data);  // CPU 2 owns the line: visible 100 ns later
    lock.unlock(topo, t);
    out.releaser_after_unlock = t.cursor;
  });
  set.add(2, [&](Task& t) { t.advance_to(data.access(topo, t.cpu, Access::Write, t.cursor)); });
  set.add(1, [&](Task& t) {
    t.idle_until(ns(400));
    lock.lock(topo, t);
    out.waiter_acquired = t.cursor;
  });
  set.sim.run();
  return out;
}

TEST(StoreBuffer, AReleaseIsVisibleWhenItsStoreCompletes) {
  // Holder: lock done at 90, work to 1090, data store issued 1090 (visible
  // 1190), unlock store issued 1091 (its line from the waiter: 1191).
  const Handoff buffered = run_handoff(36);
  EXPECT_EQ(buffered.releaser_after_unlock, ns(1092));
  // The waiter sees the release at 1191 and claims the word: transfer + atomic.
  EXPECT_EQ(buffered.waiter_acquired, ns(1191 + kTransfer + kRmw));
  // Without a buffer the holder stalls on both stores (1190, then 1290).
  const Handoff stalled = run_handoff(0);
  EXPECT_EQ(stalled.releaser_after_unlock, ns(1290));
  EXPECT_EQ(stalled.waiter_acquired, ns(1290 + kTransfer + kRmw));
}

// A paravirt qspinlock (a KVM guest) releases with a locked cmpxchg: the releaser
// drains its buffer (the data store, visible at 1190), takes the lock's line from
// the waiter spinning on it (1290) and does the atomic (1300); the waiter sees the
// lock free from then and claims the word: transfer + atomic.
TEST(StoreBuffer, AParavirtReleaseIsALockedRmwTheReleaserWaitsFor) {
  const Handoff pv = run_handoff(36, true);
  EXPECT_EQ(pv.releaser_after_unlock, ns(1190 + kTransfer + kRmw));
  EXPECT_EQ(pv.waiter_acquired, ns(1300 + kTransfer + kRmw));
}

// A contender whose RMW completes while the release (with nobody waiting) is
// still buffered reads the lock held and gets it one transfer after the
// release is visible, not at its RMW.
TEST(StoreBuffer, AContenderBeforeTheReleaseIsVisibleSeesTheLockHeld) {
  const machine::Topology topo(machine_with(36, 0));
  CacheLine lock_line("lock"), mine("mine");
  machine::Spinlock lock(machine::LockKind::Ticket, &lock_line, 1);
  Tick acquired = 0, released_issue = 0;
  machine_test::TaskSet set;
  set.add(0, [&](Task& t) {
    t.idle_until(ns(500));
    lock.lock(topo, t);  // lock line from memory: 580 + 10 = 590
    t.advance_to(mine.access(topo, t.cpu, Access::Write, t.cursor));  // 670
    lock.unlock(topo, t);  // issued 670; the line is the contender's until 710: visible 810
    released_issue = t.cursor;
  });
  set.add(1, [&](Task& t) {
    t.idle_until(ns(600));
    lock.lock(topo, t);  // its xadd: 600 + 100 + 10 = 710, before the release is visible
    acquired = t.cursor;
  });
  set.sim.run();
  EXPECT_EQ(released_issue, ns(670 + kL1));
  EXPECT_EQ(acquired, ns(810 + kTransfer));
}

}  // namespace
}  // namespace semsim
