// SMT: the hardware threads of one core share its execution resources.
//
// While the other hardware threads of its core are busy (a task is on them,
// computing or spinning), a thread's compute-bound work takes longer:
// `smt_compute_slowdown` times (machine file) when every sibling is busy,
// proportionally less when only some are (cores of more than 2 threads):
// slowdown(k) = 1 + (smt_compute_slowdown - 1) * k / (threads_per_core - 1).
//
// What is stretched: Task::charge(), work made of instructions (kernel paths,
// a critical section's loop, context switches). What is not: Task::advance_to()
// waits -- spinning on a shared copy, a stall on a cache-line transfer or a
// memory fetch, an atomic's line transfer -- whose length is set by the
// interconnect and the other cores, not by this core's issue slots (a thread
// stalled on a miss leaves the core to its sibling: that is what SMT is for).
//
// Beside a spinner: while a sibling's task is spinning on a lock (it is in a
// lock's acquisition: Func::RawSpinLock / RawReadLock / RawWriteLock, the Spin
// category), its weight is `smt_spin_slowdown` instead of
// `smt_compute_slowdown`: a spin loop re-issues its loads or locked RMWs of
// the lock's line back to back (with PAUSE in libslock's loops), competing for
// the core's load/store ports and for the line in the shared L1, so the holder
// beside it -- its critical section -- slows down by a factor of its own
// (calibrated on the published Westmere-EX MCS curve above 80 threads: 2.0 on
// westmere-ex-160, the same for every machine; unset, it is
// smt_compute_slowdown: cpu_models/README.md, westmere-ex-160). With k busy siblings of which some
// spin, slowdown = 1 + sum over busy siblings of (factor - 1) / (threads_per_core - 1). Whether a
// sibling spins is dated in its history like whether it is busy: its task entering or leaving a
// Spin function (InFunc) marks it at its cursor, so work is dated through both states.
//
// Time order: work covers a span of simulated time in which a sibling may
// start or stop, so each CPU keeps a dated history of its transitions (idle,
// busy, spinning; as a cache line keeps the dates of its copies): a wake-up onto
// an idle CPU dates its start after the wake-up latency, so whether a task is on
// a CPU "now" is not its state at every date. Work of W (alone-time) from date s
// ends at end_of_work(cpu, s, W): the date by which the history's rates have done
// W. A task's work between two turns is a run of pieces (Task::SmtPiece: work
// stretched at the history's rate, waits of fixed length, waits until a date);
// while it runs, the pieces are dated from the history as known, and the turn is
// owed as on a core of its own (machine/task.hpp). A run opens at the first piece
// that could still move: before it, a wait is final as dated (its start is, its
// length does not read the history), and so is work that ends before every
// sibling's pending turn (settled_through(): a busy CPU changes state only at its
// own task's steps); those are owed work as on a core without SMT, without the
// run's bookkeeping. When it takes the turn, it waits
// for the date its run ends; a sibling that changes state at a date before that
// end while it waits re-dates the whole run from the history (Task::smt_redate(),
// from push()): its turn moves sooner (core::Actor::advance_turn()) or later
// (core::Actor::postpone_turn(): the turn it had does not run it only to wait
// again, a hand-off there and back). A later turn is also what its siblings'
// settled_through() reads, so they read ahead past the old one. When the turn
// comes every event dated
// earlier has run, the siblings' history of the run is final, and so are the
// run's dates: the same arithmetic on the same history, whether the turn was a
// shortcut or queued (the reference mode).
// Why a re-dated run never goes before the clock: a sibling changes state only at
// a step of its own (or of a waker) dated at or after the clock -- a task dates its
// own entry into or exit from a spin at a turn (Task::note_spin()) -- so the run
// has work left at that date, and what is left ends after it (held_at_clock()
// counts the contrary; the equivalence tests hold it at 0).
// What the dates of a run do not change: the task's own decisions between two
// turns (how many fill buffers a load finds busy, machine/mlp.hpp) and the OS
// noise and IPIs its pieces meet (machine/ipi_queue.hpp: late by at most the
// private work since the last turn, the same assumption) are taken at the dates
// the history known when it ran gave. Its shared steps -- every line request,
// lock, scheduler call -- take the turn first, at the final date; a kernel load
// that hits a quiet line may instead go ahead inside the run, as a piece of it,
// checked at the run's turn (machine/task.hpp, "Read-ahead in a run"), except on
// a CPU with OS noise or an IPI to pay: skipping the turn would leave the history
// its later pieces meet interruptions at older than the strict order's.
// Cost: a run takes one turn, at its shared step, as on a core without SMT
// (before: a turn per charge, 25 hand-offs per semop on the laptop-4 bench case
// against 11; validation/bench-speed.md).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/simulation.hpp"
#include "core/time.hpp"
#include "machine/topology.hpp"

