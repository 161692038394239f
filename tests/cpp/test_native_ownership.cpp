// The native runner removes only arrays it can prove it created (sim/native/ownership.hpp):
// foreign arrays with keys that look like ours survive every run and every cleanup;
// recorded arrays of dead or zombie creators are removed; every caught signal removes
// the run's array.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/ipc.h>
#include <sys/resource.h>
#include <sys/sem.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "native/host_error.hpp"
#include "native/native_runner.hpp"
#include "native/ownership.hpp"
#include "native/sysv_array.hpp"

namespace semsim::native {
namespace {

using Clock = std::chrono::steady_clock;

bool exists(int id) { return semctl(id, 0, GETVAL) >= 0; }

bool key_exists(key_t key) {
  for (const ArrayInfo& a : list_arrays())
    if (a.key == key) return true;
  return false;
}

Scenario short_semop_multi(double duration_ms) {
  Scenario s;
  s.name = "ownership-test";
  s.machine = "host";
  s.workload.type = "semop-multi";
  s.workload.semaphores = 2;
  s.workload.pin = Pinning::Unpinned;
  s.threads = {1};
  s.duration_ms = duration_ms;
  s.warmup_ms = 0;
  s.repeats = 1;
  return s;
}

// Arrays of "another program": keys with the runner's top byte 'S', one of them the
// key of a pid that is surely dead (the runner's own scheme for a dead runner), one
// ftok(path, 'S')-style, one this process's own runner key.
// XDG_RUNTIME_DIR pointed at a fresh private directory for one test (the ownership
// records then live there), restored and the directory removed at scope exit.
class PrivateRuntimeDir {
 public:
  PrivateRuntimeDir() {
    if (const char* old = std::getenv("XDG_RUNTIME_DIR")) saved_ = old;
    char tmpl[] = "/tmp/semsim-runtime-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
    setenv("XDG_RUNTIME_DIR", path_.c_str(), 1);
  }
  ~PrivateRuntimeDir() {
    if (saved_)
      setenv("XDG_RUNTIME_DIR", saved_->c_str(), 1);
    else
      unsetenv("XDG_RUNTIME_DIR");
    std::filesystem::remove_all(path_);
  }
  PrivateRuntimeDir(const PrivateRuntimeDir&) = delete;
  PrivateRuntimeDir& operator=(const PrivateRuntimeDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::optional<std::string> saved_;
  std::string path_;
};

struct ForeignArrays {
  std::vector<int> ids;
  std::vector<key_t> keys;
  ForeignArrays() {
    pid_t dead = fork();
    if (dead == 0) _exit(0);
    waitpid(dead, nullptr, 0);
    keys = {static_cast<key_t>(0x53031234), static_cast<key_t>(0x53011f2a), runner_key(dead, 0),
            runner_key(getpid(), 1)};
    for (key_t k : keys) {
      // 3 semaphores: test_native_workloads counts 1-semaphore arrays of dead pids.
      const int id = semget(k, 3, IPC_CREAT | IPC_EXCL | 0600);
      if (id >= 0) ids.push_back(id);
    }
  }
  ~ForeignArrays() {
    for (int id : ids) semctl(id, 0, IPC_RMID);
  }
};

TEST(NativeOwnership, ForeignArraysWithCollidingKeysSurviveCleanupAndRuns) {
  // Its own records: other native tests running beside it (ctest -j) leave records
  // of their exited children, which a cleanup rightly removes.
  PrivateRuntimeDir runtime;
  ForeignArrays foreign;
  ASSERT_EQ(foreign.ids.size(), foreign.keys.size()) << "a key was taken before the test";
  EXPECT_EQ(cleanup_leftovers(), 0);
  for (int id : foreign.ids) EXPECT_TRUE(exists(id));
  // A run needing array index 1 (our runner key 1 is taken by a foreign array) works.
  {
    SemArray a(1, 1);
    EXPECT_TRUE(exists(a.id()));
  }
  const Json r = measure(short_semop_multi(5));
  EXPECT_EQ(r.at("points").size(), 1u);
  EXPECT_EQ(cleanup_leftovers(), 0);
  for (int id : foreign.ids) EXPECT_TRUE(exists(id)) << "a foreign array was removed";
}

// A creator that has exited but was never reaped (a zombie, as orphaned task processes
// are until init reaps them, forever under a PID 1 that never does): its arrays go.
TEST(NativeOwnership, CleanupRemovesArraysOfZombieCreators) {
  // A private record directory: a parallel test process's cleanup must not see
  // (and remove) this zombie's array before this test's own cleanup does.
  const PrivateRuntimeDir runtime;
  // A process keeps the one record it opened first: the directory works only if
  // this test opens it (it does in its own process, as CTest runs every test).
  { const SemArray opens_the_record(1); }
  const std::string records = ownership_dir();
  if (!std::filesystem::exists(records) || std::filesystem::is_empty(records))
    GTEST_SKIP() << "this process's record was opened before the test; run it alone";
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(ready[0]);
    const int id = (new SemArray(1))->id();  // never destroyed: the process "dies"
    if (write(ready[1], &id, sizeof(id)) != sizeof(id)) _exit(1);
    _exit(0);
  }
  close(ready[1]);
  int id = -1;
  ASSERT_EQ(read(ready[0], &id, sizeof(id)), static_cast<ssize_t>(sizeof(id)));
  close(ready[0]);
  // Wait until the child is a zombie, without reaping it.
  const auto deadline = Clock::now() + std::chrono::seconds(3);
  siginfo_t info{};
  while (Clock::now() < deadline) {
    info.si_pid = 0;
    if (waitid(P_PID, static_cast<id_t>(child), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
        info.si_pid == child)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ASSERT_EQ(info.si_pid, child) << "the child did not exit";
  ASSERT_TRUE(exists(id));
  cleanup_leftovers();
  EXPECT_FALSE(exists(id));
  waitpid(child, nullptr, 0);
}

// An array whose creator is alive (this process) is never removed.
TEST(NativeOwnership, RecordsOfLiveCreatorsAreKept) {
  SemArray mine(1);
  // (The count is not asserted: a parallel test process may leave a dead
  // creator's array for this cleanup to remove.)
  cleanup_leftovers();
  EXPECT_TRUE(exists(mine.id()));
}

// An unsafe record directory (group/other access) is refused, never used.
TEST(NativeOwnership, UnsafeRecordDirectoryIsRefused) {
  const PrivateRuntimeDir runtime;
  const std::string dir = runtime.path() + "/semsim";
  ASSERT_EQ(mkdir(dir.c_str(), 0700), 0);
  chmod(dir.c_str(), 0777);
  EXPECT_EQ(ownership_dir(), dir);
  EXPECT_THROW(cleanup_leftovers(), HostError);
}

// SIGTERM and SIGQUIT (SIGINT and SIGHUP: test_native.cpp) with the default
// disposition: the run's array is removed, then the signal kills the process.
class NativeStopSignal : public ::testing::TestWithParam<int> {};

TEST_P(NativeStopSignal, RemovesTheArrayAndDiesOfTheSignal) {
  const int sig = GetParam();
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    signal(sig, SIG_DFL);
    struct rlimit no_core {
      0, 0
    };
    setrlimit(RLIMIT_CORE, &no_core);  // SIGQUIT dumps core by default
    try {
      measure(short_semop_multi(3000));
    } catch (...) {
      _exit(3);
    }
    _exit(4);
  }
  const key_t key = runner_key(child);
  auto deadline = Clock::now() + std::chrono::seconds(3);
  while (!key_exists(key) && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  ASSERT_TRUE(key_exists(key));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_EQ(kill(child, sig), 0);
  int status = 0;
  deadline = Clock::now() + std::chrono::seconds(3);
  while (waitpid(child, &status, WNOHANG) != child) {
    if (Clock::now() > deadline) {
      kill(child, SIGKILL);
      waitpid(child, &status, 0);
      FAIL() << "the runner did not stop";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  EXPECT_TRUE(WIFSIGNALED(status));
  if (WIFSIGNALED(status)) {
    EXPECT_EQ(WTERMSIG(status), sig);
  }
  EXPECT_FALSE(key_exists(key));
}

INSTANTIATE_TEST_SUITE_P(TermAndQuit, NativeStopSignal, ::testing::Values(SIGTERM, SIGQUIT));

}  // namespace
}  // namespace semsim::native
