#include <fstream>
#include <string>
#include <vector>

#include "calibrate/host_facts.hpp"
#include "calibrate/measurements.hpp"
#include "native/native_runner.hpp"
#include "native/run_support.hpp"

namespace semsim::calibrate {

Measurements measure(bool quick, const std::string& name) {
  namespace detail = native::detail;
  Measurements x;
  x.name = name;
  x.quick = quick;
  native::cleanup_leftovers();
  x.cpus = detail::allowed_cpus();
  const int n = static_cast<int>(x.cpus.size());
  x.cpu_info = read_cpus(x.cpus);
  const native::HostInfo host = native::host_info();
  x.kernel_release = host.kernel_release;
  x.generation = host.generation;
  x.cpu_model = cpu_model_name();
  x.cpuinfo_mhz = cpuinfo_mhz();
  x.date = utc_now();
  {
    std::ifstream in("/proc/loadavg");
    in >> x.load_average;
  }
  for (const std::string& opt : kernel_cmdline())
    if (opt.rfind("sched", 0) == 0 || opt.find("haltpoll") != std::string::npos ||
        opt.find("halt_poll") != std::string::npos || opt.rfind("idle=", 0) == 0)
      x.kernel_sched_options.push_back(opt);

  {
    const PvSpinlocks pv = pv_spinlocks();
    x.pv_spinlocks = pv.enabled;
    x.pv_spinlock_evidence = pv.evidence;
  }

  probes::Settings st;
  st.quick = quick;
  st.repeats = quick ? 3 : 7;
  st.cpu = x.cpus[0];
  const auto& cpus = x.cpus;

  // The uncontended semop anchors the model's single-task cost (semop_kernel_path is
  // closed on it), so it is taken three times, at the start, the middle and the end of
  // the calibration, and the middle value is used: a host that is slow for a part of
  // the run does not set it.
  x.semop_rounds.push_back(probes::semop_uncontended(st));
  // Cache lines: every pair.
  for (int a = 0; a < n; ++a)
    for (int b = a + 1; b < n; ++b)
      x.line_pingpong.push_back({a, b,
                                 probes::line_pingpong(cpus[static_cast<std::size_t>(a)],
                                                       cpus[static_cast<std::size_t>(b)], st)});
  x.atomic_rmw = probes::atomic_rmw(st);
  x.locked_add_fence = probes::locked_add_fence(st);
  x.mfence = probes::mfence(st);
  x.rmw_loads = probes::rmw_loads(st);
  x.rmw_mfence_loads = probes::rmw_mfence_loads(st);
  x.rmw_lockadd_loads = probes::rmw_lockadd_loads(st);
  x.getppid = probes::syscall_getppid(st);
  x.semop_efbig = probes::semop_efbig(st);
  x.semctl_getval = probes::semctl_getval(st);
  x.semctl_getval_removed = probes::semctl_getval_removed(st);
  x.semop_rounds.push_back(probes::semop_uncontended(st));
  x.semop_wait_for_zero = probes::semop_wait_for_zero(st);
  x.futex_wake_nobody = probes::futex_wake_nobody(st);
  x.futex_same_cpu = probes::futex_pingpong(cpus[0], cpus[0], true, st);
  x.futex_same_cpu_normal = probes::futex_pingpong(cpus[0], cpus[0], false, st);
  if (n > 1) x.futex_cross_cpu = probes::futex_pingpong(cpus[0], cpus[1], false, st);
  // The cache refill of a switch-in against how many other tasks ran on the CPU
  // since: token rings of k threads on one CPU (reuse distance k - 1).
  constexpr int kRingSizes[] = {2, 4, 8, 16, 64, 256};
  for (int k : kRingSizes) x.rings.emplace_back(k, probes::futex_ring_one_cpu(k, st));
  for (int k : kRingSizes) x.process_rings.emplace_back(k, probes::futex_ring_processes(k, st));
  if (n > 1) x.idle_search = probes::futex_ring_idle_search(4, st);
  // Pairs that outnumber the CPUs: 4 per CPU keep every CPU busy.
  x.busy_pull_pairs = 4 * n;
  if (n > 1) x.busy_pull = probes::futex_pairs_busy_pull(x.busy_pull_pairs, st);
  x.protection = probes::wakeup_protection(st);
  if (n > 1) x.remote = probes::futex_wake_busy_remote(cpus[0], cpus[1], st);
  x.l1_load = probes::l1_load(st);
  x.memory_load = probes::memory_load(st);
  // Back to back: the difference is the runner's own work, so both see one host state.
  x.semop_loop_bare = probes::semop_loop_bare(st);
  x.runner_loop_semop = probes::runner_loop_semop(st);
  x.busy_loop_iteration = probes::busy_loop_iteration(st);
  x.bubble_sort_round = probes::bubble_sort_round(st);
  x.memcpy_byte = probes::memcpy_byte(st);
  x.tsc_ghz = probes::tsc_ghz(st);
  x.time_slice = probes::time_slice(st);
  x.os_noise = probes::os_noise(cpus, st);
  x.semop_rounds.push_back(probes::semop_uncontended(st));
  return x;
}

}  // namespace semsim::calibrate
