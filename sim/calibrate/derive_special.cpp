#include "calibrate/derive_special.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "calibrate/derive_text.hpp"
#include "config/machine_decl.hpp"

namespace semsim::calibrate {

using probes::Stat;

namespace {

// os_noise's bins: 20 of equal count.
constexpr int kNoiseBins = 20;

// How many transfers the model charges for one way of the line_pingpong probe: the
// writer's store right after its own read miss of the line (the spin that saw the
// other CPU's write) costs write_after_read of a transfer, the other CPU's read a whole
// one (machine/cache_line.hpp). The transfer is the measured one-way over this, so that
// the model's ping-pong is the measured one (CalibrateDerive.TheModelsPingPongIsTheProbes).
double transfers_per_one_way() { return 1.0 + config::find_param("write_after_read")->fallback; }

}  // namespace

void add_topology_and_latencies(Json& m, const Measurements& x, const ModelTopology& topo,
                                Json& probes_out) {
  const double per_one_way = transfers_per_one_way();
  const int n = static_cast<int>(x.cpus.size());
  const std::vector<int>& cpus = x.cpus;
  std::vector<std::vector<double>> matrix(static_cast<std::size_t>(n),
                                          std::vector<double>(static_cast<std::size_t>(n), 0.0));
  std::map<std::string, std::vector<double>> class_pairs;
  std::map<std::string, std::vector<Stat>> class_stats;
  Json pairs = Json::array();
  for (const LinePair& p : x.line_pingpong) {
    const int a = p.a, b = p.b;
    const Stat& s = p.one_way;
    matrix[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)] = s.median / per_one_way;
    matrix[static_cast<std::size_t>(b)][static_cast<std::size_t>(a)] = s.median / per_one_way;
    const std::string cls = class_name(model_relation(a, b, topo));
    class_pairs[cls].push_back(s.median);
    class_stats[cls].push_back(s);
    pairs.push_back(
        {{"cpus", {cpus[static_cast<std::size_t>(a)], cpus[static_cast<std::size_t>(b)]}},
         {"class", cls},
         {"one_way_ns", probe_json(s)}});
  }
  probes_out["line_pingpong"] = pairs;
  std::string cpu_list;
  for (int c : cpus) cpu_list += (cpu_list.empty() ? "" : ",") + std::to_string(c);
  std::string topo_src = fmt::format(
      "sysfs /sys/devices/system/cpu/cpu*/topology/{{physical_package_id,die_id,core_id,"
      "thread_siblings_list}} of the {} CPUs this process may use ({}): {} package(s), {} die(s) "
      "per package, {} core(s) per die, {} thread(s) per core; numbering \"{}\"{}",
      n, cpu_list, topo.sockets, topo.dies, topo.cores, topo.threads, topo.numbering,
      topo.exact ? " reproduces every pair's relation" : "");
  if (!topo.note.empty()) topo_src += "; " + topo.note;
  m["topology"] = {{"sockets", topo.sockets},     {"dies_per_socket", topo.dies},
                   {"cores_per_die", topo.cores}, {"threads_per_core", topo.threads},
                   {"numbering", topo.numbering}, {"source", topo_src}};

  // Latency classes: median over the pairs of each class; classes kept in distance order
  // (a farther class measured lower than a nearer one is raised to it, and says so;
  // the matrix keeps what was measured).
  Json lat = Json::object();
  double previous = 0;
  for (const char* cls : {"smt", "same_die", "same_socket", "one_hop"}) {
    auto it = class_pairs.find(cls);
    if (it == class_pairs.end()) continue;
    std::vector<double> v = it->second;
    std::sort(v.begin(), v.end());
    const double med = v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
    double lo = 1e300, hi = 0;
    for (const Stat& s : class_stats[cls]) {
      lo = std::min(lo, s.min);
      hi = std::max(hi, s.max);
    }
    std::string src = fmt::format(
        "calibration probe line_pingpong: one-way time of a cache line bounced by two threads "
        "pinned to the two CPUs (half a round trip; each side spins on the line, then stores to "
        "it), median over the {} {} pair(s) of each pair's median, pairs {}..{} ns, repeats "
        "{}..{} ns; over {:.2f}, the transfers the model charges per one way (the store's "
        "ownership request after its own read miss, write_after_read of a transfer, then the "
        "other CPU's read), so that the model's ping-pong is the measured one: {} ns / {:.2f}",
        v.size(), cls, fmt_ns(v.front()), fmt_ns(v.back()), fmt_ns(lo), fmt_ns(hi), per_one_way,
        fmt_ns(med), per_one_way);
    double value = med / per_one_way;
    if (value < previous) {
      src += fmt::format(
          "; {} ns, below the nearer class: raised to {} ns to keep the "
          "classes ordered by distance",
          fmt_ns(value), fmt_ns(previous));
      value = previous;
    }
    previous = value;
    lat[cls] = param(value, src);
  }
  m["latency_ns"] = lat;
  if (n > 1) {
    m["latency_matrix_ns"] = {
        {"matrix", matrix},
        {"source",
         fmt::format("calibration probe line_pingpong, every pair of the CPUs {} (model CPU i "
                     "= the i-th of them): each pair's median one-way time over {:.2f} (the "
                     "transfers the model charges per one way), in ns; symmetric (one round "
                     "trip measures both directions); diagonal unused",
                     cpu_list, per_one_way)}};
  }
}

