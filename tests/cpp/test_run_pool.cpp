// The forked-run pool (driver/run_pool.hpp) and the parallel simulate path:
// results by task whatever order the children end, errors and crashes as
// outcomes, an interrupt ends the children, and jobs never changes a byte.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <set>
#include <stdexcept>
#include <thread>

#include "config/scenario.hpp"
#include "core/errors.hpp"
#include "driver/run_pool.hpp"
#include "driver/simulate.hpp"

using semsim::Json;
namespace driver = semsim::driver;

namespace {

std::vector<std::size_t> identity(std::size_t n) {
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  return order;
}

Json scenario_doc() {
  return Json::parse(R"({
    "name": "pool", "machine": "laptop-4", "kernel": "per_sem_lock",
    "workload": {"type": "semop-multi", "semaphores": 4, "pattern": "stride"},
    "threads": [1, 3, 6], "duration_ms": 0.4, "warmup_ms": 0.1, "seed": 11, "repeats": 2})");
}

}  // namespace

TEST(RunPool, ResultsComeBackByTaskWhateverOrderTheyEnd) {
  std::vector<std::function<Json()>> tasks;
  for (int i = 0; i < 5; ++i)
    tasks.push_back([i] {
      // The first tasks take longest, so they end last.
      std::this_thread::sleep_for(std::chrono::milliseconds(40 * (5 - i)));
      return Json{{"task", i}, {"pid", ::getpid()}, {"half", i / 2.0}};
    });
  driver::PoolOptions options;
  options.jobs = 3;
  std::vector<std::size_t> finished;
  options.finished = [&](std::size_t t, const driver::TaskOutcome&) { finished.push_back(t); };
  const auto out = driver::run_pool(tasks, identity(tasks.size()), options);
  ASSERT_EQ(out.size(), 5u);
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(out[i].ok) << out[i].message;
    EXPECT_EQ(out[i].value["task"], i);
    EXPECT_EQ(out[i].value["half"].get<double>(), i / 2.0);
    EXPECT_NE(out[i].value["pid"], ::getpid());  // ran in a child
  }
  EXPECT_EQ(finished.size(), 5u);
  EXPECT_NE(finished.front(), 0u);  // task 0 was the slowest, so not the first to end
}

TEST(RunPool, ErrorsAndCrashesAreOutcomes) {
  std::vector<std::function<Json()>> tasks = {
      [] { return Json(1); },
      []() -> Json { throw semsim::InputError("workload.semaphores: expected >= 1"); },
      []() -> Json { throw semsim::SimulationError("deadlock at 5 ns"); },
      []() -> Json {
        std::raise(SIGSEGV);
        return Json(0);
      },
      []() -> Json { ::_exit(7); }};
  driver::PoolOptions options;
  options.jobs = 2;
  options.stop_on_error = false;
  const auto out = driver::run_pool(tasks, identity(tasks.size()), options);
  EXPECT_TRUE(out[0].ok);
  EXPECT_EQ(out[1].error_type, "InputError");
  EXPECT_EQ(out[1].message, "workload.semaphores: expected >= 1");
  EXPECT_EQ(out[2].error_type, "SimulationError");
  EXPECT_EQ(out[2].message, "deadlock at 5 ns");
  EXPECT_FALSE(out[3].ok);
  EXPECT_NE(out[3].message.find("SIGSEGV"), std::string::npos) << out[3].message;
  EXPECT_NE(out[4].message.find("status 7"), std::string::npos) << out[4].message;
}

TEST(RunPool, StopOnErrorStartsNoMoreTasks) {
  std::vector<std::function<Json()>> tasks = {
      []() -> Json { throw semsim::SimulationError("first"); }, [] { return Json(1); },
      [] { return Json(2); }};
  driver::PoolOptions options;
  options.jobs = 1;
  const auto out = driver::run_pool(tasks, identity(tasks.size()), options);
  EXPECT_EQ(out[0].error_type, "SimulationError");
  EXPECT_FALSE(out[1].ok);
  EXPECT_TRUE(out[1].error_type.empty());  // never started
}

