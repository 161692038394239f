#include "native/native_runner.hpp"

#include <sys/sem.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <exception>
#include <mutex>
#include <string>
#include <variant>
#include <vector>

#include "core/errors.hpp"
#include "ipc/sembuf.hpp"
#include "native/ownership.hpp"
#include "native/run_support.hpp"
#include "native/sysv_array.hpp"
#include "native/workload_runs.hpp"
#include "workloads/registry.hpp"

namespace semsim::native {

namespace {

// Whose CPUs a placement check is about (Workload::unplaceable), here.
std::string host_cpus(int ncpus) {
  return "this host lets the runner use " + std::to_string(ncpus) + " CPUs";
}

using detail::RunResult;
using workloads::Workload;

// What this host can serve: SEMMSL/SEMMNS/SEMOPM/SEMMNI and the CPUs the runner may use.
void validate_host(const Scenario& s, const Workload& w, const std::vector<int>& cpus) {
  const std::string& type = s.workload.type;
  if (const std::string refusal = w.native_refusal(); !refusal.empty()) throw InputError(refusal);
  const SemLimits lim = sem_limits();
  const int ncpus = static_cast<int>(cpus.size());
  const std::string sem_file = " (/proc/sys/kernel/sem: SEMMSL SEMMNS SEMOPM SEMMNI)";

  const int sops = w.max_sops_per_call();
  if (sops > lim.semopm) {
    throw InputError(w.sops_field() + ": " + type + " makes semop() calls of " +
                     std::to_string(sops) + " operations, more than this host's SEMOPM of " +
                     std::to_string(lim.semopm) + sem_file +
                     "; raise it, e.g. sysctl -w kernel.sem=\"32000 1024000000 500 32000\"");
  }
  if (const std::string cpu_limit = w.check_cpus(ncpus, host_cpus(ncpus)); !cpu_limit.empty())
    throw InputError(cpu_limit);
  for (int n : s.threads) {
    const std::vector<int> sizes = w.array_sizes(n);
    if (sizes.size() > static_cast<std::size_t>(kMaxArraysPerProcess)) {
      throw InputError("threads: " + type + " with " + std::to_string(n) + " tasks needs " +
                       std::to_string(sizes.size()) + " arrays; the native runner holds at most " +
                       std::to_string(kMaxArraysPerProcess) + " per process (sembench: at most " +
                       std::to_string(kMaxArraysPerProcess * workloads::kSembenchSemsPerArray) +
                       " workers)");
    }
    long total = 0;
    for (int size : sizes) {
      total += size;
      if (size > lim.semmsl) {
        throw InputError(w.size_field() + ": an array of " + std::to_string(size) +
                         " semaphores (" + std::to_string(n) +
                         " threads) exceeds this host's SEMMSL of " + std::to_string(lim.semmsl) +
                         sem_file);
      }
    }
    const long arrays =
        static_cast<long>(sizes.size()) + static_cast<long>(w.arrays_per_task()) * n;
    total += static_cast<long>(w.arrays_per_task()) * n;
    if (arrays > lim.semmni) {
      throw InputError("threads: " + std::to_string(n) + " tasks of " + type + " need " +
                       std::to_string(arrays) +
                       " arrays at once, more than this host's SEMMNI of " +
                       std::to_string(lim.semmni) + sem_file);
    }
    if (total > lim.semmns) {
      throw InputError("threads: " + std::to_string(n) + " tasks of " + type + " need " +
                       std::to_string(total) +
                       " semaphores at once, more than this host's SEMMNS of " +
                       std::to_string(lim.semmns) + sem_file);
    }
    if (const std::string placement = w.unplaceable(n, ncpus, host_cpus(ncpus)); !placement.empty())
      throw InputError(placement);
  }
}

double median_of(std::vector<std::uint64_t> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  if (v.size() % 2 == 1) return static_cast<double>(v[m]);
  return (static_cast<double>(v[m - 1]) + static_cast<double>(v[m])) / 2.0;
}

// Weighted percentiles of (value, weight) samples: the smallest value whose cumulative
// weight reaches q of the total.
Json latency_json(std::vector<std::pair<std::uint64_t, std::uint64_t>> samples) {
  Json out;
  out["samples"] = samples.size();
  if (samples.empty()) {
    for (const char* k : {"p50", "p90", "p99", "max"}) out[k] = nullptr;
    return out;
  }
  std::sort(samples.begin(), samples.end());
  long double total = 0;
  for (const auto& s : samples) total += static_cast<long double>(s.second);
  auto pct = [&](long double q) {
    long double acc = 0;
    for (const auto& s : samples) {
      acc += static_cast<long double>(s.second);
      if (acc >= q * total) return s.first;
    }
    return samples.back().first;
  };
  out["p50"] = pct(0.50L);
  out["p90"] = pct(0.90L);
  out["p99"] = pct(0.99L);
  out["max"] = samples.back().first;
  return out;
}

// The benchmark's own figure of one run.
double own_figure_of(const workloads::OwnFigure& f, const RunResult& r) {
  return workloads::figure_value(f, r.window_s, static_cast<double>(r.rounds_total),
                                 static_cast<double>(r.ops_total));
}

// One point: the median run by ops/s (the lower one of the middle two for an even
// count, like Python's statistics.median_low), so every figure of a point comes from
// one real run and ops_total equals ops_per_s * window_s; the spread over the runs.
Json point_json(int threads, const std::vector<RunResult>& runs, const HostInfo& host,
                const Scenario& s, const Workload& w) {
  std::vector<std::size_t> order(runs.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return runs[a].ops_per_s < runs[b].ops_per_s;
  });
  const RunResult& med = runs[order[(order.size() - 1) / 2]];

