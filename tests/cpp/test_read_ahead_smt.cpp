// Read-ahead inside an SMT run (machine/task.hpp, "Read-ahead in a run"): a
// kernel load that hits a quiet line goes ahead of the owed turn even where a
// sibling may still re-date the task's run of work. The read moves with the run;
// at the run's turn a write dated between the read's first and final dates is a
// conflict (the run is done again in strict order), a later write is not, and a
// run that could stretch past the observer's pending turn does not read ahead.
// Oracles on a 2-core x 2-thread machine (CPUs 0-1 one core, 2-3 the other) with
// a slowdown of 1.5, each against the same run in reference mode.
#include <gtest/gtest.h>

#include <cstdint>

#include "config/machine_config.hpp"
#include "core/errors.hpp"
#include "core/simulation.hpp"
#include "machine/cache_line.hpp"
#include "machine/scheduler.hpp"
#include "machine/store_buffer.hpp"
#include "machine/task.hpp"
#include "test_machine_harness.hpp"

namespace semsim {
namespace {

using machine::Task;

const Tick kW = ns_to_ticks(1000);

// Every line quiet after one read (restored on scope exit: tests share a process).
struct EveryLineQuiet {
  EveryLineQuiet() { machine::set_quiet_reads(1); }
  ~EveryLineQuiet() { machine::set_quiet_reads(machine::kQuietReads); }
};

// A worker on CPU 0 does W of private work, a kernel load of a line CPU 0 holds a
// copy of, W more and a turn; its sibling on CPU 1 runs from `sibling_from` to
// `sibling_until`; a writer on CPU 2 stores to the line at `write_at` (-1: never);
// an observer, if `observer_at` >= 0, has its turn there.
struct SmtRun {
  config::MachineParams m = [] {
    auto p = machine_test::smt_pairs_machine(4);
    p.smt_compute_slowdown = 1.5;
    return p;
  }();
  machine::Topology topo{m};
  machine::Scheduler sched{topo};
  machine::CacheLine line{"quiet"};
  machine_test::TaskSet set;
  Tick end = -1;
  std::uint64_t run_reads = 0;

  SmtRun(bool reference, Tick sibling_from, Tick sibling_until, Tick write_at,
         Tick observer_at = -1) {
    line.access(topo, 0, machine::Access::Read, 0);
    set.sim.set_reference_order(reference);
    set.sim.set_read_ahead(!reference);
    set.add(0, [this](Task& t) {
      sched.start(t);
      t.charge_private(kW);
      const auto before = machine::run_read_aheads();
      machine::load(topo, t, line, machine::Turn::Owe);
      run_reads = machine::run_read_aheads() - before;
      t.charge_private(kW);
      t.sync();
      end = t.cursor;
      sched.exit(t);
    });
    set.add(1, [this, sibling_from, sibling_until](Task& t) {
      t.idle_until(sibling_from);
      sched.start(t);
      t.advance_to(sibling_until);
      sched.exit(t);
    });
    if (write_at >= 0)
      set.add(2, [this, write_at](Task& t) {
        t.idle_until(write_at);
        sched.start(t);
        machine::store(topo, t, line);
        sched.exit(t);
      });
    if (observer_at >= 0)
      set.sim.spawn_observer("observer",
                             [observer_at](core::Actor& self) { self.sleep_until(observer_at); });
  }
  void run() { set.sim.run(); }
};

// What a test compares of a run (one SimGrid engine at a time: each is run and gone).
struct Outcome {
  Tick end = -1;
  std::uint64_t run_reads = 0, hits = 0;
  bool conflict = false;
};
Outcome outcome(bool reference, Tick sibling_from, Tick sibling_until, Tick write_at,
                Tick observer_at = -1) {
  SmtRun r(reference, sibling_from, sibling_until, write_at, observer_at);
  Outcome o;
  try {
    r.run();
  } catch (const ReadAheadConflict&) {
    o.conflict = true;
  }
  o.end = r.end;
  o.run_reads = r.run_reads;
  o.hits = r.line.stats().hits;
  return o;
}
const Tick kHit = [] {
  auto p = machine_test::smt_pairs_machine(4);
  return p.l1_hit;
}();

// The sibling leaves at W/2: the run, first dated beside it (the read at 1.5 W), is
// re-dated sooner (the read at 7W/6); the hit's latency moves with it.
TEST(ReadAheadInRun, AReadReDatedSoonerGivesTheStrictOrdersDates) {
  EveryLineQuiet quiet;
  const Outcome fast = outcome(false, 0, kW / 2, -1), strict = outcome(true, 0, kW / 2, -1);
  EXPECT_EQ(fast.run_reads, 1u);
  EXPECT_EQ(strict.run_reads, 0u);
  EXPECT_FALSE(fast.conflict);
  EXPECT_EQ(fast.end, strict.end);
  EXPECT_EQ(fast.hits, strict.hits);
  // 7W/6 to the read, its hit, and W beside no sibling.
  EXPECT_EQ(strict.end, kW / 2 + kW - kW / 3 + kHit + kW);
}

// The sibling starts at W/2 and stays: the read, first dated at W (alone), is at
// 1.25 W once re-dated. A write at 1.1 W lies between: the strict order serves it
// first and the read misses, so the run that read ahead is a conflict.
TEST(ReadAheadInRun, AWriteBetweenTheFirstAndTheFinalDateIsAConflict) {
  EveryLineQuiet quiet;
  const Tick write_at = kW + kW / 10;
  const Outcome fast = outcome(false, kW / 2, 10 * kW, write_at),
                strict = outcome(true, kW / 2, 10 * kW, write_at);
  EXPECT_TRUE(fast.conflict);
  EXPECT_EQ(fast.run_reads, 1u);
  EXPECT_FALSE(strict.conflict);
  EXPECT_EQ(strict.hits, 0u);  // the worker's read missed after the write
}

// The same with the write at 1.3 W, after the read's final date: no conflict, and
// the strict order's bytes.
TEST(ReadAheadInRun, AWriteAfterTheFinalDateIsNone) {
  EveryLineQuiet quiet;
  const Tick write_at = kW + 3 * kW / 10;
  const Outcome fast = outcome(false, kW / 2, 10 * kW, write_at),
                strict = outcome(true, kW / 2, 10 * kW, write_at);
  EXPECT_FALSE(fast.conflict);
  EXPECT_EQ(fast.run_reads, 1u);
  EXPECT_EQ(fast.end, strict.end);
  EXPECT_EQ(fast.hits, 1u);
  EXPECT_EQ(strict.hits, 1u);
}

// An observer's turn at 1.2 W: the read at W (first dated) could be re-dated to 1.5 W
// (the run since 0 stretched by 1.5), past it, so it takes its turn instead.
TEST(ReadAheadInRun, NoRunThatCouldStretchPastTheObserversTurnReadsAhead) {
  EveryLineQuiet quiet;
  const Tick observer_at = kW + kW / 5;
  const Outcome fast = outcome(false, kW / 2, 10 * kW, -1, observer_at),
                strict = outcome(true, kW / 2, 10 * kW, -1, observer_at);
  EXPECT_EQ(fast.run_reads, 0u);
  EXPECT_FALSE(fast.conflict);
  EXPECT_EQ(fast.end, strict.end);
}

}  // namespace
}  // namespace semsim
