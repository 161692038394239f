#include "driver/simulate.hpp"

#include <algorithm>
#include <filesystem>
#include <numeric>
#include <stdexcept>
#include <string>

#include "core/errors.hpp"
#include "driver/run_point.hpp"
#include "workloads/registry.hpp"

namespace semsim::driver {

std::vector<RunSpec> runs_of(const Scenario& scenario) {
  std::vector<RunSpec> runs;
  for (std::size_t p = 0; p < scenario.threads.size(); ++p)
    for (int r = 0; r < scenario.repeats; ++r)
      runs.push_back({p, scenario.threads[p], scenario.seed + static_cast<std::uint64_t>(r)});
  return runs;
}

Json assemble(const Scenario& scenario, const config::MachineParams& machine,
              const std::vector<Json>& all_runs) {
  const auto& policy = scenario.kernel;
  const auto specs = runs_of(scenario);
  Json points = Json::array();
  for (std::size_t p = 0; p < scenario.threads.size(); ++p) {
    const int threads = scenario.threads[p];
    std::vector<Json> runs;
    Json seeds = Json::array();
    for (std::size_t i = 0; i < specs.size(); ++i) {
      if (specs[i].point != p) continue;
      seeds.push_back(specs[i].seed);
      runs.push_back(all_runs[i]);
    }
    // Report the median run (the lower one for an even count), so every
    // figure of a point comes from one real run; the spread goes beside it.
    std::vector<std::size_t> order(runs.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return runs[a]["ops_per_s"].get<double>() < runs[b]["ops_per_s"].get<double>();
    });
    Json point = runs[order[(order.size() - 1) / 2]];
    Json all = Json::array();
    for (const auto& run : runs) all.push_back(run["ops_per_s"]);
    point["threads"] = threads;
    point["kernel"] = policy.id;
    point["machine"] = machine.name;
    point["repeats"] = scenario.repeats;
    point["seeds"] = seeds;
    point["ops_per_s_runs"] = all;
    point["ops_per_s_min"] = runs[order.front()]["ops_per_s"];
    point["ops_per_s_max"] = runs[order.back()]["ops_per_s"];
    points.push_back(point);
  }
  Json doc;
  doc["side"] = "simulated";
  doc["scenario"] = scenario.raw;
  doc["provenance"] = {
      {"semsim_version", SEMSIM_VERSION},
      {"machine", machine.name},
      {"machine_model_hash", machine.hash},
      // The file's name (not its directory, which depends on where
      // semsim is installed); the hash identifies its content.
      {"machine_model_file", std::filesystem::path(machine.file).filename().string()},
      {"kernel", policy.id},
      {"kernel_releases", policy.kernels}};
  doc["points"] = points;
  return doc;
}

namespace {

// A rough wall-time estimate of a run, only to start the longest runs first
// (the order changes no result): simulated time times the tasks that keep the
// engine busy. A run to completion has no simulated time to go by; its work is
// set by the workload (sem-lockunlock's `loops`: 1e6 loops on box-64 took
// 6 s a run, against 0.2-0.8 s for the windowed runs of `semsim reproduce`),
// so it goes first.
double estimated_cost(const Scenario& s, const config::MachineParams& m, int threads) {
  const double busy = std::min(std::max(1, threads), std::max(1, m.cpus)) +
                      0.1 * std::max(0, threads - std::max(1, m.cpus));
  const bool windowed =
      workloads::make_workload(s.workload)->completion(threads) == workloads::Completion::Windowed;
  return (s.warmup_ms + s.duration_ms) * busy * (windowed ? 1.0 : 1000.0);
}

// Where a run of the batch comes from.
struct BatchRun {
  std::size_t scenario = 0;
  std::size_t index = 0;  // in runs_of(scenario)
  RunSpec spec;
  double cost = 0;
};

[[noreturn]] void rethrow(const TaskOutcome& out, const std::string& where) {
  const std::string text = where.empty() ? out.message : where + ": " + out.message;
  if (out.error_type == "InputError") throw InputError(out.message);
  if (out.error_type == "SimulationError") throw SimulationError(text);
  throw std::runtime_error(text);
}

std::string run_name(const RunSpec& spec) {
  return "threads=" + std::to_string(spec.threads) + " seed=" + std::to_string(spec.seed);
}

std::vector<std::size_t> longest_first(const std::vector<BatchRun>& runs) {
  std::vector<std::size_t> order(runs.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return runs[a].cost > runs[b].cost; });
  return order;
}

}  // namespace

