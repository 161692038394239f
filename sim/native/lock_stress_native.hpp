// lock-stress on the host (workloads/lock_stress_def.hpp): the four locks in
// user space with C++ atomics, as libslock writes them (TAS: xchg loop; TTAS:
// read loop then xchg; ticket: xadd on next, spin on now_serving, both on one
// line; MCS: xchg of the tail, spin on the thread's own node). Work and delay
// are busy loops on the TSC: "cycles" are TSC ticks (rdtsc), the unit the
// LPD benchmarks use (getticks()); on a host whose TSC runs at the nominal
// clock that is core cycles at nominal frequency.
#pragma once

#include <cstdint>
#include <vector>

#include "native/workload_runs.hpp"
#include "workloads/lock_stress_def.hpp"

namespace semsim::native {

struct LockStressMeasurement {
  double window_s = 0;
  std::uint64_t acquisitions = 0;  // in the window, all threads
  double ops_per_s = 0;
  std::vector<std::uint64_t> per_thread;
  bool exclusive = true;  // the protected counter matched the acquisitions (mutual exclusion held)
};

// `threads` threads, thread i pinned to cpus[i % cpus.size()] (empty: unpinned).
LockStressMeasurement measure_lock_stress(const workloads::LockStressParams& p, int threads,
                                          const std::vector<int>& cpus, double warmup_s,
                                          double duration_s);

namespace detail {
// One run of a lock-stress scenario for the native runner (workload_runs.hpp):
// thread k on cpus[k mod size] unless the scenario says unpinned; warmup_ms,
// then duration_ms.
RunResult run_lock_stress_once(const Scenario& sc, int threads, const std::vector<int>& cpus);
}  // namespace detail

}  // namespace semsim::native
