// The native runner: a scenario's workload on real SysV semaphores on this host,
// measured the way design.md section 5 asks, so that a prediction and a
// measurement are of the same workload. Every workload is defined once, as a
// Workload (sim/workloads/registry.hpp) whose task programs task_loop.hpp
// executes here; threads or forked processes as the benchmark does
// (Workload::uses_processes), pinned as it does or as workload.pin says.
//
// Measurement protocol (one run, workload_runs.cpp):
//   1. Create the arrays (runner keys, see sysv_array.hpp), the shared-memory block
//      (control word, one counter line per task, latency sample buffers) and the
//      tasks. Each task pins itself (if pinned), announces itself ready and waits on
//      a futex start barrier.
//   2. Windowed workloads: release the barrier, sleep the warm-up (scenario.warmup_ms),
//      set the window phase, read CLOCK_MONOTONIC and every task's counters; sleep
//      scenario.duration_ms in slices of at most 10 ms (watching for signals, task
//      failures and task processes that die); read the clock and the counters again.
//      ops_per_s = sum of counter differences / (t_end - t_start): the measured
//      window, never the nominal sleep (an oversubscribed host wakes the timer late).
//      Workloads that run to completion (sem-lockunlock; custom with finite scripts)
//      time the whole run instead: sem-lockunlock from the SETALL that starts it (once
//      every task sleeps on its lock, counted with GETNCNT) to the end of the parent's
//      wait-for-zero; duration_ms and warmup_ms do not apply to them.
//   3. Stop: set the stop phase, remove the arrays (sleeping tasks wake with EIDRM, as
//      sem-scalebench's own IPC_RMID does), join the threads / reap the processes,
//      remove arrays task processes made for themselves.
//
// Per task, over the window: counted semop() calls, the benchmark's own counter,
// voluntary and involuntary context switches (getrusage(RUSAGE_THREAD) when the task
// first sees the window phase and when it sees the stop), the CPU it was pinned to,
// and latency samples (every 61st call at first, see task_loop.hpp) from which the
// point reports weighted percentiles.
//
// Repeats: each point runs scenario.repeats times. The reported run is the median run
// by ops/s, the lower one of the middle two for an even count (like Python's
// statistics.median_low), so every figure of a point (ops_total, window_s,
// per_task_ops, context switches) comes from one real run and ops_total equals
// ops_per_s * window_s. ops_per_s_runs / _min / _max give the spread, and
// <figure>_min / _max that of the benchmark's own figure.
//
// Signals: during measure(), SIGINT, SIGTERM, SIGHUP and SIGQUIT are caught (those already set
// to SIG_IGN, e.g. under nohup, stay ignored). The handler records the signal and
// removes the run's arrays (one IPC_RMID syscall each, async-signal-safe); tasks see
// EIDRM/EINVAL and stop; the main thread joins the threads, SIGKILLs and reaps the task
// processes, removes what they made, restores the previous handlers, and raise()s the
// signal, so the previous disposition runs (default termination, or Python's
// KeyboardInterrupt). If raise() returns, measure() throws SimulationError
// ("interrupted by signal N"). Task threads and processes block these signals, so the
// handler runs on the main thread (or another thread of the host process, never a
// task). Task processes die with the runner (PR_SET_PDEATHSIG = SIGKILL); a task
// process that dies (e.g. SIGKILLed) ends the run with SimulationError, its arrays
// removed like the others.
//
// Arrays are never left behind: RAII removes them on every path; a SIGKILLed
// runner's arrays are found in its ownership record (ownership.hpp, a file that
// survives the SIGKILL) and removed by cleanup_leftovers(), which measure() also calls
// before it starts. Arrays semsim did not record are never touched.
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
// with one point per threads value (keys documented in native_runner.cpp, point_json:
// ops_per_s and its spread, the benchmark's own figure (rounds_per_s, per_loop_us,
// shared_memory_ops_per_s, latency_us, worker_burns_per_s), window, per-task counts,
// context switches, CPUs, latency_ns percentiles).
// Supported workloads: every type of known_workloads(). The scenario is the one
// parse_scenario() validated; what measure() checks itself are this host's limits (an
// array above SEMMSL, sops above SEMOPM, more arrays than SEMMNI, a pinned placement
// beyond this host's CPUs, ...) and an unknown workload type, each an InputError naming
// the field and the limit. Calls from several threads of one process are serialised.
Json measure(const Scenario& scenario);

// This host's limits, as measure() checks them before it runs (SEMMSL, SEMMNS, SEMOPM,
// SEMMNI, CPUs), without running. Throws InputError naming the field.
void check_host(const Scenario& scenario);

// Removes SysV arrays left behind by semsim native runners (and their task processes)
// that died without cleaning up (SIGKILL): only arrays the ownership record proves were
// created by semsim and whose creator is gone or a zombie (ownership.hpp); never an
// array by its key alone. Returns how many were removed.
int cleanup_leftovers();

}  // namespace semsim::native
