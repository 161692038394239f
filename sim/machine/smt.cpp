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
  beside_busy_ = slowdown(1);
  beside_spin_ = 1.0 + (spin_factor_ - 1.0) / (threads_ - 1);
  for (int a = 0; a < topo.cpus(); ++a) {
    auto& c = cpus_[static_cast<std::size_t>(a)];
    for (int b = 0; b < topo.cpus(); ++b)
      if (a != b && topo.coords(a).core == topo.coords(b).core) c.siblings.push_back(b);
    if (c.siblings.size() == 1) c.sibling = c.siblings.front();
  }
}

double SmtCores::slowdown(int busy_siblings) const {
  if (busy_siblings <= 0 || threads_ < 2) return 1.0;
  return 1.0 + (factor_ - 1.0) * busy_siblings / (threads_ - 1);
}

double SmtCores::slowdown_beside(int sibling, Tick t) const { return beside(state_at(sibling, t)); }

double SmtCores::slowdown_at(int cpu, Tick t) const {
  if (threads_ < 2) return 1.0;
  const auto& c = cpus_[static_cast<std::size_t>(cpu)];
  if (c.sibling >= 0) return slowdown_beside(c.sibling, t);
  double extra = 0;
  for (int s : c.siblings) {
    const State st = state_at(s, t);
    if (st != kIdle) extra += (st == kSpin ? spin_factor_ : factor_) - 1.0;
  }
  return 1.0 + extra / (threads_ - 1);
}

void SmtCores::set_busy(int cpu, bool busy, Tick date, Tick now) {
  if (!active_) return;
  push(cpu, busy ? kBusy : kIdle, date, now);
}

void SmtCores::set_spinning(int cpu, bool spin, Tick date) {
  if (!active_) return;
  const auto& c = cpus_[static_cast<std::size_t>(cpu)];
  if (c.first == c.history.size() || c.history.back().state == kIdle) return;
  push(cpu, spin ? kSpin : kBusy, date, date);
}

void SmtCores::push(int cpu, State state, Tick date, Tick now) {
  auto& c = cpus_[static_cast<std::size_t>(cpu)];
  auto& h = c.history;
  const bool empty = c.first == h.size();
  if (empty ? state == kIdle : h.back().state == state)
    return;  // no change (idle before any entry)
  if (!empty && date < h.back().date) ordered_ = false;
  const State was = empty ? kIdle : h.back().state;
  h.push_back({date, state});
  if (beside(state) < beside(was)) end_passes_sooner(cpu, date);
  // Keep the state at the earliest date a query may still ask about: now, or
  // the start of a charge in progress on a sibling (they read this history).
  Tick keep = now;
  for (int s : c.siblings) {
    const Tick r = cpus_[static_cast<std::size_t>(s)].reading_from;
    if (r >= 0) keep = std::min(keep, r);
  }
  while (h.size() - c.first >= 2 && h[c.first + 1].date <= keep) ++c.first;
  // Compact once the dropped front outgrows the few live entries.
  if (c.first >= 16 && c.first * 2 >= h.size()) {
    h.erase(h.begin(), h.begin() + static_cast<std::ptrdiff_t>(c.first));
    c.first = 0;
  }
}

SmtCores::State SmtCores::state_at(int cpu, Tick t) const {
  const auto& c = cpus_[static_cast<std::size_t>(cpu)];
  // The latest transition dated at or before t (histories are a few entries long).
  for (std::size_t i = c.history.size(); i > c.first; --i)
    if (c.history[i - 1].date <= t) return c.history[i - 1].state;
  return kIdle;
}

int SmtCores::busy_siblings(int cpu, Tick t) const {
  int k = 0;
  for (int s : cpus_[static_cast<std::size_t>(cpu)].siblings) k += busy_at(s, t) ? 1 : 0;
  return k;
}

