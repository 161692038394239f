// The fiber engine of core/simulation.cpp (tasks are boost.context fibers in
// one SimGrid actor) and its calendar (core/calendar.hpp): errors reach run()
// unchanged, stop_all() and errors unwind every task still alive, a task has
// the stack room it had under SimGrid, the most tasks a scenario may ask for
// run, and the calendar's order is exactly (date, seq).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "core/calendar.hpp"
#include "core/errors.hpp"
#include "core/simulation.hpp"

namespace semsim {
namespace {

using core::Actor;
using core::Simulation;

// Counts its destructions: shows that a task's stack was unwound.
struct Guard {
  explicit Guard(int& n) : count(n) {}
  ~Guard() { ++count; }
  Guard(const Guard&) = delete;
  Guard& operator=(const Guard&) = delete;
  int& count;
};

TEST(CoreFibers, AnErrorInsideATaskReachesRunAndUnwindsTheOthers) {
  int unwound = 0;
  Simulation sim;
  for (int i = 0; i < 3; ++i)
    sim.spawn("parked", [&unwound](Actor& self) {
      Guard g(unwound);
      self.park();  // never unparked
    });
  sim.spawn("waiting", [&unwound](Actor& self) {
    Guard g(unwound);
    self.wait_turn(1'000'000);  // never reached
  });
  sim.spawn("thrower", [](Actor& self) {
    self.wait_turn(500);
    throw InputError("scenario: field 'x' must be >= 1");
  });
  try {
    sim.run();
    FAIL() << "expected the task's InputError";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "scenario: field 'x' must be >= 1");
  }
  EXPECT_EQ(unwound, 4);
  EXPECT_EQ(sim.now(), 500);
}

TEST(CoreFibers, StopAllUnwindsEveryTaskStillAliveAndIsNoDeadlock) {
  int unwound = 0;
  bool ran_past_stop = false;
  Simulation sim;
  for (int i = 0; i < 4; ++i)
    sim.spawn("worker", [&unwound, i](Actor& self) {
      Guard g(unwound);
      if (i % 2 == 0) self.park();
      for (Tick t = 0;; t += 10) self.wait_turn(t);
    });
  sim.spawn("timekeeper", [&sim, &ran_past_stop](Actor& self) {
    self.wait_turn(1000);
    sim.stop_all();
    ran_past_stop = true;  // the caller goes on until it gives up the CPU
  });
  EXPECT_NO_THROW(sim.run());
  EXPECT_TRUE(ran_past_stop);
  EXPECT_EQ(unwound, 4);
}

TEST(CoreFibers, StopAllBeforeOtherTasksStartedNeverRunsThem) {
  int started = 0;
  Simulation sim;
  sim.spawn("stopper", [&sim](Actor&) { sim.stop_all(); });
  for (int i = 0; i < 3; ++i) sim.spawn("never", [&started](Actor&) { ++started; });
  EXPECT_NO_THROW(sim.run());
  EXPECT_EQ(started, 0);
}

// Uses about `bytes` of stack, then yields with all of it live.
int deep(Actor& self, int bytes) {
  volatile char frame[1024];
  for (int i = 0; i < 1024; i += 64) frame[i] = static_cast<char>(1 + (bytes >> 10) % 100);
  if (bytes <= 1024) {
    self.wait_turn(self.now() + 1);
    return frame[0];
  }
  return deep(self, bytes - 1024) + frame[64];
}

TEST(CoreFibers, ATaskHasTheStackRoomItHadUnderSimGrid) {
  Simulation sim;
  int sum = 0;
  for (int i = 0; i < 2; ++i)
    sim.spawn("deep", [&sum](Actor& self) { sum += deep(self, 192 * 1024); });
  sim.run();
  EXPECT_NE(sum, 0);
}

TEST(CoreFibers, TheMostTasksAScenarioMayAskForRun) {
  constexpr int kTasks = 4096 + 2;  // kMaxThreads plus a watchdog and a timekeeper
  Simulation sim;
  std::vector<Tick> done(kTasks, -1);
  for (int i = 0; i < kTasks; ++i)
    sim.spawn("t", [&done, i](Actor& self) {
      self.wait_turn(kTasks - i);  // the last spawned runs first
      done[static_cast<std::size_t>(i)] = self.now();
    });
  sim.run();
  for (int i = 0; i < kTasks; ++i) EXPECT_EQ(done[static_cast<std::size_t>(i)], kTasks - i);
  EXPECT_GE(sim.handoffs(), static_cast<std::uint64_t>(kTasks));
}

// Against a brute-force model of the order (core/calendar.hpp): by date; at
// one date callbacks, then wakes, in the order they were made, then turns by
// task id. `cal` may start close to its seq limit, where the
// pending callbacks and wakes are renumbered (which must keep their order).
// Tasks' refs are drawn from few tasks, so that their events meet.
void check_calendar_order(core::Calendar cal) {
  using core::Event;
  using core::EventKind;
  std::mt19937_64 rng(7);
  struct Made {
    Tick date;
    std::uint32_t seq, ref;
    EventKind kind;
  };
  auto rank = [](const Made& m) {
    const int cls = m.kind == EventKind::Callback ? 0 : m.kind == EventKind::Wake ? 1 : 2;
    const bool turn = cls == 2;
    return std::make_tuple(m.date, cls, turn ? m.ref : m.seq);
  };
  std::vector<Made> pending;  // what the calendar holds
  std::uint32_t seq = 0;
  int taken = 0;
  auto take = [&](const Event& e) {
    auto it = std::min_element(pending.begin(), pending.end(),
                               [&](const Made& a, const Made& b) { return rank(a) < rank(b); });
    ASSERT_EQ(e.date, it->date);
    ASSERT_EQ(e.kind, it->kind);
    ASSERT_EQ(e.ref, it->ref);
    pending.erase(it);
    ++taken;
  };
  Tick now = 0;
  for (int step = 0; step < 20000; ++step) {
    const Tick date = now + static_cast<Tick>(rng() % 8);  // many equal dates
    const auto kind = static_cast<EventKind>(rng() % 3);
    // Callbacks' refs are unique slots; tasks' are ids (two turns of one task
    // and date have one key: either may come out).
    const std::uint32_t ref =
        kind == EventKind::Callback ? seq : static_cast<std::uint32_t>(rng() % 6);
    const Event e{date, kind, ref};
    pending.push_back({date, seq++, ref, kind});
    switch (rng() % 3) {
      case 0:
        cal.push(e);
        break;
      case 1:
        take(cal.push_pop(e));
        break;
      default:
        cal.push(e);
        take(cal.pop());
    }
    now += static_cast<Tick>(rng() % 2);
    ASSERT_EQ(cal.empty(), pending.empty());
  }
  while (!cal.empty()) take(cal.pop());
  EXPECT_EQ(taken, 20000);
}

TEST(CoreFibers, TheCalendarYieldsEventsInDateThenTieOrder) {
  check_calendar_order(core::Calendar{});
}

TEST(CoreFibers, TheCalendarKeepsItsOrderWhenSeqWrapsAround) {
  check_calendar_order(core::Calendar::near_seq_limit(5000));
}

// The point of the tie order: the same turns pushed in any order come out in
// one order, by task id (a task that read ahead queues its next turn earlier
// in wall time than the strict order does).
TEST(CoreFibers, TheTurnsOrderAtOneDateDoesNotDependOnWhenTheyWereQueued) {
  std::vector<std::uint32_t> ids(40);
  for (std::uint32_t i = 0; i < ids.size(); ++i) ids[i] = i;
  std::mt19937_64 rng(3);
  for (int round = 0; round < 5; ++round) {
    std::shuffle(ids.begin(), ids.end(), rng);
    core::Calendar cal;
    for (auto id : ids) cal.push({1234, core::EventKind::Turn, id});
    cal.push({1234, core::EventKind::Wake, 99});  // a wake of that date comes first
    EXPECT_EQ(cal.pop().kind, core::EventKind::Wake);
    for (std::uint32_t i = 0; i < ids.size(); ++i) EXPECT_EQ(cal.pop().ref, i);
  }
}

}  // namespace
}  // namespace semsim
