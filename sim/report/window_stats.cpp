#include "report/window_stats.hpp"

#include <algorithm>

#include "report/kernel_symbols.hpp"
#include "report/lockstat.hpp"

namespace semsim::report {

using machine::CpuCategory;

std::vector<WindowStats::TaskSnap> WindowStats::snapshot(Tick now) const {
  std::vector<TaskSnap> out;
  for (const auto& t : tasks_)
    out.push_back({t.semops_at(now),
                   t.voluntary_switches,
                   t.involuntary_switches,
                   {t.wakes_same_cpu, t.wakes_remote_busy, t.wakes_remote_idle},
                   t.time_at(now)});
  return out;
}

std::uint64_t rounds_at(const std::vector<std::uint64_t>& rounds,
                        const std::deque<machine::Task>& tasks, Tick date) {
  std::uint64_t n = 0;
  for (std::size_t i = 0; i < rounds.size(); ++i)
    n += rounds[i] - (i < tasks.size() ? tasks[i].rounds_past(date) : 0);
  return n;
}

void WindowStats::begin(Tick now) {
  start_ = now;
  at_start_ = snapshot(now);
  rounds_at_start_ = rounds_ != nullptr ? rounds_at(*rounds_, tasks_, now) : 0;
  for (const auto* line : sma_.lines()) const_cast<machine::CacheLine*>(line)->reset_stats();
  sma_.array_lock->reset_stats();
  if (sma_.rwlock) sma_.rwlock->reset_stats();
  for (auto& l : sma_.sem_locks) l->reset_stats();
  for (auto& l : workload_locks_) l.lock->reset_stats();
  for (auto* line : workload_lines_) line->reset_stats();
  rq_at_start_.clear();
  if (sched_ != nullptr)
    for (int c = 0; c < sched_->cpus(); ++c) rq_at_start_.push_back(sched_->cpu(c).rq_lock.stats());
}

void WindowStats::end(Tick now) {
  stop_ = now;
  at_end_ = snapshot(now);
  rounds_at_end_ = rounds_ != nullptr ? rounds_at(*rounds_, tasks_, now) : 0;
}

namespace {

Json lock_json(const std::string& name, const machine::LockStats& s) {
  auto per = [&](Tick t) {
    return s.acquisitions ? ticks_to_ns(t) / static_cast<double>(s.acquisitions) : 0.0;
  };
  return {{"lock", name},
          {"acquisitions", s.acquisitions},
          {"contended_share",
           s.acquisitions ? static_cast<double>(s.contended) / static_cast<double>(s.acquisitions)
                          : 0.0},
          {"wait_ns_per_acquisition", per(s.wait)},
          {"hold_ns_per_acquisition", per(s.hold)}};
}

}  // namespace

Json WindowStats::to_json() const {
  const double window_s = ticks_to_seconds(stop_ - start_);
  std::vector<std::uint64_t> ops;
  std::uint64_t total = 0, voluntary = 0, involuntary = 0;
  std::array<std::uint64_t, 3> wakes{};
  std::array<Tick, machine::kFuncCount> by_func{};
  for (std::size_t i = 0; i < at_end_.size(); ++i) {
    const auto& a = at_start_[i];
    const auto& b = at_end_[i];
    ops.push_back(b.semops - a.semops);
    total += b.semops - a.semops;
    voluntary += b.voluntary - a.voluntary;
    involuntary += b.involuntary - a.involuntary;
    for (std::size_t w = 0; w < wakes.size(); ++w) wakes[w] += b.wakes[w] - a.wakes[w];
    for (std::size_t f = 0; f < by_func.size(); ++f) by_func[f] += b.time[f] - a.time[f];
  }
  std::sort(ops.begin(), ops.end());
  Json point;
  point["ops_per_s"] = window_s > 0 ? static_cast<double>(total) / window_s : 0.0;
  point["ops_total"] = total;
  point["rounds_total"] = rounds_at_end_ - rounds_at_start_;
  point["completed"] = completed_;
  // Every semop the run simulated, warm-up included: the work the benchmark divides wall time by.
  std::uint64_t simulated = 0;
  for (const auto& b : at_end_) simulated += b.semops;
  point["semops_simulated"] = simulated;
  point["window_s"] = window_s;
  point["per_task_ops"] = {
      {"min", ops.front()}, {"median", ops[(ops.size() - 1) / 2]}, {"max", ops.back()}};
  point["context_switches"] = {{"voluntary", voluntary}, {"involuntary", involuntary}};
  // Where wake-ups sent their wakees: what the placement did (unpinned tasks), and
  // which wake-up costs the window paid.
  point["wakeups"] = {{"same_cpu", wakes[0]}, {"remote_busy", wakes[1]}, {"remote_idle", wakes[2]}};

  // CPU-time breakdown over all CPUs of the window; idle is what is left.
  const double capacity = static_cast<double>(stop_ - start_) * topo_.cpus();
  std::array<double, machine::kCategoryCount> cat{};
  Tick busy = 0;
  for (int f = 0; f < machine::kFuncCount; ++f) {
    cat[static_cast<std::size_t>(machine::category_of(static_cast<machine::Func>(f)))] +=
        static_cast<double>(by_func[static_cast<std::size_t>(f)]);
    busy += by_func[static_cast<std::size_t>(f)];
  }
  Json breakdown;
  for (int c = 0; c < machine::kCategoryCount; ++c)
    breakdown[machine::category_name(static_cast<CpuCategory>(c))] =
        capacity > 0 ? cat[static_cast<std::size_t>(c)] / capacity : 0.0;
  breakdown["idle"] =
      capacity > 0 ? std::max(0.0, 1.0 - static_cast<double>(busy) / capacity) : 0.0;
  point["cpu_breakdown"] = breakdown;

  // perf-report-like profile: share of busy CPU time per kernel symbol (the
  // generation's names, inlined functions in their caller's row: kernel_symbols.hpp).
  Json profile = Json::array();
  struct Row {
    std::string symbol, stack;
    Tick t = 0;
  };
  std::vector<Row> rows;
  for (int f = 0; f < machine::kFuncCount; ++f) {
    const Tick t = by_func[static_cast<std::size_t>(f)];
    if (t == 0) continue;
    const auto func = static_cast<machine::Func>(f);
    const std::string symbol = kernel_symbol(func, sma_.policy);
    auto it =
        std::find_if(rows.begin(), rows.end(), [&](const Row& r) { return r.symbol == symbol; });
    if (it == rows.end())
      rows.push_back({symbol, kernel_stack(func, sma_.policy, kthread_), t});
    else
      it->t += t;
  }
  std::stable_sort(rows.begin(), rows.end(), [](const Row& x, const Row& y) { return x.t > y.t; });
  for (const Row& r : rows)
    profile.push_back(
        {{"function", r.symbol},
         {"stack", r.stack},
         {"cpu_ns", ticks_to_ns(r.t)},
         {"share", busy ? static_cast<double>(r.t) / static_cast<double>(busy) : 0.0}});
  point["profile"] = profile;

  Json locks = Json::array();
  locks.push_back(lock_json("sem_perm.lock (array)", sma_.array_lock->stats()));
  if (sma_.rwlock) {  // the March 2013 series' array rwlock
    locks.push_back(lock_json("array rwlock (read)", sma_.rwlock->stats().read));
    locks.push_back(lock_json("array rwlock (write)", sma_.rwlock->stats().write));
  }
  if (!sma_.sem_locks.empty()) {
    machine::LockStats sum;
    for (const auto& l : sma_.sem_locks) {
      sum.acquisitions += l->stats().acquisitions;
      sum.contended += l->stats().contended;
      sum.wait += l->stats().wait;
      sum.hold += l->stats().hold;
    }
    locks.push_back(lock_json("sem->lock (all semaphores)", sum));
  }
  for (const auto& l : workload_locks_) locks.push_back(lock_json(l.name, l.lock->stats()));
  point["locks"] = locks;
  point["lockstat"] = lockstat_table(sma_, sched_, rq_at_start_, workload_locks_);

  // The hottest cache lines by misses, with transfers by distance class.
  auto lines = sma_.lines();
  lines.insert(lines.end(), workload_lines_.begin(), workload_lines_.end());
  std::stable_sort(lines.begin(), lines.end(),
                   [](const machine::CacheLine* a, const machine::CacheLine* b) {
                     return a->stats().misses() > b->stats().misses();
                   });
  Json hot = Json::array();
  for (std::size_t i = 0; i < lines.size() && i < 8; ++i) {
    const auto& s = lines[i]->stats();
    if (s.accesses == 0) continue;
    Json transfers;
    for (int d = 1; d < machine::kDistanceClasses; ++d)
      if (s.transfers[static_cast<std::size_t>(d)])
        transfers[machine::distance_name(static_cast<machine::Distance>(d))] =
            s.transfers[static_cast<std::size_t>(d)];
    hot.push_back({{"line", lines[i]->name()},
                   {"accesses", s.accesses},
                   {"misses", s.misses()},
                   {"misses_per_op",
                    total ? static_cast<double>(s.misses()) / static_cast<double>(total) : 0.0},
                   {"queued_ns", ticks_to_ns(s.queued)},
                   {"transfers", transfers.is_null() ? Json::object() : transfers}});
  }
  point["hot_lines"] = hot;
  return point;
}

}  // namespace semsim::report
