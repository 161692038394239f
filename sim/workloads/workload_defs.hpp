// The questions both sides (simulator and native runner) ask of any workload,
// answered from the per-workload definitions (sim/workloads/<workload>_def.hpp):
// threads or processes, which arrays exist, how many sops one call carries, where a
// task is pinned, whether the run is windowed or goes to completion. Pure C++.
#pragma once

#include <string>
#include <vector>

#include "config/scenario.hpp"
#include "workloads/aim9_shm_def.hpp"
#include "workloads/custom_def.hpp"
#include "workloads/lat_sem_def.hpp"
#include "workloads/sem_lockunlock_def.hpp"
#include "workloads/sem_scalebench_def.hpp"
#include "workloads/sembench_def.hpp"
#include "workloads/semop_multi_def.hpp"

namespace semsim::workloads {

// How the benchmark runs its tasks: threads of one process, or forked processes
// (custom: processes, each holding the threads its scripts group into it).
inline bool uses_processes(const WorkloadSpec& w) {
  return w.type == "sem-lockunlock" || w.type == "aim9-shm" || w.type == "lat-sem" ||
         w.type == "custom";
}

// Tasks besides the `threads` counted ones: sembench's waker.
inline int extra_tasks(const WorkloadSpec& w) { return w.type == "sembench" ? 1 : 0; }

// The arrays created before the tasks start, by size. aim9-shm has none: each task
// creates (and removes) its own 1-semaphore array on every call.
inline std::vector<int> array_sizes(const WorkloadSpec& w, int threads) {
  if (w.type == "sem-scalebench") return {scalebench_array_size(w.scalebench, threads)};
  if (w.type == "sem-lockunlock") return {lockunlock_array_size(w.lockunlock)};
  if (w.type == "aim9-shm") return {};
  if (w.type == "lat-sem") return {kLatSemArraySize};
  if (w.type == "sembench")
    return std::vector<int>(static_cast<std::size_t>(sembench_arrays(threads)),
                            sembench_array_size());
  if (w.type == "custom") return {w.custom.semaphores};
  return {w.semaphores};  // semop-multi
}

// The values array 0 holds when the tasks start (empty: all 0). sem-lockunlock starts
// at 0 too: its SETALL is part of the measured run.
inline std::vector<int> initial_values(const WorkloadSpec& w) {
  if (w.type == "custom") return w.custom.initial;
  return {};
}

// Arrays a task creates for itself at a time (aim9-shm: one per call).
inline int arrays_per_task(const WorkloadSpec& w) { return w.type == "aim9-shm" ? 1 : 0; }

// The most sops one semop() call of the workload carries (for SEMOPM).
inline int max_sops_per_call(const WorkloadSpec& w) {
  if (w.type == "sem-scalebench") return scalebench_max_sops(w.scalebench);
  if (w.type == "lat-sem") return 2;
  if (w.type == "sembench") return w.sembench.wake_batch;
  if (w.type == "custom") return custom_max_sops(w.custom);
  return 1;
}

// True when the run ends by itself (sem-lockunlock; custom with finite scripts): the
// window is the whole run and warmup_ms does not apply; neither does duration_ms,
// except as custom's upper bound on a run that may block for ever.
inline bool runs_to_completion(const WorkloadSpec& w, int threads) {
  if (w.type == "sem-lockunlock") return true;
  if (w.type == "custom") return custom_runs_to_completion(w.custom, threads);
  return false;
}

// The CPU index (0 .. cpus-1 of the machine, or of the CPUs the runner may use) task
// `task` is pinned to, or -1 when it is not pinned. sem-scalebench uses get_cpunr and
// may return an index >= cpus, which a pinned run must refuse
// (scalebench_first_unplaceable). sembench's waker (task == threads) is never pinned.
inline int task_cpu(const WorkloadSpec& w, int task, int threads, int cpus) {
  if (w.type == "custom") {
    const int fixed = custom_script_of(w.custom, task).cpu;
    if (fixed >= 0) return fixed;
  }
  if (w.pin != Pinning::Pinned || cpus < 1) return -1;
  if (w.type == "sem-scalebench") {
    const int max_cpus = w.scalebench.max_cpus > 0 ? w.scalebench.max_cpus : cpus;
    return scalebench_cpu(task, w.scalebench.interleave, w.scalebench.threads_per_core, max_cpus);
  }
  if (w.type == "sembench" && task >= threads) return -1;
  return task % cpus;
}

// The benchmark's own figure, reported beside ops_per_s ("" for semop-multi, whose own
// figure is ops/s).
inline std::string own_figure(const WorkloadSpec& w) {
  if (w.type == "sem-scalebench") return "rounds_per_s";
  if (w.type == "sem-lockunlock") return "per_loop_us";
  if (w.type == "aim9-shm") return "shared_memory_ops_per_s";
  if (w.type == "lat-sem") return "latency_us";
  if (w.type == "sembench") return "worker_burns_per_s";
  if (w.type == "custom") return "rounds_per_s";
  return "";
}

}  // namespace semsim::workloads
