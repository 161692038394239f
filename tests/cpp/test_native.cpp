// Tests of the native runner (sim/native): real SysV semaphores on this host.
//
// They run real threads for a few tens of milliseconds; they assert structure and
// invariants (positive rates, consistent totals, arrays removed), never speed.
// The signal tests fork, so a signal that goes wrong kills a child, not the suite.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/sem.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "config/scenario.hpp"
#include "core/errors.hpp"
#include "native/native_runner.hpp"
#include "native/sysv_array.hpp"

namespace semsim::native {
namespace {

using Clock = std::chrono::steady_clock;

bool array_with_key_exists(key_t key) {
  for (const ArrayInfo& a : list_arrays()) {
    if (a.key == key) return true;
  }
  return false;
}

// Polls until an array with `key` exists, up to `timeout`.
bool wait_for_array(key_t key, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    if (array_with_key_exists(key)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return false;
}

// Reaps `pid`, waiting at most `timeout`; SIGKILLs it (and fails) if it is still running.
int reap(pid_t pid, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  int status = 0;
  while (Clock::now() < deadline) {
    if (waitpid(pid, &status, WNOHANG) == pid) return status;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  ADD_FAILURE() << "child " << pid << " did not finish in time";
  return status;
}

// A scenario built directly (the JSON parser belongs to sim/config).
Scenario semop_multi_scenario(std::vector<int> threads, int semaphores, double duration_ms,
                              double warmup_ms, int repeats) {
  Scenario s;
  s.name = "native-test";
  s.machine = "host";
  s.workload.type = "semop-multi";
  s.workload.semaphores = semaphores;
  s.workload.pattern = "stride";
  s.workload.pin = Pinning::Pinned;
  s.threads = std::move(threads);
  s.duration_ms = duration_ms;
  s.warmup_ms = warmup_ms;
  s.repeats = repeats;
  s.seed = 7;
  return s;
}

TEST(NativeHost, GenerationForReleaseMapsEveryRange) {
  EXPECT_EQ(generation_for_release("2.6.32-754.el6.x86_64"), "global_lock");
  EXPECT_EQ(generation_for_release("3.9.6"), "global_lock");
  EXPECT_EQ(generation_for_release("3.10.4"), "per_sem_lock");
  EXPECT_EQ(generation_for_release("3.11.0"), "moved_otime");
  EXPECT_EQ(generation_for_release("3.12.0"), "wait_array");
  EXPECT_EQ(generation_for_release("4.0.5"), "wait_array");
  EXPECT_EQ(generation_for_release("4.8.17"), "wait_array");
  EXPECT_EQ(generation_for_release("4.9.0"), "complex_mode");
  EXPECT_EQ(generation_for_release("4.10.1"), "complex_mode");
  EXPECT_EQ(generation_for_release("4.11"), "hysteresis");
  EXPECT_EQ(generation_for_release("6.1.0-28-amd64"), "hysteresis");
  // Minor numbers compare as numbers, not text: 3.100 is after 3.11.
  EXPECT_EQ(generation_for_release("3.100.0"), "wait_array");
  EXPECT_THROW(generation_for_release(""), InputError);
  EXPECT_THROW(generation_for_release("linux"), InputError);
  EXPECT_THROW(generation_for_release("6"), InputError);
  EXPECT_THROW(generation_for_release("6."), InputError);
}

TEST(NativeHost, HostInfoDescribesThisKernel) {
  struct utsname u {};
  ASSERT_EQ(uname(&u), 0);
  const HostInfo h = host_info();
  EXPECT_EQ(h.kernel_release, std::string(u.release));
  EXPECT_GE(h.cpus, 1);
  EXPECT_EQ(h.generation, generation_for_release(h.kernel_release));
}

TEST(NativeArray, KeySchemeMarksOursAndNamesThePid) {
  const key_t k = runner_key(12345);
  EXPECT_EQ((k >> 24) & 0xFF, 'S');
  EXPECT_TRUE(is_runner_key(k));
  EXPECT_EQ(runner_key_pid(k), 12345);
  EXPECT_FALSE(is_runner_key(IPC_PRIVATE));
  EXPECT_FALSE(is_runner_key(0x52001234));  // 'R' in the top byte
}

TEST(NativeArray, RaiiRemovesOnExceptionAndNeverRemovesAnArrayHoldingItsKey) {
  const key_t mine = runner_key(getpid());
  ASSERT_FALSE(array_with_key_exists(mine));
  try {
    SemArray a(3);
    EXPECT_TRUE(array_with_key_exists(mine));
    EXPECT_EQ(semctl(a.id(), 2, GETVAL), 0);  // starts at zero
    throw std::runtime_error("leave the scope by an exception");
  } catch (const std::runtime_error&) {
  }
  EXPECT_FALSE(array_with_key_exists(mine));

  // An array that holds our key but that we cannot prove is ours (another program's,
  // made with a key that happens to look like ours) is left alone: the next creation
  // goes without a key.
  const int foreign = semget(mine, 1, IPC_CREAT | IPC_EXCL | 0600);
  ASSERT_GE(foreign, 0);
  {
    SemArray b(2);
    EXPECT_NE(b.id(), foreign);
    EXPECT_EQ(semctl(foreign, 0, GETVAL), 0);  // still there
  }
  EXPECT_EQ(semctl(foreign, 0, GETVAL), 0);
  semctl(foreign, 0, IPC_RMID);
  EXPECT_FALSE(array_with_key_exists(mine));
}

// foreign_cpu_share: another process that spins through the window shows up as
// foreign load (it has a CPU to itself on a 2-CPU host: about 0.5; sharing with the
// task on one CPU, about 0.5 too), and a window too short for /proc/stat's ticks gets
// null rather than a number made of rounding.
TEST(NativeMeasure, ForeignCpuShareSeesAnotherProcessSpinning) {
  const pid_t burner = fork();
  ASSERT_GE(burner, 0);
  if (burner == 0) {
    for (;;) __asm__ __volatile__("" ::: "memory");  // spin until killed
  }
  const Scenario s = semop_multi_scenario({1}, 4, 300.0, 20.0, 1);
  const Json busy = measure(s);
  const Json brief = measure(semop_multi_scenario({1}, 4, 20.0, 5.0, 1));
  kill(burner, SIGKILL);
  waitpid(burner, nullptr, 0);
  const Json& share = busy.at("points")[0].at("foreign_cpu_share");
  ASSERT_TRUE(share.is_number());
  EXPECT_GE(share.get<double>(), 0.25);
  EXPECT_LE(share.get<double>(), 1.0);
  EXPECT_TRUE(brief.at("points")[0].at("foreign_cpu_share").is_null());
}

TEST(NativeMeasure, TinySemopMultiGivesConsistentPoints) {
  // Three runs: the point is the median one, so a single run starved of CPU by a busy
  // host cannot make it empty.
  const Scenario s = semop_multi_scenario({1, 2}, 4, 20.0, 5.0, 3);
  const Json r = measure(s);
  const HostInfo h = host_info();

  EXPECT_EQ(r.at("side"), "measured");
  EXPECT_EQ(r.at("host").at("kernel_release"), h.kernel_release);
  EXPECT_EQ(r.at("host").at("cpus"), h.cpus);
  EXPECT_EQ(r.at("host").at("generation"), h.generation);
  ASSERT_EQ(r.at("points").size(), 2u);

  for (std::size_t i = 0; i < 2; ++i) {
    const Json& p = r.at("points")[i];
    const int threads = s.threads[i];
    SCOPED_TRACE("threads " + std::to_string(threads));
    EXPECT_EQ(p.at("threads"), threads);
    EXPECT_EQ(p.at("kernel"), h.generation);
    EXPECT_EQ(p.at("machine"), "host");
    EXPECT_EQ(p.at("host_kernel_release"), h.kernel_release);

    const double rate = p.at("ops_per_s");
    EXPECT_GT(rate, 0.0);
    ASSERT_EQ(p.at("ops_per_s_runs").size(), 3u);
    EXPECT_LE(p.at("ops_per_s_min").get<double>(), rate);
    EXPECT_GE(p.at("ops_per_s_max").get<double>(), rate);
    // The reported run is the middle one of the three.
    std::vector<double> runs = p.at("ops_per_s_runs").get<std::vector<double>>();
    std::sort(runs.begin(), runs.end());
    EXPECT_EQ(rate, runs[1]);

    // The window is measured, and the main thread sleeps at least the nominal length.
    const double window = p.at("window_s");
    EXPECT_GE(window, 0.020 - 1e-6);
    EXPECT_LT(window, 5.0);

    // Totals agree with the rate over the measured window.
    const auto total = p.at("ops_total").get<std::uint64_t>();
    EXPECT_GT(total, 0u);
    EXPECT_NEAR(static_cast<double>(total), rate * window, 1e-6 * static_cast<double>(total));

    // Per-thread counts: ordered, positive (each thread ran in 20 ms), and summing to the
    // total, so min * N <= total <= max * N.
    const Json& per = p.at("per_task_ops");
    const auto lo = per.at("min").get<std::uint64_t>();
    const auto hi = per.at("max").get<std::uint64_t>();
    const double med = per.at("median");
    EXPECT_GT(lo, 0u);
    EXPECT_LE(static_cast<double>(lo), med);
    EXPECT_LE(med, static_cast<double>(hi));
    EXPECT_LE(lo * static_cast<std::uint64_t>(threads), total);
    EXPECT_GE(hi * static_cast<std::uint64_t>(threads), total);
    if (threads == 1) {
      EXPECT_EQ(lo, total);
    }

    EXPECT_GE(p.at("context_switches").at("voluntary").get<long>(), 0);
    EXPECT_GE(p.at("context_switches").at("involuntary").get<long>(), 0);
  }
  // Every run removed its array.
  EXPECT_FALSE(array_with_key_exists(runner_key(getpid())));
}

TEST(NativeMeasure, RefusesBadInputNamingTheField) {
  auto message_of = [](const Scenario& s) -> std::string {
    try {
      measure(s);
    } catch (const InputError& e) {
      return e.what();
    }
    return "(no InputError)";
  };
  Scenario too_many = semop_multi_scenario({1}, semmsl() + 1, 5.0, 0.0, 1);
  EXPECT_NE(message_of(too_many).find("workload.semaphores"), std::string::npos);
  EXPECT_NE(message_of(too_many).find(std::to_string(semmsl())), std::string::npos);

  // Thread counts are the scenario's to validate (parse_scenario), before measure().
  auto parse_message_of = [&](const char* threads) -> std::string {
    try {
      return message_of(parse_scenario(Json::parse(
          std::string(R"({"machine": "host", "kernel": "hysteresis", "duration_ms": 5, )") +
          R"("workload": {"type": "semop-multi", "semaphores": 4}, "threads": )" + threads + "}")));
    } catch (const InputError& e) {
      return e.what();
    }
  };
  EXPECT_NE(parse_message_of("[1, 0]").find("threads"), std::string::npos);
  EXPECT_NE(parse_message_of("[]").find("threads"), std::string::npos);

  Scenario other = semop_multi_scenario({1}, 4, 5.0, 0.0, 1);
  other.workload.type = "aim9";  // not a workload (aim9-shm is)
  EXPECT_NE(message_of(other).find("workload.type"), std::string::npos);

  EXPECT_FALSE(array_with_key_exists(runner_key(getpid())));
}

// SIGINT with the default disposition: the child must remove its array, then die of
// SIGINT (the previous disposition), long before its 3 s window ends.
TEST(NativeSignals, SigintRemovesTheArrayAndKillsWithSigint) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The default disposition, whatever the suite's process has (a SimGrid engine built
    // by another test installs its own SIGINT handler, which exits with status 1).
    signal(SIGINT, SIG_DFL);
    try {
      measure(semop_multi_scenario({2}, 4, 3000.0, 0.0, 1));
    } catch (...) {
      _exit(3);
    }
    _exit(4);  // ran to the end: the signal was not handled
  }
  const key_t key = runner_key(child);
  ASSERT_TRUE(wait_for_array(key, std::chrono::milliseconds(2000)))
      << "the child never created its array";
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // let it run a little
  const auto sent = Clock::now();
  ASSERT_EQ(kill(child, SIGINT), 0);
  const int status = reap(child, std::chrono::milliseconds(2000));
  const auto took = Clock::now() - sent;

  EXPECT_TRUE(WIFSIGNALED(status)) << "exit status " << WEXITSTATUS(status);
  if (WIFSIGNALED(status)) {
    EXPECT_EQ(WTERMSIG(status), SIGINT);
  }
  EXPECT_LT(took, std::chrono::milliseconds(1500));
  EXPECT_FALSE(array_with_key_exists(key));
}

// A previous handler that returns (as Python's does): measure() must remove the array,
// call that handler, restore it, and throw SimulationError. The signal is sent to the
// whole process from another thread, so it may be handled on a thread that is not
// measure()'s: the handler state must cope.
namespace {
std::atomic<int> g_previous_handler_calls{0};
extern "C" void previous_handler(int) { g_previous_handler_calls.fetch_add(1); }
}  // namespace

TEST(NativeSignals, ReturningPreviousHandlerGetsTheSignalAndMeasureThrows) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // In a child so the suite's own SIGHUP disposition is never touched.
    struct sigaction sa {};
    sa.sa_handler = previous_handler;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGHUP, &sa, nullptr);
    std::thread sender([] {
      if (wait_for_array(runner_key(getpid()), std::chrono::milliseconds(2000))) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        kill(getpid(), SIGHUP);
      }
    });
    int code = 10;
    try {
      measure(semop_multi_scenario({2}, 4, 3000.0, 0.0, 1));
      code = 11;  // no exception
    } catch (const SimulationError& e) {
      code = std::string(e.what()).find("signal 1") != std::string::npos ? 0 : 12;
    } catch (...) {
      code = 13;
    }
    sender.join();
    struct sigaction now {};
    sigaction(SIGHUP, nullptr, &now);
    if (code == 0 && now.sa_handler != previous_handler) code = 14;  // not restored
    if (code == 0 && g_previous_handler_calls.load() != 1) code = 15;
    if (code == 0 && array_with_key_exists(runner_key(getpid()))) code = 16;
    _exit(code);
  }
  const int status = reap(child, std::chrono::milliseconds(4000));
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0)
      << "10/11 no exception, 12 wrong message, 13 wrong type, 14 handler not restored, "
         "15 previous handler not called once, 16 array left";
  EXPECT_FALSE(array_with_key_exists(runner_key(child)));
}

