// Oracles 1 and 2 of issue 3: the ticket spinlock against the Boyd-Wickizer
// et al. (2012) birth-death model, and the queued spinlock (MCS) under the
// same load; plus the queued lock's pending-bit path and constant hand-off.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <vector>

#include "machine/cache_line.hpp"
#include "machine/ipi_queue.hpp"
#include "machine/store_buffer.hpp"
#include "test_machine_lock_load.hpp"

namespace semsim {
namespace {

using machine::LockKind;
using machine::Spinlock;
using machine::Task;
using machine_test::LockLoad;
using machine_test::markov_throughput;
using machine_test::run_lock_load;

// The reference's illustrative parameters (modelling-and-simgrid.md 2a), in
// ns: think time a = 20000, serial section s = 400, per-waiter cost c = 120.
// The model's curve rises almost linearly to n = 28 and collapses by n = 40.
constexpr double kA = 20000, kS = 400, kC = 120;
constexpr double kCompletions = 25000;  // per point: window = this many critical sections

LockLoad load_for(int n) {
  LockLoad load{kA, kS, kC, ns_to_ticks(200000), 0};
  // At the cliff (n = 29..37 here) the chain flips between a fast and a
  // collapsed regime ("very unstable near the collapse point", as the paper
  // found on hardware): four times the samples there for the same precision.
  const double samples = (n >= 29 && n <= 37) ? 4 * kCompletions : kCompletions;
  load.window = static_cast<Tick>(samples / markov_throughput(n, kA, kS, kC) * kTicksPerSecond);
  load.seed = 1000 + static_cast<std::uint64_t>(n);
  return load;
}

int argmax(const std::map<int, double>& curve) {
  return std::max_element(curve.begin(), curve.end(),
                          [](auto& x, auto& y) { return x.second < y.second; })
      ->first;
}

// Oracle 1. In the oracle mode the ticket lock's service (critical section
// plus hand-off) is exponential with mean s + c*k/2, re-sampled whenever the
// number of waiters k changes, and think times are exponential: the
// simulation is then a sample path of exactly the model's continuous-time
// Markov chain, so the only admissible difference is sampling error
// (a deterministic critical section could not match the exponential-service
// chain: the closed queue is not insensitive to the service distribution).
// Tolerances:
//  - each point within 5 standard errors of the closed form, the standard
//    error estimated by batch means over 20 batches of >= 1250 critical
//    sections. Batch means slightly underestimate it (the chain has long
//    memory near and past the cliff: across the 64 points the z-scores
//    spread with sd ~1.2, not 1), so 5 estimated SE is about 4 true ones;
//    each point is also required to be precise (SE < 2.5 % of the value),
//    so the bound stays tight (typically 2-5 %);
//  - no bias: the mean z-score over the 64 points within +-0.75 (5 sd of a
//    mean of 64 z-scores of sd 1.2); a 1 % systematic error would fail it;
//  - the collapse point (argmax of throughput) within +-2 CPUs: the curve is
//    flat at its top (n = 26..30 lie within 1.5 % of the peak), so a tighter
//    bound would test the noise, not the model.
// The seeds are fixed, so the outcome is deterministic; with these seeds the
// largest |z| is 3.8 and the mean z -0.1.
TEST(MachineLockOracle, TicketLockMatchesTheBoydWickizerBirthDeathModel) {
  std::map<int, double> exact, simulated;
  double z_sum = 0;
  for (int n = 1; n <= 64; ++n) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const double x = markov_throughput(n, kA, kS, kC);
    const auto run = run_lock_load(LockKind::Ticket, /*oracle=*/true, n, load_for(n));
    exact[n] = x;
    simulated[n] = run.ops_per_s;
    EXPECT_LT(run.std_error, 0.025 * x);
    EXPECT_NEAR(run.ops_per_s, x, 5 * run.std_error) << "exact " << x << " ops/s";
    z_sum += (run.ops_per_s - x) / run.std_error;
  }
  EXPECT_NEAR(z_sum / 64, 0.0, 0.75);
  EXPECT_EQ(argmax(exact), 28);
  EXPECT_NEAR(argmax(simulated), argmax(exact), 2);
  // The collapse itself: past the peak the model loses most of its
  // throughput, and so must the simulation.
  EXPECT_LT(simulated[48], 0.35 * simulated[argmax(simulated)]);
}

// The model's own ticket lock (fixed critical section, hand-off by the line
// model: every spinner re-reads the line after a release, the next owner's
// read lands at a uniformly random place among them) under the same load,
// with the line transfer equal to c. Its service is not exponential and it
// pays a few more costs than s + c*k/2 (the atomics, the release store, the
// arrivals' fetch-and-adds on the same line), so it is not held to the
// curve; it must deviate in the direction the paper reports for real
// hardware: it collapses, no later than the model, and falls further.
TEST(MachineLockOracle, ModelTicketLockCollapsesNoLaterAndSharperThanTheMarkovModel) {
  std::map<int, double> exact, simulated;
  for (int n = 14; n <= 64; n += 2) {
    exact[n] = markov_throughput(n, kA, kS, kC);
    simulated[n] = run_lock_load(LockKind::Ticket, false, n, load_for(n)).ops_per_s;
  }
  const int peak = argmax(simulated);
  EXPECT_LE(peak, argmax(exact));
  EXPECT_GE(peak, argmax(exact) - 8);
  EXPECT_LT(simulated[64], exact[64]);
  EXPECT_LT(simulated[64], 0.2 * simulated[peak]);
}

// Oracle 2: the queued spinlock under the same load. No collapse: past
// saturation the throughput stays flat, at one critical section plus a
// constant hand-off per acquisition: the waiter spinning on the lock word
// sees the release after one transfer and claims the word with an atomic;
// at most one more transfer when an arriving contender's xchg has just taken
// the line away from the holder before its release store.
TEST(MachineLockOracle, QueuedLockDoesNotCollapseAndStaysFlatPastSaturation) {
  const auto params = machine_test::uniform_machine(64, kC);
  const double c = ticks_to_ns(ns_to_ticks(kC)), atomic = ticks_to_ns(params.atomic_rmw);
  std::map<int, double> simulated;
  for (int n : {1, 8, 16, 20, 24, 28, 32, 36, 40, 48, 56, 64}) {
    const auto run = run_lock_load(LockKind::Queued, false, n, load_for(n));
    simulated[n] = run.ops_per_s;
    if (n >= 40) {
      EXPECT_GT(run.stats.mcs_path, 0U);
      EXPECT_GT(run.stats.contended,
                run.stats.acquisitions / 2);  // saturated: most acquisitions wait
    }
  }
  const double peak = simulated[argmax(simulated)];
  // No collapse: throughput never falls as CPUs are added (0.5 % noise
  // allowance), and once saturated (n >= 48 here: about (a + s')/s' = 33 CPUs
  // keep it busy, and the approach is gradual) it is flat within 0.5 %.
  for (auto it = std::next(simulated.begin()); it != simulated.end(); ++it)
    EXPECT_GE(it->second, 0.995 * std::prev(it)->second) << "n = " << it->first;
  for (int n : {48, 56, 64}) EXPECT_GE(simulated[n], 0.995 * peak) << "n = " << n;
  // The saturated level: 1 / (s + hand-off), hand-off between one transfer
  // plus an atomic and two transfers plus an atomic, plus the conflict of an
  // RMW that queued behind another request (rmw_conflict, cache_line.hpp).
  EXPECT_LE(simulated[64], 1e9 / (kS + c + atomic));
  EXPECT_GE(simulated[64],
            1e9 / (kS + (2 + machine::kRmwConflict) * c + atomic + ticks_to_ns(params.l1_hit)));
  // Below saturation it tracks the ticket model's rising branch (same think time).
  EXPECT_NEAR(simulated[8], markov_throughput(8, kA, kS, kC), 0.02 * simulated[8]);
}

// The pending bit: a second contender spins on the lock word without an MCS
// node; a third queues one. Every hand-off then costs the same, one transfer
// and an atomic after the release, however many are waiting.
TEST(MachineLockOracle, QueuedLockPendingBitAndConstantHandOff) {
  for (int waiters : {1, 2, 9}) {
    SCOPED_TRACE("waiters = " + std::to_string(waiters));
    // Hand-offs are measured from the releaser's return from unlock(), which is when
    // its release lands only without a store buffer (test_store_buffer.cpp covers it).
    auto params = machine_test::uniform_machine(16, 100);
    params.store_buffer_entries = 0;
    machine::Topology topo(params);
    machine::CacheLine line("lock");
    Spinlock lock(LockKind::Queued, &line, 1);
    const Tick hold = ns_to_ticks(1000);
    std::vector<Tick> acquired(static_cast<std::size_t>(waiters) + 1), released(acquired.size());
    machine_test::TaskSet set;
    for (int i = 0; i <= waiters; ++i)
      set.add(i, [&, i](Task& t) {
        t.idle_until(ns_to_ticks(10) * i);  // arrive in order while the first holds the lock
        lock.lock(topo, t);
        acquired[static_cast<std::size_t>(i)] = t.cursor;
        t.charge(hold);
        lock.unlock(topo, t);
        released[static_cast<std::size_t>(i)] = t.cursor;
      });
    set.sim.run();
    EXPECT_EQ(lock.stats().pending_path, 1U);
    EXPECT_EQ(lock.stats().mcs_path, static_cast<std::uint64_t>(waiters - 1));
    EXPECT_EQ(lock.stats().acquisitions, static_cast<std::uint64_t>(waiters + 1));
    for (int i = 1; i <= waiters; ++i) {
      const auto ui = static_cast<std::size_t>(i);
      // FIFO, and each hand-off is one transfer plus the claiming atomic.
      EXPECT_EQ(acquired[ui] - released[ui - 1], topo.transfer(0, 1) + params.atomic_rmw)
          << "hand-off " << i;
    }
  }
}

// The ticket lock's hand-off, by contrast, grows with the spinners: with k
// spinners after a release, the next owner's re-read lands at a uniformly
// random place among their k reads, (k+1)/2 transfers on average. W
// contenders queue behind a long holder; hand-off j then has W-j+1
// spinners, so the W hand-offs sum to c * sum_{k=1..W} (k+1)/2 on average.
// Averaged over 10 seeds (sd of the mean ~3 % here), within 12 %.
TEST(MachineLockOracle, TicketHandOffGrowsWithSpinners) {
  constexpr int kWaiters = 40;
  auto params = machine_test::uniform_machine(64, 100);
  params.store_buffer_entries = 0;  // hand-offs from the release's landing, as above
  machine::Topology topo(params);
  double total = 0;
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    machine::CacheLine line("lock");
    Spinlock lock(LockKind::Ticket, &line, seed);
    std::vector<Tick> acquired(kWaiters + 1), released(kWaiters + 1);
    machine_test::TaskSet set;
    for (int i = 0; i <= kWaiters; ++i)
      set.add(i, [&, i](Task& t) {
        t.idle_until(ns_to_ticks(10) * i);
        lock.lock(topo, t);
        acquired[static_cast<std::size_t>(i)] = t.cursor;
        t.charge(ns_to_ticks(20000));
        lock.unlock(topo, t);
        released[static_cast<std::size_t>(i)] = t.cursor;
      });
    set.sim.run();
    for (std::size_t j = 1; j <= kWaiters; ++j) {
      const Tick handoff = acquired[j] - released[j - 1];
      const auto spinners = static_cast<Tick>(kWaiters + 1 - j);
      EXPECT_GE(handoff, topo.transfer(0, 1));
      EXPECT_LE(handoff, spinners * topo.transfer(0, 1));
      total += ticks_to_ns(handoff);
    }
  }
  double expected = 0;
  for (int k = 1; k <= kWaiters; ++k) expected += 100.0 * (k + 1) / 2;
  EXPECT_NEAR(total / 10, expected, 0.12 * expected);
}

