// Machinery of the native runner shared by every workload: signal safety, the
// shared-memory layout that threads and forked task processes report through,
// forked children that die with their parent, time, CPUs. Internal to sim/native.
//
// Signals (see native_runner.hpp for the contract): while a measurement runs,
// SIGINT/SIGTERM/SIGHUP/SIGQUIT are caught. The handler records the signal and removes every
// array the runner registered (one IPC_RMID system call each, async-signal-safe);
// blocked tasks then fail with EIDRM and stop. The main thread notices the signal in
// its timed waits, kills and reaps the task processes, removes what the tasks made
// for themselves (cleanup_leftovers), restores the handlers and re-raises.
//
// Task processes are forked with the caught signals blocked (they stay blocked: the
// parent alone reacts to them) and with PR_SET_PDEATHSIG = SIGKILL, so they die with
// the thread that forked them; a child that finds its parent already gone exits.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "native/sysv_array.hpp"

namespace semsim::native::detail {

// One measurement or calibration at a time per process: one set of runner keys per
// pid, one set of signal handlers, CPUs not shared between probes and workloads.
std::mutex& runner_mutex();

// ---------------------------------------------------------------------------
// Signals.

// The first caught signal of the current measurement, 0 if none.
extern std::atomic<int> g_signal;

// Thrown inside a run when a caught signal was noticed.
struct Interrupted {};

// Installs the handler for SIGINT/SIGTERM/SIGHUP/SIGQUIT for its lifetime (signals already
// ignored stay ignored) and restores the previous dispositions afterwards.
class SignalGuard {
 public:
  SignalGuard();
  ~SignalGuard();
  SignalGuard(const SignalGuard&) = delete;
  SignalGuard& operator=(const SignalGuard&) = delete;

 private:
  struct sigaction old_[4]{};
  bool installed_[4] = {};
};

// Blocks the caught signals in the calling thread for its lifetime; threads and
// processes created meanwhile inherit the mask.
class BlockStopSignals {
 public:
  BlockStopSignals();
  ~BlockStopSignals();
  BlockStopSignals(const BlockStopSignals&) = delete;
  BlockStopSignals& operator=(const BlockStopSignals&) = delete;

 private:
  sigset_t old_{};
};

// The run's arrays, created with this process's runner keys 0..n-1 and registered
// with the signal handler while they live. Array 0 gets `initial` values.
class ActiveArrays {
 public:
  ActiveArrays(const std::vector<int>& sizes, const std::vector<int>& initial);
  ~ActiveArrays();
  ActiveArrays(const ActiveArrays&) = delete;
  ActiveArrays& operator=(const ActiveArrays&) = delete;
  int count() const { return static_cast<int>(ids_.size()); }
  int id(int i) const { return ids_[static_cast<std::size_t>(i)]; }
  // Removes every array now (the stop protocol: wakes sleepers with EIDRM). Idempotent.
  void remove_all();

 private:
  std::vector<int> ids_;
};

// ---------------------------------------------------------------------------
// Time and CPUs.

std::int64_t monotonic_ns();
// CPU time of the calling thread (CLOCK_THREAD_CPUTIME_ID), in nanoseconds.
std::int64_t thread_cpu_ns();

// Sleeps until `deadline_ns` (CLOCK_MONOTONIC) in slices of at most 10 ms. Returns
// false early when a caught signal arrived.
bool sleep_until_unless_signalled(std::int64_t deadline_ns);

// The CPUs this process may run on (sched_getaffinity), in increasing order.
std::vector<int> allowed_cpus();

// Busy time of the given CPUs since boot from /proc/stat (user, nice, system, irq,
// softirq and steal; a guest's own guests are inside user), in nanoseconds; -1 when
// /proc/stat cannot be read. Tick-sampled: good to a few ticks (USER_HZ) per CPU.
std::int64_t host_busy_ns(const std::vector<int>& cpus);

// Pins the calling thread to one CPU; returns 0 or the error number.
int pin_current_thread(int cpu);

// ---------------------------------------------------------------------------
// Shared memory: MAP_SHARED | MAP_ANONYMOUS, so threads and forked processes see it.

class SharedRegion {
 public:
  explicit SharedRegion(std::size_t bytes);
  ~SharedRegion();
  SharedRegion(const SharedRegion&) = delete;
  SharedRegion& operator=(const SharedRegion&) = delete;
  unsigned char* data() const { return base_; }