// A runner SIGKILLed with its array alive: cleanup_leftovers() removes that array and
// leaves alone one whose creator (this process) is alive.
TEST(NativeCleanup, RemovesArraysOfDeadRunnersOnly) {
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(ready[0]);
    new SemArray(2);  // deliberately never destroyed: SIGKILL is coming
    const char byte = 1;
    if (write(ready[1], &byte, 1) != 1) _exit(1);
    for (;;) pause();
  }
  close(ready[1]);
  char byte = 0;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);
  close(ready[0]);
  kill(child, SIGKILL);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status));

  const key_t dead_key = runner_key(child);
  // SIGKILL left the array. (Under ctest -j another test process's measure() may clean
  // it up first: the end state below is what matters.)

  SemArray live(1);  // ours, creator alive
  const key_t live_key = runner_key(getpid());

  cleanup_leftovers();
  EXPECT_FALSE(array_with_key_exists(dead_key));
  EXPECT_TRUE(array_with_key_exists(live_key));
  EXPECT_EQ(semctl(live.id(), 0, GETVAL), 0);  // still usable
}

// ---------------------------------------------------------------------------
// Forked task processes (sem-lockunlock, lat-sem, aim9-shm, custom).

// A sem-lockunlock run that would take hours: 8 processes on 2 locks.
Scenario endless_lockunlock() {
  Scenario s;
  s.name = "native-test";
  s.machine = "host";
  s.workload.type = "sem-lockunlock";
  s.workload.semaphores = 2;
  s.workload.lockunlock.semaphores = 2;
  s.workload.lockunlock.loops = 4'000'000'000LL;
  s.workload.pin = Pinning::Unpinned;
  s.threads = {8};
  s.repeats = 1;
  return s;
}

