#include "machine/smt.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <string>

#include "core/errors.hpp"
#include "machine/cache_line.hpp"
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
  ++c.changes;
  if (beside(state) != beside(was)) redate_waiters(cpu, date);
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

double SmtCores::work_in(int cpu, Tick a, Tick b) const {
  if (b <= a) return 0;
  const auto& me = cpus_[static_cast<std::size_t>(cpu)];
  // The dates in (a, b) at which a sibling starts or stops cut the span into
  // pieces of constant rate.
  std::vector<Tick>& cuts = cuts_;  // reused: no allocation per answer
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

Tick SmtCores::end_of_work_walk(int cpu, Tick start, Tick work) const {
  if (work <= 0) return start;
  const auto& me = cpus_[static_cast<std::size_t>(cpu)];
  auto left = static_cast<double>(work);
  Tick from = start;
  if (me.sibling >= 0 && ordered_) {
    // One sibling, its history in date order: its dates are the cuts, already sorted.
    const auto& c = cpus_[static_cast<std::size_t>(me.sibling)];
    const auto& h = c.history;
    const std::size_t n = h.size();
    // The first entry dated after start, from the back: usually there is none.
    std::size_t i = n;
    while (i > c.first && h[i - 1].date > start) --i;
    State state = i > c.first ? h[i - 1].state : kIdle;  // idle before any entry
    if (i == n) return start + round_half_away(left * beside(state));
    for (; i < n; ++i) {
      const Tick to = h[i].date;
      if (to > from) {
        const double s = beside(state);
        const double can = static_cast<double>(to - from) / s;
        if (left <= can) return from + round_half_away(left * s);
        left -= can;
        from = to;
      }
      state = h[i].state;
    }
    return from + round_half_away(left * beside(state));
  }
  std::vector<Tick>& cuts = cuts_;
  cuts.clear();
  for (int s : me.siblings) {
    const auto& c = cpus_[static_cast<std::size_t>(s)];
    for (std::size_t i = c.first; i < c.history.size(); ++i)
      if (c.history[i].date > start) cuts.push_back(c.history[i].date);
  }
  std::sort(cuts.begin(), cuts.end());
  for (Tick to : cuts) {
    if (to <= from) continue;
    const double s = slowdown_at(cpu, from);
    const double can = static_cast<double>(to - from) / s;
    if (left <= can) return from + round_half_away(left * s);
    left -= can;
    from = to;
  }
  return from + round_half_away(left * slowdown_at(cpu, from));
}

void SmtCores::set_task(int cpu, const Task* task) {
  cpus_[static_cast<std::size_t>(cpu)].actor = task != nullptr ? task->actor : nullptr;
}

namespace {
std::uint64_t g_held_at_clock = 0;
}

std::uint64_t SmtCores::held_at_clock() { return g_held_at_clock; }

void SmtCores::redate_waiters(int cpu, Tick date) {
  for (int s : cpus_[static_cast<std::size_t>(cpu)].siblings) {
    Waiter& w = cpus_[static_cast<std::size_t>(s)].waiter;
    if (w.task == nullptr || date >= w.task->cursor || !w.task->actor->waiting()) continue;
    Task& t = *w.task;
    t.smt_redate(date);
    if (t.cursor >= w.turn) {  // later (or the same): its turn moves there
      if (t.cursor > w.turn) t.actor->postpone_turn(t.cursor);
      w.turn = t.actor->pending_turn();
      continue;
    }
    const Tick now = t.actor->now();
    if (t.cursor < now) {  // cannot happen (smt.hpp); never move a turn behind the clock
      ++g_held_at_clock;
      t.smt_hold_until(now);
    }
    w.turn = t.cursor;
    t.actor->advance_turn(w.turn);
  }
}

void Task::smt_account_out(Func f, Tick d, PieceKind kind, Tick amount) {
  smt_account(f, d, kind, amount);
}

// keep_order() out of line: smt_account() stays a leaf on its usual path (owed).
[[gnu::noinline]] void Task::smt_keep_order() { keep_order(); }

void Task::smt_redate(Tick changed) {
  // The pieces that end by the change keep their dates.
  auto p = smt_pieces.begin();
  while (p != smt_pieces.end() && p->start + p->d <= changed) ++p;
  smt_changes = smt->sibling_changes(cpu);
  if (p == smt_pieces.end()) return;
  Tick t = p->start;
  for (; p != smt_pieces.end(); ++p) {
    const Tick d = p->kind == PieceKind::Stretch ? smt->end_of_work(cpu, t, p->amount) - t
                   : p->kind == PieceKind::Until ? std::max<Tick>(0, p->amount - t)
                                                 : p->amount;
    count_time(p->func, d - p->d);
    p->d = d;
    p->start = t;
    t += d;
  }
  cursor = t;
  // What observers read of the run (semops_at(), rounds_past()), at the new dates.
  for (const SmtCount& c : smt_semop_pieces)
    if (c.index < owed_semops.size()) owed_semops[c.index] = smt_date_after(c.pieces);
  for (const SmtCount& c : smt_rounds_pieces)
    if (c.index < owed_rounds.size()) owed_rounds[c.index].date = smt_date_after(c.pieces);
}

Tick Task::smt_date_after(std::uint32_t pieces) const {
  if (pieces == 0) return smt_from;
  const SmtPiece& p = smt_pieces[pieces - 1];
  return p.start + p.d;
}

void Task::smt_hold_until(Tick t) {
  if (t <= cursor || smt_pieces.empty()) return;
  SmtPiece& p = smt_pieces.back();
  count_time(p.func, t - cursor);
  p.d += t - cursor;
  if (p.kind == PieceKind::Fixed) p.amount = p.d;
  cursor = t;
}

void Task::smt_settle() {
  if (smt->sibling_changes(cpu) != smt_changes) smt_redate(smt_from - 1);
  if (actor->shortcut(cursor)) {
    actor->wait_turn(cursor);  // nothing runs before it: nothing re-dates the run
  } else {
    smt->wait_on(cpu, this, cursor);
    for (;;) {
      actor->wait_turn(cursor);  // moved if a sibling's change re-dated the run (redate_waiters())
      if (cursor <= actor->now()) break;
      smt->wait_on(cpu, this, cursor);  // later, where its turn was not postponed
    }
    smt->done_waiting(cpu);
  }
  if (!smt_reads.empty()) smt_check_reads();
  smt_close();
}

namespace {
std::uint64_t g_run_read_aheads = 0;
}  // namespace

std::uint64_t run_read_aheads() { return g_run_read_aheads; }

void Task::read_ahead_in_run(CacheLine& line, Tick hit) {
  ++g_run_read_aheads;
  smt_reads.push_back({&line, line.writes(), cursor, actor->read_ahead_barrier(),
                       static_cast<std::uint32_t>(smt_pieces.size())});
  // No interruption to pay in the wait: may_read_ahead() leaves out CPUs that could have one.
  owe_turns = true;
  account(func, hit, PieceKind::Fixed);
  owe_turns = false;
}

// The strict order reads the line at the read's final date D, after every request
// dated earlier. What the read ahead saw differs from that only if a write to the
// line is dated between its first date and D (the line itself throws for one dated
// no later than the first date), or D lies past the observer's turn that counted the
// read: either is a conflict, and the run is done again in strict order. The writes
// since the read came in date order: the first is the earliest, known when it is
// the only one (else counted as a conflict, which only costs the run again). From
// here the line serves no write dated at or before D without a conflict, as for a
// read ahead at a final date.
void Task::smt_check_reads() {
  for (const RunRead& r : smt_reads) {
    const Tick date = smt_date_after(r.pieces);
    const std::uint64_t since = r.line->writes() - r.writes;
    if (date >= r.barrier ||
        (since > 1 ? date > r.date : since == 1 && r.line->last_write() <= date))
      throw ReadAheadConflict("read-ahead in an SMT run: line '" + r.line->name() + "' read at " +
                              std::to_string(ticks_to_ns(r.date)) + " ns, re-dated to " +
                              std::to_string(ticks_to_ns(date)) +
                              " ns, past a write or the observer's turn");
    r.line->mark_read_through(date);
  }
  smt_reads.clear();
}

void Task::note_spin(bool spin) {
  // A task unwound at the end of a run (InFunc's destructor) leaves the history as
  // it is: nothing reads it any more, and its cursor may be behind the clock.
  if (std::uncaught_exceptions() > 0) return;
  // Its siblings read the date: the work before it is dated first (a turn), unless
  // no sibling can change before it (SmtCores::settled_through()). Also owed work
  // outside a run, final as it is: the turn is where the IPIs posted meanwhile are
  // paid (keep_order()); skipping it there moved 3 of the 109 golden outputs.
  if (turn_owed() && actor != nullptr && actor->running() && !smt->settled_through(cpu, cursor))
    keep_order();
  smt->set_spinning(cpu, spin, cursor);
}

}  // namespace semsim::machine
