#include "calibrate/derive.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "calibrate/derive_special.hpp"
#include "calibrate/derive_text.hpp"
#include "calibrate/rules.hpp"
#include "config/kernel_config.hpp"
#include "config/machine_decl.hpp"
#include "core/errors.hpp"

namespace semsim::calibrate {

using probes::Stat;

Json derive_model(const Measurements& x, const SimulatedCall& simulated_call_ns) {
  const int n = static_cast<int>(x.cpus.size());
  const std::vector<int>& cpus = x.cpus;
  const ModelTopology topo = infer_topology(x.cpu_info);
  const bool quick = x.quick;
  const std::string& name = x.name;
  const double load_average = x.load_average;

  Json probes_out;
  std::map<std::string, Stat> stats;  // by probe name, what the rules read
  auto record = [&](const char* key, const Stat& s, const char* unit = "ns") {
    probes_out[key] = probe_json(s, unit);
    stats[key] = s;
    return s;
  };
  record("atomic_rmw", x.atomic_rmw);
  record("locked_add_fence", x.locked_add_fence);
  const Stat mf = record("mfence", x.mfence);
  const Stat rmw_loads = record("rmw_loads", x.rmw_loads);
  const Stat rmw_mfence = record("rmw_mfence_loads", x.rmw_mfence_loads);
  record("rmw_lockadd_loads", x.rmw_lockadd_loads);
  record("getppid", x.getppid);
  record("semop_efbig", x.semop_efbig);
  record("semctl_getval", x.semctl_getval);
  record("semctl_getval_removed", x.semctl_getval_removed);
  const Stat wfz_check = record("semop_wait_for_zero", x.semop_wait_for_zero);
  record("futex_wake_nobody", x.futex_wake_nobody);
  const probes::FutexStats& same = x.futex_same_cpu;
  record("futex_same_cpu_handoff", same.handoff);
  record("futex_same_cpu_wake_call", same.wake_call);
  const probes::FutexStats& same_normal = x.futex_same_cpu_normal;
  record("futex_same_cpu_normal_handoff", same_normal.handoff);
  const probes::FutexStats& cross = x.futex_cross_cpu;
  if (n > 1) {
    record("futex_cross_cpu_handoff", cross.handoff);
    record("futex_cross_cpu_wake_call", cross.wake_call);
  }
  const auto& rings = x.rings;
  for (const auto& [k, stat] : rings) record(("futex_ring_" + std::to_string(k)).c_str(), stat);
  const auto& process_rings = x.process_rings;
  for (const auto& [k, stat] : process_rings)
    record(("futex_ring_processes_" + std::to_string(k)).c_str(), stat);
  const probes::ProtectionCurve& protection = x.protection;
  {
    Json curve = Json::array();
    for (const auto& [run, share] : protection.preempted_share)
      curve.push_back({{"run_ns", run}, {"preempted_share", share}});
    probes_out["wakeup_protection"] = curve;
  }
  const probes::RemoteWake& remote = x.remote;
  if (n > 1) {
    record("futex_wake_busy_remote_preempting", remote.preempting);
    record("futex_wake_busy_remote_queueing", remote.queueing);
  }
  record("l1_load", x.l1_load);
  record("memory_load", x.memory_load);
  record("semop_loop_bare", x.semop_loop_bare);
  record("runner_loop_semop", x.runner_loop_semop);
  record("busy_loop_iteration", x.busy_loop_iteration);
  record("bubble_sort_round", x.bubble_sort_round);
  record("memcpy_byte", x.memcpy_byte, "ns/byte");
  record("tsc_ghz", x.tsc_ghz, "GHz");
  const Stat slice = record("time_slice", x.time_slice);
  const std::vector<probes::NoiseCpu>& noise = x.os_noise;
  const std::vector<Stat>& semop_rounds = x.semop_rounds;
  std::vector<Stat> by_speed = semop_rounds;
  std::sort(by_speed.begin(), by_speed.end(),
            [](const Stat& p, const Stat& q) { return p.median < q.median; });
  const Stat semop_check = record("semop_uncontended", by_speed[1]);
  Json rounds = Json::array();
  for (const Stat& r : semop_rounds) rounds.push_back(probe_json(r));
  probes_out["semop_uncontended_rounds"] = rounds;
  Json warnings = Json::array();
  if (by_speed[2].median > 1.15 * by_speed[0].median)
    warnings.push_back(fmt::format(
        "the host's speed moved during the calibration: the uncontended semop read {:.0f}, "
        "{:.0f} and {:.0f} ns at its start, middle and end (the middle value is used); the "
        "other probes ran once and may be of a slow moment: calibrate again on a quiet host",
        semop_rounds[0].median, semop_rounds[1].median, semop_rounds[2].median));

  Json m;
  m["name"] = name;
  m["description"] = fmt::format(
      "Calibrated model of this host: {}, {} CPUs, Linux {}; written by semsim calibrate{} on {}",
      x.cpu_model, n, x.kernel_release, quick ? " --quick" : "", x.date);
  m["cpus"] = n;
  add_topology_and_latencies(m, x, topo, probes_out);
  // The parameters set by a sum of probes (rules.cpp).
  const double same_normal_pct = 100 * same_normal.preempted;
  const std::string same_normal_handoff = fmt_ns(same_normal.handoff.median);
  const double cross_pct = 100 * cross.preempted;
  const std::string mfence_text = stat_text(mf);
  const std::string mfence_in_context = fmt_ns(rmw_mfence.median - rmw_loads.median);
  const auto text_args = fmt::make_format_args(
      fmt::arg("same_normal_preempted_pct", same_normal_pct),
      fmt::arg("same_normal_handoff", same_normal_handoff),
      fmt::arg("cross_preempted_pct", cross_pct), fmt::arg("mfence", mfence_text),
      fmt::arg("mfence_in_context", mfence_in_context));
  std::map<std::string, Derived> sums;  // by parameter, before any floor
  for (const Rule& r : cost_rules()) {
    if ((r.hosts == Hosts::OneCpu && n > 1) || (r.hosts == Hosts::SeveralCpus && n < 2)) continue;
    const std::string what = fmt::vformat(r.text, text_args);
    Json p;
    if (r.formula.empty()) {
      const double v = r.copy_of.empty()
                           ? r.assumed
                           : value_at(m, std::string(r.copy_of)).at("value").get<double>();
      p = param(v, what);
    } else if (std::isnan(r.floor_ns)) {
      const std::string probe(r.formula.front().probe);
      p = measured(stats.at(probe), probe, what);
    } else {
      std::vector<ProbeTerm> terms;
      for (const auto& t : r.formula)
        terms.push_back({t.coef, t.probe.data(), stats.at(std::string(t.probe))});
      const Derived d = derive(terms);
      sums[std::string(r.param)] = d;
      p = derived_param(d, std::string(r.probes), what, r.floor_ns);
    }
    value_at(m, std::string(r.param)) = p;
  }
  const Derived& kpath = sums.at("costs_ns.semop_kernel_path");
  Json& costs = m["costs_ns"];
  add_time_slice(costs, slice, n);
  add_wakeup_preemption_costs(costs, preempts_on_wakeup(x), protection, remote, n);
  add_placement_shares(m, x);
  m["os_noise"] = os_noise_param(noise, probes_out);
  add_wakeup_jitter(m, x);
  add_switch_refill(m, x);
  add_wakeup_preemption(m, x);
  add_pv_spinlock(m, x);
  add_clock(m, x);
  // semop_kernel_path, closed on the uncontended semop probe: the instructions of a
  // successful semop's functions (perform_atomic_semop, do_smart_update, the unlock and
  // return) are in no probe that fails early, and the simulator charges those functions
  // only their memory accesses. So the lumped path is what the probe's call takes beyond
  // what the simulator itself charges for that call on this model. The derivation
  // without a successful semop stays beside it as a cross-check; the wait-for-zero probe,
  // another path, is the check.
  std::string generation = x.generation;
  try {
    config::parse_kernel(generation);
  } catch (const InputError&) {
    generation = "hysteresis";  // a release semsim has no generation for: the current one
  }
  const Json simple_op = {{"type", "semop-multi"}, {"semaphores", 1}, {"pin", "pinned"}};
  Json without_path = m;
  without_path["costs_ns"]["semop_kernel_path"]["value"] = 0;
  const double rest = simulated_call_ns(without_path, generation, simple_op);
  // The path is charged per kernel function (sim/ipc/kernel_path.hpp), as a share of
  // the reference path: what one probe call's functions take per ns of semop_kernel_path.
  constexpr double kUnitNs = 1000;
  Json unit_path = m;
  unit_path["costs_ns"]["semop_kernel_path"]["value"] = kUnitNs;
  const double share = (simulated_call_ns(unit_path, generation, simple_op) - rest) / kUnitNs;
  const double closed = (semop_check.median - rest) / std::max(share, 1e-6);
  m["costs_ns"]["semop_kernel_path"] =
      param(std::max(1.0, closed),
            fmt::format("calibration probe semop_uncontended ({}: -1/+1 semops on a private "
                        "1-semaphore array) minus what the simulator charges for that call on this "
                        "model besides this path, {:.1f} ns (the system call, the semaphore lock, "
                        "each kernel function's cache-line accesses, under {}), over {:.4f}, the "
                        "share of the reference path that call's kernel functions make up{}; the "
                        "derivation without a successful semop (semop_efbig + semctl_getval - "
                        "semctl_getval_removed - getppid - 2 atomic_rmw) gave {:.1f} ns",
                        stat_text(semop_check), rest, generation, share,
                        closed < 1 ? ": below 1 ns, raised to 1" : "", kpath.value));
  const Json wfz_op = {{"type", "sem-scalebench"}, {"mode", 1}, {"pin", "pinned"}};
  Json checks;
  checks["semop_uncontended_ns"] = probe_json(semop_check);
  checks["kernel_path_without_a_semop_ns"] = kpath.value;
  checks["simulated_rest_of_semop_ns"] = rest;
  checks["kernel_path_share_of_semop"] = share;
  checks["semop_wait_for_zero_ns"] = probe_json(wfz_check);
  checks["simulated_wait_for_zero_ns"] = simulated_call_ns(m, generation, wfz_op);
  checks["note"] =
      "semop_uncontended sets semop_kernel_path (what the call takes beyond what the "
      "simulator charges for it), so an uncontended single-task point of that op (aim9-shm, "
      "semop-multi with one thread) is a check of the calibration, not a prediction. "
      "kernel_path_without_a_semop_ns is the path as derived without any successful semop, "
      "a cross-check. semop_wait_for_zero_ns against simulated_wait_for_zero_ns is a check: a "
      "wait-for-zero on a 0-valued semaphore runs another path, which nothing was set from.";

  Json prov;
  prov["generator"] = "semsim calibrate";
  prov["semsim_version"] = SEMSIM_VERSION;
  prov["date"] = x.date;
  prov["quick"] = quick;
  prov["kernel_release"] = x.kernel_release;
  prov["kernel_generation"] = x.generation;
  prov["kernel_sched_options"] = x.kernel_sched_options;
  prov["cpu_model"] = x.cpu_model;
  prov["host_cpus"] = cpus;
  prov["probes"] = probes_out;
  prov["futex_preempted_share"] = {{"same_cpu_normal", same_normal.preempted},
                                   {"same_cpu_batch", same.preempted},
                                   {"cross_cpu", cross.preempted}};
  prov["load_average_at_start"] = load_average;
  prov["checks"] = checks;
  prov["warnings"] = warnings;
  m["provenance"] = prov;
  return m;
}

}  // namespace semsim::calibrate
