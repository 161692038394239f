// The native runner: a scenario's workload on real SysV semaphores on this host,
// measured the way design.md section 5 asks, so that a prediction and a
// measurement are of the same workload.
//
// Measurement protocol (one run):
//   1. Create the array (all values 0) and N worker threads. Each worker pins itself
//      (Pinned), builds its SemopMultiChooser, and waits on a start latch.
//   2. The main thread releases the latch and sleeps the warm-up (scenario.warmup_ms).
//   3. Window start: the main thread announces the window to the workers (a phase
//      word they already read every iteration), then reads a CLOCK_MONOTONIC
//      timestamp and every per-thread counter (one 64-byte line each, relaxed).
//   4. It sleeps scenario.duration_ms in 10 ms slices (to notice signals), then reads
//      the timestamp and the counters again and tells the workers to stop.
//   5. ops_per_s = sum of counter differences / (t_end - t_start): the measured
//      window, never the nominal sleep (an oversubscribed host wakes the timer late).
//   6. Join, remove the array.
//
// Context switches: each worker calls getrusage(RUSAGE_THREAD) when it first sees the
// window-start phase and again when it sees the stop phase, and reports the difference.
// A thread's switch counters only move while it is on a CPU being switched out, so a
// thread that is off-CPU when the phase changes loses nothing by noticing late: its
// figures cover the window (plus at most one semop pair around each edge).
//
// Repeats: each point runs scenario.repeats times. The reported run is the median run
// by ops/s, the lower one of the middle two for an even count (like Python's
// statistics.median_low), so every figure of a point (ops_total, window_s,
// per_task_ops, context switches) comes from one real run and ops_total equals
// ops_per_s * window_s. ops_per_s_runs / _min / _max give the spread.
//
// Signals: during measure(), SIGINT, SIGTERM and SIGHUP are caught (those already set
// to SIG_IGN, e.g. under nohup, stay ignored). The handler records the signal and
// removes the array (one IPC_RMID syscall, async-signal-safe); workers see EIDRM/EINVAL
// and stop; the main thread joins them, restores the previous handlers, and raise()s
// the signal, so the previous disposition runs (default termination, or Python's
// KeyboardInterrupt). If raise() returns, measure() throws SimulationError
// ("interrupted by signal N"). Workers block these signals, so the handler runs on
// the main thread (or another thread of the host process, never a worker).
//
// Arrays are never left behind: RAII removes them on every path; a SIGKILLed
// runner's array is recognised by its key (see sysv_array.hpp) and removed by
// cleanup_leftovers(), which measure() also calls before it starts.
#pragma once

#include <string>

#include "config/scenario.hpp"

namespace semsim::native {

struct HostInfo {
  std::string kernel_release;  // uname -r
  int cpus = 0;                // online CPUs
  std::string generation;      // semsim kernel-generation id the release corresponds to
};

// The semsim generation id of a Linux release string such as "6.1.0-28-amd64":
// <= 3.9 "global_lock", 3.10 "per_sem_lock", 3.11 "moved_otime", 3.12-4.8 "wait_array",
// 4.9-4.10 "complex_mode", >= 4.11 "hysteresis". Throws InputError when the string does
// not start with MAJOR.MINOR.
std::string generation_for_release(const std::string& release);

HostInfo host_info();

// Runs scenario.workload on real SysV semaphores once per value of scenario.threads,
// scenario.repeats times each. Returns
//   {"side":"measured","host":{kernel_release,cpus,generation},"points":[...]}
// with one point per threads value (keys documented in native_runner.cpp, point_json).
// Supported workloads: "semop-multi". Bad input (unknown workload, threads < 1,
// semaphores above SEMMSL, ...) is an InputError naming the field and the limit.
// Calls from several threads of one process are serialised.
Json measure(const Scenario& scenario);

// Removes SysV arrays left behind by semsim native runners that died without
// cleaning up (SIGKILL): runner key, created by our uid, and creating pid gone
// (kill(pid, 0) fails with ESRCH). Returns how many were removed.
int cleanup_leftovers();

}  // namespace semsim::native