bool preempts_on_wakeup(const Measurements& x) { return x.futex_same_cpu_normal.preempted > 0.5; }

void add_time_slice(Json& costs, const Stat& slice, int n) {
  const int slice_factor = 1 + static_cast<int>(std::floor(std::log2(std::min(n, 8))));
  const double default_slice = 750'000.0 * slice_factor;
  if (slice.repeats > 0 && slice.median > 0) {
    costs["time_slice"] = measured(
        slice, "time_slice",
        fmt::format(
            "two CPU-bound threads pinned to one CPU, the median length of their "
            "uninterrupted runs (a gap over 50 us in a thread's clock readings ends a run); "
            "this is the slice as the host applies it, rounded up to its scheduler tick, "
            "where Linux's default base slice would be 0.75 ms x (1 + ilog2(min(CPUs, 8))) "
            "= {} ms",
            default_slice / 1e6));
  } else {
    costs["time_slice"] = param(
        default_slice,
        fmt::format("assumption: the time_slice probe saw no preemption; Linux's default base "
                    "slice, 0.75 ms x (1 + ilog2(min(CPUs, 8))) = {} ms on {} CPUs",
                    default_slice / 1e6, n));
  }
}

// wakeup_protection: the run length at which wake-ups start to preempt a task whose
// run began with a wake-up (the probe's share crosses one half, interpolated between
// the probed lengths). resched_ipi: what a preempting wake-up onto a busy remote CPU
// costs the waker beyond one that only queues there.
void add_wakeup_preemption_costs(Json& costs, bool preempts,
                                 const probes::ProtectionCurve& protection,
                                 const probes::RemoteWake& remote, int n) {
  std::string curve;
  for (const auto& [run, share] : protection.preempted_share)
    curve += fmt::format("{}{:g} us: {:.0f} %", curve.empty() ? "" : ", ",
                         static_cast<double>(run) / 1e3, share * 100);
  const std::string probe = fmt::format(
      "calibration probe wakeup_protection: a thread woken from a timer sleep runs for a while, "
      "then wakes a sleeper pinned to its CPU; share of wake-ups that preempted it, by how long "
      "it had run ({})",
      curve);
  const auto& pts = protection.preempted_share;
  if (!preempts) {
    costs["wakeup_protection"] =
        param(0, probe + "; the host does not preempt on wake-up (futex_same_cpu_normal): 0");
  } else if (pts.empty() || pts.front().second > 0.5) {
    costs["wakeup_protection"] = param(0, probe + "; preempted at once: no protection");
  } else {
    double value = static_cast<double>(pts.back().first);
    std::string how = "no run length probed was preempted in over half the rounds: the longest";
    for (std::size_t i = 1; i < pts.size(); ++i) {
      if (pts[i].second <= 0.5) continue;
      const auto [r0, s0] = pts[i - 1];
      const auto [r1, s1] = pts[i];
      value = static_cast<double>(r0) + (0.5 - s0) / (s1 - s0) * static_cast<double>(r1 - r0);
      how = "where the share crosses 50 %, linear between the probed lengths";
      break;
    }
    costs["wakeup_protection"] = param(value, probe + "; " + how);
  }
  if (n < 2) {
    costs["resched_ipi"] = param(0, "assumption: one CPU, no remote CPU to interrupt");
  } else if (!preempts) {
    costs["resched_ipi"] =
        param(0,
              "calibration probe futex_same_cpu_normal: the host does not "
              "preempt on wake-up, so a wake-up never sends a reschedule IPI: 0");
  } else {
    costs["resched_ipi"] = param(
        std::max(0.0, remote.preempting.median - remote.queueing.median),
        fmt::format("calibration probes futex_wake_busy_remote: FUTEX_WAKE of a sleeper on a "
                    "remote CPU busy with a spinning thread; SCHED_NORMAL sleeper (the wake-up "
                    "preempts the spinner: need_resched and the reschedule IPI) {} minus "
                    "SCHED_BATCH sleeper (queued, no IPI) {}",
                    stat_text(remote.preempting), stat_text(remote.queueing)));
  }
}