// work_in()'s general loop below, for one sibling with dates in order: its
// transitions in (a, b) are the cuts in order, and the state a piece starts in
// (busy_at(sibling, from): the latest transition at or before it) is the one
// the walk has reached. Pieces and their sum in the same order: the same double.
double SmtCores::work_beside(int sibling, Tick a, Tick b) const {
  const auto& c = cpus_[static_cast<std::size_t>(sibling)];
  const auto& h = c.history;
  const std::size_t n = h.size();
  // The whole span in one state (no transition after a): the common case.
  if (n == c.first || h[n - 1].date <= a)
    return static_cast<double>(b - a) / slowdown_beside(sibling, a);
  std::size_t i = c.first;
  State state = kIdle;  // idle before any entry
  for (; i < n && h[i].date <= a; ++i) state = h[i].state;
  double work = 0;
  Tick from = a;
  for (; i < n && h[i].date < b; ++i) {
    const Tick to = h[i].date;
    if (to > from) {
      work += static_cast<double>(to - from) / beside(state);
      from = to;
    }
    state = h[i].state;
  }
  return work + static_cast<double>(b - from) / beside(state);
}

double SmtCores::work_in(int cpu, Tick a, Tick b) const {
  if (b <= a) return 0;
  const auto& me = cpus_[static_cast<std::size_t>(cpu)];
  if (me.sibling >= 0 && ordered_) return work_beside(me.sibling, a, b);
  // The dates in (a, b) at which a sibling starts or stops cut the span into
  // pieces of constant rate.
  std::vector<Tick>& cuts = cuts_;  // reused: this runs at every pass of every charge
  cuts.clear();
  for (int s : me.siblings) {
    const auto& c = cpus_[static_cast<std::size_t>(s)];
    for (std::size_t i = c.first; i < c.history.size(); ++i)
      if (c.history[i].date > a && c.history[i].date < b) cuts.push_back(c.history[i].date);
  }
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
  task.pay_turn();
  auto& me = cpus_[static_cast<std::size_t>(task.cpu)];
  double left = static_cast<double>(d);
  me.reading_from = task.cursor;
  // Each pass is listed while the task waits for its end, so that a sibling that
  // stops can end it sooner (end_passes_sooner()); unlisted when the charge ends,
  // or the run unwinds it. Not for a charge made on another task's behalf.
  struct Listed {
    Pass& pass;
    ~Listed() { pass.task = nullptr; }
  } listed{me.pass};
  const bool own = task.actor != nullptr && task.actor->running();
  while (left >= 0.5) {
    const Tick span = round_half_away(left * slowdown_at(task.cpu, task.cursor));
    if (span <= 0) break;
    task.interrupts_in(span);
    const Tick start = task.cursor;
    if (own) me.pass = {&task, start, left, start + span};
    // Returns at the span's end, after every event dated earlier, or sooner if a
    // sibling stopped meanwhile.
    const Tick end = task.account_to_turn(span);
    left -= work_in(task.cpu, start, end);
    me.reading_from = end;
  }
  me.reading_from = -1;
}

bool SmtCores::changes_after(int cpu, Tick t) const {
  for (int s : cpus_[static_cast<std::size_t>(cpu)].siblings) {
    const auto& h = cpus_[static_cast<std::size_t>(s)];
    for (std::size_t i = h.first; i < h.history.size(); ++i)
      if (h.history[i].date > t) return true;
  }
  return false;
}

void SmtCores::end_passes_sooner(int cpu, Tick date) {
  for (int s : cpus_[static_cast<std::size_t>(cpu)].siblings) {
    Pass& p = cpus_[static_cast<std::size_t>(s)].pass;
    if (p.task == nullptr || !p.task->actor->waiting()) continue;
    const Tick from = std::max(date, p.start);
    if (changes_after(s, from)) continue;  // its rate past `from` is not known yet
    const double rest = p.left - work_in(s, p.start, from);
    // Never before the clock: this may run in an InFunc's destructor, where a
    // time-order error could not be thrown.
    const Tick end =
        std::max(from + std::max<Tick>(0, round_half_away(rest * slowdown_at(s, from))),
                 p.task->actor->now());
    if (end >= p.end) continue;
    p.end = end;
    p.task->actor->advance_turn(end);
  }
}

void Task::charge_on_smt(Tick d) { smt->charge(*this, d); }

void Task::note_spin(bool spin) { smt->set_spinning(cpu, spin, cursor); }

}  // namespace semsim::machine