  Json rates = Json::array();
  Json windows = Json::array();
  for (const RunResult& r : runs) {
    rates.push_back(r.ops_per_s);
    windows.push_back(r.window_s);
  }
  const auto [lo, hi] = std::minmax_element(
      runs.begin(), runs.end(),
      [](const RunResult& a, const RunResult& b) { return a.ops_per_s < b.ops_per_s; });

  Json p;
  p["threads"] = threads;
  p["kernel"] = host.generation;
  p["machine"] = "host";
  p["workload"] = s.workload.type;
  for (const auto& label : w.point_labels(threads))
    std::visit([&](const auto& value) { p[label.key] = value; }, label.value);
  p["arrays"] = w.array_sizes(threads);
  p["pin"] = s.workload.pin == Pinning::Pinned       ? "pinned"
             : s.workload.pin == Pinning::Compact    ? "compact"
             : s.workload.pin == Pinning::Spread     ? "spread"
             : s.workload.pin == Pinning::CoresFirst ? "cores-first"
                                                     : "unpinned";
  p["runs_to_completion"] = w.runs_to_completion(threads);
  p["repeats"] = runs.size();
  p["ops_per_s"] = med.ops_per_s;
  p["ops_per_s_runs"] = rates;
  p["ops_per_s_min"] = lo->ops_per_s;
  p["ops_per_s_max"] = hi->ops_per_s;
  const workloads::OwnFigure own = w.own_figure();
  const std::string& figure = own.name;
  if (!figure.empty()) {
    double fmin = own_figure_of(own, runs.front());
    double fmax = fmin;
    for (const RunResult& r : runs) {
      fmin = std::min(fmin, own_figure_of(own, r));
      fmax = std::max(fmax, own_figure_of(own, r));
    }
    p[figure] = own_figure_of(own, med);
    p[figure + "_min"] = fmin;
    p[figure + "_max"] = fmax;
  }
  p["window_s"] = med.window_s;
  p["window_s_runs"] = windows;
  p["ops_total"] = med.ops_total;
  if (med.per_task_ops.empty()) {
    p["per_task_ops"] = {{"min", 0}, {"median", 0}, {"max", 0}};
  } else {
    const auto [task_lo, task_hi] =
        std::minmax_element(med.per_task_ops.begin(), med.per_task_ops.end());
    p["per_task_ops"] = {
        {"min", *task_lo}, {"median", median_of(med.per_task_ops)}, {"max", *task_hi}};
  }
  p["context_switches"] = {{"voluntary", med.voluntary_total},
                           {"involuntary", med.involuntary_total}};
  // The CPU time the tasks got, as a share of what they could have used (one CPU
  // per task, at most the host's CPUs, over the window). Tasks that never sleep
  // and get less than 1 were kept off the CPUs by something else: the point
  // measures the host's other load too. (CPU time comes from the thread CPU clock:
  // getrusage() missed up to a scheduler tick of runtime per task, so 64 processes of
  // sem-lockunlock that never sleep read 0.09.)
  const std::size_t host_cpus = std::max<std::size_t>(1, detail::allowed_cpus().size());
  {
    const double usable =
        static_cast<double>(std::min<std::size_t>(med.per_task_ops.size(), host_cpus)) *
        med.window_s * 1e9;
    p["cpu_s"] = static_cast<double>(med.cpu_ns_total) * 1e-9;
    p["cpu_share"] = usable > 0 ? static_cast<double>(med.cpu_ns_total) / usable : 0.0;
  }
  // What the rest of the host used of the same CPUs over the window: their busy time
  // (/proc/stat, all processes) minus our tasks' CPU time, as a share of their
  // capacity. Above a few per cent the point measured the host's other load too
  // (compare flags it). /proc/stat is tick-sampled (USER_HZ, 10 ms here), so the
  // share is given only for windows of at least 100 ms per CPU (+-0.05 over 200 ms on
  // 2 CPUs); shorter ones (sem-lockunlock runs to completion in tens of ms) get null.
  {
    const double capacity = static_cast<double>(host_cpus) * med.window_s * 1e9;
    const double min_capacity = 0.1e9 * static_cast<double>(host_cpus);
    // Not for workloads that run to completion (sem-lockunlock's forked processes):
    // the runner's own start of the tasks (the SETALL wake-ups) falls inside the
    // window, CPU time that is ours but no task's, which would be blamed on other
    // processes. (Task processes no longer exit inside it: task_exits_in_window.)
    if (med.host_busy_ns >= 0 && capacity >= min_capacity && !w.runs_to_completion(threads)) {
      const double foreign = static_cast<double>(med.host_busy_ns - med.own_cpu_ns);
      p["foreign_cpu_share"] = std::clamp(foreign / capacity, 0.0, 1.0);
    } else {
      p["foreign_cpu_share"] = nullptr;
    }
  }
  p["per_task"] = {{"ops", med.per_task_ops},
                   {"rounds", med.per_task_rounds},
                   {"voluntary_cs", med.voluntary},
                   {"involuntary_cs", med.involuntary},
                   {"cpu", med.cpu}};
  p["latency_ns"] = latency_json(med.samples);
  if (w.extra_tasks() > 0) {  // sembench's waker
    p["waker"] = {{"calls", med.waker_calls},
                  {"calls_per_s",
                   med.window_s > 0 ? static_cast<double>(med.waker_calls) / med.window_s : 0.0}};
  }
  // Task processes wait for the end of the run before exiting (an exit tears down a
  // copy of the runner's address space): 0 unless one died.
  if (med.task_exits_in_window >= 0) p["task_exits_in_window"] = med.task_exits_in_window;
  if (w.reports_script_outcome()) {
    p["eagain"] = med.eagain;
    p["completed"] = med.completed;
  }
  p["host_kernel_release"] = host.kernel_release;
  return p;
}

}  // namespace

