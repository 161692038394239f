// Issue 19, item 4, SMT: busy hardware threads of one core share its
// execution resources (machine/smt.hpp). Oracles on a 2-core x 2-thread test
// machine (CPUs 0-1 are core 0, 2-3 core 1) with a slowdown of 1.5: a charge
// of W takes 1.5 W while the sibling is busy (computing or spinning), W while
// it is idle, W beside a busy CPU of another core; a sibling that starts in the
// middle of a charge stretches only the rest of it; a sibling woken onto its
// idle CPU counts from the date it runs, not from the wake-up; a sibling
// spinning on a lock weighs smt_spin_slowdown instead. Then the
// lock-curve effect: MCS on westmere-ex-160 in compact placement slows once
// threads share cores: each holder beside a spinner takes the factor longer.
#include <gtest/gtest.h>

#include <cmath>
#include <deque>

#include "config/machine_config.hpp"
#include "config/scenario.hpp"
#include "core/errors.hpp"
#include "core/simulation.hpp"
#include "driver/simulate.hpp"
#include "machine/placement.hpp"
#include "machine/smt.hpp"
#include "machine/user_lock.hpp"
#include "test_machine_harness.hpp"
#include "test_reference_order.hpp"

namespace semsim {
namespace {

using machine::Task;

constexpr double kSlowdown = 1.5;
const Tick kW = ns_to_ticks(1000);

// uniform_machine reshaped as 2 cores x 2 threads, siblings numbered adjacently.
config::MachineParams smt_machine(double slowdown = kSlowdown) {
  auto m = machine_test::smt_pairs_machine(4);
  m.smt_compute_slowdown = slowdown;
  return m;
}

// Runs one task per entry of `cpus`, each doing body(task, index) after its
// start on the scheduler; returns each task's cursor when its body returned.
template <class Body>
std::vector<Tick> run_tasks(const config::MachineParams& m, const std::vector<int>& cpus,
                            Body body) {
  machine::Topology topo(m);
  machine::Scheduler sched(topo);
  machine_test::TaskSet set;
  std::vector<Tick> end(cpus.size(), -1);
  for (std::size_t i = 0; i < cpus.size(); ++i)
    set.add(cpus[i], [&, i](Task& t) {
      body(t, sched, static_cast<int>(i));
      end[i] = t.cursor;
      sched.exit(t);
    });
  set.sim.run();
  return end;
}

TEST(Smt, BothSiblingsComputingEachTakesTheFactorLonger) {
  const auto end = run_tasks(smt_machine(), {0, 1}, [](Task& t, machine::Scheduler& s, int) {
    s.start(t);
    t.charge(kW);
  });
  EXPECT_EQ(end[0], std::llround(kSlowdown * static_cast<double>(kW)));
  EXPECT_EQ(end[1], std::llround(kSlowdown * static_cast<double>(kW)));
}

TEST(Smt, AloneOnItsCoreTheChargeIsUnchanged) {
  const auto end = run_tasks(smt_machine(), {0}, [](Task& t, machine::Scheduler& s, int) {
    s.start(t);
    t.charge(kW);
  });
  EXPECT_EQ(end[0], kW);
}

TEST(Smt, BusyCpusOfOtherCoresChangeNothing) {
  const auto end = run_tasks(smt_machine(), {0, 2}, [](Task& t, machine::Scheduler& s, int) {
    s.start(t);
    t.charge(kW);
  });
  EXPECT_EQ(end[0], kW);
  EXPECT_EQ(end[1], kW);
}

TEST(Smt, WithoutTheParameterSiblingsDoNotShare) {
  const auto end = run_tasks(smt_machine(1.0), {0, 1}, [](Task& t, machine::Scheduler& s, int) {
    s.start(t);
    t.charge(kW);
  });
  EXPECT_EQ(end[0], kW);
  EXPECT_EQ(end[1], kW);
}

// A spinning sibling (a wait: advance_to) is busy: it stretches the other's
// work, and its own wait is not stretched.
TEST(Smt, ASpinningSiblingIsBusyAndItsWaitIsNotStretched) {
  const Tick spin = 10 * kW;
  const auto end = run_tasks(smt_machine(), {0, 1}, [&](Task& t, machine::Scheduler& s, int i) {
    s.start(t);
    if (i == 0)
      t.charge(kW);
    else
      t.advance_to(spin);
  });
  EXPECT_EQ(end[0], std::llround(kSlowdown * static_cast<double>(kW)));
  EXPECT_EQ(end[1], spin);
}

// Task 0 charges W from `lead` on; its sibling (task 1) is busy from 0 and spins on
// a lock from `spin_from` until `spin_until`. Both tasks' ends.
std::vector<Tick> charge_beside_spinner(const config::MachineParams& m, Tick lead, Tick spin_from,
                                        Tick spin_until) {
  return run_tasks(m, {0, 1}, [&](Task& t, machine::Scheduler& s, int i) {
    s.start(t);
    if (i == 0) {
      t.advance_to(lead);
      t.charge(kW);
    } else {
      t.advance_to(spin_from);  // busy, not spinning
      machine::InFunc in(t, machine::Func::RawSpinLock);
      t.advance_to(spin_until);
    }
  });
}

// A sibling spinning on a lock (its task in a lock's acquisition: the Spin
// category) weighs smt_spin_slowdown instead: W beside it takes 2.5 W; a spin
// factor below 1 (the default 0) falls back to the compute factor, 1.5 W. The
// charge starts 10 ns in, after the spinner entered its lock function.
TEST(Smt, ASiblingSpinningOnALockSlowsByTheSpinFactor) {
  const Tick spin = 10 * kW, lead = ns_to_ticks(10);
  for (const double spin_factor : {2.5, 0.0}) {
    auto m = smt_machine();
    m.smt_spin_slowdown = spin_factor;
    const auto end = charge_beside_spinner(m, lead, 0, spin);
    const double factor = spin_factor >= 1 ? spin_factor : kSlowdown;
    EXPECT_EQ(end[0], lead + std::llround(factor * static_cast<double>(kW))) << spin_factor;
    EXPECT_EQ(end[1], spin) << spin_factor;  // the spinner's own wait is not stretched
  }
}

// The spin ends in the middle of the charge (the sibling computes after): the
// pass that began beside the spinner, at the spin factor (3), ends sooner: the
// sibling's step that ends the spin moves the waiting task's turn to where the
// work is done at the compute factor from then on (smt.hpp, end_passes_sooner()).
// Before, time could not be given back and the charge ended at 10 ns + 3 W.
TEST(Smt, ASpinThatEndsMidChargeCountsTheComputeFactorAfter) {
  auto m = smt_machine();
  m.smt_spin_slowdown = 3.0;
  const Tick lead = ns_to_ticks(10);
  const auto end = run_tasks(m, {0, 1}, [&](Task& t, machine::Scheduler& s, int i) {
    s.start(t);
    if (i == 0) {
      t.advance_to(lead);
      t.charge(kW);
    } else {
      {
        machine::InFunc in(t, machine::Func::RawSpinLock);
        t.advance_to(kW);
      }
      t.charge(10 * kW);  // computes from then on
    }
  });
  const double by_the_end_of_the_spin = static_cast<double>(kW - lead) / 3.0;
  const double want =
      static_cast<double>(kW) + kSlowdown * (static_cast<double>(kW) - by_the_end_of_the_spin);
  EXPECT_NEAR(static_cast<double>(end[0]), want, 2.0);
}

// The sibling leaves its CPU at W/2 (its task exits), in the middle of a charge
// of W that began beside it at 10 ns: (W/2 - 10 ns) / 1.5 of the work is done by
// then and the rest alone, not 1.5 W from the start as its first pass assumed.
TEST(Smt, ASiblingLeavingMidChargeEndsItSooner) {
  const Tick lead = ns_to_ticks(10);
  const auto end = run_tasks(smt_machine(), {0, 1}, [&](Task& t, machine::Scheduler& s, int i) {
    s.start(t);
    if (i == 0) {
      t.advance_to(lead);  // the sibling is on its CPU by then
      t.charge(kW);
    }
    if (i == 1) t.advance_to(kW / 2);  // then exits: its CPU is idle from W/2
  });
  const double before = static_cast<double>(kW / 2 - lead) / kSlowdown;
  EXPECT_NEAR(static_cast<double>(end[0]), static_cast<double>(kW / 2 + kW) - before, 2.0);
}

// The spin starts in the middle of the charge (the sibling computes before): the
// history dates the spin, so the charge runs at the compute factor until W/2 and at
// the spin factor after it. Read from the sibling's function when a pass ends, the
// whole first pass counted as spinning, and the charge ended at 10 ns + 3 W.
TEST(Smt, ASpinThatStartsMidChargeCountsFromItsDate) {
  auto m = smt_machine();
  m.smt_spin_slowdown = 3.0;
  const Tick lead = ns_to_ticks(10);
  const auto end = charge_beside_spinner(m, lead, kW / 2, 10 * kW);
  const double before = static_cast<double>(kW / 2 - lead) / kSlowdown;  // work done by W/2
  const double want = static_cast<double>(kW / 2) + 3.0 * (static_cast<double>(kW) - before);
  EXPECT_NEAR(static_cast<double>(end[0]), want, 2.0);
}

// The sibling starts at W/2, in the middle of a charge of W that began alone:
// the first half runs at full speed, the rest at 1/1.5: W/2 + 1.5 W/2.
TEST(Smt, ASiblingStartingMidChargeStretchesOnlyTheRest) {
  const auto end = run_tasks(smt_machine(), {0, 1}, [](Task& t, machine::Scheduler& s, int i) {
    if (i == 1) t.idle_until(kW / 2);
    s.start(t);
    if (i == 0) t.charge(kW);
    if (i == 1) t.advance_to(t.cursor + 10 * kW);  // spins past the other's charge
  });
  EXPECT_EQ(end[0], kW / 2 + std::llround(kSlowdown * static_cast<double>(kW / 2)));
}

// A wake-up onto the sibling's idle CPU: the wakee runs there wakeup_latency
// (5 us) after the wake-up, so a charge of W made right after the wake-up,
// ending before that, is not stretched although the wakee is already the
// sibling's current task. A second charge, once the wakee runs, is.
TEST(Smt, AWokenSiblingCountsFromTheDateItRuns) {
  const auto m = smt_machine();
  Tick first_end = -1, second = -1;
  Task* sleeper = nullptr;
  run_tasks(m, {0, 1}, [&](Task& t, machine::Scheduler& s, int i) {
    s.start(t);
    if (i == 1) {
      sleeper = &t;
      s.block(t);  // sleeps until task 0 wakes it
      t.advance_to(t.cursor + 20 * kW);
      return;
    }
    t.advance_to(5 * kW);  // let the sibling go to sleep first
    s.wake(t, *sleeper);
    const Tick start = t.cursor;
    t.charge(kW);
    first_end = t.cursor - start;
    t.advance_to(start + m.wakeup_latency + kW);  // the wakee runs by now
    const Tick from = t.cursor;
    t.charge(kW);
    second = t.cursor - from;
  });
  EXPECT_EQ(first_end, kW);
  EXPECT_EQ(second, std::llround(kSlowdown * static_cast<double>(kW)));
}

// block() accounts the rest of the sleeper's switch-out (half a context switch,
// W here) after its cursor without moving it: its CPU stays busy until that is
// done (switched_out_at). A charge the sibling starts at W/2, after the sleeper
// blocked near 0, runs beside a busy sibling until then and alone after: the run
// is dated through the transition (machine/smt.hpp), not at the rate of its start
// (1.5 W, what a pass that assumed the sibling busy throughout gave).
TEST(Smt, ASleepersSwitchOutKeepsItsCpuBusyUntilItEnds) {
  auto m = smt_machine();
  ASSERT_EQ(m.context_switch / 2, kW);
  Tick end = -1, idle = -1;
  Task* sleeper = nullptr;
  run_tasks(m, {0, 1}, [&](Task& t, machine::Scheduler& s, int i) {
    s.start(t);
    if (i == 1) {
      sleeper = &t;
      s.block(t);  // near 0: switching out for W
      return;
    }
    t.advance_to(kW / 2);  // the sibling has blocked by now
    t.charge(kW);
    end = t.cursor;
    idle = sleeper->switched_out_at;
    s.wake(t, *sleeper);
  });
  ASSERT_GT(idle, kW / 2);
  ASSERT_LT(idle, kW / 2 + kW);
  const double beside = static_cast<double>(idle - kW / 2) / kSlowdown;  // work done by then
  EXPECT_NEAR(static_cast<double>(end), static_cast<double>(idle + kW) - beside, 1.0);
}

// A run of private work (turns owed, machine/task.hpp) is dated as one charge of
// the same work: W in two pieces, then a shared step, beside a sibling that
// leaves at W/2 ends where ASiblingLeavingMidChargeEndsItSooner's one charge
// does. The sibling's exit re-dates the run while it waits for its turn.
TEST(Smt, ARunOfPrivateWorkIsDatedLikeOneCharge) {
  const Tick lead = ns_to_ticks(10);
  const auto end = run_tasks(smt_machine(), {0, 1}, [&](Task& t, machine::Scheduler& s, int i) {
    s.start(t);
    if (i == 0) {
      t.advance_to(lead);
      t.charge_private(kW / 4);
      t.charge_private(kW - kW / 4);
      t.sync();
    }
    if (i == 1) t.advance_to(kW / 2);
  });
  const double before = static_cast<double>(kW / 2 - lead) / kSlowdown;
  EXPECT_NEAR(static_cast<double>(end[0]), static_cast<double>(kW / 2 + kW) - before, 2.0);
}

// A sibling on CPU 1 that is busy from 0 and leaves at W/2.
void add_sibling_leaving_at_half(machine_test::TaskSet& set, machine::Scheduler& sched) {
  set.add(1, [&sched](Task& t) {
    sched.start(t);
    t.advance_to(kW / 2);
    sched.exit(t);
  });
}

// What an observer reads of a run that waits for its turn is at the run's dates
// as re-dated: a semop counted after W of private work beside a sibling that
// leaves at W/2 is done at W/2 + (W - W/3) = 7W/6, not at 1.5 W (the date the
// run had before the sibling left); CPU time up to a date is that date's share.
TEST(Smt, AnObserverReadsAWaitingRunAtItsFinalDates) {
  machine::Topology topo(smt_machine());
  machine::Scheduler sched(topo);
  machine_test::TaskSet set;
  machine::Task& worker = set.add(0, [&](Task& t) {
    sched.start(t);
    t.charge_private(kW);
    t.count_semop();
    t.charge_private(kW);
    t.sync();
    sched.exit(t);
  });
  add_sibling_leaving_at_half(set, sched);
  const Tick done = kW / 2 + kW - kW / 3;  // 7W/6, to a tick
  std::uint64_t before = 9, after = 9;
  Tick user_by = -1;
  set.sim.spawn("observer", [&](core::Actor& self) {
    self.sleep_until(done - 2);
    before = worker.semops_at(self.now());
    user_by = worker.time_at(self.now())[static_cast<std::size_t>(machine::Func::User)];
    self.sleep_until(done + 2);
    after = worker.semops_at(self.now());
  });
  set.sim.run();
  EXPECT_EQ(before, 0u);
  EXPECT_EQ(after, 1u);
  EXPECT_EQ(user_by, done - 2);
}

// Work that ends before the sibling's pending turn is final as dated, owed work
// outside any run (machine/smt.hpp); a semop counted there keeps its date, and one
// counted in the run that follows moves with the run: the observer reads each at
// its own date. The sibling waits for its turn at W/2, where it leaves: the first
// W/4 ends at lead + 3W/8, before it; the next W, stretched to 1.5 W as first
// dated, ends sooner once the sibling has left.
TEST(Smt, ACountBeforeARunKeepsItsDateAndOneInTheRunMovesWithIt) {
  machine::Topology topo(smt_machine());
  machine::Scheduler sched(topo);
  machine_test::TaskSet set;
  const Tick lead = ns_to_ticks(10);
  machine::Task& worker = set.add(0, [&](Task& t) {
    sched.start(t);
    t.advance_to(lead);  // the sibling waits for its turn at W/2 from here on
    t.charge_private(kW / 4);
    t.count_semop();
    t.charge_private(kW);
    t.count_semop();
    t.charge_private(kW);
    t.sync();
    sched.exit(t);
  });
  add_sibling_leaving_at_half(set, sched);
  const Tick first = lead + kW / 4 * 3 / 2;  // 385 ns
  // The run's W from `first`: (W/2 - first) at 1/1.5 of the pace, the rest alone.
  const double second = static_cast<double>(kW / 2) + static_cast<double>(kW) -
                        static_cast<double>(kW / 2 - first) / kSlowdown;  // ~1423 ns
  const Tick as_first_dated = first + kW * 3 / 2;                         // 1885 ns
  std::vector<std::uint64_t> seen;
  set.sim.spawn("observer", [&](core::Actor& self) {
    for (Tick at : {first - 2, first + 2, static_cast<Tick>(second) - 2,
                    static_cast<Tick>(second) + 2, as_first_dated + 2}) {
      self.sleep_until(at);
      seen.push_back(worker.semops_at(self.now()));
    }
  });
  set.sim.run();
  EXPECT_EQ(seen, (std::vector<std::uint64_t>{0, 1, 1, 2, 2}));
}

TEST(Smt, HistoryAnswersByDate) {
  auto m = smt_machine();
  machine::Topology topo(m);
  machine::SmtCores smt(topo);
  ASSERT_TRUE(smt.active());
  smt.set_busy(1, true, 100, 0);
  smt.set_busy(1, false, 400, 0);
  EXPECT_EQ(smt.busy_siblings(0, 99), 0);
  EXPECT_EQ(smt.busy_siblings(0, 100), 1);
  EXPECT_EQ(smt.busy_siblings(0, 400), 0);
  EXPECT_EQ(smt.busy_siblings(2, 200), 0);  // another core
  // [0, 600): 100 alone, 300 shared (200 of work), 200 alone.
  EXPECT_DOUBLE_EQ(smt.work_in(0, 0, 600), 100 + 300 / kSlowdown + 200);
}

TEST(Smt, ASlowdownBelowOneIsRefused) {
  Json doc = config::machine_document("westmere-ex-160");
  doc["smt_compute_slowdown"] = {{"value", 0.8}, {"source", "test"}};
  try {
    config::parse_machine(doc, "test");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("smt_compute_slowdown"), std::string::npos) << e.what();
  }
}

// --- The lock-curve effect ---------------------------------------------------

// lock-stress as the workload runs it (scheduler placement, so the SMT model
// applies): n threads in compact order, MCS, 1000-cycle critical section and 4
// protected lines, no delay; acquisitions per second over the window.
double mcs_ops(const config::MachineParams& m, int n) {
  machine::Topology topo(m);
  machine::Scheduler sched(topo);
  machine::UserLock lock(machine::UserLockKind::Mcs, topo.cpus(), machine::lock_stress_contention(),
                         7);
  std::deque<machine::CacheLine> data;
  for (int i = 0; i < 4; ++i)
    data.emplace_back("data" + std::to_string(i)).set_contention(machine::lock_stress_contention());
  const auto order = machine::placement_order(topo, machine::Placement::Compact);
  const Tick critical = machine::cycles_to_ticks(topo, 1000);
  machine_test::TaskSet set;
  for (int i = 0; i < n; ++i)
    set.add(order[static_cast<std::size_t>(i)], [&](Task& t) {
      sched.start(t);
      for (;;) {
        lock.lock(topo, t);
        {
          machine::InFunc in(t, machine::Func::User);
          t.charge(critical);
          for (auto& d : data)
            t.advance_to(d.access(topo, t.cpu, machine::Access::Write, t.cursor));
        }
        lock.unlock(topo, t);
      }
    });
  const Tick warmup = 100 * kTicksPerUs, window = kTicksPerMs;
  std::uint64_t acquisitions = 0;
  set.sim.spawn("timekeeper", [&](core::Actor& self) {
    self.sleep_until(warmup);
    lock.reset_stats();
    self.sleep_until(warmup + window);
    acquisitions = lock.stats().acquisitions;
    set.sim.stop_all();
  });
  set.sim.run();
  return static_cast<double>(acquisitions) / ticks_to_seconds(window);
}

// Compact placement fills a core's siblings one after the other, so from 100
// threads on every lock holder has a busy (spinning) sibling: each critical
// section takes f times longer, and the hand-over period 1/ops grows by
// (f - 1) critical sections against the same run without the slowdown. The
// published curve (mctop_lock_backoff_diassrv8.csv) falls from 678 k at 80
// threads to 532 k at 100 and 431 k at 160; without the slowdown the model
// does not fall at all.
TEST(Smt, McsHoldersBesideASpinnerTakeTheFactorLonger) {
  const auto m = config::load_machine("westmere-ex-160");
  ASSERT_GT(m.smt_compute_slowdown, 1.0);
  // Every holder's sibling is an MCS waiter, spinning: the spin factor applies.
  const double factor = m.smt_spin_slowdown >= 1 ? m.smt_spin_slowdown : m.smt_compute_slowdown;
  auto flat = m;
  flat.smt_compute_slowdown = 1.0;
  flat.smt_spin_slowdown = 1.0;
  const double critical_ns = 1000 / m.clock_ghz;
  for (int n : {100, 160}) {
    const double with = mcs_ops(m, n), without = mcs_ops(flat, n);
    const double want = 1e9 / without + (factor - 1) * critical_ns;
    EXPECT_NEAR(1e9 / with, want, 0.05 * want) << n << " threads";
  }
}

// The siblings' history is read at the right dates: the fast path gives the
// reference mode's bytes with cores shared (lock-stress above 80 threads on
// westmere-ex-160, and sem-lockunlock's sleeping waiters on xeon-24).
TEST(Smt, FastPathMatchesReferenceModeWithSharedCores) {
  const char* docs[] = {
      R"({"name": "smt", "machine": "westmere-ex-160", "kernel": "global_lock",
          "workload": {"type": "lock-stress", "lock": "tas", "critical_cycles": 1000,
                       "delay_cycles": 200, "pin": "compact"},
          "threads": [100], "duration_ms": 0.1, "warmup_ms": 0.02, "seed": 2, "repeats": 1})",
      R"({"name": "smt", "machine": "xeon-24", "kernel": "per_sem_lock",
          "workload": {"type": "semop-multi", "semaphores": 8, "pattern": "stride"},
          "threads": [20, 40], "duration_ms": 0.2, "warmup_ms": 0.05, "seed": 3, "repeats": 1})"};
  const auto held = machine::SmtCores::held_at_clock();
  for (const char* text : docs) {
    const Json doc = Json::parse(text);
    EXPECT_EQ(test_reference::simulate_bytes(doc, false), test_reference::simulate_bytes(doc, true))
        << text;
  }
  // No run was re-dated behind the clock (machine/smt.hpp says why none can be).
  EXPECT_EQ(machine::SmtCores::held_at_clock(), held);
}

// New unpinned tasks go to idle cores before idle SMT siblings of busy ones
// (select_idle_core()), whatever the CPU numbering: two aim9-shm processes (each
// its own array, nothing shared) on the 2-core x 2-thread i3-ivybridge, whose
// numbering puts CPUs 0 and 1 on one core, run twice as fast as one, as on
// laptop-4 (linux numbering). Starting on CPUs 0 and 1 they shared a core: 1.31x.
TEST(Smt, NewUnpinnedTasksStartOnIdleCoresBeforeSiblings) {
  for (const char* machine : {"i3-ivybridge", "laptop-4"}) {
    auto doc =
        Json::parse(R"({"name": "aim9", "kernel": "hysteresis", "workload": {"type": "aim9-shm"},
      "threads": [1, 2], "duration_ms": 2, "warmup_ms": 0.5, "precision": 0, "seed": 1})");
    doc["machine"] = machine;
    const auto points = driver::simulate(parse_scenario(doc))["points"];
    const double one = points[0]["ops_per_s"].get<double>();
    const double two = points[1]["ops_per_s"].get<double>();
    EXPECT_NEAR(two / one, 2.0, 0.05) << machine;
  }
}

}  // namespace
}  // namespace semsim
