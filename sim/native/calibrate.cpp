#include "native/calibrate.hpp"

#include <fmt/format.h>
#include <sys/utsname.h>
#include <time.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "config/kernel_config.hpp"
#include "config/machine_config.hpp"
#include "core/errors.hpp"
#include "driver/run_point.hpp"
#include "machine/task.hpp"
#include "native/calibrate_probes.hpp"
#include "native/native_runner.hpp"
#include "native/run_support.hpp"

namespace semsim::native {

namespace {

namespace fs = std::filesystem;
using probes::Stat;

// ---------------------------------------------------------------------------
// Topology from sysfs.

struct CpuInfo {
  int cpu = 0;  // host CPU number
  int package = 0;
  int die = 0;
  int core = 0;
  std::set<int> siblings;  // thread_siblings_list
};

int read_int(const std::string& path, int fallback) {
  std::ifstream in(path);
  int v = fallback;
  if (in >> v) return v;
  return fallback;
}

// "0-3,8,10-11" -> {0, 1, 2, 3, 8, 10, 11}
std::set<int> parse_cpu_list(const std::string& text) {
  std::set<int> out;
  std::stringstream ss(text);
  std::string part;
  while (std::getline(ss, part, ',')) {
    if (part.empty()) continue;
    const auto dash = part.find('-');
    try {
      if (dash == std::string::npos) {
        out.insert(std::stoi(part));
      } else {
        for (int c = std::stoi(part.substr(0, dash)); c <= std::stoi(part.substr(dash + 1)); ++c)
          out.insert(c);
      }
    } catch (const std::exception&) {
    }
  }
  return out;
}

std::vector<CpuInfo> read_cpus(const std::vector<int>& cpus) {
  std::vector<CpuInfo> out;
  for (int c : cpus) {
    const std::string base = "/sys/devices/system/cpu/cpu" + std::to_string(c) + "/topology/";
    CpuInfo info;
    info.cpu = c;
    info.package = read_int(base + "physical_package_id", 0);
    info.die = read_int(base + "die_id", 0);
    info.core = read_int(base + "core_id", c);
    std::ifstream in(base + "thread_siblings_list");
    std::string line;
    if (std::getline(in, line)) info.siblings = parse_cpu_list(line);
    if (info.siblings.empty()) info.siblings = {c};
    out.push_back(info);
  }
  return out;
}

enum class Relation { Smt, SameDie, SameSocket, OtherSocket };

Relation host_relation(const CpuInfo& a, const CpuInfo& b) {
  if (a.package == b.package && a.die == b.die && a.core == b.core) return Relation::Smt;
  if (a.package == b.package && a.die == b.die) return Relation::SameDie;
  if (a.package == b.package) return Relation::SameSocket;
  return Relation::OtherSocket;
}

struct ModelTopology {
  int sockets = 1, dies = 1, cores = 1, threads = 1;
  std::string numbering = "linux";
  bool exact = true;  // the model's numbering reproduces every pair's relation
  std::string note;
};

// (socket, die, core, thread) of model CPU i, as cpu_models/README.md numbers them.
std::tuple<int, int, int, int> model_location(int cpu, const ModelTopology& t) {
  if (t.numbering == "smt-adjacent") {
    const int thread = cpu % t.threads;
    const int core_global = cpu / t.threads;
    const int die_global = core_global / t.cores;
    return {die_global / t.dies, die_global % t.dies, core_global % t.cores, thread};
  }
  const int cores = t.sockets * t.dies * t.cores;
  const int thread = cpu / cores;
  const int k = cpu % cores;
  const int j = k / t.sockets;
  return {k % t.sockets, j / t.cores, j % t.cores, thread};
}

Relation model_relation(int a, int b, const ModelTopology& t) {
  const auto [sa, da, ca, ta] = model_location(a, t);
  const auto [sb, db, cb, tb] = model_location(b, t);
  (void)ta;
  (void)tb;
  if (sa == sb && da == db && ca == cb) return Relation::Smt;
  if (sa == sb && da == db) return Relation::SameDie;
  if (sa == sb) return Relation::SameSocket;
  return Relation::OtherSocket;
}

ModelTopology infer_topology(const std::vector<CpuInfo>& cpus) {
  ModelTopology t;
  const int n = static_cast<int>(cpus.size());
  std::set<int> packages;
  std::map<int, std::set<int>> dies;                   // package -> dies
  std::map<std::pair<int, int>, std::set<int>> cores;  // (package, die) -> cores
  std::map<std::tuple<int, int, int>, int> threads;    // (package, die, core) -> cpus
  for (const auto& c : cpus) {
    packages.insert(c.package);
    dies[c.package].insert(c.die);
    cores[{c.package, c.die}].insert(c.core);
    ++threads[{c.package, c.die, c.core}];
  }
  t.sockets = static_cast<int>(packages.size());
  for (const auto& [p, d] : dies) t.dies = std::max(t.dies, static_cast<int>(d.size()));
  for (const auto& [k, c] : cores) t.cores = std::max(t.cores, static_cast<int>(c.size()));
  for (const auto& [k, c] : threads) t.threads = std::max(t.threads, c);
  if (t.sockets * t.dies * t.cores * t.threads != n) {
    t.note = fmt::format(
        "sysfs gives {} packages, up to {} dies per package, {} cores per die and {} threads per "
        "core, which do not multiply to the {} CPUs measured (offline or restricted CPUs, or a "
        "hybrid part): modelled as one die of {} cores; latency_matrix_ns keeps every measured "
        "pair",
        t.sockets, t.dies, t.cores, t.threads, n, n);
    t = ModelTopology{1, 1, n, 1, "linux", false, t.note};
    return t;
  }
  for (const char* numbering : {"linux", "smt-adjacent"}) {
    t.numbering = numbering;
    bool ok = true;
    for (int a = 0; a < n && ok; ++a)
      for (int b = a + 1; b < n && ok; ++b)
        ok = model_relation(a, b, t) ==
             host_relation(cpus[static_cast<std::size_t>(a)], cpus[static_cast<std::size_t>(b)]);
    if (ok) return t;
  }
  t.numbering = "linux";
  t.exact = false;
  t.note =
      "the host numbers its CPUs neither as the \"linux\" nor as the \"smt-adjacent\" scheme "
      "of cpu_models/README.md: \"linux\" is written, so pair classes may differ from the "
      "host's; latency_matrix_ns keeps every measured pair";
  return t;
}

const char* class_name(Relation r) {
  switch (r) {
    case Relation::Smt:
      return "smt";
    case Relation::SameDie:
      return "same_die";
    case Relation::SameSocket:
      return "same_socket";
    case Relation::OtherSocket:
      return "one_hop";
  }
  return "same_die";
}

// ---------------------------------------------------------------------------
// Parameters.

std::string fmt_ns(double v) { return fmt::format("{:.4g}", v); }

std::string stat_text(const Stat& s, const char* unit = "ns") {
  return fmt::format("{} {} (repeats {}..{}, n={})", fmt_ns(s.median), unit, fmt_ns(s.min),
                     fmt_ns(s.max), s.repeats);
}

Json probe_json(const Stat& s, const char* unit = "ns") {
  return {
      {"median", s.median}, {"min", s.min}, {"max", s.max}, {"repeats", s.repeats}, {"unit", unit}};
}

// A value derived from probes as sum(coef * probe): the median combination and the
// widest range the repeats allow.
struct Term {
  double coef;
  const char* name;
  Stat stat;
};

struct Derived {
  double value = 0, lo = 0, hi = 0;
  std::string formula;
};

Derived derive(const std::vector<Term>& terms) {
  Derived d;
  for (const auto& t : terms) {
    d.value += t.coef * t.stat.median;
    d.lo += t.coef * (t.coef > 0 ? t.stat.min : t.stat.max);
    d.hi += t.coef * (t.coef > 0 ? t.stat.max : t.stat.min);
    std::string c;
    if (std::abs(t.coef) != 1.0) c = fmt::format("{:g} x ", std::abs(t.coef));
    d.formula += fmt::format(
        "{}{}{} {}", d.formula.empty() ? (t.coef < 0 ? "- " : "") : (t.coef < 0 ? " - " : " + "), c,
        t.name, fmt_ns(t.stat.median));
  }
  return d;
}

Json param(double value, const std::string& source) {
  return {{"value", value}, {"source", source}};
}

Json measured(const Stat& s, const std::string& probe, const std::string& what) {
  return param(s.median, fmt::format("calibration probe {}: {}; median of repeats {}", probe, what,
                                     stat_text(s)));
}

// A derived parameter; a difference below the probes' resolution is floored at `floor_ns`
// and says so.
Json derived_param(const Derived& d, const std::string& probes_named, const std::string& what,
                   double floor_ns) {
  std::string src =
      fmt::format("calibration probes {}: {}; {} = {} ns (range over repeats {}..{})", probes_named,
                  what, d.formula, fmt_ns(d.value), fmt_ns(d.lo), fmt_ns(d.hi));
  double v = d.value;
  if (!(v >= floor_ns)) {
    src += fmt::format("; the difference is below what the probes resolve, floored at {} ns",
                       fmt_ns(floor_ns));
    v = floor_ns;
  }
  return param(v, src);
}

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) {
        auto v = line.substr(colon + 1);
        v.erase(0, v.find_first_not_of(' '));
        return v;
      }
    }
  }
  return "unknown CPU";
}

