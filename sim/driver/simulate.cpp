#include "driver/simulate.hpp"

#include <algorithm>
#include <filesystem>
#include <numeric>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>

#include "core/errors.hpp"
#include "core/rng.hpp"
#include "driver/run_point.hpp"
#include "report/run_length.hpp"
#include "workloads/registry.hpp"

namespace semsim::driver {

std::vector<RunSpec> runs_of(const Scenario& scenario) {
  std::vector<RunSpec> runs;
  for (std::size_t p = 0; p < scenario.threads.size(); ++p)
    for (int r = 0; r < scenario.repeats; ++r)
      runs.push_back({p, scenario.threads[p], scenario.seed + static_cast<std::uint64_t>(r)});
  return runs;
}

void check_placement(const Scenario& scenario, const config::MachineParams& machine) {
  const auto w = workloads::make_workload(scenario.workload);
  const std::string whose =
      "machine " + machine.name + " has " + std::to_string(machine.cpus) + " CPUs";
  if (const std::string p = w->check_cpus(machine.cpus, whose); !p.empty()) throw InputError(p);
  for (int n : scenario.threads)
    if (const std::string p = w->unplaceable(n, machine.cpus, whose); !p.empty())
      throw InputError(p);
}

namespace {

// A run byte-identical to an earlier one of its point is a copy (its seed
// changed nothing: run_runs), not an independent replication: pooled once.
// The indices of the others, in the seeds' order.
std::vector<std::size_t> distinct_runs(const std::vector<Json>& runs) {
  std::vector<std::size_t> distinct;
  std::set<std::string> texts;  // membership only: the order stays the seeds'
  for (std::size_t i = 0; i < runs.size(); ++i)
    if (texts.insert(runs[i].dump()).second) distinct.push_back(i);
  return distinct;
}

// A point's run_length from its runs (at least one) and their distinct ones.
Json point_run_length(const std::vector<Json>& runs, const std::vector<std::size_t>& distinct,
                      double precision) {
  if (runs.front()["run_length"].value("applicable", false)) {
    std::vector<Json> lengths;
    for (std::size_t d : distinct) lengths.push_back(runs[d]["run_length"]);
    return report::pooled_run_length(lengths);
  }
  // A run to completion: the interval of its replications' ops_per_s, and the
  // simulated time of the runs really simulated (copies took none).
  std::vector<double> rates;
  for (std::size_t d : distinct) rates.push_back(runs[d]["ops_per_s"].get<double>());
  Json j =
      report::replication_run_length(rates, precision, runs.size() > 1 && distinct.size() == 1);
  double simulated = 0;
  Json simulated_runs = Json::array();
  for (std::size_t d : distinct) {
    const double ms = runs[d]["run_length"].value("simulated_ms", 0.0);
    simulated += ms;
    simulated_runs.push_back(ms);
  }
  j["simulated_ms"] = simulated;
  j["simulated_ms_runs"] = simulated_runs;
  return j;
}

}  // namespace

Json assemble(const Scenario& scenario, const config::MachineParams& machine,
              const std::vector<Json>& all_runs) {
  const auto& policy = scenario.kernel;
  const auto specs = runs_of(scenario);
  Json points = Json::array();
  for (std::size_t p = 0; p < scenario.threads.size(); ++p) {
    const int threads = scenario.threads[p];
    std::vector<Json> runs;
    Json seeds = Json::array();
    int not_needed = 0;
    for (std::size_t i = 0; i < specs.size(); ++i) {
      if (specs[i].point != p) continue;
      if (all_runs[i].is_null()) {  // not simulated: the point was precise enough without it
        ++not_needed;
        continue;
      }
      seeds.push_back(specs[i].seed);
      runs.push_back(all_runs[i]);
    }
    const std::vector<std::size_t> distinct = distinct_runs(runs);
    // The point's figures are the median run's (the lower one for an even
    // count), so they come from one real run; its ops_per_s is the mean of the
    // distinct runs, the estimate whose interval run_length pools.
    std::vector<std::size_t> order(runs.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return runs[a]["ops_per_s"].get<double>() < runs[b]["ops_per_s"].get<double>();
    });
    const std::size_t median = order[(order.size() - 1) / 2];
    Json point = runs[median];
    double mean = 0;
    for (std::size_t d : distinct)
      mean += runs[d]["ops_per_s"].get<double>() / static_cast<double>(distinct.size());
    point["ops_per_s"] = mean;
    point["run_length"] = point_run_length(runs, distinct, scenario.precision);
    if (runs.front()["run_length"].value("round", 1) == 2) {
      point["run_length"]["rounds"] = 2;
      point["run_length"]["first_round_dispersion"] =
          runs.front()["run_length"]["first_round_dispersion"];
    }
    if (!point["run_length"]["applicable"].get<bool>())
      point["run_length"]["runs_not_needed"] = not_needed;
    Json all = Json::array();
    for (const auto& run : runs) all.push_back(run["ops_per_s"]);
    point["threads"] = threads;
    point["kernel"] = policy.id;
    point["machine"] = machine.name;
    point["repeats"] = scenario.repeats;
    point["seeds"] = seeds;
    point["figures_seed"] = seeds[median];
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
double estimated_cost(const Scenario& s, const workloads::Workload& w,
                      const config::MachineParams& m, int threads) {
  const double busy = std::min(std::max(1, threads), std::max(1, m.cpus)) +
                      0.1 * std::max(0, threads - std::max(1, m.cpus));
  const bool windowed = !w.runs_to_completion(threads);
  return (s.warmup_ms + s.duration_ms) * busy * (windowed ? 1.0 : 1000.0);
}

// Where a run of the batch comes from.
struct BatchRun {
  std::size_t scenario = 0;
  std::size_t index = 0;  // in runs_of(scenario)
  RunSpec spec;
  double cost = 0;
  std::size_t leader = SIZE_MAX;  // the run of the point's first seed (SIZE_MAX: this is it)
  // Its runs stop at precision * sqrt(repeats) (report/run_length.hpp): a
  // leader that turns out seed-free is run again alone, at `precision`.
  bool pooled = false;
  // A run to completion's third seed on (precision > 0): the point's run before
  // it. It is simulated only if the point's runs up to that one miss the
  // precision (sequential replications: `repeats` is the ceiling, as
  // duration_ms is a windowed run's). SIZE_MAX: it is not such a run. Not for
  // windowed points: each of their runs stops at precision * sqrt(repeats), so
  // fewer seeds rarely pool to `precision`, and two seeds' consistency test
  // (Cochran's Q, 1 dof) is a weak check of seeds in different steady states.
  std::size_t after = SIZE_MAX;
  // The run number its progress reports (0: its place in the batch + 1); a
  // second round's run reports the number of the run it replaces.
  std::uint64_t progress_run = 0;
};

// The runs of a scenario as BatchRuns: each point's first seed leads its others.
// Returns how many were added.
std::size_t add_runs(std::vector<BatchRun>& runs, std::size_t s, const Scenario& scenario,
                     const config::MachineParams& machine) {
  const auto specs = runs_of(scenario);
  const auto workload = workloads::make_workload(scenario.workload);
  std::size_t leader = SIZE_MAX;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const bool first = i == 0 || specs[i].point != specs[i - 1].point;
    if (first) leader = runs.size();
    const bool sequential = scenario.precision > 0 && !first && runs.size() - 1 != leader &&
                            workload->runs_to_completion(specs[i].threads);
    runs.push_back({s, i, specs[i], estimated_cost(scenario, *workload, machine, specs[i].threads),
                    first ? SIZE_MAX : leader, scenario.precision > 0 && scenario.repeats > 1,
                    sequential ? runs.size() - 1 : SIZE_MAX});
  }
  return specs.size();
}

// Whether a point has its precision from its runs up to `last` (they are
// consecutive from its leader): its run_length, as assemble() makes it, says
// "reached". Its later seeds are then not simulated. `ended`: each ended run's
// point (kept for the runs that such a decision reads).
bool precise_so_far(const std::vector<BatchRun>& runs, std::size_t last,
                    const std::vector<Json>& ended, double precision) {
  const std::size_t leader = runs[last].leader == SIZE_MAX ? last : runs[last].leader;
  const std::vector<Json> so_far(ended.begin() + static_cast<std::ptrdiff_t>(leader),
                                 ended.begin() + static_cast<std::ptrdiff_t>(last) + 1);
  return point_run_length(so_far, distinct_runs(so_far), precision)["reached"].get<bool>();
}

// One run, and whether it made a random draw: without one, its seed made no
// difference (core/rng.hpp), and every other seed of its point gives these bytes.
// alone: as the point's only run (repeats 1), for a seed-free point's rerun.
Json checked_run(const Scenario& s, const config::MachineParams& m, const RunSpec& spec,
                 bool alone = false) {
  Rng::reset_draws();
  std::optional<Scenario> single;  // a copy only for the rerun
  if (alone) {
    single = s;
    single->repeats = 1;
  }
  Json point = run_point(single ? *single : s, m, s.kernel, spec.threads, spec.seed);
  Json out;
  out["point"] = std::move(point);
  out["seed_free"] = Rng::draws() == 0;
  return out;
}

// Runs every run, `jobs` at a time in forked processes (in_process: here, one
// after the other, an error propagating as raised), the longest ready run first, and tells
// finished(i, outcome) of each (outcome.value: the run's point). A point's first seed leads: its
// other seeds are ready once it has ended, and are not simulated at all when it made no random
// draw: they get a copy of its point, the bytes they would have given. (The default scenario on
// host-default is such a case: 12 runs, 4 distinct.) A follower of a failed leader is not run
// either (outcome: ok false, no error_type): its index is later than the leader's, so the first
// error of a scenario is the same.
void run_runs(const std::vector<BatchRun>& runs, const std::vector<Scenario>& scenarios,
              const std::vector<config::MachineParams>& machines, const SimulateOptions& options,
              bool in_process, bool stop_on_error,
              const std::function<void(std::size_t, const TaskOutcome&)>& finished) {
  std::vector<std::vector<std::size_t>> followers(runs.size());
  for (std::size_t i = 0; i < runs.size(); ++i)
    if (runs[i].leader != SIZE_MAX) followers[runs[i].leader].push_back(i);
  auto unwrap = [](TaskOutcome o, bool& seed_free) {
    seed_free = false;
    if (o.ok) {
      seed_free = o.value["seed_free"].get<bool>();
      Json point = std::move(o.value["point"]);
      o.value = std::move(point);
    }
    return o;
  };
  auto copy_of = [](const TaskOutcome& o, bool seed_free) {
    TaskOutcome c;
    if (o.ok && seed_free) c = o;  // else: not run
    return c;
  };
  // Sequential replications: each ended run's point, kept for the runs whose
  // point has a later seed that may not be needed; next_of: that seed.
  std::vector<std::size_t> next_of(runs.size(), SIZE_MAX);
  std::vector<char> keep(runs.size(), 0);
  for (std::size_t i = 0; i < runs.size(); ++i)
    if (runs[i].after != SIZE_MAX) {
      next_of[runs[i].after] = i;
      for (std::size_t j = runs[i].leader; j < i; ++j) keep[j] = 1;
    }
  std::vector<Json> ended(runs.size());
  auto remember = [&](std::size_t i, const TaskOutcome& o) {
    if (keep[i] && o.ok && !o.value.is_null()) ended[i] = o.value;
  };
  // A run that follows `before` (ended with outcome o): simulated only if the
  // runs up to `before` miss the point's precision. Not run after a failure
  // (ok false, no error_type); not needed: ok, with a null value.
  auto not_needed = [&](std::size_t before, const TaskOutcome& o) {
    return o.ok &&
           (o.value.is_null() ||
            precise_so_far(runs, before, ended, scenarios[runs[before].scenario].precision));
  };
  auto skipped = [] {
    TaskOutcome s;
    s.ok = true;  // value null: not simulated (assemble leaves it out)
    return s;
  };
  // A seed-free leader's copies would pool as one run, at the looser per-run
  // precision: such a point is run again as its only run (at `precision`).
  auto needs_rerun = [&runs](std::size_t i, const TaskOutcome& o, bool seed_free) {
    return runs[i].pooled && runs[i].leader == SIZE_MAX && o.ok && seed_free &&
           o.value["run_length"].value("applicable", false);
  };
  // The rerun's outcome, with the first run's simulated time on its run_length.
  auto after = [](TaskOutcome rerun, const TaskOutcome& first) {
    if (rerun.ok)
      rerun.value["run_length"]["rerun_after_ms"] = first.value["run_length"]["simulated_ms"];
    return rerun;
  };
  if (in_process) {
    std::vector<TaskOutcome> outcomes(runs.size());
    std::vector<char> seed_free(runs.size(), 0);
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const BatchRun& r = runs[i];
      if (r.leader != SIZE_MAX) {
        const TaskOutcome& lead = outcomes[r.leader];
        if (!lead.ok || seed_free[r.leader]) {
          outcomes[i] = copy_of(lead, seed_free[r.leader] != 0);
          if (outcomes[i].ok) report_copied_run();
          finished(i, outcomes[i]);
          continue;
        }
      }
      if (r.after != SIZE_MAX &&
          (!outcomes[r.after].ok || not_needed(r.after, outcomes[r.after]))) {
        if (outcomes[r.after].ok) {
          outcomes[i] = skipped();
          report_skipped_run();
        }
        finished(i, outcomes[i]);
        continue;
      }
      // An error propagates from here as it was raised.
      if (r.progress_run > 0) number_next_run(r.progress_run);
      TaskOutcome& out = outcomes[i];
      out.value = checked_run(scenarios[r.scenario], machines[r.scenario], r.spec);
      out.ok = true;
      bool free = false;
      out = unwrap(std::move(out), free);
      if (needs_rerun(i, out, free)) {
        renumber_next_run();  // the same run, as progress goes
        TaskOutcome again;
        again.value = checked_run(scenarios[r.scenario], machines[r.scenario], r.spec, true);
        again.ok = true;
        out = after(unwrap(std::move(again), free), out);
      }
      seed_free[i] = free;
      remember(i, out);
      finished(i, out);
    }
    return;
  }
  // Tasks 0..n-1: the runs; then one rerun task per pooled leader (task_of:
  // the run a task stands for), ready only if that leader is seed-free.
  std::vector<std::function<Json()>> tasks;
  std::vector<std::size_t> task_of, rerun_task(runs.size(), SIZE_MAX);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const BatchRun& r = runs[i];
    tasks.push_back([&scenarios, &machines, r] {
      return checked_run(scenarios[r.scenario], machines[r.scenario], r.spec);
    });
    task_of.push_back(i);
  }
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const BatchRun& r = runs[i];
    if (!r.pooled || r.leader != SIZE_MAX) continue;
    rerun_task[i] = tasks.size();
    tasks.push_back([&scenarios, &machines, r] {
      return checked_run(scenarios[r.scenario], machines[r.scenario], r.spec, true);
    });
    task_of.push_back(i);
  }
  std::vector<char> ready(tasks.size(), 0), started(tasks.size(), 0);
  for (std::size_t i = 0; i < runs.size(); ++i) ready[i] = runs[i].leader == SIZE_MAX;
  // A later seed of a run to completion (BatchRun::after) may start before the
  // seed before it has ended, when a process would otherwise be idle: its
  // outcome is held until that seed's says whether it is needed, and dropped
  // if not. So the results are those of the one-process path, and a lone
  // scenario takes no longer than with every seed run.
  enum : char { kPending, kNeeded, kDropped };
  std::vector<char> decision(runs.size(), kNeeded);
  for (std::size_t i = 0; i < runs.size(); ++i)
    if (runs[i].after != SIZE_MAX) decision[i] = kPending;
  std::vector<std::optional<TaskOutcome>> held(runs.size());
  std::vector<TaskOutcome> first_of(runs.size());  // a rerun leader's first outcome
  std::vector<RunProgress> last(runs.size());
  std::function<void(std::size_t, TaskOutcome, bool)> deliver;
  // The seeds after `task` (its outcome o): the next one is needed, or it and
  // every later one are not simulated (not needed, or not run after a failure).
  auto go_on = [&](std::size_t task, const TaskOutcome& o) {
    std::size_t next = next_of[task];
    if (next == SIZE_MAX || decision[next] != kPending) return;
    if (o.ok && !not_needed(task, o)) {
      decision[next] = kNeeded;
      if (held[next]) {
        TaskOutcome h = std::move(*held[next]);
        held[next].reset();
        deliver(next, std::move(h), false);
      } else if (!started[next]) {
        ready[next] = 1;
      }
      return;
    }
    for (; next != SIZE_MAX; next = next_of[next]) {
      decision[next] = kDropped;
      held[next].reset();
      started[next] = 1;
      const TaskOutcome out = o.ok ? skipped() : TaskOutcome{};
      if (out.ok && has_progress_hook()) report_skipped_run(next + 1);
      finished(next, out);
    }
  };
  // After a failure (with stop_on_error) no run starts; a failure of a run
  // begun ahead that is then not needed does not count.
  bool halted = false;
  deliver = [&](std::size_t task, TaskOutcome out, bool free) {
    if (!out.ok && stop_on_error) halted = true;
    remember(task, out);
    finished(task, out);
    for (std::size_t f : followers[task]) {
      if (out.ok && !free) {
        ready[f] = runs[f].after == SIZE_MAX;  // a later seed waits for the one before it
        continue;
      }
      started[f] = 1;
      const TaskOutcome copy = copy_of(out, free);
      if (copy.ok && has_progress_hook()) report_copied_run(last[task], f + 1);
      finished(f, copy);
    }
    go_on(task, out);
  };
  // The longest ready run first (ties: the earlier task), as longest_first() orders them;
  // with none ready, the longest later seed whose seed before it has started.
  auto pick = [&]() -> std::optional<std::size_t> {
    std::optional<std::size_t> best;
    if (halted) return best;
    for (std::size_t i = 0; i < tasks.size(); ++i)
      if (ready[i] && !started[i] && (!best || runs[task_of[i]].cost > runs[task_of[*best]].cost))
        best = i;
    for (std::size_t i = 0; !best && i < runs.size(); ++i)
      if (decision[i] == kPending && !started[i] && started[runs[i].after]) best = i;
    if (best) started[*best] = 1;
    return best;
  };
  PoolOptions pool;
  pool.jobs = options.jobs;
  pool.poll = options.poll;
  pool.stop_on_error = false;  // `halted` does it
  pool.abandoned = [&](std::size_t t) { return t < runs.size() && decision[t] == kDropped; };
  // Run numbers as the one-process path gives them: 1 + the run's place.
  if (has_progress_hook())
    pool.progress = [&last, &task_of, &runs](std::size_t task, const RunProgress& p) {
      RunProgress q = p;
      const BatchRun& r = runs[task_of[task]];
      q.run = r.progress_run > 0 ? r.progress_run : task_of[task] + 1;
      last[task_of[task]] = q;
      report_progress(q);
    };
  pool.finished = [&](std::size_t t, const TaskOutcome& raw) {
    const std::size_t task = task_of[t];
    bool free = false;
    TaskOutcome out = unwrap(raw, free);
    if (t == task && needs_rerun(task, out, free)) {
      first_of[task] = out;
      ready[rerun_task[task]] = 1;
      return;  // its outcome is the rerun's
    }
    if (t != task) out = after(std::move(out), first_of[task]);
    if (decision[task] == kDropped) return;  // begun ahead, and not needed
    if (decision[task] == kPending) {
      held[task] = std::move(out);
      return;
    }
    deliver(task, std::move(out), free);
  };
  run_pool_picked(tasks, pick, pool);
}

