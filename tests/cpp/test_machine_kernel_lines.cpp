// Issue 19, item 4 (contended lines) on the kernel's locks: the ticket
// spinlock and the March 2013 rwlock with line spinning (machine/line_spin.hpp,
// the implementation lock-stress's locks use), and the line mechanisms of
// machine/cache_line.hpp. Every expected figure is derived in the comment
// before the run, from the transfers the protocol makes.
#include <gtest/gtest.h>

#include <set>

#include "config/scenario.hpp"
#include "driver/simulate.hpp"
#include "machine/cache_line.hpp"
#include "machine/rwlock.hpp"
#include "machine/spinlock.hpp"
#include "test_machine_files.hpp"
#include "test_machine_harness.hpp"

namespace semsim {
namespace {

using machine::Access;
using machine::CacheLine;
using machine::LockKind;
using machine::Spinlock;
using machine::Task;

// Four CPUs on two sockets: a same-socket transfer 100 ns, a cross-socket one 400 ns.
struct TwoSockets {
  config::MachineParams m;
  int near = -1, remote = -1;  // a CPU on CPU 0's socket, one on the other
  TwoSockets() : m(machine_test::uniform_machine(4, 100)) {
    m.sockets = 2;
    m.cores_per_die = 2;
    m.socket_hops = {{0, 1}, {1, 0}};
    m.lat_one_hop = ns_to_ticks(400);
    machine::Topology topo(m);
    for (int c = 1; c < topo.cpus(); ++c)
      (topo.coords(c).socket == topo.coords(0).socket ? near : remote) = c;
  }
};

constexpr Tick kNear = 100 * kTicksPerNs, kFar = 400 * kTicksPerNs;

TEST(KernelLineSpinning, TheMachineSetup) {
  TwoSockets s;
  machine::Topology topo(s.m);
  ASSERT_EQ(topo.transfer(0, s.near), kNear);
  ASSERT_EQ(topo.transfer(0, s.remote), kFar);
  ASSERT_EQ(topo.transfer(s.near, s.remote), kFar);
}

// One spinner at CPU s behind a holder at CPU 0. The release is a store: it
// invalidates the spinner's shared copy (one transfer 0 -> s); the spinner
// re-reads once it lands (another, from the releaser's cache): the hand-off
// is 2 x transfer(0, s), the spinner's own distance.
TEST(KernelLineSpinning, AFarSpinnerPaysItsOwnDistance) {
  TwoSockets s;
  machine::Topology topo(s.m);
  for (int spinner : {s.near, s.remote}) {
    CacheLine line("lock");
    Spinlock lock(LockKind::Ticket, &line, 1);
    lock.set_line_spinning(true);
    Tick release = 0, acquired = 0;
    machine_test::TaskSet set;
    set.add(0, [&](Task& t) {
      lock.lock(topo, t);
      t.charge(2 * kTicksPerUs);
      release = t.cursor;
      lock.unlock(topo, t);
    });
    set.add(spinner, [&](Task& t) {
      t.idle_until(kTicksPerUs);
      lock.lock(topo, t);
      acquired = t.cursor;
      lock.unlock(topo, t);
    });
    set.sim.run();
    EXPECT_EQ(acquired - release, 2 * topo.transfer(0, spinner)) << spinner;
    EXPECT_EQ(lock.stats().contended, 1U);
    EXPECT_EQ(lock.stats().acquisitions, 2U);
  }
}

// Two spinners: A on the far socket holds the next ticket, B near the
// releaser the one after. Line spinning: the release invalidates both copies
// (the farthest, A, decides: F); then both re-read, in a random order, each
// from the releaser's cache at its own distance: A first -> A gets in at
// 2F; B first (N) -> A's read queues behind it: 2F + N. The formula of the
// default mode prices every re-read at the releaser-to-next-owner distance
// (F for both) after a release store that fetched the line from B, the last
// xadd (N): N + F or N + 2F. Across seeds both orders occur.
TEST(KernelLineSpinning, EverySpinnerReReadsAtItsOwnDistance) {
  TwoSockets s;
  machine::Topology topo(s.m);
  for (bool lines : {true, false}) {
    std::set<Tick> handoffs;
    for (std::uint64_t seed = 1; seed <= 16; ++seed) {
      CacheLine line("lock");
      Spinlock lock(LockKind::Ticket, &line, seed);
      lock.set_line_spinning(lines);
      Tick release = 0, acquired = 0;
      machine_test::TaskSet set;
      set.add(0, [&](Task& t) {
        lock.lock(topo, t);
        t.charge(3 * kTicksPerUs);
        release = t.cursor;
        lock.unlock(topo, t);
      });
      set.add(s.remote, [&](Task& t) {  // A: ticket 1
        t.idle_until(kTicksPerUs);
        lock.lock(topo, t);
        acquired = t.cursor;
        t.charge(3 * kTicksPerUs);
        lock.unlock(topo, t);
      });
      set.add(s.near, [&](Task& t) {  // B: ticket 2
        t.idle_until(2 * kTicksPerUs);
        lock.lock(topo, t);
        lock.unlock(topo, t);
      });
      set.sim.run();
      handoffs.insert(acquired - release);
    }
    const std::set<Tick> expected = lines ? std::set<Tick>{2 * kFar, 2 * kFar + kNear}
                                          : std::set<Tick>{kNear + kFar, kNear + 2 * kFar};
    EXPECT_EQ(handoffs, expected) << (lines ? "line spinning" : "formula");
  }
}

// The holder's stores to other data on the lock's line: each invalidates the
// spinner's copy and the spinner re-reads after it, so the spinner stays on
// the line while the lock is held. Holder at 0, spinner at 1 (T = 100 ns),
// three stores 1 us apart, then the release. Alone, the holder's stores hit
// (its xadd made it the owner). With the spinner: its xadd took the line, so
// the first store fetches it back (T); the spinner then re-reads (the line is
// shared again) and each later store invalidates it (T): the hold is 3 (T -
// l1) longer, and the spinner re-reads 3 + 1 times (the stores, the release).
// The default mode has the spinner off the line while the lock is held: only
// the first store misses.
TEST(KernelLineSpinning, TheHoldersStoresToTheLockLineMakeTheSpinnerReRead) {
  const auto m = machine_test::uniform_machine(2, 100);
  machine::Topology topo(m);
  const Tick T = topo.transfer(0, 1);
  auto hold_of = [&](bool spinner, bool lines, std::uint64_t* rereads) {
    CacheLine line("lock and data");
    Spinlock lock(LockKind::Ticket, &line, 1);
    lock.set_line_spinning(lines);
    Tick hold = 0;
    machine_test::TaskSet set;
    set.add(0, [&](Task& t) {
      lock.lock(topo, t);
      const Tick from = t.cursor;
      for (int i = 0; i < 3; ++i) {
        t.charge(kTicksPerUs);
        t.advance_to(line.access(topo, t.cpu, Access::Write, t.cursor));
      }
      hold = t.cursor - from;
      lock.unlock(topo, t);
    });
    if (spinner)
      set.add(1, [&](Task& t) {
        t.idle_until(kTicksPerUs / 2);
        lock.lock(topo, t);
        lock.unlock(topo, t);
      });
    set.sim.run();
    if (rereads != nullptr) *rereads = lock.stats().rereads;
    return hold;
  };
  std::uint64_t rereads = 0;
  const Tick alone = hold_of(false, true, nullptr);
  EXPECT_EQ(alone, 3 * kTicksPerUs + 3 * m.l1_hit);
  EXPECT_EQ(hold_of(true, true, &rereads) - alone, 3 * (T - m.l1_hit));
  EXPECT_EQ(rereads, 4U);
  EXPECT_EQ(hold_of(true, false, &rereads) - alone, T - m.l1_hit);
  EXPECT_EQ(rereads, 0U);
}

// The March 2013 rwlock with line spinning. A writer at 0 holds; a reader at
// 1 tries (lock decl: it finds the writer), undoes it (lock incl) and spins
// reading the word. write_unlock's lock add invalidates the reader's copy (T)
// and locks the line for the atomic (a); the reader re-reads it from the
// writer's cache (T), sees it free and retries its lock decl, which takes
// ownership from the writer's shared copy right after its own read (w T,
// write_after_read) plus the atomic: the reader is in (2 + w) T + 2a after the
// writer's release began.
TEST(KernelLineSpinning, ARwlockReaderSpinsOnTheWordAndRetries) {
  const auto m = machine_test::uniform_machine(2, 100);
  machine::Topology topo(m);
  const Tick T = topo.transfer(0, 1), a = m.atomic_rmw;
  CacheLine line("rwlock");
  machine::RwLock lock(&line, 1);
  lock.set_line_spinning(true);
  Tick release = 0, got = 0;
  machine_test::TaskSet set;
  set.add(0, [&](Task& t) {
    lock.write_lock(topo, t);
    t.charge(2 * kTicksPerUs);
    release = t.cursor;
    lock.write_unlock(topo, t);
  });
  set.add(1, [&](Task& t) {
    t.idle_until(kTicksPerUs);
    lock.read_lock(topo, t);
    got = t.cursor;
    lock.read_unlock(topo, t);
  });
  set.sim.run();
  EXPECT_EQ(got - release,
            2 * T + static_cast<Tick>(static_cast<double>(T) * m.write_after_read) + 2 * a);
  EXPECT_EQ(lock.stats().read.contended, 1U);
  EXPECT_EQ(lock.stats().rereads, 1U);
}

// A waiting writer re-reads the word after every reader's RMW (each lock decl
// and lock incl is a write to the line) and gets in only once no reader is
// inside (reader preference): two readers at 1 and 2 overlap for 10 us in
// all, entering and leaving 4 times each while a writer at 0 waits.
TEST(KernelLineSpinning, AWaitingWriterReReadsAfterEveryReadersRmw) {
  const auto m = machine_test::uniform_machine(3, 100);
  machine::Topology topo(m);
  CacheLine line("rwlock");
  machine::RwLock lock(&line, 1);
  lock.set_line_spinning(true);
  Tick writer_in = 0, last_reader_out = 0;
  machine_test::TaskSet set;
  for (int cpu : {1, 2})
    set.add(cpu, [&, cpu](Task& t) {
      t.idle_until(cpu * kTicksPerUs / 4);
      for (int i = 0; i < 4; ++i) {
        lock.read_lock(topo, t);
        t.charge(2 * kTicksPerUs);
        lock.read_unlock(topo, t);
        last_reader_out = std::max(last_reader_out, t.cursor);
        t.charge(kTicksPerNs);  // overlapping: the other reader is still inside
      }
    });
  set.add(0, [&](Task& t) {
    t.idle_until(kTicksPerUs);
    lock.write_lock(topo, t);
    writer_in = t.cursor;
    lock.write_unlock(topo, t);
  });
  set.sim.run();
  EXPECT_GE(writer_in, last_reader_out - 2 * kTicksPerUs);
  EXPECT_EQ(lock.stats().write.contended, 1U);
  // The readers made 2 x 4 x 2 RMWs after the writer started waiting, less the
  // first one or two: the writer re-read after most of them.
  EXPECT_GE(lock.stats().rereads, 10U);
}

// The reproduce effect (seed 001's semop-multi on xeon-24, N = 20 threads on
// 20 semaphores): with line spinning, the ticket spinners of per_sem_lock and
// the rwlock's spinners stay on their lines, so per_sem_lock and rwlock lose
// about a quarter of their throughput (measured at 5 ms: 2.79 -> 2.03 M and
// 2.94 -> 2.16 M ops/s; published 1.98 and 1.52 M), while global_lock, whose
// hand-off the formula already priced as a queue of re-reads, moves little
// (353 k -> 333 k; published 342 k). With the store buffer (releases visible
// at their store's completion, RMWs draining it; this test's 3 ms window):
// per_sem_lock 2.39 -> 2.06 M, rwlock 2.68 -> 2.20 M, global_lock 355 k ->
// 316 k. With rmw_conflict (cache_line.hpp) the rwlock is bound by its
// word's line, whose two locked RMWs per op conflict, and no longer by the
// semaphores' lines the spinning loads (this test's window: per_sem_lock
// 2.29 -> 1.98 M, rwlock 1.90 -> 1.91 M, global_lock 333 k -> 304 k). With
// smt_compute_slowdown 1.6 (was 2.0) and the lookup's loads overlapping
// (machine/mlp.hpp; under the array lock in global_lock) the hold is shorter,
// so the re-reads weigh more there: per_sem_lock 2.34 -> 2.04 M, rwlock
// 2.25 -> 2.17 M, global_lock 370 k -> 309 k.
// Bounds: per_sem_lock at least 10 % lower; rwlock within 15 %, global_lock 20 %.
TEST(KernelLineSpinning, OnXeon24PerSemComesDownAndTheRwlockStaysBoundByItsWord) {
  Json machine = config::testing::model("xeon-24");
  machine["kernel_line_spinning"] = {{"value", true}, {"source", "test"}};
  const config::testing::MachineFile file(machine, "xeon24-spinning");
  auto ops = [&](const std::string& m, const char* kernel) {
    Json doc = Json::parse(R"({
      "name": "seed001", "workload": {"type": "semop-multi", "semaphores": 20, "pattern": "stride"},
      "threads": [20], "duration_ms": 3, "warmup_ms": 0.5, "seed": 1, "repeats": 1})");
    doc["machine"] = m;
    doc["kernel"] = kernel;
    return driver::simulate(parse_scenario(doc))["points"][0]["ops_per_s"].get<double>();
  };
  EXPECT_LT(ops(file.path(), "per_sem_lock"), 0.9 * ops("xeon-24", "per_sem_lock"));
  EXPECT_NEAR(ops(file.path(), "rwlock") / ops("xeon-24", "rwlock"), 1.0, 0.15);
  EXPECT_NEAR(ops(file.path(), "global_lock") / ops("xeon-24", "global_lock"), 1.0, 0.2);
}

// --- The line mechanisms (cache_line.hpp), on the line alone ----------------

// queue_factor: an ownership request costs (1 + f q) times its transfer, q =
// the requests to the line still queued ahead of it when it is issued. CPU 0
// owns the line; CPUs 1..5 each store at the same date: the i-th (i = 0..4)
// finds i queued ahead and costs T (1 + f i); each completes when the one
// before it did plus its own cost. A read queued the same way keeps its T.
TEST(LineContention, QueuedRequestersRaiseAnOwnershipTransferAsDeclared) {
  const auto m = machine_test::uniform_machine(8, 100);
  machine::Topology topo(m);
  const Tick T = topo.transfer(0, 1);
  const double f = 0.25;
  CacheLine line("hot");
  machine::LineContention c;
  c.queue_factor = f;
  line.set_contention(c);
  const Tick owned = line.access(topo, 0, Access::Write, 0);  // from memory
  const Tick at = owned + kTicksPerUs;
  Tick expect = at;
  for (int i = 0; i < 5; ++i) {
    expect += static_cast<Tick>(static_cast<double>(T) * (1 + f * i));
    EXPECT_EQ(line.access(topo, 1 + i, Access::Write, at), expect) << "requester " << i;
  }
  // A read behind them: queued (it starts when the last store is done) but not dearer.
  EXPECT_EQ(line.access(topo, 6, Access::Read, at), expect + T);
  // Without the mechanism the same requests cost T each.
  CacheLine plain("plain");
  (void)plain.access(topo, 0, Access::Write, 0);
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(plain.access(topo, 1 + i, Access::Write, at), at + (i + 1) * T);
}

// nearest_sharer: a read of a shared line is answered by the sharer nearest
// the reader, not by the last writer. The remote CPU writes; CPU 0 reads (a
// transfer from the remote owner, F); then `near`, on CPU 0's socket, reads:
// from CPU 0 (N) with the mechanism, from the remote last writer (F) without.
TEST(LineContention, ASharedReadIsServedByTheNearestSharer) {
  TwoSockets s;
  machine::Topology topo(s.m);
  for (bool nearest : {true, false}) {
    CacheLine line("shared");
    machine::LineContention c;
    c.nearest_sharer = nearest;
    line.set_contention(c);
    const Tick w = line.access(topo, s.remote, Access::Write, 0);
    const Tick r0 = line.access(topo, 0, Access::Read, w);
    EXPECT_EQ(r0 - w, kFar);
    const Tick r1 = line.access(topo, s.near, Access::Read, r0);
    EXPECT_EQ(r1 - r0, nearest ? kNear : kFar) << nearest;
  }
}

// read_occupancy: reads of one line pipeline at the home agent. Two readers
// issue at once after a write: the second starts when the first has held the
// line for its share of the transfer, and still takes the whole transfer.
TEST(LineContention, PipelinedReadsHoldTheLineForTheirShare) {
  const auto m = machine_test::uniform_machine(4, 100);
  machine::Topology topo(m);
  const Tick T = topo.transfer(0, 1);
  CacheLine line("read-mostly");
  machine::LineContention c;
  c.read_occupancy = 0.5;
  line.set_contention(c);
  const Tick w = line.access(topo, 0, Access::Write, 0);
  EXPECT_EQ(line.access(topo, 1, Access::Read, w), w + T);
  EXPECT_EQ(line.access(topo, 2, Access::Read, w), w + T / 2 + T);
}

}  // namespace
}  // namespace semsim