// Determinism: every draw goes through our seeded Rng and no decision
// depends on addresses or hash order, so the same seed gives the same
// result to the last bit, and another seed a different one.
TEST(MachineLockOracle, SameSeedSameResult) {
  for (auto kind : {LockKind::Ticket, LockKind::Queued}) {
    auto load = load_for(40);
    load.window = ns_to_ticks(2e6);
    const auto a = run_lock_load(kind, false, 40, load);
    const auto b = run_lock_load(kind, false, 40, load);
    EXPECT_EQ(a.ops_per_s, b.ops_per_s);
    EXPECT_EQ(a.stats.wait, b.stats.wait);
    EXPECT_EQ(a.stats.hold, b.stats.hold);
    for (std::size_t i = 0; i < a.tasks.size(); ++i) EXPECT_EQ(a.tasks[i].time, b.tasks[i].time);
    load.seed += 1;
    EXPECT_NE(run_lock_load(kind, false, 40, load).stats.wait, a.stats.wait);
  }
}

// Time order of a release (spinlock.cpp, unlock()): the hand-off is decided at
// the release store's issue date. An interrupt that lands on the releaser right
// after the store (here an IPI of 20 us) delays the releaser, not the release:
// the waiter gets the lock one transfer after the store is visible and runs
// from that date, before a third task's access 10 us later. (Decided after the
// releaser's advance, the waiter was resumed at the clock with a cursor 20 us
// behind it, and its next line request came after later ones.)
TEST(MachineLockOrder, AnInterruptAfterTheReleaseStoreDelaysTheReleaserNotTheWaiter) {
  for (bool reference : {false, true}) {
    SCOPED_TRACE("reference " + std::to_string(reference));
    auto params = machine_test::uniform_machine(4, 100);
    machine::Topology topo(params);
    machine::CacheLine line("lock"), data("data");
    Spinlock lock(LockKind::Ticket, &line, 1);
    machine::IpiQueue ipis;
    const Tick hold = ns_to_ticks(1000), irq = ns_to_ticks(20'000);
    Tick released = -1, acquired = -1, read_at = -1, releaser_done = -1;
    machine_test::TaskSet set;
    set.sim.set_reference_order(reference);
    set.add(0, [&](Task& t) {
      t.ipis = &ipis;
      lock.lock(topo, t);
      t.charge(hold);
      released = t.cursor;
      ipis.post(t.cursor, irq);  // arrives as the release store issues
      lock.unlock(topo, t);
      releaser_done = t.cursor;
    });
    set.add(1, [&](Task& t) {
      t.idle_until(ns_to_ticks(100));  // queues behind the holder
      lock.lock(topo, t);
      acquired = t.cursor;
      machine::load(topo, t, data);
      read_at = t.cursor;
      lock.unlock(topo, t);
    });
    set.add(2, [&](Task& t) {
      t.idle_until(ns_to_ticks(11'000));
      machine::load(topo, t, data);
    });
    ASSERT_NO_THROW(set.sim.run());
    EXPECT_GE(releaser_done, released + irq);
    EXPECT_LT(acquired, released + ns_to_ticks(1'000)) << "the waiter waited for the interrupt";
    EXPECT_LT(read_at, ns_to_ticks(11'000));
  }
}

}  // namespace
}  // namespace semsim