// os_noise: the gaps of every CPU's clock loop together, their rate over the loops'
// running time and their lengths in 20 bins of equal count (the longest kept: a vCPU
// the hypervisor took away for 300 us is noise too). Per CPU in probes_out.
Json os_noise_param(const std::vector<probes::NoiseCpu>& noise, Json& probes_out) {
  std::vector<double> gaps;
  double busy_s = 0, lost_ns = 0;
  Json per_cpu = Json::array();
  std::string rates;
  for (const auto& c : noise) {
    double lost = 0;
    for (double g : c.gaps_ns) lost += g;
    const double per_s = c.busy_s > 0 ? static_cast<double>(c.gaps_ns.size()) / c.busy_s : 0;
    per_cpu.push_back({{"cpu", c.cpu},
                       {"seconds", c.busy_s},
                       {"gaps", c.gaps_ns.size()},
                       {"per_s", per_s},
                       {"lost_share", c.busy_s > 0 ? lost * 1e-9 / c.busy_s : 0}});
    rates += fmt::format("{}CPU {}: {:.0f}/s, {:.2f} % lost", rates.empty() ? "" : "; ", c.cpu,
                         per_s, c.busy_s > 0 ? 100 * lost * 1e-9 / c.busy_s : 0);
    gaps.insert(gaps.end(), c.gaps_ns.begin(), c.gaps_ns.end());
    busy_s += c.busy_s;
    lost_ns += lost;
  }
  probes_out["os_noise"] = {{"gap_threshold_ns", probes::kNoiseGapNs}, {"cpus", per_cpu}};
  std::vector<double> bins = probes::bin_means(gaps, kNoiseBins);
  if (bins.empty()) bins.push_back(probes::kNoiseGapNs);  // no gap seen: the rate is 0
  const double per_s = busy_s > 0 ? static_cast<double>(gaps.size()) / busy_s : 0;
  return {{"value", {{"per_s", per_s}, {"durations_ns", bins}}},
          {"source",
           fmt::format("calibration probe os_noise: a thread pinned to each CPU in turn reads "
                       "the clock in a tight loop ({:.1f} s in all) and counts every gap over "
                       "{:.0f} ns between two reads ({}; {} gaps, {:.2f} % of the time): "
                       "their rate, and their lengths in {} bins of equal count",
                       busy_s, probes::kNoiseGapNs, rates, gaps.size(),
                       busy_s > 0 ? 100 * lost_ns * 1e-9 / busy_s : 0, bins.size())}};
}

void add_placement_shares(Json& m, const Measurements& x) {
  const int n = static_cast<int>(x.cpus.size());
  const probes::CountedShare& idle_search = x.idle_search;
  const probes::CountedShare& busy_pull = x.busy_pull;
  const int pull_pairs = x.busy_pull_pairs;
  // A share the probes count events for: measured where there are two CPUs and the
  // probe saw 100 such events, else the assumption given.
  auto counted_share = [n](const probes::CountedShare& counted, const std::string& source,
                           double assumed, const char* too_few, const char* one_cpu) {
    if (n > 1 && counted.samples >= 100) return param(counted.share(), source);
    return param(assumed, std::string("assumption: ") + (n > 1 ? too_few : one_cpu));
  };
  m["idle_search_share"] = counted_share(
      idle_search,
      fmt::format("calibration probe futex_ring_idle_search: a futex token ring of 4 unpinned "
                  "threads (one runs at a time, so a CPU is idle); of {} wake-ups whose wakee "
                  "had last run on the waker's (busy) CPU, the share after which it ran on "
                  "another CPU",
                  idle_search.samples),
      1.0,
      "the futex_ring_idle_search probe saw too few wake-ups (under 100) to measure; the "
      "search always finds an idle CPU",
      "one CPU, nothing to search");
  m["busy_pull_share"] = counted_share(
      busy_pull,
      fmt::format("calibration probe futex_pairs_busy_pull: {} futex ping-pong pairs of "
                  "unpinned threads (4 per CPU: the CPUs are busy); of {} wake-ups whose "
                  "wakee had gone to sleep on another CPU than the waker's, the share after "
                  "which it ran on the waker's CPU",
                  pull_pairs, busy_pull.samples),
      0.0,
      "the futex_pairs_busy_pull probe saw too few wake-ups (under 100) to measure; a "
      "wakee stays with its busy previous CPU",
      "one CPU, nowhere to pull from");
}

