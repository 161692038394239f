// What observers read of a task is dated (machine/task.hpp, "Owed turns"): a
// semop or a round counted while the task runs ahead of its turn, and a charge
// whose turn it waits for, count only up to the observer's date.
#include <gtest/gtest.h>

#include "core/simulation.hpp"
#include "core/time.hpp"
#include "machine/task.hpp"

namespace semsim {
namespace {

using machine::Task;

TEST(DatedCounts, ASemopCountedAheadCountsFromItsDate) {
  Task t;
  t.charge_private(100);  // no actor: the turn stays owed
  ASSERT_TRUE(t.turn_owed());
  t.count_semop();  // at 100
  t.charge_private(50);
  t.count_semop();  // at 150
  EXPECT_EQ(t.semops, 2u);
  EXPECT_EQ(t.semops_at(99), 0u);
  EXPECT_EQ(t.semops_at(100), 1u);
  EXPECT_EQ(t.semops_at(149), 1u);
  EXPECT_EQ(t.semops_at(150), 2u);
  t.uncount_semops(1);  // the step counted no op: the call at 150 is taken back
  EXPECT_EQ(t.semops, 1u);
  EXPECT_EQ(t.semops_at(1000), 1u);
  EXPECT_EQ(t.semops_at(99), 0u);
  std::uint64_t rounds = 0;
  t.count_rounds(rounds, 3);  // at 150
  EXPECT_EQ(rounds, 3u);
  EXPECT_EQ(t.rounds_past(149), 3u);
  EXPECT_EQ(t.rounds_past(150), 0u);
  t.keep_order();  // the turn taken: nothing is owed, everything counts
  EXPECT_EQ(t.semops_at(0), 1u);
  EXPECT_EQ(t.rounds_past(0), 0u);
}

TEST(DatedCounts, AnInOrderCountIsNotDated) {
  Task t;
  t.count_semop();
  EXPECT_EQ(t.semops_at(-1), 1u);
}

// Task 0 charges 2 us at date 0 and waits for its turn at 2 us; the observer,
// at 1 us, runs first and must see 1 us of its CPU time, not the whole charge.
TEST(DatedCounts, AnObserverSeesAChargeOnlyUpToItsDate) {
  core::Simulation sim;
  Task t;
  Tick seen = -1;
  t.actor = &sim.spawn("task", [&](core::Actor&) {
    machine::InFunc in(t, machine::Func::SysSemtimedop);
    t.charge(2 * kTicksPerUs);
  });
  sim.spawn_observer("observer", [&](core::Actor& self) {
    self.sleep_until(kTicksPerUs);
    seen = t.time_at(self.now())[static_cast<std::size_t>(machine::Func::SysSemtimedop)];
  });
  sim.run();
  EXPECT_EQ(seen, kTicksPerUs);
}

}  // namespace
}  // namespace semsim