std::string generation_for_release(const std::string& release) {
  // MAJOR.MINOR at the start; anything after (".patch-extra") is ignored.
  std::size_t pos = 0;
  auto read_number = [&](int& out) {
    const std::size_t begin = pos;
    long value = 0;
    while (pos < release.size() && release[pos] >= '0' && release[pos] <= '9' && pos - begin < 6) {
      value = value * 10 + (release[pos] - '0');
      ++pos;
    }
    out = static_cast<int>(value);
    return pos > begin;
  };
  int major = 0;
  int minor = 0;
  if (!read_number(major) || pos >= release.size() || release[pos] != '.' ||
      (++pos, !read_number(minor))) {
    throw InputError("kernel release \"" + release + "\": expected MAJOR.MINOR[...]");
  }
  const int v = major * 1000 + minor;
  if (v <= 3009) return "global_lock";
  if (v == 3010) return "per_sem_lock";
  if (v == 3011) return "moved_otime";
  if (v <= 4008) return "wait_array";
  if (v <= 4010) return "complex_mode";
  return "hysteresis";
}

HostInfo host_info() {
  struct utsname u {};
  if (uname(&u) != 0) throw SimulationError("uname failed: " + std::string(std::strerror(errno)));
  HostInfo h;
  h.kernel_release = u.release;
  h.cpus = static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  h.generation = generation_for_release(h.kernel_release);
  return h;
}

int cleanup_leftovers() { return cleanup_recorded(); }

void check_host(const Scenario& scenario) {
  validate_host(scenario, *workloads::make_workload(scenario.workload), detail::allowed_cpus());
}

Json measure(const Scenario& scenario) {
  std::lock_guard<std::mutex> lock(detail::runner_mutex());
  const auto workload = workloads::make_workload(scenario.workload);
  const std::vector<int> cpus = detail::allowed_cpus();
  validate_host(scenario, *workload, cpus);
  open_ownership_record();  // before any array or task process
  cleanup_leftovers();
  const HostInfo host = host_info();

  Json result;
  result["side"] = "measured";
  result["scenario"] = scenario.name;
  result["host"] = {{"kernel_release", host.kernel_release},
                    {"cpus", host.cpus},
                    {"generation", host.generation}};
  Json points = Json::array();

  detail::g_signal.store(0);
  std::exception_ptr failure;
  {
    detail::SignalGuard guard;
    try {
      for (int threads : scenario.threads) {
        std::vector<RunResult> runs;
        for (int r = 0; r < scenario.repeats; ++r) {
          runs.push_back(detail::run_workload_once(scenario, *workload, threads, cpus));
        }
        points.push_back(point_json(threads, runs, host, scenario, *workload));
      }
    } catch (const detail::Interrupted&) {
      // handled below, once the previous handlers are back
    } catch (...) {
      failure = std::current_exception();
    }
  }  // previous handlers restored; every array is already removed
  const int sig = detail::g_signal.exchange(0);
  if (sig != 0) {
    // Let the previous disposition act: default termination, or e.g. Python's handler,
    // which only sets a flag and returns, hence the exception after it.
    raise(sig);
    throw SimulationError("interrupted by signal " + std::to_string(sig));
  }
  if (failure) std::rethrow_exception(failure);
  result["points"] = std::move(points);
  return result;
}

}  // namespace semsim::native