void add_wakeup_jitter(Json& m, const Measurements& x) {
  const int n = static_cast<int>(x.cpus.size());
  const probes::FutexStats& cross = x.futex_cross_cpu;
  if (n > 1 && !cross.wake_call_shape.empty() && !cross.latency_shape.empty()) {
    m["wakeup_jitter"] = {
        {"value", {{"waker", cross.wake_call_shape}, {"wakee", cross.latency_shape}}},
        {"source",
         "calibration probe futex_cross_cpu_handoff: how single cross-CPU hand-offs vary "
         "around their repeat's mean (the slowest 1 % dropped, sorted, 20 bins of equal "
         "count, each bin's mean over the mean of the bins' means): `waker` the sender's "
         "FUTEX_WAKE, "
         "`wakee` the rest of the hand-off"}};
  }
}

void add_switch_refill(Json& m, const Measurements& x) {
  const auto& rings = x.rings;
  const auto& process_rings = x.process_rings;
  {
    // switch_refill_ns (threads) and switch_refill_process_ns (processes): [reuse
    // distance, extra ns of a switch-in] from the rings, the 2-thread ring (distance 1,
    // everything cached, one address space) as the base the context_switch probe
    // already covers; never negative, never decreasing with distance.
    const double base = rings.front().second.median;
    auto table_of = [base](const std::vector<std::pair<int, Stat>>& ring_stats, Json& table,
                           std::string& values) {
      double prev = 0;
      for (const auto& [k, stat] : ring_stats) {
        const double extra = std::max(prev, stat.median - base);
        table.push_back(Json::array({k - 1, extra}));
        values += fmt::format("{}{}: {:.0f} ns", values.empty() ? "" : ", ", k, stat.median);
        prev = extra;
      }
    };
    Json threads_table = Json::array(), process_table = Json::array();
    std::string thread_values, process_values;
    table_of(rings, threads_table, thread_values);
    table_of(process_rings, process_table, process_values);
    m["switch_refill_ns"] = {
        {"value", threads_table},
        {"source",
         fmt::format("calibration probes futex_ring_K: a token ring of K SCHED_BATCH threads "
                     "pinned to one CPU, nanoseconds per hand-off ({}); a switch-in at reuse "
                     "distance K - 1 (the tasks that ran on the CPU since it last did) costs "
                     "its ring's hand-off minus the 2-thread ring's (made non-decreasing)",
                     thread_values)}};
    m["switch_refill_process_ns"] = {
        {"value", process_table},
        {"source",
         fmt::format("calibration probes futex_ring_processes_K: the same rings of K forked "
                     "processes, each its own address space ({}); a switch-in from another "
                     "process's task at reuse distance K - 1 costs its ring's hand-off minus "
                     "the 2-thread ring's (made non-decreasing)",
                     process_values)}};
  }
}

void add_pv_spinlock(Json& m, const Measurements& x) {
  m["pv_spinlock"] = {
      {"value", x.pv_spinlocks},
      {"source", "host facts: " + (x.pv_spinlock_evidence.empty()
                                       ? std::string("none recorded: native spinlocks")
                                       : x.pv_spinlock_evidence)}};
}

void add_wakeup_preemption(Json& m, const Measurements& x) {
  const probes::FutexStats& same_normal = x.futex_same_cpu_normal;
  const bool preempts = preempts_on_wakeup(x);
  m["wakeup_preemption"] = {
      {"value", preempts},
      {"source", fmt::format("calibration probe futex_same_cpu_normal: two SCHED_NORMAL threads "
                             "pinned to one CPU hand a futex back and forth; in {:.0f} % of the "
                             "hand-offs the woken thread ran before the waker's FUTEX_WAKE "
                             "returned (> 50 %: the host preempts on wake-up)",
                             same_normal.preempted * 100.0)}};
}

void add_clock(Json& m, const Measurements& x) {
  const Stat& tsc = x.tsc_ghz;
  if (tsc.median > 0) {
    m["clock_ghz"] = param(tsc.median, fmt::format("calibration probe tsc_ghz: TSC ticks per ns of "
                                                   "CLOCK_MONOTONIC; median of repeats {} (the TSC "
                                                   "rate; turbo, if any, is not visible)",
                                                   stat_text(tsc, "GHz")));
  } else if (const double mhz = x.cpuinfo_mhz; mhz > 0) {
    m["clock_ghz"] = param(mhz / 1000.0, "/proc/cpuinfo \"cpu MHz\" of the first CPU");
  } else {
    m["clock_ghz"] = param(2.0, "assumption: no TSC and no cpu MHz in /proc/cpuinfo; 2 GHz");
  }
}

}  // namespace semsim::calibrate
