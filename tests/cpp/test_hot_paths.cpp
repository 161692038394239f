// Hot-path rewrites that must not change an answer (issue 15, speed): the SMT
// history's work_in() reuses one scratch vector for its cuts, so an answer
// must not depend on what was asked before; category_of() is inline and
// constexpr, and still folds every function into its category.
#include <gtest/gtest.h>

#include "machine/smt.hpp"
#include "machine/task.hpp"
#include "machine/topology.hpp"
#include "test_machine_harness.hpp"

namespace semsim {
namespace {

constexpr double kSlowdown = 1.5;

// 2 cores x 2 threads, CPUs 0-1 core 0: sibling 1 busy in [100, 200), [300, 400), [500, 600).
machine::SmtCores& with_history(machine::SmtCores& smt) {
  for (Tick from : {100, 300, 500}) {
    smt.set_busy(1, true, from, 0);
    smt.set_busy(1, false, from + 100, 0);
  }
  return smt;
}

config::MachineParams smt_machine() {
  auto m = machine_test::smt_pairs_machine(4);
  m.smt_compute_slowdown = kSlowdown;
  return m;
}

TEST(HotPaths, SmtWorkInAnswersAloneOfTheQuestionsBefore) {
  const auto m = smt_machine();
  machine::Topology topo(m);
  machine::SmtCores asked(topo);
  ASSERT_TRUE(asked.active());
  with_history(asked);
  // Many cuts (six transitions), then one, then none: each answer as a fresh history gives it.
  const std::vector<std::pair<Tick, Tick>> spans{{0, 700}, {150, 250}, {210, 290}, {0, 700}};
  const std::vector<double> want{400 + 300 / kSlowdown, 50 + 50 / kSlowdown, 80,
                                 400 + 300 / kSlowdown};
  for (std::size_t i = 0; i < spans.size(); ++i) {
    machine::SmtCores fresh(topo);
    with_history(fresh);
    const auto [a, b] = spans[i];
    EXPECT_DOUBLE_EQ(asked.work_in(0, a, b), want[i]) << "span " << i;
    EXPECT_DOUBLE_EQ(fresh.work_in(0, a, b), want[i]) << "span " << i;
  }
}

TEST(HotPaths, CategoryOfFoldsEveryFunction) {
  using machine::CpuCategory;
  using machine::Func;
  static_assert(machine::category_of(Func::RawSpinLock) == CpuCategory::Spin);
  EXPECT_EQ(machine::category_of(Func::User), CpuCategory::User);
  EXPECT_EQ(machine::category_of(Func::SyscallEntry), CpuCategory::Syscall);
  EXPECT_EQ(machine::category_of(Func::RawReadLock), CpuCategory::Spin);
  EXPECT_EQ(machine::category_of(Func::RawWriteLock), CpuCategory::Spin);
  EXPECT_EQ(machine::category_of(Func::Schedule), CpuCategory::ContextSwitch);
  EXPECT_EQ(machine::category_of(Func::IpcObtain), CpuCategory::Kernel);
  EXPECT_EQ(machine::category_of(Func::Interrupt), CpuCategory::Kernel);
}

}  // namespace
}  // namespace semsim
