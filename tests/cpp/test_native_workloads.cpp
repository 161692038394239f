// Tests of the native runner on every workload (sim/native + sim/workloads/*_def.hpp):
// real SysV semaphores, short runs (tens of milliseconds). They assert what must hold
// whatever the host's speed: exact call counts of runs that go to completion, the
// relations between a benchmark's own counter and the semop() calls, placement, that
// sleeping workloads sleep and non-sleeping ones do not, refusals, and that no array
// is left behind.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/sem.h>
#include <unistd.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "config/scenario.hpp"
#include "core/errors.hpp"
#include "native/native_runner.hpp"
#include "native/sysv_array.hpp"

namespace semsim::native {
namespace {

// Per-call arrays of aim9-shm task processes (one semaphore, index 0, our uid) whose
// process is gone: there must never be any after a run. (Other tests running in
// parallel, e.g. under ctest -j, may leave and clean up arrays of their own dead
// runners, which have more semaphores.)
// The keys of per-call task arrays whose creating process is gone (machine-wide:
// a killed run of another test may have left some; compare before and after).
std::set<long> orphan_task_arrays() {
  std::set<long> keys;
  for (const ArrayInfo& a : list_arrays()) {
    if (!is_runner_key(a.key) || a.cuid != geteuid() || a.nsems != 1 ||
        runner_key_index(a.key) != 0)
      continue;
    if (kill(runner_key_pid(a.key), 0) != 0 && errno == ESRCH) keys.insert(a.key);
  }
  return keys;
}

bool own_array_exists() {
  for (const ArrayInfo& a : list_arrays()) {
    if (is_runner_key(a.key) && runner_key_pid(a.key) == getpid()) return true;
  }
  return false;
}

Scenario parsed(const std::string& workload_json, const std::string& threads,
                double duration_ms = 30, double warmup_ms = 5) {
  const Json doc = Json::parse(R"({"machine": "host", "kernel": "hysteresis", "workload": )" +
                               workload_json + R"(, "threads": )" + threads +
                               R"(, "duration_ms": )" + std::to_string(duration_ms) +
                               R"(, "warmup_ms": )" + std::to_string(warmup_ms) + "}");
  return parse_scenario(doc);
}

std::vector<std::uint64_t> per_task(const Json& p, const char* key) {
  return p.at("per_task").at(key).get<std::vector<std::uint64_t>>();
}

// Two counters of one task read by the main thread a moment apart (it may even be
// preempted between them on a busy host): equal up to a small skew.
bool close(std::uint64_t a, std::uint64_t b) {
  const std::uint64_t d = a > b ? a - b : b - a;
  return d <= 16 + std::max(a, b) / 1000;
}

std::uint64_t sum(const std::vector<std::uint64_t>& v) {
  std::uint64_t s = 0;
  for (auto x : v) s += x;
  return s;
}

void expect_consistent(const Json& p) {
  const auto ops = per_task(p, "ops");
  EXPECT_EQ(static_cast<int>(ops.size()), p.at("threads").get<int>());
  EXPECT_GT(p.at("ops_per_s").get<double>(), 0.0);
  EXPECT_NEAR(p.at("ops_total").get<double>(),
              p.at("ops_per_s").get<double>() * p.at("window_s").get<double>(),
              1e-6 * p.at("ops_total").get<double>() + 1e-9);
  const Json& lat = p.at("latency_ns");
  if (lat.at("samples").get<int>() > 0) {
    EXPECT_LE(lat.at("p50").get<std::uint64_t>(), lat.at("p90").get<std::uint64_t>());
    EXPECT_LE(lat.at("p90").get<std::uint64_t>(), lat.at("p99").get<std::uint64_t>());
    EXPECT_LE(lat.at("p99").get<std::uint64_t>(), lat.at("max").get<std::uint64_t>());
    EXPECT_GT(lat.at("p50").get<std::uint64_t>(), 0u);
  }
}

TEST(NativeWorkloads, SemopMultiSamplesLatencies) {
  const Json r = measure(parsed(R"({"type": "semop-multi", "semaphores": 4})", "[2]"));
  const Json& p = r.at("points")[0];
  expect_consistent(p);
  // 30 ms of ~100-200 ns calls: thousands of calls, one sample per 61 at first.
  EXPECT_GT(p.at("latency_ns").at("samples").get<int>(), 10);
  EXPECT_EQ(per_task(p, "ops").size(), 2u);
  EXPECT_FALSE(own_array_exists());
}

TEST(NativeWorkloads, ScalebenchWaitForZeroCountsOneRoundPerCallAndNeverSleeps) {
  const Json r = measure(parsed(R"({"type": "sem-scalebench", "mode": 1})", "[1, 2]"));
  for (const Json& p : r.at("points")) {
    expect_consistent(p);
    const auto ops = per_task(p, "ops");
    const auto rounds = per_task(p, "rounds");
    for (std::size_t t = 0; t < ops.size(); ++t) {
      EXPECT_TRUE(close(ops[t], rounds[t])) << ops[t] << " vs " << rounds[t];  // a round per call
    }
    // A wait-for-zero on a 0 value never sleeps: (almost) no voluntary switches.
    EXPECT_LT(p.at("context_switches").at("voluntary").get<double>(),
              0.01 * p.at("ops_total").get<double>() + 5);
    // get_cpunr placement, interleave 1, threads_per_core 1: thread t on CPU t.
    const auto cpus = p.at("per_task").at("cpu").get<std::vector<int>>();
    if (p.at("threads") == 2 && host_info().cpus >= 2) {
      EXPECT_NE(cpus[0], cpus[1]);
    }
  }
}

TEST(NativeWorkloads, ScalebenchPingPongOnOneCpuSleepsOnEveryHandOff) {
  // threads_per_core 2: both partners on the same CPU, so every -1 must sleep until the
  // partner runs and posts.
  const Json r =
      measure(parsed(R"({"type": "sem-scalebench", "mode": 2, "threads_per_core": 2})", "[2]"));
  const Json& p = r.at("points")[0];
  expect_consistent(p);
  const auto cpus = p.at("per_task").at("cpu").get<std::vector<int>>();
  EXPECT_EQ(cpus[0], cpus[1]);
  const auto ops = per_task(p, "ops");
  const auto rounds = per_task(p, "rounds");
  EXPECT_TRUE(close(ops[0], rounds[0]));                             // ping-pong counts every call
  EXPECT_TRUE(close(ops[0], ops[1])) << ops[0] << " vs " << ops[1];  // strictly alternating
  const auto voluntary = p.at("per_task").at("voluntary_cs").get<std::vector<std::uint64_t>>();
  EXPECT_GE(voluntary[0] + voluntary[1], sum(ops) / 4);  // one sleep per loop (2 calls)
}

TEST(NativeWorkloads, ScalebenchComplexModesCountPairsAndComplexPingPongRuns) {
  const Json r4 = measure(parsed(R"({"type": "sem-scalebench", "mode": 4, "delay": 1})", "[2]"));
  const Json& p4 = r4.at("points")[0];
  expect_consistent(p4);
  const auto ops = per_task(p4, "ops");
  const auto rounds = per_task(p4, "rounds");
  for (std::size_t t = 0; t < ops.size(); ++t) {
    EXPECT_TRUE(close(ops[t], 2 * rounds[t]))
        << ops[t] << " vs 2 x " << rounds[t];  // 2 calls a round
  }
  const Json rx = measure(
      parsed(R"({"type": "sem-scalebench", "mode": 2, "complex_every": 3, "threads_per_core": 2})",
             "[2, 4]"));
  for (const Json& p : rx.at("points")) expect_consistent(p);
  EXPECT_FALSE(own_array_exists());
}

TEST(NativeWorkloads, LockunlockRunsToCompletionWithExactCounts) {
  const Json r = measure(parsed(
      R"({"type": "sem-lockunlock", "semaphores": 2, "loops": 2000, "busy_in": 10, "busy_out": 10})",
      "[4]"));
  const Json& p = r.at("points")[0];
  expect_consistent(p);
  EXPECT_TRUE(p.at("runs_to_completion").get<bool>());
  EXPECT_EQ(p.at("loops_per_task").get<int>(), 500);
  EXPECT_EQ(per_task(p, "ops"), (std::vector<std::uint64_t>{1000, 1000, 1000, 1000}));
  EXPECT_EQ(p.at("ops_total").get<std::uint64_t>(), 4000u);  // 2 calls per loop, 2000 loops
  EXPECT_NEAR(p.at("per_loop_us").get<double>(), p.at("window_s").get<double>() * 1e6 / 2000, 1e-9);
  EXPECT_EQ(p.at("pin"), "unpinned");  // the benchmark's own default
  // Four tasks on two locks: a task that finds its lock taken sleeps.
  EXPECT_GT(p.at("context_switches").at("voluntary").get<long>(), 0);
  EXPECT_FALSE(own_array_exists());
}

// The same total work (sem-lockunlock's loops are a total) costs about the same CPU
// time whether one process does it or 16 do: the tasks' CPU time is read from the
// thread CPU clock, which includes the runtime since the last scheduler tick that
// getrusage() misses (it reported 0.29 of the one-process time at 16 processes).
TEST(NativeWorkloads, LockunlockCpuTimeDoesNotDependOnTheProcessCount) {
  const Json r = measure(parsed(
      R"({"type": "sem-lockunlock", "semaphores": 64, "loops": 200000, "busy_in": 0, "busy_out": 0})",
      "[1, 16]"));
  const double one = r.at("points")[0].at("cpu_s");
  const double sixteen = r.at("points")[1].at("cpu_s");
  ASSERT_GT(one, 0.0);
  EXPECT_GT(sixteen / one, 0.6);
  EXPECT_LT(sixteen / one, 2.5);
}

// Task processes that are done wait for the end of the run before they exit: an exit
// tears down a copy of the runner's address space, work that would otherwise fall on
// the CPUs while the other tasks still run (at 64 processes it halved the measured
// rate of sem-lockunlock with 64 locks). Eight processes on their own locks finish
// one after another, milliseconds apart; none may have exited when the window closes.
TEST(NativeWorkloads, LockunlockTaskProcessesExitAfterTheWindow) {
  const Json r = measure(parsed(
      R"({"type": "sem-lockunlock", "semaphores": 8, "loops": 80000, "busy_in": 0, "busy_out": 0})",
      "[8]"));
  const Json& p = r.at("points")[0];
  expect_consistent(p);
  ASSERT_TRUE(p.contains("task_exits_in_window"));
  EXPECT_EQ(p.at("task_exits_in_window").get<int>(), 0);
}

TEST(NativeWorkloads, LockunlockRoundsUpLoopsPerTask) {
  const Json r =
      measure(parsed(R"({"type": "sem-lockunlock", "semaphores": 3, "loops": 10})", "[4]"));
  const Json& p = r.at("points")[0];
  EXPECT_EQ(p.at("loops_per_task").get<int>(), 3);  // ceil(10 / 4)
  EXPECT_EQ(p.at("ops_total").get<std::uint64_t>(), 24u);
}

TEST(NativeWorkloads, Aim9CountsFourCallsPerLoopAndLeavesNoArray) {
  const std::set<long> before = orphan_task_arrays();
  const Json r = measure(parsed(R"({"type": "aim9-shm", "loops": 10})", "[1, 2]"));
  for (const Json& p : r.at("points")) {
    expect_consistent(p);
    const auto ops = per_task(p, "ops");
    const auto rounds = per_task(p, "rounds");
    for (std::size_t t = 0; t < ops.size(); ++t) {
      EXPECT_TRUE(close(ops[t], 4 * rounds[t]))
          << ops[t] << " vs 4 x " << rounds[t];  // 4 calls a loop
    }
    EXPECT_GT(p.at("shared_memory_ops_per_s").get<double>(), 0.0);
  }
  EXPECT_EQ(orphan_task_arrays(), before);  // each process removed its per-call arrays
}

TEST(NativeWorkloads, LatSemAlternatesBetweenTwoProcesses) {
  const Json r = measure(parsed(R"({"type": "lat-sem"})", "2"));
  const Json& p = r.at("points")[0];
  expect_consistent(p);
  const auto ops = per_task(p, "ops");
  EXPECT_TRUE(close(ops[0], ops[1])) << ops[0] << " vs " << ops[1];
  EXPECT_NEAR(p.at("latency_us").get<double>(), 1e6 / p.at("ops_per_s").get<double>(), 1e-6);
  EXPECT_THROW(parsed(R"({"type": "lat-sem"})", "3"), InputError);
}

TEST(NativeWorkloads, SembenchWorkersBurnAndTheWakerPosts) {
  const Json r = measure(parsed(R"({"type": "sembench", "wake_num": 2})", "[4]"));
  const Json& p = r.at("points")[0];
  expect_consistent(p);
  const auto burns = sum(per_task(p, "rounds"));
  const auto waker_calls = p.at("waker").at("calls").get<std::uint64_t>();
  EXPECT_GT(burns, 0u);
  EXPECT_GT(waker_calls, 0u);
  // Every semop() call counted: the workers' -1s and the waker's posts.
  EXPECT_EQ(p.at("ops_total").get<std::uint64_t>(), sum(per_task(p, "ops")) + waker_calls);
  // At most wake_num (2) workers per waker round, at most 64 per call: every call posts
  // at least one, so there are at least as many burns as calls, give or take the edges.
  EXPECT_GE(burns + 4, waker_calls);
  EXPECT_NEAR(p.at("worker_burns_per_s").get<double>(),
              static_cast<double>(burns) / p.at("window_s").get<double>(),
              1e-6 * static_cast<double>(burns));
}

TEST(NativeWorkloads, CustomScriptsShareUndoAndCountEagain) {
  // Tasks 0 and 1 share process 7 (one SEM_UNDO list); task 2 has a process of its own
  // and makes a non-blocking take of a semaphore that stays 0 (always EAGAIN).
  const std::string w = R"({"type": "custom", "semaphores": 3, "initial": [0, 1, 0], "tasks": [
      {"process": 7, "repeat": 100, "ops": [{"sops": [[0, 1, "undo"]]}, {"sops": [[0, -1, "undo"]], "think_ns": 100}]},
      {"process": 7, "repeat": 100, "ops": [{"sops": [[1, -1], [0, 0]]}, {"sops": [[1, 1]]}]},
      {"repeat": 50, "ops": [{"sops": [[2, -1, "nowait"]]}, {"sops": [[2, 0, 2048]]}]}]})";
  const Json r = measure(parsed(w, "3"));
  const Json& p = r.at("points")[0];
  EXPECT_TRUE(p.at("runs_to_completion").get<bool>());
  EXPECT_EQ(per_task(p, "ops"), (std::vector<std::uint64_t>{200, 200, 100}));
  EXPECT_EQ(per_task(p, "rounds"), (std::vector<std::uint64_t>{100, 100, 50}));
  EXPECT_EQ(p.at("eagain").get<std::uint64_t>(), 50u);
  EXPECT_TRUE(p.at("completed").get<bool>());
  EXPECT_GT(p.at("rounds_per_s").get<double>(), 0.0);
  EXPECT_FALSE(own_array_exists());
}