// The child processes of `pid` (of all its threads), from /proc/<pid>/task/*/children.
std::vector<pid_t> children_of(pid_t pid) {
  std::vector<pid_t> out;
  std::error_code ec;
  const std::filesystem::path dir = "/proc/" + std::to_string(pid) + "/task";
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    std::ifstream in(entry.path() / "children");
    pid_t c = 0;
    while (in >> c) out.push_back(c);
  }
  return out;
}

// True when `pid` no longer runs (gone, or a zombie nobody reaped yet).
bool process_dead(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  if (!in) return true;
  std::string line;
  std::getline(in, line);
  const auto close_paren = line.rfind(')');
  return close_paren != std::string::npos && close_paren + 2 < line.size() &&
         (line[close_paren + 2] == 'Z' || line[close_paren + 2] == 'X');
}

bool wait_until_dead(const std::vector<pid_t>& pids, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    if (std::all_of(pids.begin(), pids.end(), process_dead)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return false;
}

// SIGINT to a runner whose tasks are forked processes: the array goes, every task
// process is killed and reaped (its process group is empty when it dies), and the
// runner dies of SIGINT.
TEST(NativeSignals, SigintWithForkedTasksRemovesArrayAndReapsTaskProcesses) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    signal(SIGINT, SIG_DFL);  // as above: not the suite's (possibly SimGrid's) handler
    setpgid(0, 0);            // the runner and its task processes in a group of their own
    try {
      measure(endless_lockunlock());
    } catch (...) {
      _exit(3);
    }
    _exit(4);
  }
  setpgid(child, child);  // (either side may win the race; both ask the same)
  const key_t key = runner_key(child);
  ASSERT_TRUE(wait_for_array(key, std::chrono::milliseconds(3000)));
  std::this_thread::sleep_for(std::chrono::milliseconds(150));  // tasks forked and running
  const std::vector<pid_t> tasks = children_of(child);
  EXPECT_EQ(tasks.size(), 8u);
  ASSERT_EQ(kill(child, SIGINT), 0);
  const int status = reap(child, std::chrono::milliseconds(4000));
  EXPECT_TRUE(WIFSIGNALED(status)) << "exit status " << WEXITSTATUS(status);
  if (WIFSIGNALED(status)) {
    EXPECT_EQ(WTERMSIG(status), SIGINT);
  }
  EXPECT_FALSE(array_with_key_exists(key));
  // The runner reaped its task processes before re-raising: nothing of its group is left.
  EXPECT_EQ(kill(-child, 0), -1);
  EXPECT_EQ(errno, ESRCH);
  EXPECT_TRUE(wait_until_dead(tasks, std::chrono::milliseconds(100)));
}