double cpuinfo_mhz() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("cpu MHz", 0) == 0) {
      const auto colon = line.find(':');
      try {
        return std::stod(line.substr(colon + 1));
      } catch (const std::exception&) {
        return 0;
      }
    }
  }
  return 0;
}

std::string utc_now() {
  const time_t now = time(nullptr);
  struct tm tm {};
  gmtime_r(&now, &tm);
  char buf[32];
  strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
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
constexpr int kNoiseBins = 20;
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

// What the simulator charges per call, outside user space, for one task running
// `workload` alone on model `m` under the host's generation, without OS noise (the
// probes' batches are the uninterrupted ones): the model's own figure for what a
// single-call probe measured.
double simulated_call_ns(Json m, const std::string& generation, const Json& workload) {
  m.erase("os_noise");
  const config::MachineParams machine = config::parse_machine(m, "the calibrated model");
  const Scenario sc = parse_scenario(Json{{"name", "calibration check"},
                                          {"machine", "host"},
                                          {"kernel", generation},
                                          {"workload", workload},
                                          {"threads", 1},
                                          {"duration_ms", 2},
                                          {"warmup_ms", 0.2}});
  const Json point = driver::run_point(sc, machine, sc.kernel, 1, 1);
  double kernel_ns = 0;
  for (const Json& f : point.at("profile"))
    if (f.at("function") != machine::func_name(machine::Func::User))
      kernel_ns += f.at("cpu_ns").get<double>();
  return kernel_ns / point.at("ops_total").get<double>();
}

}  // namespace