[[noreturn]] void rethrow(const TaskOutcome& out, const std::string& where) {
  const std::string text = where.empty() ? out.message : where + ": " + out.message;
  if (out.error_type == "InputError") throw InputError(out.message);
  if (out.error_type == "SimulationError") throw SimulationError(text);
  throw std::runtime_error(text);
}

std::string run_name(const RunSpec& spec) {
  return "threads=" + std::to_string(spec.threads) + " seed=" + std::to_string(spec.seed);
}

// A second round (windowed points, precision > 0, repeats > 1). A point's runs
// each stop at their own interval, precision * sqrt(repeats); when every one
// stopped so (none at its ceiling) and yet Cochran's Q says they disagree more
// than those intervals allow, their batches missed a slow variation (measured
// on the demo's 2-thread point, host model: 7.4 ms windows of 0.37 ms batches
// gave 11.60-11.85 M with Q / (R - 1) = 4.46; windows of 56-118 ms gave
// 11.676-11.681 M, 0.01). The point's interval is then its runs' replication
// interval (report::pooled_run_length()); when that is within the precision too,
// the point is done. Otherwise the point's seeds run once more, each to half
// the first round's interval (longer windows, longer batches: RunLength's
// round), and the second round's runs replace the first's; their simulated
// time counts both (rerun_after_ms). One round more at most: a point that still
// disagrees says so, as before. Decided from the first round's bytes alone: the
// same bytes whatever the jobs.
// The points of scenario `s` that need one, and each one's first-round Q / (R - 1).
using RoundPoints = std::vector<std::pair<std::size_t, double>>;
RoundPoints second_round_points(const Scenario& s, const std::vector<Json>& results) {
  RoundPoints out;
  if (s.round > 1 || s.precision <= 0 || s.repeats < 2) return out;
  const auto specs = runs_of(s);
  for (std::size_t p = 0; p < s.threads.size(); ++p) {
    std::vector<Json> runs;
    for (std::size_t i = 0; i < specs.size(); ++i)
      if (specs[i].point == p && !results[i].is_null()) runs.push_back(results[i]);
    if (runs.size() < 2 || !runs.front()["run_length"].value("applicable", false)) continue;
    const std::vector<std::size_t> distinct = distinct_runs(runs);
    if (distinct.size() < 2) continue;
    bool each = true;
    for (std::size_t d : distinct) each = each && runs[d]["run_length"]["reached"].get<bool>();
    const Json pooled = point_run_length(runs, distinct, s.precision);
    if (each && pooled["runs_consistent"] == false && !pooled["reached"].get<bool>())
      out.emplace_back(p,
                       pooled["dispersion"].is_number() ? pooled["dispersion"].get<double>() : 0.0);
  }
  return out;
}