namespace semsim::machine {

struct Task;

// std::llround(x), without the library call every piece of work made: for
// 0 <= x < 2^52, trunc(x) and x - trunc(x) are exact in doubles (Sterbenz), so
// adding 1 when that fraction is at least one half is llround's half away from
// zero; anything else (negative, huge, NaN) goes to std::llround.
inline long long round_half_away(double x) {
  if (x >= 0 && x < 4503599627370496.0) {
    const auto t = static_cast<long long>(x);
    return t + (x - static_cast<double>(t) >= 0.5 ? 1 : 0);
  }
  return std::llround(x);
}

class SmtCores {
 public:
  explicit SmtCores(const Topology& topo);
  // Off on cores of one thread and with a slowdown of 1: then nothing is recorded.
  bool active() const { return active_; }
  // The most any history stretches work: every sibling busy at the larger factor.
  double max_slowdown() const { return std::max({1.0, factor_, spin_factor_}); }
  // CPU `cpu` runs a task from `date` (busy) or is idle from `date`; `now` is
  // the caller's date (no later query starts before it, nor before a sibling's
  // charge in progress: older history is dropped).
  void set_busy(int cpu, bool busy, Tick date, Tick now);
  // The task on busy CPU `cpu` starts (or stops) spinning on a lock at `date`, its
  // cursor: the history dates it, as it dates the busy state.
  void set_spinning(int cpu, bool spin, Tick date);
  // When work that takes `work` on a core of its own, started at `start` on
  // `cpu`, is done, at the rates the siblings' history gives (its last state
  // lasting).
  // Inline: every piece of work asks it; its usual answer, a sibling whose
  // latest change is dated by `start`, needs no walk.
  Tick end_of_work(int cpu, Tick start, Tick work) const {
    const Cpu& me = cpus_[static_cast<std::size_t>(cpu)];
    if (me.sibling >= 0 && ordered_ && work > 0) {
      const Cpu& c = cpus_[static_cast<std::size_t>(me.sibling)];
      if (c.first == c.history.size()) return start + work;  // idle: no entry yet
      const Change& last = c.history.back();
      if (last.date <= start)
        return start + round_half_away(static_cast<double>(work) * beside(last.state));
    }
    return end_of_work_walk(cpu, start, work);
  }
  // How many times the siblings' histories of `cpu` have changed: dates taken at
  // one count hold while it stays.
  std::uint64_t sibling_changes(int cpu) const {
    const auto& c = cpus_[static_cast<std::size_t>(cpu)];
    if (c.sibling >= 0) return cpus_[static_cast<std::size_t>(c.sibling)].changes;
    std::uint64_t n = 0;
    for (int s : c.siblings) n += cpus_[static_cast<std::size_t>(s)].changes;
    return n;
  }
  // The task on `cpu` has a run of work dated from `from` (-1: none): the
  // siblings keep their history from then.
  void reading(int cpu, Tick from) { cpus_[static_cast<std::size_t>(cpu)].reading_from = from; }
  // `task` (on `cpu`) waits for its turn at `turn` with its run not yet final: a
  // sibling's change dated before the run's end re-dates it. done_waiting() when
  // the turn came.
  void wait_on(int cpu, Task* task, Tick turn) {
    cpus_[static_cast<std::size_t>(cpu)].waiter = {task, turn};
  }
  void done_waiting(int cpu) { cpus_[static_cast<std::size_t>(cpu)].waiter.task = nullptr; }
  // The task on `cpu` (nullptr: none), as the scheduler sets it.
  void set_task(int cpu, const Task* task);
  // Is the history of `cpu`'s siblings final through date `t`: is each one's task
  // waiting for a turn dated after t? A busy CPU changes state only at its own
  // task's steps, so nothing can be pushed before that turn: a run of `cpu`'s work
  // is final up to t, and dated from the same history as a run that started at t
  // (what a read ahead of the turn needs, machine/task.hpp). An idle sibling, or
  // one whose task is parked, settles nothing.
  // Inline: every read ahead and every piece of work outside a run asks it.
  bool settled_through(int cpu, Tick t) const {
    const Cpu& me = cpus_[static_cast<std::size_t>(cpu)];
    if (me.sibling >= 0) return turn_after(cpus_[static_cast<std::size_t>(me.sibling)], t);
    for (int s : me.siblings)
      if (!turn_after(cpus_[static_cast<std::size_t>(s)], t)) return false;
    return true;
  }
  // Re-datings that would have put a run before the clock, and were held at it
  // (process-wide; the header says why none should happen: the tests check it).
  static std::uint64_t held_at_clock();