// A task process SIGKILLed mid-run: measure() ends with SimulationError naming it, the
// array is removed, the other task processes are killed and reaped.
TEST(NativeSignals, SigkillOfATaskProcessEndsTheRunWithoutLeaks) {
  std::string error;
  std::thread runner([&error] {
    try {
      measure(endless_lockunlock());
      error = "(no exception)";
    } catch (const SimulationError& e) {
      error = e.what();
    } catch (const std::exception& e) {
      error = std::string("(wrong type) ") + e.what();
    }
  });
  const key_t key = runner_key(getpid());
  ASSERT_TRUE(wait_for_array(key, std::chrono::milliseconds(3000)));
  std::vector<pid_t> tasks;
  const auto deadline = Clock::now() + std::chrono::milliseconds(3000);
  while (tasks.size() < 8 && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    tasks = children_of(getpid());
  }
  ASSERT_EQ(tasks.size(), 8u);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const auto sent = Clock::now();
  ASSERT_EQ(kill(tasks[3], SIGKILL), 0);
  runner.join();
  EXPECT_LT(Clock::now() - sent, std::chrono::milliseconds(3000));
  EXPECT_NE(error.find("task process " + std::to_string(tasks[3])), std::string::npos) << error;
  EXPECT_NE(error.find("killed by signal 9"), std::string::npos) << error;
  EXPECT_FALSE(array_with_key_exists(key));
  EXPECT_TRUE(children_of(getpid()).empty());  // all reaped
  EXPECT_TRUE(wait_until_dead(tasks, std::chrono::milliseconds(100)));
}

// A runner SIGKILLed while its task processes run: they die with it (PR_SET_PDEATHSIG),
// and cleanup_leftovers() (semsim native --cleanup) removes the arrays it left.
TEST(NativeSignals, TaskProcessesDieWithASigkilledRunnerAndCleanupRemovesItsArray) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    try {
      measure(endless_lockunlock());
    } catch (...) {
    }
    _exit(4);
  }
  const key_t key = runner_key(child);
  ASSERT_TRUE(wait_for_array(key, std::chrono::milliseconds(3000)));
  std::vector<pid_t> tasks;
  const auto deadline = Clock::now() + std::chrono::milliseconds(3000);
  while (tasks.size() < 8 && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    tasks = children_of(child);
  }
  ASSERT_EQ(tasks.size(), 8u);
  ASSERT_EQ(kill(child, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(wait_until_dead(tasks, std::chrono::milliseconds(2000)));
  // SIGKILL left the array; cleanup_leftovers() removes it (here, or in another test
  // process running in parallel under ctest -j, which is just as good).
  cleanup_leftovers();
  EXPECT_FALSE(array_with_key_exists(key));
}

}  // namespace
}  // namespace semsim::native