Json simulate(const Scenario& scenario, const SimulateOptions& options) {
  const auto machine = config::load_machine(scenario.machine);
  const auto specs = runs_of(scenario);
  std::vector<Json> results;
  if (options.jobs <= 1 || specs.size() <= 1) {
    for (const auto& spec : specs)
      results.push_back(run_point(scenario, machine, scenario.kernel, spec.threads, spec.seed));
    return assemble(scenario, machine, results);
  }
  std::vector<BatchRun> runs;
  std::vector<std::function<Json()>> tasks;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    runs.push_back({0, i, specs[i], estimated_cost(scenario, machine, specs[i].threads)});
    tasks.push_back([&scenario, &machine, spec = specs[i]] {
      return run_point(scenario, machine, scenario.kernel, spec.threads, spec.seed);
    });
  }
  PoolOptions pool;
  pool.jobs = options.jobs;
  pool.poll = options.poll;
  // Run numbers as the one-process path gives them: 1 + the run's place.
  if (has_progress_hook())
    pool.progress = [](std::size_t task, const RunProgress& p) {
      RunProgress q = p;
      q.run = task + 1;
      report_progress(q);
    };
  auto outcomes = run_pool(tasks, longest_first(runs), pool);
  for (std::size_t i = 0; i < outcomes.size(); ++i)
    if (!outcomes[i].ok && !outcomes[i].error_type.empty())
      rethrow(outcomes[i], run_name(specs[i]));
  for (auto& out : outcomes) results.push_back(std::move(out.value));
  return assemble(scenario, machine, results);
}

std::vector<TaskOutcome> simulate_batch(const std::vector<Scenario>& scenarios,
                                        const SimulateOptions& options,
                                        const std::function<void(std::size_t)>& done) {
  std::vector<TaskOutcome> out(scenarios.size());
  std::vector<config::MachineParams> machines(scenarios.size());
  std::vector<std::size_t> left(scenarios.size(), 0);
  std::vector<BatchRun> runs;
  for (std::size_t s = 0; s < scenarios.size(); ++s) {
    try {
      machines[s] = config::load_machine(scenarios[s].machine);
    } catch (const InputError& e) {
      out[s].error_type = "InputError", out[s].message = e.what();
      continue;
    }
    const auto specs = runs_of(scenarios[s]);
    for (std::size_t i = 0; i < specs.size(); ++i)
      runs.push_back({s, i, specs[i], estimated_cost(scenarios[s], machines[s], specs[i].threads)});
    left[s] = specs.size();
  }
  std::vector<std::function<Json()>> tasks;
  for (const auto& r : runs)
    tasks.push_back([&scenarios, &machines, r] {
      const Scenario& s = scenarios[r.scenario];
      return run_point(s, machines[r.scenario], s.kernel, r.spec.threads, r.spec.seed);
    });
  std::vector<std::vector<Json>> results(scenarios.size());
  for (std::size_t s = 0; s < scenarios.size(); ++s) results[s].resize(left[s]);
  // The first error of a scenario's runs, in runs_of() order (not in the
  // order they happened to end): the same message whatever `jobs` is.
  std::vector<std::size_t> error_at(scenarios.size(), SIZE_MAX);
  PoolOptions pool;
  pool.jobs = std::max(1, options.jobs);
  pool.poll = options.poll;
  pool.stop_on_error = false;  // other scenarios go on
  pool.finished = [&](std::size_t task, const TaskOutcome& o) {
    const BatchRun& r = runs[task];
    if (o.ok) {
      results[r.scenario][r.index] = o.value;
    } else if (r.index < error_at[r.scenario]) {
      error_at[r.scenario] = r.index;
      out[r.scenario] = o;
      if (o.error_type != "InputError")
        out[r.scenario].message = run_name(r.spec) + ": " + o.message;
    }
    if (--left[r.scenario] > 0) return;
    if (error_at[r.scenario] == SIZE_MAX) {
      out[r.scenario].ok = true;
      out[r.scenario].value =
          assemble(scenarios[r.scenario], machines[r.scenario], results[r.scenario]);
      results[r.scenario].clear();
    }
    if (done) done(r.scenario);
  };
  for (std::size_t s = 0; s < scenarios.size(); ++s) {
    if (out[s].error_type.empty() && left[s] == 0) {  // no runs to wait for
      out[s].ok = true;
      out[s].value = assemble(scenarios[s], machines[s], {});
    }
    if (left[s] == 0 && done) done(s);
  }
  run_pool(tasks, longest_first(runs), pool);
  return out;
}

}  // namespace semsim::driver