 private:
  unsigned char* base_ = nullptr;
  std::size_t bytes_ = 0;
};

enum Phase : int { kWarmup = 0, kWindow = 1, kStop = 2 };

enum Failure : int {
  kNone = 0,
  kPinFailed = 1,    // sched_setaffinity refused
  kSemopFailed = 2,  // a semaphore call failed unexpectedly
  kArrayGone = 3,    // the array vanished mid-run (ipcrm, or a signal handler)
  kTaskSetup = 4,    // a task process could not start its threads
};

// The run's control block, in shared memory.
struct alignas(64) RunControl {
  std::atomic<int> phase{kWarmup};  // read by every task each iteration
  alignas(64) std::atomic<int> ready{0};
  alignas(64) std::atomic<int> go{0};  // futex word of the start barrier
  alignas(64) std::atomic<int> failure{kNone};
  std::atomic<int> failure_errno{0};
  std::atomic<int> failure_task{-1};
  alignas(64) std::atomic<int> finished{0};

  void fail(Failure kind, int err, int task) {
    int expected = kNone;
    if (failure.compare_exchange_strong(expected, kind)) {
      failure_errno.store(err);
      failure_task.store(task);
    }
  }
};

// One task's figures, in shared memory. The counters are written by the task only
// (relaxed stores) and read by the main thread at the window's edges; the rest is
// written once when the task ends.
constexpr std::uint32_t kSampleCapacity = 1024;  // latency samples kept per task
constexpr std::uint32_t kSamplePeriod = 61;      // first sampling stride (odd: see task_loop)

struct alignas(64) TaskSlot {
  std::atomic<std::uint64_t> ops{0};     // counted semop() calls
  std::atomic<std::uint64_t> rounds{0};  // the benchmark's own counter
  alignas(64) std::int64_t nvcsw = 0;    // context switches over the window (or the run)
  std::int64_t nivcsw = 0;
  std::int64_t cpu_ns = 0;          // CPU time (user + system) over the window (or the run)
  std::uint64_t eagain = 0;         // calls that failed with EAGAIN (IPC_NOWAIT)
  std::int64_t finish_ns = 0;       // when the task's program ended (0: it did not)
  std::uint32_t nsamples = 0;       // latency samples in its sample buffer
  std::uint32_t sample_stride = 0;  // one sample per this many calls
  int cpu = -1;                     // the CPU it was pinned to, -1 unpinned
};

// sembench's per-worker ready flag, at the original's struct lockinfo spacing (56 bytes)
// so neighbouring flags share cache lines as they did there.
struct ReadyEntry {
  unsigned char pad[52];
  std::atomic<int> ready;
};
static_assert(sizeof(ReadyEntry) == 56);

// The run's shared memory: control block, one slot, sample buffer and ready flag per
// task.
class RunShared {
 public:
  explicit RunShared(int tasks);
  RunControl& control() const { return *control_; }
  TaskSlot& slot(int task) const { return slots_[task]; }
  std::uint64_t* samples(int task) const {
    return samples_ + static_cast<std::size_t>(task) * kSampleCapacity;
  }
  ReadyEntry* ready(int task) const { return ready_ + task; }
  int tasks() const { return tasks_; }

 private:
  int tasks_;
  SharedRegion region_;
  RunControl* control_;
  TaskSlot* slots_;
  std::uint64_t* samples_;
  ReadyEntry* ready_;
};

// Futex operations on a word in (possibly shared) memory: no FUTEX_PRIVATE_FLAG, so
// they work across the processes that map it.
void futex_wait(std::atomic<int>& word, int expected);
void futex_wake_all(std::atomic<int>& word);

// ---------------------------------------------------------------------------
// Forked task processes.

class Children {
 public:
  Children();
  ~Children();  // SIGKILLs and reaps whatever is still running
  Children(const Children&) = delete;
  Children& operator=(const Children&) = delete;

  // Forks a child that runs body(arg) and exits with its return value. The child dies
  // with the calling thread (PR_SET_PDEATHSIG). The caller must hold BlockStopSignals.
  // Throws SimulationError if fork fails.
  void spawn(int (*body)(void*), void* arg);

  int count() const { return static_cast<int>(pids_.size()); }
  const std::vector<pid_t>& pids() const { return pids_; }

  // Waits up to `timeout_ms` for a child to end (0: just look) and reaps the ones that
  // did. Returns "" or a description of the first child that ended abnormally (a
  // signal, or a non-zero exit) or, unless `exit0_ok`, at all.
  std::string poll(int timeout_ms, bool exit0_ok);

  // True once every child has been reaped.
  bool all_reaped() const;

  // How many children have exited (reaped or not), without reaping them.
  int exited_count() const;

  // Waits up to `grace_ms` for every child to exit, then SIGKILLs the rest; reaps all.
  // Returns the first abnormal end seen, as poll().
  std::string reap_all(int grace_ms);

 private:
  std::string reap_one(std::size_t i, int status, bool exit0_ok);
  std::vector<pid_t> pids_;
  std::vector<int> pidfds_;  // -1 where pidfd_open is unavailable
  std::vector<bool> reaped_;
};

std::string describe_wait_status(int status);

}  // namespace semsim::native::detail
