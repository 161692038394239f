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

// Against a brute-force model; `cal` may start close to its seq limit, where
// the pending events are renumbered (which must keep their order).
void check_calendar_order(core::Calendar cal) {
  using core::Event;
  std::mt19937_64 rng(7);
  struct Made {
    Tick date;
    std::uint32_t seq;
    core::EventKind kind;
  };
  std::vector<Made> pending;  // what the calendar holds, by scheduling order
  std::vector<std::uint32_t> got, want;
  std::uint32_t seq = 0;
  auto take = [&](const Event& e) {
    got.push_back(e.ref);
    auto it = std::min_element(pending.begin(), pending.end(), [](const Made& a, const Made& b) {
      return a.date != b.date ? a.date < b.date : a.seq < b.seq;
    });
    want.push_back(it->seq);
    EXPECT_EQ(e.date, it->date);
    EXPECT_EQ(e.kind, it->kind);
    pending.erase(it);
  };
  Tick now = 0;
  for (int step = 0; step < 20000; ++step) {
    const Tick date = now + static_cast<Tick>(rng() % 8);  // many equal dates
    const auto kind = static_cast<core::EventKind>(rng() % 3);
    const Event e{date, kind, seq};
    pending.push_back({date, seq++, kind});
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
  EXPECT_EQ(got, want);
}

TEST(CoreFibers, TheCalendarYieldsEventsInDateThenSchedulingOrder) {
  check_calendar_order(core::Calendar{});
}

TEST(CoreFibers, TheCalendarKeepsItsOrderWhenSeqWrapsAround) {
  check_calendar_order(core::Calendar::near_seq_limit(5000));
}

}  // namespace
}  // namespace semsim