Json calibrate(bool quick, const std::string& name) {
  std::lock_guard<std::mutex> lock(detail::runner_mutex());
  const std::int64_t started = detail::monotonic_ns();
  cleanup_leftovers();
  const std::vector<int> cpus = detail::allowed_cpus();
  const int n = static_cast<int>(cpus.size());
  const std::vector<CpuInfo> info = read_cpus(cpus);
  const ModelTopology topo = infer_topology(info);
  const HostInfo host = host_info();
  double load_average = -1;
  {
    std::ifstream in("/proc/loadavg");
    in >> load_average;
  }

  probes::Settings st;
  st.quick = quick;
  st.repeats = quick ? 3 : 7;
  st.cpu = cpus[0];

  Json probes_out;
  auto record = [&](const char* key, const Stat& s, const char* unit = "ns") {
    probes_out[key] = probe_json(s, unit);
    return s;
  };

  // The uncontended semop anchors the model's single-task cost (semop_kernel_path is
  // closed on it), so it is taken three times, at the start, the middle and the end of
  // the calibration, and the middle value is used: a host that is slow for a part of
  // the run does not set it.
  std::vector<Stat> semop_rounds{probes::semop_uncontended(st)};

  // Cache lines: every pair.
  std::vector<std::vector<double>> matrix(static_cast<std::size_t>(n),
                                          std::vector<double>(static_cast<std::size_t>(n), 0.0));
  std::map<std::string, std::vector<double>> class_pairs;
  std::map<std::string, std::vector<Stat>> class_stats;
  Json pairs = Json::array();
  for (int a = 0; a < n; ++a) {
    for (int b = a + 1; b < n; ++b) {
      const Stat s = probes::line_pingpong(cpus[static_cast<std::size_t>(a)],
                                           cpus[static_cast<std::size_t>(b)], st);
      matrix[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)] = s.median;
      matrix[static_cast<std::size_t>(b)][static_cast<std::size_t>(a)] = s.median;
      const std::string cls = class_name(model_relation(a, b, topo));
      class_pairs[cls].push_back(s.median);
      class_stats[cls].push_back(s);
      pairs.push_back(
          {{"cpus", {cpus[static_cast<std::size_t>(a)], cpus[static_cast<std::size_t>(b)]}},
           {"class", cls},
           {"one_way_ns", probe_json(s)}});
    }
  }
  probes_out["line_pingpong"] = pairs;

  const Stat rmw = record("atomic_rmw", probes::atomic_rmw(st));
  const Stat fence = record("locked_add_fence", probes::locked_add_fence(st));
  const Stat mf = record("mfence", probes::mfence(st));
  const Stat sys = record("getppid", probes::syscall_getppid(st));
  const Stat efbig = record("semop_efbig", probes::semop_efbig(st));
  const Stat getval = record("semctl_getval", probes::semctl_getval(st));
  const Stat getval_rm = record("semctl_getval_removed", probes::semctl_getval_removed(st));
  semop_rounds.push_back(probes::semop_uncontended(st));
  const Stat wfz_check = record("semop_wait_for_zero", probes::semop_wait_for_zero(st));
  const Stat wake0 = record("futex_wake_nobody", probes::futex_wake_nobody(st));
  const probes::FutexStats same = probes::futex_pingpong(cpus[0], cpus[0], true, st);
  record("futex_same_cpu_handoff", same.handoff);
  record("futex_same_cpu_wake_call", same.wake_call);
  const probes::FutexStats same_normal = probes::futex_pingpong(cpus[0], cpus[0], false, st);
  record("futex_same_cpu_normal_handoff", same_normal.handoff);
  probes::FutexStats cross;
  if (n > 1) {
    cross = probes::futex_pingpong(cpus[0], cpus[1], false, st);
    record("futex_cross_cpu_handoff", cross.handoff);
    record("futex_cross_cpu_wake_call", cross.wake_call);
  }
  // The cache refill of a switch-in against how many other tasks ran on the CPU
  // since: token rings of k threads on one CPU (reuse distance k - 1).
  constexpr int kRingSizes[] = {2, 4, 8, 16, 64, 256};
  std::vector<std::pair<int, Stat>> rings;
  for (int k : kRingSizes) {
    const std::string key = "futex_ring_" + std::to_string(k);
    rings.emplace_back(k, record(key.c_str(), probes::futex_ring_one_cpu(k, st)));
  }
  std::vector<std::pair<int, Stat>> process_rings;  // the same rings of processes
  for (int k : kRingSizes) {
    const std::string key = "futex_ring_processes_" + std::to_string(k);
    process_rings.emplace_back(k, record(key.c_str(), probes::futex_ring_processes(k, st)));
  }
  probes::CountedShare idle_search;
  if (n > 1) idle_search = probes::futex_ring_idle_search(4, st);
  // Pairs that outnumber the CPUs: 4 per CPU keep every CPU busy.
  const int pull_pairs = 4 * n;
  probes::CountedShare busy_pull;
  if (n > 1) busy_pull = probes::futex_pairs_busy_pull(pull_pairs, st);
  const probes::ProtectionCurve protection = probes::wakeup_protection(st);
  {
    Json curve = Json::array();
    for (const auto& [run, share] : protection.preempted_share)
      curve.push_back({{"run_ns", run}, {"preempted_share", share}});
    probes_out["wakeup_protection"] = curve;
  }
  probes::RemoteWake remote;
  if (n > 1) {
    remote = probes::futex_wake_busy_remote(cpus[0], cpus[1], st);
    record("futex_wake_busy_remote_preempting", remote.preempting);
    record("futex_wake_busy_remote_queueing", remote.queueing);
  }
  const Stat l1 = record("l1_load", probes::l1_load(st));
  const Stat mem = record("memory_load", probes::memory_load(st));
  const Stat loop = record("runner_loop_einval", probes::runner_loop_with_einval(st));
  const Stat busy = record("busy_loop_iteration", probes::busy_loop_iteration(st));
  const Stat bubble = record("bubble_sort_round", probes::bubble_sort_round(st));
  const Stat copy = record("memcpy_byte", probes::memcpy_byte(st), "ns/byte");
  const Stat tsc = record("tsc_ghz", probes::tsc_ghz(st), "GHz");
  const Stat slice = record("time_slice", probes::time_slice(st));
  const std::vector<probes::NoiseCpu> noise = probes::os_noise(cpus, st);
  semop_rounds.push_back(probes::semop_uncontended(st));
  std::vector<Stat> by_speed = semop_rounds;
  std::sort(by_speed.begin(), by_speed.end(),
            [](const Stat& x, const Stat& y) { return x.median < y.median; });
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
      cpu_model_name(), n, host.kernel_release, quick ? " --quick" : "", utc_now());
  m["cpus"] = n;

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
        "calibration probe line_pingpong: one-way cache-line transfer (half a round trip of two "
        "threads pinned to the two CPUs bouncing one line), median over the {} {} pair(s) of each "
        "pair's median, pairs {}..{} ns, repeats {}..{} ns",
        v.size(), cls, fmt_ns(v.front()), fmt_ns(v.back()), fmt_ns(lo), fmt_ns(hi));
    double value = med;
    if (value < previous) {
      src += fmt::format(
          "; measured {} ns, below the nearer class: raised to {} ns to keep the "
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
                     "= the i-th of them): median one-way transfer in ns; symmetric "
                     "(one round trip measures both directions); diagonal unused",
                     cpu_list)}};
  }
  m["memory_latency_ns"] = measured(
      mem, "memory_load",
      "dependent loads along a random cycle over a buffer far larger than the caches: pages in "
      "random order, one line of each 128-byte pair in random order within a page (huge pages "
      "requested; a TLB miss per 32 loads at most is included)");

  Json costs;
  costs["l1_hit"] = measured(l1, "l1_load", "dependent loads along a random cycle within 16 KiB");
  costs["atomic_rmw"] = measured(rmw, "atomic_rmw", "lock xadd on a private cached line");
  costs["full_fence"] = measured(
      fence, "locked_add_fence",
      fmt::format(
          "lock addl $0,-4(%rsp), which is smp_mb() on x86-64 since Linux 4.15 (mfence: {})",
          stat_text(mf)));
  costs["syscall"] =
      measured(sys, "getppid", "syscall(SYS_getppid), entry and exit with the least work inside");

  const Derived kpath = derive({{1, "semop_efbig", efbig},
                                {-1, "getppid", sys},
                                {1, "semctl_getval", getval},
                                {-1, "semctl_getval_removed", getval_rm},
                                {-2, "atomic_rmw", rmw}});
  costs["semop_kernel_path"] = derived_param(
      kpath, "semop_efbig, semctl_getval, semctl_getval_removed, getppid, atomic_rmw",
      "derived without any successful semop(): a semop failing with EFBIG runs the entry, the "
      "copy_from_user of the sops, their scan and the id lookup (minus the bare syscall); "
      "semctl(GETVAL) minus GETVAL of a removed id adds the permission and security checks; "
      "GETVAL's own locking (two atomic RMWs: the array lock and the per-semaphore lock of "
      "complexmode_enter) is taken off, since the simulator charges a semop's locks itself",
      1.0);

  // Wake-ups. Same CPU: the sender's FUTEX_WAKE queues the receiver on the sender's CPU,
  // then the sender blocks in FUTEX_WAIT and the CPU switches to the receiver (or the
  // receiver preempts the sender as the wake returns).
  const Derived cs = derive({{1, "futex_same_cpu_handoff", same.handoff},
                             {-1, "futex_same_cpu_wake_call", same.wake_call},
                             {-1, "getppid", sys}});
  costs["context_switch"] = derived_param(
      cs, "futex_same_cpu_handoff, futex_same_cpu_wake_call, getppid",
      fmt::format(
          "two SCHED_BATCH threads pinned to one CPU hand a futex back and forth (batch: no "
          "wake-up preemption, so the sender wakes, then blocks, then the CPU switches); the "
          "hand-off (sender's clock before FUTEX_WAKE to receiver's clock after FUTEX_WAIT "
          "returns) minus the sender's wake call minus one bare syscall (the wait's entry "
          "and the receiver's exit) leaves schedule() out of one task and into the other. "
          "With SCHED_NORMAL the receiver preempted the sender inside its wake call in "
          "{:.0f}% of hand-offs (hand-off {} ns): wake-up preemption is the host's dynamics, "
          "for the scheduler model, not a cost",
          100 * same_normal.preempted, fmt_ns(same_normal.handoff.median)),
      1.0);
  if (n > 1) {
    const Derived waker = derive(
        {{1, "futex_cross_cpu_wake_call", cross.wake_call}, {-1, "futex_wake_nobody", wake0}});
    costs["wakeup_waker"] = derived_param(
        waker, "futex_cross_cpu_wake_call, futex_wake_nobody",
        "try_to_wake_up() on the waker: a FUTEX_WAKE that wakes a sleeper on another (idle) CPU, "
        "IPI included, minus a FUTEX_WAKE that finds nobody",
        1.0);
    const Derived latency = derive({{1, "futex_cross_cpu_handoff", cross.handoff},
                                    {-1, "futex_cross_cpu_wake_call", cross.wake_call}});
    costs["wakeup_latency"] = derived_param(
        latency, "futex_cross_cpu_handoff, futex_cross_cpu_wake_call",
        fmt::format("a sleeper on another, idle CPU: from the end of the waker's wake call to the "
                    "wakee back in user space (hand-off minus the wake call; on a VM this includes "
                    "the idle vCPU's exit from halt); receiver before the wake returned in {:.0f}% "
                    "of hand-offs",
                    100 * cross.preempted),
        1.0);
  } else {
    const Derived waker =
        derive({{1, "futex_same_cpu_wake_call", same.wake_call}, {-1, "futex_wake_nobody", wake0}});
    costs["wakeup_waker"] = derived_param(
        waker, "futex_same_cpu_wake_call, futex_wake_nobody",
        "one CPU only, so no cross-CPU wake-up: a FUTEX_WAKE that queues a sleeper on the same CPU "
        "minus one that finds nobody",
        1.0);
    costs["wakeup_latency"] = param(
        std::max(1.0, cs.value),
        "assumption: this host has one CPU, so no wake-up of an idle CPU can be probed; set to "
        "context_switch (a wakee can only run after a switch)");
  }
  if (n > 1) {
    const Derived kick = derive({{1, "futex_cross_cpu_wake_call", cross.wake_call},
                                 {-1, "futex_same_cpu_wake_call", same.wake_call}});
    costs["ipi"] = derived_param(
        kick, "futex_cross_cpu_wake_call, futex_same_cpu_wake_call",
        "what kicking an idle CPU adds to the waker's try_to_wake_up(): a FUTEX_WAKE of a "
        "sleeper on another, idle CPU minus one that queues the sleeper on the waker's own CPU "
        "(no kick); on a VM this is the exit that wakes the halted vCPU. The simulator charges "
        "wakeup_waker for a wake-up that kicks an idle CPU and wakeup_waker - ipi for one "
        "that does not",
        1.0);
  } else {
    costs["ipi"] = param(0.0,
                         "assumption: one CPU, so no idle CPU to kick can be probed; every "
                         "wake-up costs wakeup_waker");
  }
  const Derived user = derive({{1, "runner_loop_einval", loop}, {-1, "getppid", sys}});
  costs["user_loop_iteration"] = derived_param(
      user, "runner_loop_einval, getppid",
      "the native runner's own user-space work per semop() call (task program, phase "
      "word, sembuf conversion, counter store, glibc wrapper), timed around a semop() "
      "the kernel rejects at entry (semid -1), minus the bare syscall; one iteration of "
      "sem-lockunlock's empty busy loop is a different figure: busy_loop_iteration",
      0.5);
  costs["busy_loop_iteration"] =
      measured(busy, "busy_loop_iteration",
               "one iteration of sem-lockunlock's empty volatile loop (workloads::busy_loop)");
  costs["bubble_sort_round"] =
      measured(bubble, "bubble_sort_round",
               "one round of sem-scalebench's delay (workloads::bubble_sort_delay)");
  costs["memcpy_byte"] = measured(copy, "memcpy_byte",
                                  "memcpy in ns per byte over AIM9's 31 sizes (1..2048 bytes, "
                                  "mean 328), both buffers in L1");
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
  // The same-CPU ping-pong with SCHED_NORMAL: did the wakee run before the waker's
  // FUTEX_WAKE returned, i.e. preempt it on the way out of the kernel?
  const bool preempts = same_normal.preempted > 0.5;
  add_wakeup_preemption_costs(costs, preempts, protection, remote, n);
  m["costs_ns"] = costs;
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
  m["os_noise"] = os_noise_param(noise, probes_out);
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

  m["wakeup_preemption"] = {
      {"value", preempts},
      {"source", fmt::format("calibration probe futex_same_cpu_normal: two SCHED_NORMAL threads "
                             "pinned to one CPU hand a futex back and forth; in {:.0f} % of the "
                             "hand-offs the woken thread ran before the waker's FUTEX_WAKE "
                             "returned (> 50 %: the host preempts on wake-up)",
                             same_normal.preempted * 100.0)}};

  if (tsc.median > 0) {
    m["clock_ghz"] = param(tsc.median, fmt::format("calibration probe tsc_ghz: TSC ticks per ns of "
                                                   "CLOCK_MONOTONIC; median of repeats {} (the TSC "
                                                   "rate; turbo, if any, is not visible)",
                                                   stat_text(tsc, "GHz")));
  } else if (const double mhz = cpuinfo_mhz(); mhz > 0) {
    m["clock_ghz"] = param(mhz / 1000.0, "/proc/cpuinfo \"cpu MHz\" of the first CPU");
  } else {
    m["clock_ghz"] = param(2.0, "assumption: no TSC and no cpu MHz in /proc/cpuinfo; 2 GHz");
  }

  // semop_kernel_path, closed on the uncontended semop probe: the instructions of a
  // successful semop's functions (perform_atomic_semop, do_smart_update, the unlock and
  // return) are in no probe that fails early, and the simulator charges those functions
  // only their memory accesses. So the lumped path is what the probe's call takes beyond
  // what the simulator itself charges for that call on this model. The derivation
  // without a successful semop stays beside it as a cross-check; the wait-for-zero probe,
  // another path, is the check.
  std::string generation = host.generation;
  try {
    config::parse_kernel(generation);
  } catch (const InputError&) {
    generation = "hysteresis";  // a release semsim has no generation for: the current one
  }
  const Json simple_op = {{"type", "semop-multi"}, {"semaphores", 1}, {"pin", "pinned"}};
  Json without_path = m;
  without_path["costs_ns"]["semop_kernel_path"]["value"] = 0;
  const double rest = simulated_call_ns(without_path, generation, simple_op);
  const double closed = semop_check.median - rest;
  m["costs_ns"]["semop_kernel_path"] =
      param(std::max(1.0, closed),
            fmt::format("calibration probe semop_uncontended ({}: -1/+1 semops on a private "
                        "1-semaphore array) minus what the simulator charges for that call on this "
                        "model besides this path, {:.1f} ns (the system call, the semaphore lock, "
                        "each kernel function's cache-line accesses, under {}){}; the derivation "
                        "without a successful semop (semop_efbig + semctl_getval - "
                        "semctl_getval_removed - getppid - 2 atomic_rmw) gave {:.1f} ns",
                        stat_text(semop_check), rest, generation,
                        closed < 1 ? ": below 1 ns, raised to 1" : "", kpath.value));
  const Json wfz_op = {{"type", "sem-scalebench"}, {"mode", 1}, {"pin", "pinned"}};
  Json checks;
  checks["semop_uncontended_ns"] = probe_json(semop_check);
  checks["kernel_path_without_a_semop_ns"] = kpath.value;
  checks["simulated_rest_of_semop_ns"] = rest;
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
  prov["date"] = utc_now();
  prov["quick"] = quick;
  prov["kernel_release"] = host.kernel_release;
  prov["kernel_generation"] = host.generation;
  prov["cpu_model"] = cpu_model_name();
  prov["host_cpus"] = cpus;
  prov["probes"] = probes_out;
  prov["futex_preempted_share"] = {{"same_cpu_normal", same_normal.preempted},
                                   {"same_cpu_batch", same.preempted},
                                   {"cross_cpu", cross.preempted}};
  prov["load_average_at_start"] = load_average;
  prov["checks"] = checks;
  prov["warnings"] = warnings;
  prov["wall_s"] = static_cast<double>(detail::monotonic_ns() - started) * 1e-9;
  m["provenance"] = prov;
  return m;
}

std::string calibrate_to_file(const std::string& path, bool quick) {
  const std::string name = path.empty() ? "host" : fs::path(path).stem().string();
  if (!path.empty()) {
    const fs::path parent = fs::path(path).parent_path();
    if (!parent.empty() && !fs::is_directory(parent))
      throw InputError(path + ": cannot write the model: directory " + parent.string() +
                       " does not exist");
  }
  const Json model = calibrate(quick, name);
  const std::string text = model.dump(2) + "\n";
  if (!path.empty()) {
    std::ofstream out(path);
    if (!out) throw InputError(path + ": cannot open for writing");
    out << text;
    if (!out) throw InputError(path + ": write failed");
  }
  return text;
}

}  // namespace semsim::native