TEST(RunPool, AnExceptionFromPollEndsTheChildren) {
  std::vector<std::function<Json()>> tasks(2, []() -> Json {
    while (true) ::pause();  // would run for ever
  });
  driver::PoolOptions options;
  options.jobs = 2;
  options.poll = [] { throw std::runtime_error("interrupted"); };
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(driver::run_pool(tasks, identity(2), options), std::runtime_error);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(RunPool, ProgressComesBackWithTheTask) {
  std::vector<std::function<Json()>> tasks;
  for (int i = 0; i < 3; ++i)
    tasks.push_back([] {
      driver::RunProgress p;
      p.done = 5, p.target = 10, p.finished = true;
      driver::report_progress(p);
      return Json(0);
    });
  driver::PoolOptions options;
  options.jobs = 2;
  std::vector<int> seen(3, 0);
  options.progress = [&](std::size_t t, const driver::RunProgress& p) {
    EXPECT_EQ(p.done, 5);
    EXPECT_EQ(p.target, 10);
    EXPECT_TRUE(p.finished);
    ++seen[t];
  };
  driver::run_pool(tasks, identity(3), options);
  EXPECT_EQ(seen, std::vector<int>(3, 1));
}

TEST(ParallelSimulate, SameBytesWhateverJobs) {
  const auto scenario = semsim::parse_scenario(scenario_doc());
  const std::string one = driver::simulate(scenario, {1, {}}).dump(2);
  EXPECT_EQ(one, driver::simulate(scenario, {2, {}}).dump(2));
  EXPECT_EQ(one, driver::simulate(scenario, {5, {}}).dump(2));
}

TEST(ParallelSimulate, BatchGivesEachScenarioItsOwnDocument) {
  auto other = scenario_doc();
  other["kernel"] = "global_lock";
  other["threads"] = Json::array({2});
  other["repeats"] = 3;
  const std::vector<semsim::Scenario> scenarios = {semsim::parse_scenario(scenario_doc()),
                                                   semsim::parse_scenario(other)};
  std::vector<std::size_t> done;
  const auto out =
      driver::simulate_batch(scenarios, {2, {}}, [&](std::size_t i) { done.push_back(i); });
  ASSERT_EQ(out.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    ASSERT_TRUE(out[i].ok) << out[i].message;
    EXPECT_EQ(out[i].value.dump(2), driver::simulate(scenarios[i]).dump(2));
  }
  std::sort(done.begin(), done.end());
  EXPECT_EQ(done, (std::vector<std::size_t>{0, 1}));
}

TEST(RunPool, AnAbandonedTaskIsEndedWithoutAnOutcome) {
  std::vector<std::function<Json()>> tasks = {[] { return Json(0); },
                                              []() -> Json {
                                                while (true) ::pause();  // would run for ever
                                              }};
  driver::PoolOptions options;
  options.jobs = 2;
  bool first_done = false;
  std::vector<std::size_t> finished;
  options.finished = [&](std::size_t t, const driver::TaskOutcome&) {
    finished.push_back(t);
    first_done = first_done || t == 0;
  };
  options.abandoned = [&](std::size_t t) { return t == 1 && first_done; };
  const auto start = std::chrono::steady_clock::now();
  const auto out = driver::run_pool(tasks, identity(2), options);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_TRUE(out[0].ok);
  EXPECT_FALSE(out[1].ok);
  EXPECT_TRUE(out[1].error_type.empty());
  EXPECT_EQ(finished, std::vector<std::size_t>{0});
}

TEST(RunPool, AWorkerRunsTaskAfterTaskAndAFreshOneFollowsACrash) {
  std::vector<std::function<Json()>> tasks;
  for (int i = 0; i < 8; ++i)
    tasks.push_back([i]() -> Json {
      if (i == 3) std::raise(SIGSEGV);
      return Json{{"pid", ::getpid()}};
    });
  driver::PoolOptions options;
  options.jobs = 2;
  options.stop_on_error = false;
  const auto out = driver::run_pool(tasks, identity(tasks.size()), options);
  std::set<int> before, after;  // the workers of the tasks before and after the crash
  for (int i = 0; i < 8; ++i) {
    if (i == 3) {
      EXPECT_NE(out[i].message.find("SIGSEGV"), std::string::npos) << out[i].message;
      continue;
    }
    ASSERT_TRUE(out[i].ok) << i << ": " << out[i].message;
    (i < 3 ? before : after).insert(out[i].value["pid"].get<int>());
  }
  EXPECT_LE(before.size(), 2u);  // two workers for the first three tasks
  std::set<int> all = before;
  all.insert(after.begin(), after.end());
  EXPECT_LE(all.size(), 3u);  // and one fresh worker for the crashed one
}
