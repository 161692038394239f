// The trace recorder (slices merged per task and function, clipped to the
// window, bounded) and the lock_stat bookkeeping of LockStats (max wait and
// hold, bounces by lock_stat's definition).
#include <gtest/gtest.h>

#include "machine/spinlock.hpp"
#include "machine/task.hpp"
#include "report/trace_recorder.hpp"

namespace semsim {
namespace {

using machine::Func;

TEST(TraceRecorder, MergesAChargeRunAndClipsToTheWindow) {
  report::TraceRecorder rec(100, 1000, 100);
  machine::Task t;
  t.cpu = 1;
  t.trace = &rec;
  t.cursor = 50;
  t.account(Func::User, 100);    // 50..150
  t.account(Func::User, 100);    // the same slice: 50..250
  t.account(Func::SemLock, 10);  // 250..260
  t.cpu = 2;
  t.account(Func::SemLock, 10);  // another CPU, another slice: 260..270
  t.cursor = 2000;
  t.account(Func::User, 10);  // after the window: dropped
  rec.finish();
  const Json j = rec.to_json(4, 1);
  const auto& s = j["cpu_slices"];
  EXPECT_EQ(s["start"], Json({100, 250, 260}));
  EXPECT_EQ(s["end"], Json({250, 260, 270}));
  EXPECT_EQ(s["cpu"], Json({1, 1, 2}));
  EXPECT_EQ(s["func"][0], static_cast<int>(Func::User));
  EXPECT_FALSE(rec.overflowed());
  EXPECT_EQ(t.cursor, 2010);  // recording changes nothing in the task's accounting
  EXPECT_EQ(t.time[static_cast<std::size_t>(Func::User)], 210);
}

TEST(TraceRecorder, StopsRecordingPastItsLimit) {
  report::TraceRecorder rec(0, 1000, 2);
  int lock = 0;
  rec.name_lock(&lock, "sem->lock[0]");
  machine::Task t;
  for (int i = 0; i < 3; ++i) rec.lock_held(&lock, t, 10 * i, 10 * i + 5, false);
  EXPECT_TRUE(rec.overflowed());
  EXPECT_EQ(rec.to_json(1, 1)["lock_slices"]["start"].size(), 2u);
  int unnamed = 0;
  report::TraceRecorder other(0, 1000, 10);
  other.lock_held(&unnamed, t, 1, 2, false);  // a lock nobody named is not traced
  EXPECT_EQ(other.events(), 0u);
}

TEST(LockStatsBookkeeping, MaxWaitHoldAndBouncesAsLockStatCountsThem) {
  machine::LockStats s;
  s.acquired_on(0);
  s.acquired_on(0);   // same CPU: no bounce
  s.acquired_on(1);   // moved: one acq-bounce
  s.contended_on(1);  // the last acquirer's CPU: no con-bounce
  s.contended_on(0);  // another CPU: one
  s.add_wait(5);
  s.add_wait(3);
  s.add_hold(2);
  s.add_hold(7);
  EXPECT_EQ(s.acq_bounces, 1u);
  EXPECT_EQ(s.con_bounces, 1u);
  EXPECT_EQ(s.contended, 2u);
  EXPECT_EQ(s.wait, 8);
  EXPECT_EQ(s.wait_max, 5);
  EXPECT_EQ(s.hold, 9);
  EXPECT_EQ(s.hold_max, 7);
}

}  // namespace
}  // namespace semsim
