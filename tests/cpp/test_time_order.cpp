// Time order (core/simulation.hpp, machine/task.hpp, machine/cache_line.hpp):
// the calendar's semantics, the line's order check, and the equivalence of the
// fast path with the reference mode (no shortcut: every turn through the
// calendar) on every generation, every shipped workload and oversubscription.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "config/machine_config.hpp"
#include "config/scenario.hpp"
#include "core/errors.hpp"
#include "core/simulation.hpp"
#include "driver/simulate.hpp"
#include "ipc/kernel_policy.hpp"
#include "machine/cache_line.hpp"
#include "machine/smt.hpp"
#include "machine/store_buffer.hpp"
#include "machine/task.hpp"
#include "test_machine_files.hpp"
#include "test_reference_order.hpp"

namespace semsim {
namespace {

using core::Actor;
using core::Simulation;

using test_reference::simulate_bytes;

// At one date: callbacks first, then the tasks' turns by task id (core/calendar.hpp),
// whatever order they were queued in.
TEST(TimeOrder, EventsOfOneDateRunCallbacksFirstThenTurnsByTask) {
  const std::vector<std::string> want = {"start0", "start1", "start2",   "timer100", "t100:0",
                                         "t100:1", "t100:2", "end2@110", "end1@120", "end0@130"};
  for (bool reference : {false, true}) {
    Simulation sim;
    sim.set_reference_order(reference);
    std::vector<std::string> log;
    for (int i = 0; i < 3; ++i)
      sim.spawn(fmt::format("a{}", i), [&log, i](Actor& self) {
        log.push_back(fmt::format("start{}", i));
        self.wait_turn(100);
        log.push_back(fmt::format("t100:{}", i));
        self.wait_turn(100 + 10 * (3 - i));  // later actors wake earlier
        log.push_back(fmt::format("end{}@{}", i, self.now()));
      });
    sim.at(100, [&log] { log.push_back("timer100"); });
    sim.run();
    EXPECT_EQ(log, want) << "reference " << reference;
  }
}

TEST(TimeOrder, TheEarliestActorRunsAheadWithoutAHandOff) {
  Simulation sim;
  sim.spawn("alone", [](Actor& self) {
    for (Tick t = 1; t <= 1000; ++t) self.wait_turn(t);
  });
  sim.spawn("late", [](Actor& self) { self.wait_turn(5000); });
  sim.run();
  EXPECT_EQ(sim.now(), 5000);
  // Only the first turn (both start at 0) and the ends are hand-offs.
  EXPECT_GE(sim.shortcuts(), 999u);
  EXPECT_LE(sim.handoffs(), 4u);
}

TEST(TimeOrder, ParkAndUnparkAtADate) {
  Simulation sim;
  Actor* sleeper = nullptr;
  Tick woke = -1;
  sleeper = &sim.spawn("sleeper", [&woke](Actor& self) {
    self.park();
    woke = self.now();
  });
  sim.spawn("waker", [&sleeper](Actor& self) {
    self.wait_turn(40);
    sleeper->unpark_at(75);
    self.wait_turn(200);
  });
  sim.run();
  EXPECT_EQ(woke, 75);
}

// A waiting actor's turn moved earlier (machine/smt.hpp's early end of a pass):
// it runs at the new date, before the mover's own later turn, and its old turn
// (stale) lets nothing run twice: it next runs at the turn it asks for after.
TEST(TimeOrder, AnAdvancedTurnRunsAtItsNewDateOnce) {
  for (bool reference : {false, true}) {
    Simulation sim;
    sim.set_reference_order(reference);
    Actor* waiter = nullptr;
    std::vector<std::pair<std::string, Tick>> log;
    waiter = &sim.spawn("waiter", [&log](Actor& self) {
      self.wait_turn(1000);
      log.emplace_back("waiter", self.now());
      self.wait_turn(1500);
      log.emplace_back("waiter", self.now());
    });
    sim.spawn("mover", [&](Actor& self) {
      self.wait_turn(100);
      EXPECT_TRUE(waiter->waiting());
      waiter->advance_turn(300);
      waiter->advance_turn(400);  // later than its turn now: no effect
      EXPECT_THROW(waiter->advance_turn(50), SimulationError);  // before the clock
      self.wait_turn(1200);
      log.emplace_back("mover", self.now());
    });
    sim.run();
    const std::vector<std::pair<std::string, Tick>> want{
        {"waiter", 300}, {"mover", 1200}, {"waiter", 1500}};
    EXPECT_EQ(log, want) << "reference " << reference;
  }
}

// A waiting actor's turn moved later (machine/smt.hpp: a sibling's change
// re-dated the run it waits to end): it runs at the new date and not at the old
// one, whose event moves there when it comes out; moved earlier again (between
// the two dates, or before the old one), it runs at that date, and each date once.
TEST(TimeOrder, APostponedTurnRunsAtItsNewDateOnly) {
  struct Case {
    Tick advance;  // after postponing 1000 -> 2000 (-1: none)
    std::vector<std::pair<std::string, Tick>> want;
  };
  const std::vector<Case> cases{
      {-1, {{"mover", 1200}, {"waiter", 2000}, {"waiter", 3000}}},
      {1500, {{"mover", 1200}, {"waiter", 1500}, {"waiter", 3000}}},
      {500, {{"waiter", 500}, {"waiter", 1000}, {"mover", 1200}, {"waiter", 3000}}},
  };
  for (bool reference : {false, true}) {
    for (const Case& c : cases) {
      Simulation sim;
      sim.set_reference_order(reference);
      Actor* waiter = nullptr;
      std::vector<std::pair<std::string, Tick>> log;
      const bool again = c.advance >= 0 && c.advance < 1000;
      waiter = &sim.spawn("waiter", [&log, again](Actor& self) {
        self.wait_turn(1000);
        log.emplace_back("waiter", self.now());
        if (again) {  // a turn at the old event's date: it runs there once
          self.wait_turn(1000);
          log.emplace_back("waiter", self.now());
        }
        self.wait_turn(3000);
        log.emplace_back("waiter", self.now());
      });
      sim.spawn("mover", [&](Actor& self) {
        self.wait_turn(100);
        waiter->postpone_turn(2000);
        waiter->postpone_turn(1800);  // earlier than its turn now: no effect
        EXPECT_EQ(waiter->pending_turn(), 2000);
        if (c.advance >= 0) waiter->advance_turn(c.advance);
        self.wait_turn(1200);
        log.emplace_back("mover", self.now());
      });
      sim.run();
      EXPECT_EQ(log, c.want) << "reference " << reference << ", advance " << c.advance;
    }
  }
}

TEST(TimeOrder, AnUnparkBeforeTheParkLetsItReturnAtOnce) {
  Simulation sim;
  Actor* target = nullptr;
  Tick returned = -1;
  target = &sim.spawn("target", [&returned](Actor& self) {
    self.wait_turn(50);  // the unpark at 10 arrives while it waits here
    self.park();
    returned = self.now();
  });
  sim.spawn("early", [&target](Actor& self) {
    self.wait_turn(10);
    target->unpark();
  });
  sim.run();
  EXPECT_EQ(returned, 50);
}

TEST(TimeOrder, EveryTaskParkedIsADeadlock) {
  Simulation sim;
  sim.spawn("a", [](Actor& self) { self.park(); });
  sim.spawn("b", [](Actor& self) {
    self.wait_turn(10);
    self.park();
  });
  EXPECT_THROW(sim.run(), SimulationError);
}

TEST(TimeOrder, AClockThatStopsEndsTheRun) {
  Simulation sim;
  sim.spawn("spin", [](Actor& self) {
    for (;;) self.wait_turn(7);  // a loop whose costs round to 0 ticks
  });
  try {
    sim.run();
    FAIL() << "expected a SimulationError";
  } catch (const SimulationError& e) {
    EXPECT_NE(std::string(e.what()).find("no progress"), std::string::npos) << e.what();
  }
}

TEST(TimeOrder, ALineRefusesARequestDatedBeforeItsLatest) {
  auto params = config::load_machine("laptop-4");
  machine::Topology topo(params);
  machine::CacheLine line("hot");
  line.access(topo, 0, machine::Access::Write, 1000);
  line.access(topo, 1, machine::Access::Read, 1000);  // same date: fine
  EXPECT_THROW(line.access(topo, 2, machine::Access::Read, 999), SimulationError);
}

// A task's cursor moves let every earlier event run first: two tasks charging
// in turn see the shared value in the order of their dates.
TEST(TimeOrder, ChargesInterleaveByDate) {
  Simulation sim;
  std::vector<std::pair<Tick, int>> seen;
  std::deque<machine::Task> tasks(2);
  for (int i = 0; i < 2; ++i) {
    auto& t = tasks[static_cast<std::size_t>(i)];
    t.id = i;
    t.actor = &sim.spawn(fmt::format("t{}", i), [&t, &seen, i](Actor&) {
      for (int k = 0; k < 5; ++k) {
        t.charge(i == 0 ? 30 : 70);
        seen.emplace_back(t.cursor, i);
      }
    });
  }
  sim.run();
  for (std::size_t k = 1; k < seen.size(); ++k)
    EXPECT_LE(seen[k - 1].first, seen[k].first) << "entry " << k;
  EXPECT_EQ(seen.size(), 10u);
}

// Owed turns (machine/task.hpp): private work takes no turn, and the next shared
// step pays it. Task 0 charges its own work far past task 1's date, then reads a
// line that task 1 writes at an earlier date (but later in wall order): the read
// must come after the write, so it is a transfer from task 1's CPU, not a hit.
TEST(TimeOrder, AnOwedTurnIsPaidBeforeTheNextLineRequest) {
  auto params = config::load_machine("uniform-64");
  params.store_buffer_entries = 0;  // the write takes the line at its date
  machine::Topology topo(params);
  machine::CacheLine line("shared");
  line.access(topo, 0, machine::Access::Write, 0);  // CPU 0 owns it
  Simulation sim;
  std::deque<machine::Task> tasks(2);
  Tick read_done = 0, read_at = 0;
  std::vector<int> order;
  for (int i = 0; i < 2; ++i) {
    auto& t = tasks[static_cast<std::size_t>(i)];
    t.id = i;
    t.cpu = i;
    t.actor = &sim.spawn(fmt::format("t{}", i), [&, i](Actor&) {
      auto& me = tasks[static_cast<std::size_t>(i)];
      if (i == 0) {
        me.charge_private(1000);  // owed: no turn, task 1 has not run yet
        me.charge_private(1000);
        EXPECT_TRUE(me.turn_owed());
        order.push_back(0);
        read_at = me.cursor;
        read_done = machine::issue_load(topo, me, line);
      } else {
        me.charge(500);
        order.push_back(1);
        machine::store(topo, me, line);  // at 500: CPU 1 takes the line
      }
    });
  }
  sim.run();
  // Task 0 ran its private work first (wall order), task 1's store came next.
  EXPECT_EQ(order, (std::vector<int>{0, 1}));
  EXPECT_EQ(read_at, 2000);
  EXPECT_GT(read_done - read_at, params.l1_hit) << "the read must miss: CPU 1 wrote the line";
}

// A charge taken the ordinary way turns at its end; charge_private() only at the
// next shared step: two tasks alternating private work and a sync hand off once per
// sync, not once per charge.
TEST(TimeOrder, PrivateWorkTakesOneTurnPerSharedStep) {
  const auto handoffs = [](bool owed) {
    Simulation sim;
    std::deque<machine::Task> tasks(2);
    for (int i = 0; i < 2; ++i) {
      auto& t = tasks[static_cast<std::size_t>(i)];
      t.id = i;
      t.actor = &sim.spawn(fmt::format("t{}", i), [&t, owed, i](Actor&) {
        t.idle_until(5 * i);  // dates never tie: the two strictly alternate
        for (int k = 0; k < 100; ++k) {
          for (int c = 0; c < 4; ++c) owed ? t.charge_private(10) : t.charge(10);
          t.sync();
        }
      });
    }
    sim.run();
    return sim.handoffs();
  };
  const auto eager = handoffs(false), owed = handoffs(true);
  EXPECT_GE(eager, 700u);  // about one per charge
  EXPECT_LE(owed, 202u);   // one per sync, and the two tasks' ends
}

// An observer's look at a task ahead of the clock leaves out its owed work past
// the observer's date (the window's edges, report/window_stats.cpp).
TEST(TimeOrder, TimeAtLeavesOutOwedWorkPastTheDate) {
  machine::Task t;
  t.func = machine::Func::User;
  t.charge_private(100);  // [0, 100)
  t.func = machine::Func::SyscallEntry;
  t.charge_private(50);  // [100, 150)
  const auto at = t.time_at(120);
  EXPECT_EQ(at[static_cast<std::size_t>(machine::Func::User)], 100);
  EXPECT_EQ(at[static_cast<std::size_t>(machine::Func::SyscallEntry)], 20);
  t.sync();  // the turn is paid: nothing is owed any more
  EXPECT_EQ(t.time_at(0)[static_cast<std::size_t>(machine::Func::SyscallEntry)], 50);
}

// --- Fast path against reference mode ----------------------------------------

// Every shipped scenario (they cover every workload), short, on a 4-CPU
// preset with up to twice the CPUs, under every generation.
TEST(TimeOrder, FastPathMatchesReferenceModeOnEveryGenerationAndWorkload) {
  const auto cases = test_reference::shipped_cases("laptop-4", 8);
  ASSERT_GE(cases.size(), 10 * ipc::generations().size());
  const auto held = machine::SmtCores::held_at_clock();
  for (const auto& c : cases)
    EXPECT_EQ(simulate_bytes(c.doc, false), simulate_bytes(c.doc, true)) << c.label;
  // laptop-4 has SMT: no run of work was re-dated behind the clock (machine/smt.hpp).
  EXPECT_EQ(machine::SmtCores::held_at_clock(), held);
}

// The many-core case the time core was rebuilt for: a hot array line shared
// by 64 CPUs, with OS noise and wake-up jitter from the host-default preset.
TEST(TimeOrder, FastPathMatchesReferenceModeOnManyCores) {
  for (const char* kernel : {"global_lock", "per_sem_lock_rc", "hysteresis"}) {
    Json doc = Json::parse(R"({
      "name": "many", "machine": "box-64",
      "workload": {"type": "semop-multi", "semaphores": 16, "pattern": "stride"},
      "threads": [64, 96], "duration_ms": 0.1, "warmup_ms": 0.02, "seed": 3, "repeats": 1})");
    doc["kernel"] = kernel;
    EXPECT_EQ(simulate_bytes(doc, false), simulate_bytes(doc, true)) << kernel;
  }
}

// Sleepers on 8 sockets: cross-LLC wake-ups whose IPIs the targets pay, and each
// rq->lock a spinlock with holds (the presets' scheduler mechanisms).
TEST(TimeOrder, FastPathMatchesReferenceModeWithCrossLlcWakeups) {
  for (const char* kernel : {"moved_otime"}) {
    Json doc = Json::parse(R"({
      "name": "wakes", "machine": "box-64",
      "workload": {"type": "sem-lockunlock", "semaphores": 32, "loops": 1000000},
      "threads": [128], "duration_ms": 0.02, "warmup_ms": 0.01, "seed": 5, "repeats": 1})");
    doc["kernel"] = kernel;
    EXPECT_EQ(simulate_bytes(doc, false), simulate_bytes(doc, true)) << kernel;
  }
}

