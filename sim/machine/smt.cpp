#include "machine/smt.hpp"

#include <algorithm>
#include <cmath>

#include "machine/task.hpp"

namespace semsim::machine {

SmtCores::SmtCores(const Topology& topo)
    : factor_(topo.params().smt_compute_slowdown),
      spin_factor_(topo.params().smt_spin_slowdown >= 1 ? topo.params().smt_spin_slowdown
                                                        : topo.params().smt_compute_slowdown),
      threads_(topo.params().threads_per_core),
      cpus_(static_cast<std::size_t>(topo.cpus())) {
  active_ = threads_ > 1 && (factor_ != 1.0 || spin_factor_ != 1.0);
  if (!active_) return;
  for (int a = 0; a < topo.cpus(); ++a)
    for (int b = 0; b < topo.cpus(); ++b)
      if (a != b && topo.coords(a).core == topo.coords(b).core)
        cpus_[static_cast<std::size_t>(a)].siblings.push_back(b);
}

double SmtCores::slowdown(int busy_siblings) const {
  if (busy_siblings <= 0 || threads_ < 2) return 1.0;
  return 1.0 + (factor_ - 1.0) * busy_siblings / (threads_ - 1);
}

double SmtCores::slowdown_at(int cpu, Tick t) const {
  if (threads_ < 2) return 1.0;
  double extra = 0;
  for (int s : cpus_[static_cast<std::size_t>(cpu)].siblings)
    if (busy_at(s, t)) extra += (spinning(s) ? spin_factor_ : factor_) - 1.0;
  return 1.0 + extra / (threads_ - 1);
}

void SmtCores::set_task(int cpu, const Task* task) {
  if (active_) cpus_[static_cast<std::size_t>(cpu)].task = task;
}

bool SmtCores::spinning(int cpu) const {
  const Task* t = cpus_[static_cast<std::size_t>(cpu)].task;
  return t != nullptr && t->cpu == cpu && category_of(t->func) == CpuCategory::Spin;
}

void SmtCores::set_busy(int cpu, bool busy, Tick date, Tick now) {
  if (!active_) return;
  auto& c = cpus_[static_cast<std::size_t>(cpu)];
  auto& h = c.history;
  if (h.empty() ? !busy : h.back().second == busy) return;  // no change (idle before any entry)
  h.emplace_back(date, busy);
  // Keep the state at the earliest date a query may still ask about: now, or
  // the start of a charge in progress on a sibling (they read this history).
  Tick keep = now;
  for (int s : c.siblings) {
    const Tick r = cpus_[static_cast<std::size_t>(s)].reading_from;
    if (r >= 0) keep = std::min(keep, r);
  }
  while (h.size() >= 2 && h[1].first <= keep) h.pop_front();
}

bool SmtCores::busy_at(int cpu, Tick t) const {
  const auto& h = cpus_[static_cast<std::size_t>(cpu)].history;
  // The latest transition dated at or before t (histories are a few entries long).
  for (auto it = h.rbegin(); it != h.rend(); ++it)
    if (it->first <= t) return it->second;
  return false;
}

int SmtCores::busy_siblings(int cpu, Tick t) const {
  int k = 0;
  for (int s : cpus_[static_cast<std::size_t>(cpu)].siblings) k += busy_at(s, t) ? 1 : 0;
  return k;
}

double SmtCores::work_in(int cpu, Tick a, Tick b) const {
  if (b <= a) return 0;
  const auto& sibs = cpus_[static_cast<std::size_t>(cpu)].siblings;
  // The dates in (a, b) at which a sibling starts or stops cut the span into
  // pieces of constant rate.
  std::vector<Tick>& cuts = cuts_;  // reused: this runs at every pass of every charge
  cuts.clear();
  for (int s : sibs)
    for (const auto& [date, busy] : cpus_[static_cast<std::size_t>(s)].history)
      if (date > a && date < b) cuts.push_back(date);
  if (cuts.empty()) return static_cast<double>(b - a) / slowdown_at(cpu, a);
  std::sort(cuts.begin(), cuts.end());
  cuts.push_back(b);
  double work = 0;
  Tick from = a;
  for (Tick to : cuts) {
    if (to <= from) continue;
    work += static_cast<double>(to - from) / slowdown_at(cpu, from);
    from = to;
  }
  return work;
}

void SmtCores::charge(Task& task, Tick d) {
  auto& me = cpus_[static_cast<std::size_t>(task.cpu)];
  double left = static_cast<double>(d);
  me.reading_from = task.cursor;
  while (left >= 0.5) {
    const Tick span = std::llround(left * slowdown_at(task.cpu, task.cursor));
    if (span <= 0) break;
    task.work(span);  // returns at the span's end, after every event dated earlier
    const Tick end = task.cursor;
    left -= work_in(task.cpu, end - span, end);
    me.reading_from = end;
  }
  me.reading_from = -1;
}

void Task::charge_on_smt(Tick d) { smt->charge(*this, d); }

}  // namespace semsim::machine