// Runs the second round of the scenarios' points that need one (points[s], from
// second_round_points()) and puts its runs in place of the first round's
// (results[s]: scenario s's runs in runs_of() order). The first error of a
// scenario's second round goes to errors[s] (ok false), as a first round's would.
void second_rounds(const std::vector<Scenario>& scenarios,
                   const std::vector<config::MachineParams>& machines,
                   std::vector<std::vector<Json>>& results, const std::vector<RoundPoints>& points,
                   const SimulateOptions& options, bool in_process,
                   std::vector<TaskOutcome>& errors) {
  std::vector<Scenario> again;
  std::vector<config::MachineParams> again_machines;
  std::vector<std::size_t> of;  // again[k] is scenarios[of[k]]
  std::vector<BatchRun> runs;
  std::vector<double> dispersion;  // per run: its point's first-round Q / (R - 1)
  for (std::size_t s = 0; s < scenarios.size(); ++s) {
    if (points[s].empty()) continue;
    Scenario second = scenarios[s];
    second.round = 2;
    const auto workload = workloads::make_workload(second.workload);
    const auto specs = runs_of(second);
    for (const auto& [p, q] : points[s])
      for (std::size_t i = 0; i < specs.size(); ++i) {
        if (specs[i].point != p || results[s][i].is_null()) continue;
        runs.push_back({again.size(), i, specs[i],
                        estimated_cost(second, *workload, machines[s], specs[i].threads), SIZE_MAX,
                        false, SIZE_MAX, i + 1});
        dispersion.push_back(q);
      }
    again.push_back(std::move(second));
    again_machines.push_back(machines[s]);
    of.push_back(s);
  }
  if (runs.empty()) return;
  std::vector<std::size_t> error_at(scenarios.size(), SIZE_MAX);
  SimulateOptions pool = options;
  pool.jobs = std::max(1, options.jobs);
  run_runs(runs, again, again_machines, pool, in_process, false,
           [&](std::size_t k, const TaskOutcome& o) {
             const BatchRun& r = runs[k];
             const std::size_t s = of[r.scenario];
             if (!o.ok) {
               if (r.index < error_at[s] && !o.error_type.empty()) {
                 error_at[s] = r.index;
                 errors[s] = o;
                 errors[s].message = run_name(r.spec) + ": " + o.message;
               }
               return;
             }
             Json run = o.value;
             const Json& first = results[s][r.index]["run_length"];
             run["run_length"]["round"] = 2;
             run["run_length"]["rerun_after_ms"] =
                 first["simulated_ms"].get<double>() + first.value("rerun_after_ms", 0.0);
             run["run_length"]["first_round_dispersion"] = dispersion[k];
             results[s][r.index] = std::move(run);
           });
}

}  // namespace