// The same with the kernel's line spinning (kernel_line_spinning): the
// spinners of the ticket locks and of the rwlock are woken by every write to
// their line and re-read it at their own dates.
TEST(TimeOrder, FastPathMatchesReferenceModeWithKernelLineSpinning) {
  Json machine = config::testing::model("box-64");
  machine["kernel_line_spinning"] = {{"value", true}, {"source", "test"}};
  const config::testing::MachineFile file(machine, "line-spinning");
  for (const char* kernel : {"global_lock", "rwlock", "per_sem_lock", "per_sem_lock_rc"}) {
    Json doc = Json::parse(R"({
      "name": "many", "workload": {"type": "semop-multi", "semaphores": 16, "pattern": "stride"},
      "threads": [64, 96], "duration_ms": 0.1, "warmup_ms": 0.02, "seed": 3, "repeats": 1})");
    doc["machine"] = file.path();
    doc["kernel"] = kernel;
    EXPECT_EQ(simulate_bytes(doc, false), simulate_bytes(doc, true)) << kernel;
  }
}

// Preemption points with queued tasks (time slices that run out, wake-ups that
// preempt) next to CPUs whose only task passes them without a turn
// (Scheduler::alone_on(), which reference mode does not use): pinned tasks on 4
// CPUs with 2 us slices, every CPU alone (4 threads), three shared and one alone
// (7), every one shared (64).
TEST(TimeOrder, FastPathMatchesReferenceModeAtPreemptionPoints) {
  Json machine = config::testing::model("laptop-4");
  machine["costs_ns"]["time_slice"] = {{"value", 2000}, {"source", "test: short slices"}};
  const config::testing::MachineFile file(machine, "short-slices");
  for (const char* kernel : {"global_lock", "hysteresis"}) {
    for (int threads : {4, 7, 64}) {
      Json doc = Json::parse(R"({
        "name": "slices", "workload": {"type": "semop-multi", "semaphores": 4, "pattern": "stride"},
        "duration_ms": 0.1, "warmup_ms": 0.02, "seed": 2, "repeats": 1})");
      doc["machine"] = file.path();
      doc["kernel"] = kernel;
      doc["threads"] = threads;
      EXPECT_EQ(simulate_bytes(doc, false), simulate_bytes(doc, true))
          << kernel << " " << threads << " threads";
    }
  }
}

}  // namespace
}  // namespace semsim
