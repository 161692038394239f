// Unit tests of the shared semop semantics (sim/ipc/semantics.hpp) and of the
// current-kernel reference model (sim/ipc/sem_reference.hpp) on small cases
// whose expected results follow ipc/sem.c.
#include <gtest/gtest.h>

#include <cerrno>
#include <stdexcept>
#include <vector>

#include "core/errors.hpp"
#include "verify/sem_reference.hpp"
#include "ipc/semantics.hpp"

namespace semsim::ipc {
namespace {

using Kind = SemArrayModel::SemopKind;
using Outcome = SemArrayModel::SemopOutcome;
using Wakeup = SemArrayModel::Wakeup;

constexpr Outcome kDone{Kind::kDone, 0};
constexpr Outcome kBlocked{Kind::kBlocked, 0};
constexpr Outcome error(int err) { return {Kind::kError, -err}; }

// --- check_semop_args / sops_alter -----------------------------------------

TEST(SemopArgs, KernelOrderOfChecks) {
  const std::vector<Sembuf> none;
  EXPECT_EQ(check_semop_args(none, 4, kSemopmDefault), -EINVAL);
  const std::vector<Sembuf> too_many(kSemopmDefault + 1, Sembuf{0, 1, 0});
  EXPECT_EQ(check_semop_args(too_many, 4, kSemopmDefault), -E2BIG);
  // E2BIG wins over an out-of-range sem_num: it is checked before the lookup.
  std::vector<Sembuf> too_many_bad = too_many;
  too_many_bad[3].sem_num = 99;
  EXPECT_EQ(check_semop_args(too_many_bad, 4, kSemopmDefault), -E2BIG);
  const std::vector<Sembuf> at_limit(kSemopmDefault, Sembuf{3, 1, 0});
  EXPECT_EQ(check_semop_args(at_limit, 4, kSemopmDefault), 0);
  EXPECT_EQ(check_semop_args(std::vector<Sembuf>{{4, 1, 0}}, 4, kSemopmDefault), -EFBIG);
  EXPECT_EQ(check_semop_args(std::vector<Sembuf>{{-1, 1, 0}}, 4, kSemopmDefault), -EFBIG);
  EXPECT_EQ(check_semop_args(std::vector<Sembuf>{{0, 1, 0}, {3, -1, 0}}, 4, 2), 0);
  EXPECT_EQ(check_semop_args(std::vector<Sembuf>{{0, 1, 0}, {3, -1, 0}}, 4, 1), -E2BIG);
}

TEST(SemopArgs, Alter) {
  EXPECT_FALSE(sops_alter(std::vector<Sembuf>{{0, 0, 0}, {1, 0, kIpcNowait}}));
  EXPECT_TRUE(sops_alter(std::vector<Sembuf>{{0, 0, 0}, {1, -1, 0}}));
  EXPECT_TRUE(sops_alter(std::vector<Sembuf>{{0, 2, 0}}));
  EXPECT_TRUE(sops_undo(std::vector<Sembuf>{{0, 0, 0}, {1, 1, kSemUndo}}));
  EXPECT_FALSE(sops_undo(std::vector<Sembuf>{{0, 1, kIpcNowait}}));
}

// --- perform_atomic_semop ---------------------------------------------------

struct Perform {
  std::vector<int> val;
  std::vector<int> adj;
  int blocking = -1;
  int run(std::vector<Sembuf> sops) { return perform_atomic_semop(val, sops, adj, &blocking); }
};

TEST(PerformAtomicSemop, Increment) {
  Perform p{{0, 5}, {}};
  EXPECT_EQ(p.run({{0, 2, 0}}), 0);
  EXPECT_EQ(p.val, (std::vector<int>{2, 5}));
  EXPECT_EQ(p.blocking, -1);  // untouched on success
}

TEST(PerformAtomicSemop, DecrementBlocksBelowZero) {
  Perform p{{1}, {}};
  EXPECT_EQ(p.run({{0, -2, 0}}), kSemopBlock);
  EXPECT_EQ(p.val, std::vector<int>{1});
  EXPECT_EQ(p.blocking, 0);
  EXPECT_EQ(p.run({{0, -1, 0}}), 0);
  EXPECT_EQ(p.val, std::vector<int>{0});
}

TEST(PerformAtomicSemop, WaitForZero) {
  Perform p{{1, 0}, {}};
  EXPECT_EQ(p.run({{0, 0, 0}}), kSemopBlock);
  EXPECT_EQ(p.run({{1, 0, 0}}), 0);
  EXPECT_EQ(p.val, (std::vector<int>{1, 0}));
}

TEST(PerformAtomicSemop, NowaitGivesEagain) {
  Perform p{{0, 3}, {}};
  EXPECT_EQ(p.run({{0, -1, kIpcNowait}}), -EAGAIN);
  EXPECT_EQ(p.run({{1, 0, kIpcNowait}}), -EAGAIN);
  EXPECT_EQ(p.blocking, 0);
  // IPC_NOWAIT on a sop that does not block changes nothing: the one that
  // blocks decides.
  EXPECT_EQ(p.run({{1, -1, kIpcNowait}, {0, -1, 0}}), kSemopBlock);
  EXPECT_EQ(p.blocking, 1);
  EXPECT_EQ(p.run({{1, -1, 0}, {0, -1, kIpcNowait}}), -EAGAIN);
  EXPECT_EQ(p.val, (std::vector<int>{0, 3}));
}

TEST(PerformAtomicSemop, RangeAtSemvmx) {
  Perform p{{kSemvmx - 1}, {}};
  EXPECT_EQ(p.run({{0, 2, 0}}), -ERANGE);
  EXPECT_EQ(p.val[0], kSemvmx - 1);
  EXPECT_EQ(p.run({{0, 1, 0}}), 0);
  EXPECT_EQ(p.val[0], kSemvmx);
  EXPECT_EQ(p.run({{0, 1, kIpcNowait}}), -ERANGE);  // IPC_NOWAIT does not matter
  // An absurd sem_op does not overflow.
  EXPECT_EQ(p.run({{0, 2147483647, 0}}), -ERANGE);
  EXPECT_EQ(p.run({{0, -2147483647 - 1, 0}}), kSemopBlock);
}

TEST(PerformAtomicSemop, SemadjRange) {
  // semadj records the opposite of each SEM_UNDO change and must stay in
  // [-SEMAEM-1, SEMAEM].
  Perform p{{0, 10}, {-kSemaem - 1, kSemaem - 1}};
  EXPECT_EQ(p.run({{0, 1, kSemUndo}}), -ERANGE);  // -32769
  EXPECT_EQ(p.blocking, 0);
  EXPECT_EQ(p.run({{1, -1, kSemUndo}}), 0);  // 32767: allowed
  EXPECT_EQ(p.adj[1], kSemaem);
  EXPECT_EQ(p.run({{1, -1, kSemUndo}}), -ERANGE);
  EXPECT_EQ(p.val, (std::vector<int>{0, 9}));
  EXPECT_EQ(p.run({{1, -1, 0}}), 0);  // without SEM_UNDO the adjustment is not involved
  EXPECT_EQ(p.run({{0, 1, 0}, {1, 2, kSemUndo}}), 0);
  EXPECT_EQ(p.adj, (std::vector<int>{-kSemaem - 1, kSemaem - 2}));
}

TEST(PerformAtomicSemop, AllOrNothing) {
  Perform p{{2, 0, 7}, {0, 0, 0}};
  EXPECT_EQ(p.run({{0, -1, kSemUndo}, {2, 3, kSemUndo}, {1, -1, 0}}), kSemopBlock);
  EXPECT_EQ(p.blocking, 2);
  EXPECT_EQ(p.val, (std::vector<int>{2, 0, 7}));
  EXPECT_EQ(p.adj, (std::vector<int>{0, 0, 0}));
  EXPECT_EQ(p.run({{0, -1, kSemUndo}, {2, kSemvmx, kSemUndo}}), -ERANGE);
  EXPECT_EQ(p.val, (std::vector<int>{2, 0, 7}));
  EXPECT_EQ(p.adj, (std::vector<int>{0, 0, 0}));
  EXPECT_EQ(p.run({{0, -2, kSemUndo}, {2, 3, kSemUndo}, {1, 0, 0}}), 0);
  EXPECT_EQ(p.val, (std::vector<int>{0, 0, 10}));
  EXPECT_EQ(p.adj, (std::vector<int>{2, 0, -3}));
}

TEST(PerformAtomicSemop, FirstFailingSopDecides) {
  Perform p{{0, kSemvmx}, {}};
  EXPECT_EQ(p.run({{0, -1, 0}, {1, 1, 0}}), kSemopBlock);
  EXPECT_EQ(p.blocking, 0);
  EXPECT_EQ(p.run({{1, 1, 0}, {0, -1, 0}}), -ERANGE);
  EXPECT_EQ(p.blocking, 0);
  EXPECT_EQ(p.run({{1, 0, kIpcNowait}, {0, -1, 0}}), -EAGAIN);
}

TEST(PerformAtomicSemop, SopsSeeEarlierSops) {
  // The same semaphore twice: each sop sees the value the earlier ones left.
  Perform p{{0}, {}};
  EXPECT_EQ(p.run({{0, 1, 0}, {0, -1, 0}}), 0);
  EXPECT_EQ(p.val[0], 0);
  EXPECT_EQ(p.run({{0, -1, 0}, {0, 1, 0}}), kSemopBlock);
  EXPECT_EQ(p.run({{0, 1, 0}, {0, 0, 0}}), kSemopBlock);  // never succeeds
  EXPECT_EQ(p.blocking, 1);
  EXPECT_EQ(p.run({{0, 0, 0}, {0, 1, 0}}), 0);
  EXPECT_EQ(p.val[0], 1);
  p.val[0] = kSemvmx;
  EXPECT_EQ(p.run({{0, -1, 0}, {0, 1, 0}}), 0);
  EXPECT_EQ(p.run({{0, 1, 0}, {0, -1, 0}}), -ERANGE);  // the intermediate value counts
  EXPECT_EQ(p.val[0], kSemvmx);
}

TEST(PerformAtomicSemop, PreconditionViolationsThrowAndLeaveNoTrace) {
  Perform p{{3, 3}, {}};
  EXPECT_THROW(p.run({{0, -1, 0}, {1, 1, kSemUndo}}), SimulationError);
  EXPECT_THROW(p.run({{0, -1, 0}, {2, 1, 0}}), SimulationError);
  EXPECT_EQ(p.val, (std::vector<int>{3, 3}));
}

// --- SemArrayModel: single task -------------------------------------------

TEST(SemArrayModel, ErrorsOfSemop) {
  SemArrayModel m(2, 4);
  EXPECT_EQ(m.semop(1, std::vector<Sembuf>{}), error(EINVAL));
  EXPECT_EQ(m.semop(1, std::vector<Sembuf>(5, Sembuf{0, 1, 0})), error(E2BIG));
  EXPECT_EQ(m.semop(1, std::vector<Sembuf>{{2, 1, 0}}), error(EFBIG));
  EXPECT_EQ(m.semop(1, std::vector<Sembuf>{{0, -1, kIpcNowait}}), error(EAGAIN));
  EXPECT_EQ(m.semop(1, std::vector<Sembuf>{{0, kSemvmx + 1, 0}}), error(ERANGE));
  EXPECT_EQ(m.semop(1, std::vector<Sembuf>{{0, 3, 0}, {1, 0, 0}}), kDone);
  EXPECT_EQ(m.getval(0), 3);
  EXPECT_EQ(m.getpid(0), 1);
  EXPECT_EQ(m.getpid(1), 1);  // a wait-for-zero sop sets sempid too
  EXPECT_TRUE(m.woken().empty());
}

TEST(SemArrayModel, Semctl) {
  SemArrayModel m(3);
  EXPECT_EQ(m.setval(1, kSemvmx + 1), -ERANGE);
  EXPECT_EQ(m.setval(1, -1), -ERANGE);
  EXPECT_EQ(m.setval(3, 1), -EINVAL);
  EXPECT_EQ(m.setval(-1, 1), -EINVAL);
  EXPECT_EQ(m.setval(1, kSemvmx, 42), 0);
  EXPECT_EQ(m.getval(1), kSemvmx);
  EXPECT_EQ(m.getpid(1), 42);
  EXPECT_EQ(m.getpid(0), 0);
  EXPECT_EQ(m.getval(3), -EINVAL);
  EXPECT_EQ(m.getncnt(-1), -EINVAL);
  EXPECT_EQ(m.getzcnt(3), -EINVAL);
  EXPECT_EQ(m.setall(std::vector<int>{1, 2, kSemvmx + 1}), -ERANGE);
  EXPECT_EQ(m.getval(0), 0);  // nothing set
  EXPECT_EQ(m.setall(std::vector<int>{1, 2, 3}, 7), 0);
  std::vector<int> all;
  EXPECT_EQ(m.getall(&all), 0);
  EXPECT_EQ(all, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(m.getpid(0), 7);
  EXPECT_THROW(m.setall(std::vector<int>{1, 2}), InputError);
  EXPECT_THROW(SemArrayModel(0), InputError);
}

TEST(SemArrayModel, SetvalAndSetallClearSemadj) {
  SemArrayModel m(2);
  m.set_process(2, 1);  // task 2 is a thread of process 1
  EXPECT_EQ(m.semop(1, std::vector<Sembuf>{{0, 2, kSemUndo}, {1, 3, kSemUndo}}), kDone);
  EXPECT_EQ(m.semop(2, std::vector<Sembuf>{{0, 1, kSemUndo}}), kDone);
  ASSERT_NE(m.semadj(1), nullptr);
  EXPECT_EQ(*m.semadj(1), (std::vector<int>{-3, -3}));
  EXPECT_EQ(m.semadj(2), nullptr);
  EXPECT_EQ(m.setval(0, 5), 0);
  EXPECT_EQ(*m.semadj(1), (std::vector<int>{0, -3}));
  EXPECT_EQ(m.setall(std::vector<int>{4, 4}), 0);
  EXPECT_EQ(*m.semadj(1), (std::vector<int>{0, 0}));
}

// --- SemArrayModel: sleeping and waking ------------------------------------

TEST(SemArrayModel, DecrementSleepsUntilIncrement) {
  SemArrayModel m(1);
  EXPECT_EQ(m.semop(1, std::vector<Sembuf>{{0, -1, 0}}), kBlocked);
  EXPECT_TRUE(m.sleeping(1));
  EXPECT_EQ(m.getncnt(0), 1);
  EXPECT_EQ(m.getzcnt(0), 0);
  EXPECT_THROW(m.semop(1, std::vector<Sembuf>{{0, 1, 0}}), std::logic_error);
  EXPECT_EQ(m.semop(2, std::vector<Sembuf>{{0, 1, 0}}), kDone);
  EXPECT_EQ(m.woken(), (std::vector<Wakeup>{{1, 0}}));
  EXPECT_EQ(m.getval(0), 0);
  EXPECT_EQ(m.getpid(0), 1);  // the waker performed it on the sleeper's behalf
  EXPECT_EQ(m.getncnt(0), 0);
  EXPECT_FALSE(m.sleeping(1));
}

TEST(SemArrayModel, PerSemaphoreFifoSkipsWhoCannotProceed) {
  SemArrayModel m(1);
  EXPECT_EQ(m.semop(1, std::vector<Sembuf>{{0, -2, 0}}), kBlocked);
  EXPECT_EQ(m.semop(2, std::vector<Sembuf>{{0, -1, 0}}), kBlocked);
  EXPECT_EQ(m.semop(3, std::vector<Sembuf>{{0, -1, 0}}), kBlocked);
  EXPECT_EQ(m.getncnt(0), 3);
  EXPECT_EQ(m.semop(9, std::vector<Sembuf>{{0, 1, 0}}), kDone);
  EXPECT_EQ(m.woken(), (std::vector<Wakeup>{{2, 0}}));  // the older -2 cannot proceed
  EXPECT_EQ(m.semop(9, std::vector<Sembuf>{{0, 3, 0}}), kDone);
  EXPECT_EQ(m.woken(), (std::vector<Wakeup>{{1, 0}, {3, 0}}));
  EXPECT_EQ(m.getval(0), 0);
}

TEST(SemArrayModel, WaitForZeroIsWokenBeforeAlterOps) {
  // sem0 = 1, sem1 = 0. Task 1 waits for sem0 == 0; task 2, a complex op,
  // needs sem1 and would put sem0 back to 1. Zero waiters go first, so both
  // complete; the other order would leave task 1 asleep.
  SemArrayModel m(2);
  EXPECT_EQ(m.setval(0, 1), 0);
  EXPECT_EQ(m.semop(1, std::vector<Sembuf>{{0, 0, 0}}), kBlocked);
  EXPECT_EQ(m.semop(2, std::vector<Sembuf>{{1, -1, 0}, {0, 1, 0}}), kBlocked);
  EXPECT_EQ(m.getzcnt(0), 1);
  EXPECT_EQ(m.getncnt(1), 1);
  EXPECT_EQ(m.semop(9, std::vector<Sembuf>{{0, -1, 0}, {1, 1, 0}}), kDone);
  EXPECT_EQ(m.woken(), (std::vector<Wakeup>{{1, 0}, {2, 0}}));
  EXPECT_EQ(m.getval(0), 1);
  EXPECT_EQ(m.getval(1), 0);
}

TEST(SemArrayModel, PerSemaphoreZeroWaitersBeforeComplexOnes) {
  SemArrayModel m(2);
  EXPECT_EQ(m.setval(0, 1), 0);
  EXPECT_EQ(m.semop(1, std::vector<Sembuf>{{0, 0, 0}, {1, 0, 0}}), kBlocked);  // older
  EXPECT_EQ(m.semop(2, std::vector<Sembuf>{{0, 0, 0}}), kBlocked);
  EXPECT_EQ(m.getzcnt(0), 2);
  EXPECT_EQ(m.complex_count(), 1);
  EXPECT_EQ(m.semop(9, std::vector<Sembuf>{{0, -1, 0}}), kDone);
  EXPECT_EQ(m.woken(), (std::vector<Wakeup>{{2, 0}, {1, 0}}));
  EXPECT_EQ(m.complex_count(), 0);
}

TEST(SemArrayModel, ZeroWaitersReleasedByAWokenOpComeBeforeIt) {
  SemArrayModel m(2);
  EXPECT_EQ(m.setval(1, 1), 0);
  EXPECT_EQ(m.semop(1, std::vector<Sembuf>{{0, -1, 0}, {1, -1, 0}}), kBlocked);
  EXPECT_EQ(m.semop(2, std::vector<Sembuf>{{1, 0, 0}}), kBlocked);
  EXPECT_EQ(m.semop(9, std::vector<Sembuf>{{0, 1, 0}}), kDone);
  EXPECT_EQ(m.woken(), (std::vector<Wakeup>{{2, 0}, {1, 0}}));
}

TEST(SemArrayModel, ComplexSleeperMakesOneGlobalFifo) {
  // A (simple) sleeps first, then complex C, then simple B. While C sleeps all
  // alter ops form one FIFO: A, C, B. sem0 += 2 and sem1 += 1 serve A and C;
  // B, younger than C, gets nothing. Per-semaphore FIFO would have served A
  // and B and left C asleep.
  SemArrayModel m(2);
  EXPECT_EQ(m.semop(1, std::vector<Sembuf>{{0, -1, 0}}), kBlocked);
  EXPECT_EQ(m.semop(3, std::vector<Sembuf>{{0, -1, 0}, {1, -1, 0}}), kBlocked);
  EXPECT_EQ(m.semop(2, std::vector<Sembuf>{{0, -1, 0}}), kBlocked);
  EXPECT_EQ(m.getncnt(0), 3);
  EXPECT_EQ(m.semop(9, std::vector<Sembuf>{{0, 2, 0}, {1, 1, 0}}), kDone);
  EXPECT_EQ(m.woken(), (std::vector<Wakeup>{{1, 0}, {3, 0}}));
  EXPECT_EQ(m.complex_count(), 0);
  // With the complex op gone, B is back on sem0's own queue.
  EXPECT_EQ(m.getncnt(0), 1);
  EXPECT_EQ(m.semop(9, std::vector<Sembuf>{{0, 1, 0}}), kDone);
  EXPECT_EQ(m.woken(), (std::vector<Wakeup>{{2, 0}}));
}

TEST(SemArrayModel, OnlyTheBlockingSopCountsAndItMoves) {
  SemArrayModel m(2);
  EXPECT_EQ(m.semop(1, std::vector<Sembuf>{{0, -1, 0}, {1, -1, 0}}), kBlocked);
  EXPECT_EQ(m.getncnt(0), 1);
  EXPECT_EQ(m.getncnt(1), 0);
  // A retry that blocks on the next sop moves the count there.
  EXPECT_EQ(m.semop(9, std::vector<Sembuf>{{0, 1, 0}}), kDone);
  EXPECT_TRUE(m.woken().empty());
  EXPECT_EQ(m.getncnt(0), 0);
  EXPECT_EQ(m.getncnt(1), 1);
  EXPECT_EQ(m.getval(0), 1);
  // A complex alter op blocked on a wait-for-zero sop counts in zcnt.
  EXPECT_EQ(m.setval(1, 2), 0);
  EXPECT_EQ(m.woken(), (std::vector<Wakeup>{{1, 0}}));
  EXPECT_EQ(m.semop(2, std::vector<Sembuf>{{1, 0, 0}, {0, 1, 0}}), kBlocked);
  EXPECT_EQ(m.getzcnt(1), 1);
  EXPECT_EQ(m.getncnt(1), 0);
}

TEST(SemArrayModel, RetriedOpCanFailWithEagainOrErange) {
  SemArrayModel m(3);
  EXPECT_EQ(m.setval(2, kSemvmx), 0);
  // Sleeps on sop 0 (no IPC_NOWAIT there); on retry sop 1 would block with
  // IPC_NOWAIT: the sleeper fails with EAGAIN.
  EXPECT_EQ(m.semop(1, std::vector<Sembuf>{{0, -1, 0}, {1, -1, kIpcNowait}}), kBlocked);
  // Sleeps on sop 0; on retry sop 1 overflows: ERANGE.
  EXPECT_EQ(m.semop(2, std::vector<Sembuf>{{0, -1, 0}, {2, 1, 0}}), kBlocked);
  EXPECT_EQ(m.semop(9, std::vector<Sembuf>{{0, 1, 0}}), kDone);
  EXPECT_EQ(m.woken(), (std::vector<Wakeup>{{1, -EAGAIN}, {2, -ERANGE}}));
  EXPECT_EQ(m.getval(0), 1);
  EXPECT_EQ(m.complex_count(), 0);
}

TEST(SemArrayModel, SetvalAndSetallWakeSleepers) {
  SemArrayModel m(2);
  EXPECT_EQ(m.semop(1, std::vector<Sembuf>{{0, -2, 0}}), kBlocked);
  EXPECT_EQ(m.semop(2, std::vector<Sembuf>{{1, 0, 0}}), kDone);
  EXPECT_EQ(m.setval(1, 4), 0);
  EXPECT_TRUE(m.woken().empty());
  EXPECT_EQ(m.semop(2, std::vector<Sembuf>{{1, 0, 0}}), kBlocked);
  EXPECT_EQ(m.setall(std::vector<int>{3, 0}), 0);
  EXPECT_EQ(m.woken(), (std::vector<Wakeup>{{2, 0}, {1, 0}}));
  EXPECT_EQ(m.getval(0), 1);
}

TEST(SemArrayModel, TimeoutAndSignal) {
  SemArrayModel m(1);
  EXPECT_EQ(m.semop(1, std::vector<Sembuf>{{0, -1, 0}}, true), kBlocked);
  EXPECT_EQ(m.semop(2, std::vector<Sembuf>{{0, -1, 0}}), kBlocked);
  EXPECT_THROW(m.timeout(2), std::logic_error);
  EXPECT_TRUE(m.timeout(1));
  EXPECT_EQ(m.woken(), (std::vector<Wakeup>{{1, -EAGAIN}}));
  EXPECT_FALSE(m.timeout(1));
  EXPECT_TRUE(m.signal(2));
  EXPECT_EQ(m.woken(), (std::vector<Wakeup>{{2, -EINTR}}));
  EXPECT_FALSE(m.signal(2));
  EXPECT_EQ(m.getncnt(0), 0);
  EXPECT_EQ(m.getval(0), 0);
}

TEST(SemArrayModel, RemovingAComplexSleeperUnmergesTheQueues) {
  SemArrayModel m(2);
  EXPECT_EQ(m.semop(1, std::vector<Sembuf>{{0, -1, 0}, {1, -1, 0}}), kBlocked);
  EXPECT_EQ(m.semop(2, std::vector<Sembuf>{{0, -1, 0}}), kBlocked);
  EXPECT_TRUE(m.signal(1));
  EXPECT_EQ(m.complex_count(), 0);
  EXPECT_EQ(m.semop(9, std::vector<Sembuf>{{0, 1, 0}}), kDone);
  EXPECT_EQ(m.woken(), (std::vector<Wakeup>{{2, 0}}));
}

TEST(SemArrayModel, UndoOnExit) {
  SemArrayModel m(3);
  m.set_process(11, 10);
  m.set_process(12, 10);
  EXPECT_EQ(m.semop(11, std::vector<Sembuf>{{0, 5, kSemUndo}, {1, 2, kSemUndo}}), kDone);
  EXPECT_EQ(m.semop(12, std::vector<Sembuf>{{1, -1, kSemUndo}, {2, 3, 0}}), kDone);
  EXPECT_EQ(*m.semadj(10), (std::vector<int>{-5, -1, 0}));
  EXPECT_EQ(m.semop(20, std::vector<Sembuf>{{0, -3, 0}}), kDone);  // sem0 = 2
  m.exit_process(10);
  EXPECT_EQ(m.getval(0), 0);  // 2 - 5, clamped at 0
  EXPECT_EQ(m.getval(1), 0);
  EXPECT_EQ(m.getval(2), 3);  // no SEM_UNDO there
  EXPECT_EQ(m.getpid(0), 10);
  EXPECT_EQ(m.getpid(2), 10);  // set by task 12's op, not by the undo
  EXPECT_EQ(m.semadj(10), nullptr);
  // Clamping at SEMVMX.
  EXPECT_EQ(m.semop(30, std::vector<Sembuf>{{0, 0, kSemUndo}}), kDone);
  EXPECT_EQ(m.setval(0, 5), 0);
  EXPECT_EQ(m.semop(30, std::vector<Sembuf>{{0, -5, kSemUndo}}), kDone);
  EXPECT_EQ(m.semop(31, std::vector<Sembuf>{{0, kSemvmx, 0}}), kDone);
  m.exit_process(30);
  EXPECT_EQ(m.getval(0), kSemvmx);
}

TEST(SemArrayModel, ExitWakesSleepersAndInterruptsItsOwnTasks) {
  SemArrayModel m(2);
  m.set_process(2, 1);
  EXPECT_EQ(m.setval(0, 1), 0);
  EXPECT_EQ(m.semop(1, std::vector<Sembuf>{{0, -1, kSemUndo}}), kDone);  // holds sem0
  EXPECT_EQ(m.semop(2, std::vector<Sembuf>{{1, -1, 0}}), kBlocked);      // same process
  EXPECT_EQ(m.semop(3, std::vector<Sembuf>{{0, -1, 0}}), kBlocked);
  m.exit_process(1);
  EXPECT_EQ(m.woken(), (std::vector<Wakeup>{{2, -EINTR}, {3, 0}}));
  EXPECT_EQ(m.getval(0), 0);
  EXPECT_EQ(m.getpid(0), 3);
}

TEST(SemArrayModel, RmidWakesEverySleeperWithEidrm) {
  SemArrayModel m(2);
  EXPECT_EQ(m.setval(1, 1), 0);
  EXPECT_EQ(m.semop(1, std::vector<Sembuf>{{0, -1, 0}}), kBlocked);            // sem0 alter
  EXPECT_EQ(m.semop(2, std::vector<Sembuf>{{1, 0, 0}}), kBlocked);             // sem1 const
  EXPECT_EQ(m.semop(3, std::vector<Sembuf>{{1, 0, 0}, {0, 0, 0}}), kBlocked);  // array const
  EXPECT_EQ(m.semop(4, std::vector<Sembuf>{{0, -1, kSemUndo}, {1, 1, 0}}), kBlocked);  // alter
  EXPECT_NE(m.semadj(4), nullptr);
  EXPECT_EQ(m.rmid(), 0);
  // freeary() order: array const, array alter (task 1 was merged there), then
  // each semaphore's const and alter queues.
  EXPECT_EQ(m.woken(), (std::vector<Wakeup>{{3, -EIDRM}, {1, -EIDRM}, {4, -EIDRM}, {2, -EIDRM}}));
  EXPECT_TRUE(m.removed());
  EXPECT_EQ(m.semadj(4), nullptr);
  // Later calls find no array: EINVAL; argument checks done before the lookup
  // still win.
  EXPECT_EQ(m.semop(1, std::vector<Sembuf>{{0, 1, 0}}), error(EINVAL));
  EXPECT_EQ(m.semop(1, std::vector<Sembuf>{{7, 1, 0}}), error(EINVAL));
  EXPECT_EQ(m.semop(1, std::vector<Sembuf>{}), error(EINVAL));
  EXPECT_EQ(m.semop(1, std::vector<Sembuf>(kSemopmDefault + 1, Sembuf{0, 1, 0})), error(E2BIG));
  EXPECT_EQ(m.setval(0, 1), -EINVAL);
  EXPECT_EQ(m.setval(0, -1), -ERANGE);
  EXPECT_EQ(m.setall(std::vector<int>{1, 1}), -EINVAL);
  EXPECT_EQ(m.getval(0), -EINVAL);
  std::vector<int> all;
  EXPECT_EQ(m.getall(&all), -EINVAL);
  EXPECT_EQ(m.getncnt(0), -EINVAL);
  EXPECT_EQ(m.rmid(), -EINVAL);
  m.exit_process(4);  // nothing left to undo
  EXPECT_TRUE(m.woken().empty());
}

TEST(SemArrayModel, CopyIsIndependent) {
  SemArrayModel m(2);
  EXPECT_EQ(m.semop(1, std::vector<Sembuf>{{0, -1, 0}, {1, -1, 0}}), kBlocked);
  SemArrayModel probe = m;
  EXPECT_EQ(probe.semop(9, std::vector<Sembuf>{{0, 1, 0}, {1, 1, 0}}), kDone);
  EXPECT_EQ(probe.woken(), (std::vector<Wakeup>{{1, 0}}));
  EXPECT_TRUE(m.sleeping(1));
  EXPECT_EQ(m.getncnt(0), 1);
}

}  // namespace
}  // namespace semsim::ipc