Json simulate(const Scenario& scenario, const SimulateOptions& options) {
  const std::vector<Scenario> scenarios{scenario};
  const std::vector<config::MachineParams> machines{config::load_machine(scenario.machine)};
  check_placement(scenario, machines[0]);
  const auto specs = runs_of(scenario);
  std::vector<BatchRun> runs;
  add_runs(runs, 0, scenario, machines[0]);
  std::vector<TaskOutcome> outcomes(runs.size());
  run_runs(runs, scenarios, machines, options, options.jobs <= 1 || runs.size() <= 1, true,
           [&](std::size_t i, const TaskOutcome& o) { outcomes[i] = o; });
  for (std::size_t i = 0; i < outcomes.size(); ++i)
    if (!outcomes[i].ok && !outcomes[i].error_type.empty())
      rethrow(outcomes[i], run_name(specs[i]));
  std::vector<std::vector<Json>> results(1);
  for (auto& out : outcomes) results[0].push_back(std::move(out.value));
  std::vector<TaskOutcome> errors(1);
  const std::vector<RoundPoints> points{second_round_points(scenario, results[0])};
  second_rounds(scenarios, machines, results, points, options, options.jobs <= 1, errors);
  if (!errors[0].error_type.empty()) rethrow(errors[0], "");
  return assemble(scenario, machines[0], results[0]);
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
      check_placement(scenarios[s], machines[s]);
    } catch (const InputError& e) {
      out[s].error_type = "InputError", out[s].message = e.what();
      continue;
    }
    left[s] = add_runs(runs, s, scenarios[s], machines[s]);
  }
  std::vector<std::vector<Json>> results(scenarios.size());
  for (std::size_t s = 0; s < scenarios.size(); ++s) results[s].resize(left[s]);
  // The first error of a scenario's runs, in runs_of() order (not in the
  // order they happened to end): the same message whatever `jobs` is.
  std::vector<std::size_t> error_at(scenarios.size(), SIZE_MAX);
  std::vector<RoundPoints> second(scenarios.size());  // the points of a second round
  // Scenario s's runs are all in, none failed: its result.
  auto assembled = [&](std::size_t s) {
    out[s].ok = true;
    out[s].value = assemble(scenarios[s], machines[s], results[s]);
  };
  auto finished = [&](std::size_t task, const TaskOutcome& o) {
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
      second[r.scenario] = second_round_points(scenarios[r.scenario], results[r.scenario]);
      if (!second[r.scenario].empty()) return;  // assembled after its second round
      assembled(r.scenario);
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
  // In forked processes even one at a time: a run that crashes ends only its own.
  SimulateOptions pool = options;
  pool.jobs = std::max(1, options.jobs);
  run_runs(runs, scenarios, machines, pool, false, false, finished);
  std::vector<TaskOutcome> errors(scenarios.size());
  second_rounds(scenarios, machines, results, second, pool, false, errors);
  for (std::size_t s = 0; s < scenarios.size(); ++s) {
    if (second[s].empty()) continue;
    if (!errors[s].error_type.empty())
      out[s] = errors[s];
    else
      assembled(s);
    results[s].clear();
    if (done) done(s);
  }
  return out;
}

}  // namespace semsim::driver
