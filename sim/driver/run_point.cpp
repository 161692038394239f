#include "driver/run_point.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <optional>
#include <utility>
#include <vector>

#include "core/errors.hpp"
#include "core/rng.hpp"
#include "core/simulation.hpp"
#include "ipc/sem_kernel.hpp"
#include "machine/scheduler.hpp"
#include "report/run_length.hpp"
#include "report/window_stats.hpp"
#include "workloads/registry.hpp"
#include "workloads/sim_tasks.hpp"

namespace semsim::driver {

namespace {
ProgressHook& progress_hook() {
  static ProgressHook hook;
  return hook;
}
std::uint64_t runs_begun = 0;
RunProgress last_run;  // the latest run's last report

// Every task reports to the recorder; the locks get the kernel's names
// (sma->sem_perm.lock, sem->lock[i]; with several arrays, sma[a]->...).
void attach_trace(report::TraceRecorder& trace, std::deque<machine::Task>& tasks,
                  const std::vector<std::unique_ptr<ipc::SemKernel>>& arrays) {
  for (auto& t : tasks) t.trace = &trace;
  for (std::size_t a = 0; a < arrays.size(); ++a) {
    auto& sma = arrays[a]->array();
    const std::string prefix = arrays.size() > 1 ? fmt::format("sma[{}]", a) : "sma";
    trace.name_lock(sma.array_lock.get(), prefix + "->sem_perm.lock");
    if (sma.rwlock) trace.name_lock(sma.rwlock.get(), prefix + "->sem_perm.lock (rwlock)");
    for (std::size_t s = 0; s < sma.sem_locks.size(); ++s)
      trace.name_lock(sma.sem_locks[s].get(), arrays.size() > 1
                                                  ? fmt::format("{}->sems[{}].lock", prefix, s)
                                                  : fmt::format("sem->lock[{}]", s));
  }
}

// Each task's start date: 0 (Spawn), or a permutation of 0 .. workers-1 ticks
// (Shuffled) over the workload's tasks; a parent that starts and ends the run
// (sem-lockunlock) starts at 0 either way.
std::vector<Tick> start_dates(StartOrder order, const workloads::Workload& w, int threads,
                              int ntasks, std::uint64_t seed) {
  std::vector<Tick> at(static_cast<std::size_t>(ntasks), 0);
  if (order == StartOrder::Spawn) return at;
  const int workers = std::min(ntasks, threads + w.extra_tasks());
  for (int i = 0; i < workers; ++i) at[static_cast<std::size_t>(i)] = i;
  Rng rng = Rng::derive(seed, 0x57A27);  // Fisher-Yates over the workers
  for (int i = workers - 1; i > 0; --i)
    std::swap(at[static_cast<std::size_t>(i)], at[rng.below(static_cast<std::uint64_t>(i) + 1)]);
  return at;
}

}  // namespace

// How many OS-noise interruptions a batch must hold on average for its mean to
// be near-normal. The time a batch loses is a compound Poisson sum of the probed
// durations d: with k arrivals expected (on all the CPUs that run tasks: an
// interruption on any of them moves the point's rate) its skewness is
// E[d^3] / E[d^2]^1.5 / sqrt(k), and Student-t intervals over batch means of a
// skewed sum cover less than they claim (the runs that drew few long
// interruptions are both fast and narrow). k makes that skewness at most 1 (the
// mean of 20 such batches: at most 0.22). Measured on the default scenario, host
// model, 60 seeds: at 1 thread, with one interruption per batch (batch skewness
// 2.0) 51 of the 60 runs' 95 % intervals held the rate of 200 ms runs, with this
// rule 59; at 2 threads 55 either way (validation/host-accuracy.md, "Batches
// long enough for the noise").
double noise_arrivals_per_batch(const config::MachineParams& m) {
  double m2 = 0, m3 = 0;
  for (const Tick d : m.noise_durations) {
    const auto x = static_cast<double>(d);
    m2 += x * x;
    m3 += x * x * x;
  }
  if (m2 <= 0) return 1.0;
  const double n = static_cast<double>(m.noise_durations.size());
  const double skew = (m3 / n) / std::pow(m2 / n, 1.5);
  return std::max(1.0, skew * skew);
}

// The slowest periodic variation the model has, which a batch of the adaptive
// run length must span: a scheduler rotation (every task's slice) when tasks
// outnumber CPUs, and the time in which the CPUs that run tasks take
// noise_arrivals_per_batch() OS-noise interruptions between them on average.
// Measured on the default scenario (host-default, 4 threads on 2 CPUs): 0.2 ms
// windows without the noise term reported 11.02 M ops/s +-0.56 % against
// 10.77 M +-0.37 % over 200 ms.
Tick slowest_period(const config::MachineParams& m, int ntasks) {
  const int cpus = std::max(1, m.cpus);
  Tick period = 0;
  if (ntasks > cpus) period = m.time_slice * ((ntasks + cpus - 1) / cpus);
  if (m.noise_per_s > 0) {
    const double busy = std::max(1, std::min(ntasks, cpus));
    period = std::max(
        period, static_cast<Tick>(noise_arrivals_per_batch(m) *
                                  static_cast<double>(kTicksPerSecond) / (m.noise_per_s * busy)));
  }
  return period;
}

bool has_progress_hook() { return static_cast<bool>(progress_hook()); }

void report_progress(const RunProgress& p) {
  if (progress_hook()) progress_hook()(p);
}

void report_copied_run(const RunProgress& of, std::uint64_t run) {
  RunProgress p = of;
  p.run = run;
  p.done = 0;
  p.finished = false;
  report_progress(p);
  p.done = of.done;
  p.finished = true;
  report_progress(p);
}

void report_copied_run() { report_copied_run(last_run, ++runs_begun); }

void report_skipped_run(std::uint64_t run) { report_copied_run(RunProgress{}, run); }

void report_skipped_run() { report_skipped_run(++runs_begun); }

void renumber_next_run() {
  if (runs_begun > 0) --runs_begun;
}

void number_next_run(std::uint64_t run) { runs_begun = run > 0 ? run - 1 : 0; }

ProgressHook set_progress_hook(ProgressHook hook) {
  runs_begun = 0;
  return std::exchange(progress_hook(), std::move(hook));
}

namespace {

std::uint64_t g_reruns = 0;

Json run_once(const Scenario& scenario, const config::MachineParams& machine,
              const ipc::KernelPolicy& policy, int threads, std::uint64_t seed,
              report::TraceRecorder* trace, bool read_ahead) {
  const auto workload = workloads::make_workload(scenario.workload);
  const workloads::Workload& w = *workload;
  RunProgress progress{++runs_begun, 0, 0, false, false};
  core::Simulation sim;
  sim.set_read_ahead(read_ahead);
  machine::Topology topo(machine);
  // Each rq->lock is a spinlock of the kernel's kind (where the model holds it).
  machine::Scheduler sched(topo, seed ^ 0x5c4ed, ipc::lock_kind(policy.spinlock));

  // The arrays the workload creates before its tasks start. aim9-shm's
  // private per-call array is modelled as one array per task that stays
  // (each process's own: tasks never share it), array i for task i.
  std::vector<std::unique_ptr<ipc::SemKernel>> arrays;
  auto sizes = w.array_sizes(threads);
  if (w.arrays_per_task() > 0) sizes.assign(static_cast<std::size_t>(std::max(1, threads)), 1);
  if (sizes.empty()) sizes.push_back(1);
  for (std::size_t a = 0; a < sizes.size(); ++a)
    arrays.push_back(
        std::make_unique<ipc::SemKernel>(policy, topo, sched, sizes[a], seed + 1000 * a));

  const int ntasks = workloads::sim_task_count(w, threads);
  workloads::SimContext ctx{w,
                            topo,
                            sched,
                            arrays,
                            seed,
                            threads,
                            std::vector<std::uint64_t>(static_cast<std::size_t>(ntasks), 0),
                            std::vector<char>(static_cast<std::size_t>(ntasks), 0),
                            0,
                            {},
                            {},
                            ipc::lock_kind(policy.spinlock),
                            {},
                            {}};

  sched.expect_tasks(ntasks);
  std::deque<machine::Task> tasks;  // stable addresses
  const std::vector<int> processes = w.task_processes(ntasks);
  const std::vector<Tick> start_at = start_dates(scenario.start_order, w, threads, ntasks, seed);
  for (int i = 0; i < ntasks; ++i) {
    auto& task = tasks.emplace_back();
    task.id = i;
    task.process = processes[static_cast<std::size_t>(i)];
    const int pinned_cpu = i < threads ? w.task_cpu(i, threads, topo.cpus()) : -1;
    task.pinned = pinned_cpu >= 0;
    task.cpu = task.home_cpu = pinned_cpu >= 0 ? pinned_cpu % topo.cpus() : i % topo.cpus();
    auto body = workloads::make_task_body(ctx, i);
    const Tick start = start_at[static_cast<std::size_t>(i)];
    task.actor = &sim.spawn(fmt::format("task{}", i), [&task, body, start](core::Actor&) {
      task.idle_until(start);  // a shuffled start (Scenario::start_order), else 0
      body(task);
    });
  }
  if (trace != nullptr) attach_trace(*trace, tasks, arrays);
  // Initial values (custom), set before anyone runs.
  auto init = w.initial_values();
  for (std::size_t s = 0; s < init.size(); ++s) arrays[0]->array().semval[s] = init[s];

  report::WindowStats stats(topo, arrays[0]->array(), tasks, &ctx.rounds);
  stats.set_scheduler(&sched);
  stats.set_kthread(w.kthread());
  for (const auto& [name, lock] : ctx.kernel_locks) stats.add_workload_lock({name, lock});
  for (auto* line : ctx.kernel_lines) stats.add_workload_line(line);
  std::optional<report::RunLength> run_length;  // windowed workloads only
  // A windowed run ends at warm-up + duration. A run a parent ends ignores
  // both and is bounded only by a safety cap; one that ends with its tasks
  // (scripts, which may block for ever) is bounded by them.
  constexpr Tick kCompletionCap = 600 * kTicksPerSecond;
  const workloads::Completion completion = w.completion(threads);
  const bool with_tasks = completion == workloads::Completion::WhenTasksEnd;
  const Tick cap = completion == workloads::Completion::ByParent
                       ? kCompletionCap
                       : ns_to_ticks((scenario.warmup_ms + scenario.duration_ms) * 1e6);
  progress.target = completion == workloads::Completion::ByParent ? 0 : cap;
  progress.adaptive = completion == workloads::Completion::Windowed && scenario.precision > 0;
  // Read by the observers while sim.run() runs: declared at the run's scope, not the branch's.
  bool completed = false;
  if (completion != workloads::Completion::Windowed) {
    // The run is the window: from the start (or the parent's SETALL) to the end.
    stats.begin(0);
    ctx.on_complete = [&](Tick start, Tick end) {
      stats.rebase(start);
      stats.end(end);
      completed = true;
      sim.stop_all();
    };
    sim.spawn_observer("watchdog", [&](core::Actor& self) {
      // Scripts end when every task has finished; a run that blocks for
      // ever stops at warmup_ms + duration_ms and says so.
      while (!completed && self.now() < cap) {
        progress.done = self.now();
        report_progress(progress);
        if (with_tasks && ctx.finished >= threads) {
          stats.end(self.now());
          completed = true;
          break;
        }
        self.sleep_until(std::min(cap, self.now() + (with_tasks ? 10 * kTicksPerUs : kTicksPerMs)));
      }
      if (!completed) stats.end(self.now());
      stats.set_completed(completed);
      sim.stop_all();
    });
  } else {
    // The timekeeper looks at the counter of the point's figure on a fixed
    // grid and begins and ends the window where RunLength says (adaptive run
    // length; precision 0: at warmup_ms and at the ceiling).
    const Tick warmup_end = ns_to_ticks(scenario.warmup_ms * 1e6);
    // Each of the point's runs stops at precision * sqrt(repeats): their pooled
    // interval (driver/simulate.cpp) is the one that must meet `precision`.
    run_length.emplace(warmup_end, cap, scenario.precision, slowest_period(machine, ntasks),
                       scenario.repeats, scenario.round);
    const bool by_rounds = !w.own_figure().name.empty();
    // Copied into the timekeeper, which runs after this block has ended (sim.run()).
    auto counted = [&, by_rounds] {
      std::uint64_t n = 0;
      const Tick now = sim.now();
      if (by_rounds)
        n = report::rounds_at(ctx.rounds, tasks, now);
      else
        for (const auto& t : tasks) n += t.semops_at(now);
      return static_cast<std::int64_t>(n);
    };
    sim.spawn_observer("timekeeper", [&, counted](core::Actor& self) {
      report_progress(progress);
      while (true) {
        self.sleep_until(run_length->next_date());
        const auto step = run_length->observe(self.now(), counted());
        if (step == report::RunLength::Step::Begin) stats.begin(self.now());
        if (step == report::RunLength::Step::Stop) break;
        progress.done = self.now();
        report_progress(progress);
      }
      stats.end(self.now());
      sim.stop_all();
    });
  }
  sim.run();
  progress.done = sim.now();
  progress.finished = true;
  report_progress(progress);
  last_run = progress;
  if (trace != nullptr) trace->finish();
  Json point = stats.to_json();
  const workloads::OwnFigure figure = w.own_figure();
  if (run_length)
    point["run_length"] = run_length->to_json(figure.name.empty() ? "semops" : "rounds");
  else  // runs to completion: no window to size; the simulated time it took
    point["run_length"] = {{"applicable", false},
                           {"precision", scenario.precision},
                           {"simulated_ms", ticks_to_ns(sim.now()) / 1e6}};
  if (!figure.name.empty())
    point[figure.name] = workloads::figure_value(figure, point["window_s"].get<double>(),
                                                 point["rounds_total"].get<double>(),
                                                 point["ops_total"].get<double>());
  return point;
}

}  // namespace

std::uint64_t read_ahead_reruns() { return g_reruns; }

// Read-ahead (machine/task.hpp) is on unless the run is traced; a run whose
// read-ahead conflicted is discarded whole and done again without it, under
// the same run number, so its bytes are the strict order's either way.
Json run_point(const Scenario& scenario, const config::MachineParams& machine,
               const ipc::KernelPolicy& policy, int threads, std::uint64_t seed,
               report::TraceRecorder* trace) {
  if (trace != nullptr) return run_once(scenario, machine, policy, threads, seed, trace, false);
  try {
    return run_once(scenario, machine, policy, threads, seed, nullptr, true);
  } catch (const ReadAheadConflict&) {
    ++g_reruns;
    renumber_next_run();
    return run_once(scenario, machine, policy, threads, seed, nullptr, false);
  }
}

}  // namespace semsim::driver
