// Everything a calibration run measures on the host, before any parameter is derived:
// the host's facts (CPUs, kernel, the clock of the run) and every probe's statistics.
// measure() fills it; derive_model() turns it into a machine model and needs nothing
// else, so the derivation can be tested on fixed values.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "calibrate/host_topology.hpp"
#include "calibrate/probes.hpp"

namespace semsim::calibrate {

struct LinePair {
  int a = 0, b = 0;  // indices into Measurements::cpus, a < b
  probes::Stat one_way;
};

struct Measurements {
  // The host.
  std::string name;  // the model's name
  bool quick = false;
  std::vector<int> cpus;          // the host CPUs this process may use, model CPU i = cpus[i]
  std::vector<CpuInfo> cpu_info;  // their sysfs topology
  std::string kernel_release, generation;  // the running kernel and its semsim generation
  std::string cpu_model = "unknown CPU";   // /proc/cpuinfo "model name"
  double cpuinfo_mhz = 0;                  // /proc/cpuinfo "cpu MHz" (0: none)
  double load_average = -1;                // /proc/loadavg at the start
  // The kernel command line's options that change wake-up placement or cost (sched*,
  // haltpoll and halt_poll settings, idle=), up to its "--": why a host's wake-up
  // costs and placement shares may differ from another's of the same kernel release.
  std::vector<std::string> kernel_sched_options;
  // Paravirt qspinlocks in the running kernel (host_facts.hpp), and what says so.
  bool pv_spinlocks = false;
  std::string pv_spinlock_evidence;
  std::string date;  // UTC, ISO 8601

  // The probes (calibrate/probes.hpp), in the order they run.
  std::vector<probes::Stat> semop_rounds;  // start, middle, end
  std::vector<LinePair> line_pingpong;
  probes::Stat rmw_loads, rmw_mfence_loads, rmw_lockadd_loads;  // smp_mb() in context
  probes::Stat atomic_rmw, locked_add_fence, mfence, getppid, semop_efbig, semctl_getval,
      semctl_getval_removed, semop_wait_for_zero, futex_wake_nobody;
  probes::FutexStats futex_same_cpu, futex_same_cpu_normal, futex_cross_cpu;
  std::vector<std::pair<int, probes::Stat>> rings, process_rings;  // {k, hand-off}
  probes::CountedShare idle_search, busy_pull;
  int busy_pull_pairs = 0;
  probes::ProtectionCurve protection;
  probes::RemoteWake remote;
  probes::Stat l1_load, memory_load, semop_loop_bare, runner_loop_semop, busy_loop_iteration,
      bubble_sort_round, memcpy_byte, tsc_ghz, time_slice;
  std::vector<probes::NoiseCpu> os_noise;
};

// Runs every probe (quick: fewer and shorter repeats). Serialised with the native runner.
Measurements measure(bool quick, const std::string& name);

}  // namespace semsim::calibrate