  // The history's answers (for tests): how many siblings of `cpu` are busy at
  // `t`, and the work (in alone-time) a thread of `cpu` does in [a, b).
  int busy_siblings(int cpu, Tick t) const;
  double work_in(int cpu, Tick a, Tick b) const;
  double slowdown(int busy_siblings) const;
  // The slowdown of `cpu`'s work at t: its busy siblings, spinning ones at the spin factor.
  double slowdown_at(int cpu, Tick t) const;

 private:
  // A CPU's state from a date on: idle, busy computing, busy spinning on a lock.
  enum State : std::uint8_t { kIdle, kBusy, kSpin };
  struct Change {
    Tick date;
    State state;  // from then on
  };
  // A task waiting for its turn with its run not yet final (wait_on()).
  struct Waiter {
    Task* task = nullptr;
    Tick turn = 0;
  };
  struct Cpu {
    // (date, state from then) in [first, size()): a vector trimmed from the
    // front by an index (compacted now and then), not a deque: a run reads
    // its sibling's latest entries, one cache line instead of a deque's map.
    std::vector<Change> history;
    std::size_t first = 0;
    std::vector<int> siblings;           // the other hardware threads of its core
    int sibling = -1;                    // the only one (cores of 2 threads), else -1
    Tick reading_from = -1;              // start of its task's run of work not yet final (-1: none)
    Waiter waiter;                       // its task waiting for its turn (task nullptr: none)
    const core::Actor* actor = nullptr;  // its current task's (set_task(); nullptr: none)
    std::uint64_t changes = 0;           // transitions pushed so far
  };
  // Does the task on CPU c wait for a turn dated after t (an idle CPU, or a
  // parked or running task, does not)?
  static bool turn_after(const Cpu& c, Tick t) {
    return c.actor != nullptr && c.actor->pending_turn() > t;
  }
  State state_at(int cpu, Tick t) const;
  Tick end_of_work_walk(int cpu, Tick start, Tick work) const;  // end_of_work() through the changes
  // `cpu` changed state at `date`: the runs its siblings wait with are re-dated.
  void redate_waiters(int cpu, Tick date);
  bool busy_at(int cpu, Tick t) const { return state_at(cpu, t) != kIdle; }
  void push(int cpu, State s, Tick date, Tick now);
  // A busy sibling's weight: 1 + (factor - 1) / (threads - 1), computing or spinning.
  double beside(State s) const {
    return s == kIdle ? 1.0 : s == kSpin ? beside_spin_ : beside_busy_;
  }
  // slowdown_at() of a CPU with one sibling: no loop, the factors precomputed.
  double slowdown_beside(int sibling, Tick t) const;
  bool active_ = false;
  // Every history so far in date order (a transition is never dated before the
  // one it follows): end_of_work() walks it, else it cuts and sorts.
  bool ordered_ = true;
  double factor_ = 1.0;
  double spin_factor_ = 1.0;
  // slowdown_at()'s answers beside one busy sibling, computing or spinning:
  // 1 + (f - 1) / (threads - 1), the same doubles as its sum 0 + (f - 1).
  double beside_busy_ = 1.0;
  double beside_spin_ = 1.0;
  int threads_ = 1;
  std::vector<Cpu> cpus_;
  mutable std::vector<Tick> cuts_;  // scratch of work_in() and end_of_work() (no allocation each)
};

}  // namespace semsim::machine