TEST(NativeWorkloads, CustomInfiniteScriptsAreWindowed) {
  const Json r = measure(parsed(
      R"({"type": "custom", "semaphores": 1, "tasks": [{"ops": [{"sops": [[0, 1]]}, {"sops": [[0, -1]]}]}]})",
      "[1, 2]"));
  for (const Json& p : r.at("points")) {
    expect_consistent(p);
    EXPECT_FALSE(p.at("runs_to_completion").get<bool>());
    EXPECT_GE(p.at("window_s").get<double>(), 0.030 - 1e-6);
  }
}

std::string input_error_of(const Scenario& s) {
  try {
    measure(s);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no InputError)";
}

TEST(NativeRefusals, PlacementBeyondTheCpusIsRefusedWithTheWayOut) {
  const int cpus = host_info().cpus;
  // get_cpunr with interleave 1 pins at most cpus + (cpus - 1) threads before it runs
  // past the last CPU; 4 * cpus threads surely do.
  const std::string msg = input_error_of(
      parsed(R"({"type": "sem-scalebench", "mode": 1})", "[" + std::to_string(4 * cpus) + "]"));
  EXPECT_NE(msg.find("workload.pin"), std::string::npos) << msg;
  EXPECT_NE(msg.find("get_cpunr"), std::string::npos) << msg;
  EXPECT_NE(msg.find("unpinned"), std::string::npos) << msg;
  // Unpinned, the same run is fine.
  EXPECT_NO_THROW(measure(parsed(R"({"type": "sem-scalebench", "mode": 1, "pin": "unpinned"})",
                                 "[" + std::to_string(4 * cpus) + "]", 5, 0)));

  const std::string cpu_msg = input_error_of(
      parsed(R"({"type": "custom", "semaphores": 1, "tasks": [{"cpu": )" + std::to_string(cpus) +
                 R"(, "repeat": 1, "ops": [{"sops": [[0, 1]]}]}]})",
             "1"));
  EXPECT_NE(cpu_msg.find("CPU " + std::to_string(cpus)), std::string::npos) << cpu_msg;
}

