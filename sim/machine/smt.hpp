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
// Spin function (InFunc) marks it at its cursor, so a pass integrates both states over its span.
//
// Time order: a charge covers a span of simulated time in which a sibling may
// start or stop, so each CPU keeps a dated history of its busy/idle
// transitions (as a cache line keeps the dates of its copies): a wake-up onto
// an idle CPU dates its start after the wake-up latency, so whether a task is
// on a CPU "now" is not its state at every date. A charge runs in passes: a
// pass charges the work left at the rate its siblings' state at the pass's
// start gives; when the task's turn at the pass's end comes, every event dated
// earlier has run and the history of the span is final, so the work the span
// actually did is read from it, and what is left is the next pass. A sibling
// that starts (or starts spinning) during a pass is accounted exactly that way.
// One that stops (or stops spinning) during a pass that assumed it busy
// (spinning) ends the pass sooner: its step, at the stop's date, works out from
// the history when the work is done at the new rate and moves the waiting task's
// turn there (end_passes_sooner(), core::Actor::advance_turn()), and the task
// takes back the part of the span past it (Task::account_to_turn()). That is
// exact while nothing is dated past the stop on the core; otherwise (a wake-up
// announced for a later date) the pass keeps its end, up to (1 - 1/slowdown) of
// its length too long (time cannot be given back once the clock has passed it).
// A pass pays the interruptions that land in its estimated span first
// (Task::interrupts_in()), so one that ends sooner has paid those dated past its
// new end a little early (an assumption: the presets with SMT have no OS noise).
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

#include "core/time.hpp"
#include "machine/topology.hpp"

namespace semsim::machine {

struct Task;

// std::llround(x), without the library call a charge's every pass made: for
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
  // CPU `cpu` runs a task from `date` (busy) or is idle from `date`; `now` is
  // the caller's date (no later query starts before it, nor before a sibling's
  // charge in progress: older history is dropped).
  void set_busy(int cpu, bool busy, Tick date, Tick now);
  // The task on busy CPU `cpu` starts (or stops) spinning on a lock at `date`, its
  // cursor: the history dates it, as it dates the busy state.
  void set_spinning(int cpu, bool spin, Tick date);
  // Work that takes `d` on a core of its own, done by `task` on its CPU
  // (Task::charge() comes here when the task's CPU has siblings).
  void charge(Task& task, Tick d);

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
  // A pass in progress: its task waits for its turn at `end`, the date that
  // `left` work (alone-time) from `start` takes at the rate the pass assumed.
  struct Pass {
    Task* task = nullptr;
    Tick start = 0;
    double left = 0;
    Tick end = 0;
  };
  struct Cpu {
    // (date, state from then) in [first, size()): a vector trimmed from the
    // front by an index (compacted now and then), not a deque: a pass reads
    // its sibling's latest entries, one cache line instead of a deque's map.
    std::vector<Change> history;
    std::size_t first = 0;
    std::vector<int> siblings;  // the other hardware threads of its core
    int sibling = -1;           // the only one (cores of 2 threads), else -1
    Tick reading_from = -1;     // start of a charge in progress (-1: none)
    Pass pass;                  // the pass its task waits to end (task nullptr: none)
  };
  State state_at(int cpu, Tick t) const;
  // Does a sibling of `cpu` have a transition dated after t?
  bool changes_after(int cpu, Tick t) const;
  // `cpu` became less busy at `date`: the passes its siblings wait on end sooner.
  void end_passes_sooner(int cpu, Tick date);
  bool busy_at(int cpu, Tick t) const { return state_at(cpu, t) != kIdle; }
  void push(int cpu, State s, Tick date, Tick now);
  // A busy sibling's weight: 1 + (factor - 1) / (threads - 1), computing or spinning.
  double beside(State s) const {
    return s == kIdle ? 1.0 : s == kSpin ? beside_spin_ : beside_busy_;
  }
  // slowdown_at() of a CPU with one sibling: no loop, the factors precomputed.
  double slowdown_beside(int sibling, Tick t) const;
  // work_in() of a CPU with one sibling whose history is in date order: one
  // walk of it (its dates are the cuts, already sorted).
  double work_beside(int sibling, Tick a, Tick b) const;
  bool active_ = false;
  // Every history so far in date order (a transition is never dated before the
  // one it follows): work_beside() relies on it, else work_in() cuts and sorts.
  bool ordered_ = true;
  double factor_ = 1.0;
  double spin_factor_ = 1.0;
  // slowdown_at()'s answers beside one busy sibling, computing or spinning:
  // 1 + (f - 1) / (threads - 1), the same doubles as its sum 0 + (f - 1).
  double beside_busy_ = 1.0;
  double beside_spin_ = 1.0;
  int threads_ = 1;
  std::vector<Cpu> cpus_;
  mutable std::vector<Tick> cuts_;  // work_in()'s scratch (no allocation per pass)
};

}  // namespace semsim::machine
