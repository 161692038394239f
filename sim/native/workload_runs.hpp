// One measured run of any workload on real SysV semaphores. Internal to sim/native;
// measure() (native_runner.cpp) validates the scenario first and repeats runs.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "config/scenario.hpp"
#include "workloads/workload.hpp"

namespace semsim::native::detail {

struct RunResult {
  double window_s = 0;
  double ops_per_s = 0;
  std::uint64_t ops_total = 0;     // counted semop() calls in the window, all tasks
  std::uint64_t rounds_total = 0;  // the benchmark's own counter, the `threads` tasks
  int tasks = 0;                   // the `threads` tasks (sembench's waker is extra)
  // Per task (the `threads` tasks), over the window:
  std::vector<std::uint64_t> per_task_ops;
  std::vector<std::uint64_t> per_task_rounds;
  std::vector<long> voluntary;
  std::vector<long> involuntary;
  std::vector<int> cpu;  // pinned CPU, -1 unpinned
  long voluntary_total = 0;
  long involuntary_total = 0;
  std::int64_t cpu_ns_total = 0;   // CPU time the `threads` tasks got over the window
  std::int64_t own_cpu_ns = 0;     // ... and every task of the run (sembench's waker too)
  std::int64_t host_busy_ns = -1;  // busy time of the runner's CPUs over the window, all
                                   // processes (/proc/stat); -1 when unreadable
  std::uint64_t eagain = 0;
  // semop() latency samples of the `threads` tasks: (nanoseconds, calls it stands for).
  std::vector<std::pair<std::uint64_t, std::uint64_t>> samples;
  // sembench's waker: calls and sops posted in the window.
  std::uint64_t waker_calls = 0;
  std::uint64_t waker_rounds = 0;
  bool completed = false;         // every task's program ran to its end
  int task_exits_in_window = -1;  // task processes that exited before the window closed
                                  // (-1: the tasks are threads)
};

// Runs `workload` (scenario.workload's) once with `threads` tasks; `cpus` are the CPUs the
// runner may use (pinned task k goes to cpus[index]). Throws Interrupted on a caught
// signal, SimulationError when a task fails or dies.
RunResult run_workload_once(const Scenario& scenario, const workloads::Workload& workload,
                            int threads, const std::vector<int>& cpus);

}  // namespace semsim::native::detail