TEST(NativeRefusals, HostSemaphoreLimitsAreNamed) {
  const SemLimits lim = sem_limits();
  // SEMOPM: one call with more sops than the host allows (built directly: the parser
  // caps a scenario at 500 sops).
  Scenario s = parsed(
      R"({"type": "custom", "semaphores": 1, "tasks": [{"repeat": 1, "ops": [{"sops": [[0, 1]]}]}]})",
      "1");
  s.workload.custom.tasks[0].ops[0].sops.assign(static_cast<std::size_t>(lim.semopm) + 1,
                                                ipc::Sembuf{0, 0, 0});
  std::string msg = input_error_of(s);
  EXPECT_NE(msg.find("SEMOPM of " + std::to_string(lim.semopm)), std::string::npos) << msg;

  // SEMMNI: aim9-shm keeps one array per process at once.
  Scenario aim = parsed(R"({"type": "aim9-shm"})", "1");
  aim.threads = {lim.semmni + 1};
  msg = input_error_of(aim);
  EXPECT_NE(msg.find("SEMMNI of " + std::to_string(lim.semmni)), std::string::npos) << msg;

  // SEMMSL: sem-scalebench's array is distance x threads.
  Scenario sb = parsed(R"({"type": "sem-scalebench", "mode": 1, "pin": "unpinned"})", "2");
  sb.workload.scalebench.distance = lim.semmsl;
  msg = input_error_of(sb);
  EXPECT_NE(msg.find("workload.distance"), std::string::npos) << msg;
  EXPECT_NE(msg.find("SEMMSL of " + std::to_string(lim.semmsl)), std::string::npos) << msg;

  // sembench beyond the runner's 4 arrays per process.
  msg = input_error_of(parsed(R"({"type": "sembench", "pin": "unpinned"})", "1001"));
  EXPECT_NE(msg.find("at most 1000 workers"), std::string::npos) << msg;
  EXPECT_FALSE(own_array_exists());
}

}  // namespace
}  // namespace semsim::native
