// The SimGrid adapter: the only part of semsim that sees SimGrid.
//
// A Simulation owns one SimGrid engine and the simulated tasks (fibers run by
// one SimGrid actor, see below). Model code talks to it through two small types:
//   Simulation: spawn tasks, run to completion, read the clock, set timers;
//   Actor:      what a task's body may do: read the clock, wait for its turn
//               at a date, park on its own token, be unparked (now or later).
//
// Time order (the invariant every shared resource of the model rests on):
//   Exactly one actor runs at a time, and it runs only while its date is
//   earlier than every pending event. Pending events live in one calendar,
//   ordered by date, and at one date callbacks, then wakes (each in the
//   order they were made), then the actors' turns by actor id
//   (core/calendar.hpp: it must not depend on when a turn was queued, for
//   read-ahead below). The order is a function of the model alone,
//   never of SimGrid's internals, addresses or wall time. The running actor's
//   date is its task's cursor: model code
//   calls wait_turn(date) before it touches shared state at a new date
//   (machine/task.hpp: after every charge, or, for work on the task's own
//   state, before its next shared step: an owed turn), and wait_turn()
//   returns at once while date < horizon() (the earliest pending event).
//   Otherwise the actor is queued at its date
//   and the earliest event runs first. Hence every read or write of shared
//   state happens after every event of an earlier date and before every event
//   of a later one: cache lines, locks, run queues and wait queues serve
//   requests in the order of their simulated dates, by construction.
//
//   Reference mode (set_reference_order) takes the queue on every wait_turn(),
//   never the shortcut; results are byte-identical to the fast path, which the
//   tests check on every generation and workload.
//
//   Read-ahead (set_read_ahead, machine/task.hpp): the one exception to the
//   rule above. A task may read a quiet cache line it holds before its turn,
//   ahead of events of an earlier date, when the line itself can tell
//   afterwards whether that was wrong (a write dated no later than the read:
//   ReadAheadConflict, and the run is done again without read-ahead). Until
//   its next turn such a task schedules nothing (push() checks it), so the
//   events the others make keep their order, and its next turn comes out of
//   the calendar at the same place as in strict order (ties do not depend on
//   when an event was made). No task reads ahead to or past the date of an
//   observer's turn (spawn_observer(): what it reads -- line statistics, a
//   window's edges -- it sees as in strict order).
//
// How a hand-off happens (a project decision: the speed target):
//   every simulated task is a user-space fiber (boost.context, fcontext) with
//   its own stack, and all of them run inside ONE SimGrid actor, which hosts
//   the run. A hand-off is a direct fiber switch from the running task to the
//   task of the earliest calendar event (tens of ns), not a round through
//   SimGrid's maestro (a semaphore release/acquire, about 0.4 us). Exactly one
//   task runs at a time because fibers only switch where the calendar says
//   (queue_turn(), park(), a task's end), so the order above is unchanged.
//   SimGrid's own clock, CPU model, timers and synchronisation are not used,
//   so there is no process-global timer to outlive a run.
//
// Traps handled here (design section 4): every task body is guarded, so an
// exception inside the simulation stops it and is rethrown by run(), never an
// abort (nothing crosses a fiber boundary: the task's own frame catches it);
// a deadlock (every task left parked, no pending event) becomes a
// SimulationError; tasks still suspended when the run ends (stop_all(), an
// error, a deadlock) are unwound on their own stacks, so their RAII runs; the
// engine's logging and SIGINT disposition are set before each engine; a run
// whose clock stops moving (kNoProgressTurns turns at one date) ends with a
// SimulationError instead of spinning for ever.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/time.hpp"

namespace semsim::core {

class Simulation;
class Actor;

// Cumulative over every Simulation of this process (for benchmarks): hand-offs
// between tasks (a fiber switch each) and turns taken by the inline shortcut
// (no switch).
struct EngineCounters {
  std::uint64_t handoffs = 0, shortcuts = 0;
};
EngineCounters engine_counters();

// The part of the calendar that the hot path reads inline.
struct ClockState {
  static constexpr Tick kNever = std::numeric_limits<Tick>::max();
  Tick now = 0;                    // date of the latest event or turn taken
  Tick horizon = kNever;           // date of the earliest pending event
  Tick barrier = kNever;           // date of the observer's pending turn (read-ahead stops short)
  bool read_ahead = false;         // read-ahead is on for this run
  bool ahead = false;              // the running actor read ahead since its last turn
  const Actor* current = nullptr;  // the actor running now (nullptr: none)
  bool reference = false;          // reference mode: no shortcut in wait_turn()
  std::uint64_t at_now = 0;        // turns and events at `now` since it last moved
  std::uint64_t shortcuts = 0;     // turns taken without the calendar
};

class Actor {
 public:
  Actor(const Actor&) = delete;
  Actor& operator=(const Actor&) = delete;
  ~Actor();

  Tick now() const { return clock_->now; }
  // Is this the actor running now (the one whose model code executes)?
  bool running() const { return clock_->current == this; }
  // Return once every event dated before `date` has run (and every event of
  // the same date that comes before this actor's turn there, see the header);
  // the clock then reads max(now, date). Inline: the shortcut is the
  // simulator's hottest path.
  void wait_turn(Tick date) {
    ClockState& c = *clock_;
    if (!c.reference && date < c.horizon) {
      ++c.shortcuts;
      if (date > c.now) {
        c.now = date;
        c.at_now = 0;
      } else if (++c.at_now > kNoProgressTurns) {
        no_progress();
      }
      return;
    }
    queue_turn(date);
  }
  // Would wait_turn(date) return at once, with no event run before it (not in
  // reference mode, whose queued turn comes first all the same)?
  bool shortcut(Tick date) const { return !clock_->reference && date < clock_->horizon; }
  // Is the run in reference mode (every turn queued, none skipped: see the header)?
  bool reference_order() const { return clock_->reference; }
  // May the running actor read ahead at `date` (see the header)? Only with
  // read-ahead on, never in reference mode, only where the turn would queue
  // (date >= horizon: otherwise it is a shortcut, which costs nothing), and
  // before the observer's next turn.
  bool may_read_ahead(Tick date) const {
    const ClockState& c = *clock_;
    return c.read_ahead && !c.reference && date >= c.horizon && date < c.barrier;
  }
  // The running actor read ahead: until its next turn it must schedule nothing.
  void note_read_ahead() { clock_->ahead = true; }
  // The date no read may go ahead to: the observer's pending turn.
  Tick read_ahead_barrier() const { return clock_->barrier; }
  // Is it waiting in wait_turn() for a turn (not running, not parked)?
  bool waiting() const;
  // The date of the turn it waits for (waiting()), else -1. Inline: every
  // read ahead on an SMT core asks it of its siblings (machine/smt.hpp).
  Tick pending_turn() const { return pending_; }
  // Move its pending turn earlier, to `date` (no earlier than the clock): called
  // by the running actor's step when what the waiting one waits for ends sooner
  // (machine/smt.hpp: a sibling stops during a pass). Its wait_turn() then
  // returns at `date`, and now() tells it so. No effect unless it is waiting
  // for a later turn. The old turn stays in the calendar and is skipped.
  void advance_turn(Tick date);
  // Move its pending turn later, to `date` (machine/smt.hpp: a sibling's change
  // re-dated the run it waits to end): the turn it had would only find that it
  // must wait again, a hand-off there and back for nothing. Its turn event stays
  // where it is and moves to `date` when it comes out, without a hand-off (no
  // event is scheduled now: a running actor that read ahead may call it). No
  // effect unless it is waiting for an earlier turn.
  void postpone_turn(Tick date);
  // The same as wait_turn() (the name SimGrid's vocabulary gave it).
  void sleep_until(Tick date) { wait_turn(date); }
  // Block until unparked. Each unpark() lets exactly one park() return.
  void park();
  // Let a park() of this actor return now (called by another actor).
  void unpark();
  // Let a park() of this actor return at a future date (a kernel timer event).
  void unpark_at(Tick date);
  int id() const { return id_; }
  // The simulation this actor belongs to (e.g. to schedule a timer with at()).
  Simulation& simulation() const { return sim_; }

 private:
  friend class Simulation;
  struct Impl;
  // Turns at one date after which the run is declared stuck (a model whose
  // costs round to zero ticks loops without moving the clock).
  static constexpr std::uint64_t kNoProgressTurns = 50'000'000;
  Actor(Simulation& sim, int id, ClockState* clock);
  void queue_turn(Tick date);
  [[noreturn]] void no_progress() const;
  Simulation& sim_;
  int id_;
  bool observer_ = false;  // its turns are the read-ahead barrier
  // pending_turn(): the date of its turn while it waits (it starts waiting for one
  // at 0), -1 from when it runs (core/simulation.cpp, dispatch()).
  Tick pending_ = 0;
  ClockState* clock_;
  std::unique_ptr<Impl> impl_;
};

class Simulation {
 public:
  Simulation();
  ~Simulation();
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  // Register a task (before run()); its body runs when run() is called. Tasks
  // start at date 0 in the order they were spawned.
  Actor& spawn(const std::string& name, std::function<void(Actor&)> body);
  // The same for an observer: a task that looks at the model (a timekeeper, a
  // watchdog) and whose pending turn no task reads ahead to (see the header).
  // At most one per simulation.
  Actor& spawn_observer(const std::string& name, std::function<void(Actor&)> body);
  // Schedule a callback at a date (runs between actors' turns; it may unpark actors).
  void at(Tick date, std::function<void()> callback);
  // Run until every task has returned, or stop_all() was called. Rethrows the
  // first exception raised by a task; a deadlock is a SimulationError.
  void run();
  // End the simulation now: no event runs any more, and every task still
  // alive is unwound (RAII runs) once the caller gives up the CPU. Call from
  // inside a task (e.g. a timekeeper at the end of the window).
  void stop_all();
  Tick now() const { return clock_.now; }
  // Reference mode (see the header comment); set before run(). New
  // simulations start in the process-wide default (false unless set: the
  // CLI's --reference-order and the equivalence tests set it).
  void set_reference_order(bool on) { clock_.reference = on; }
  static void set_default_reference_order(bool on);
  static bool default_reference_order();
  bool reference_order() const { return clock_.reference; }
  // Read-ahead (see the header); set before run(). Off unless set: the
  // caller must be ready to run again on a ReadAheadConflict.
  void set_read_ahead(bool on) { clock_.read_ahead = on; }
  // Hand-offs between tasks so far (fiber switches through the calendar),
  // and turns taken without one (the shortcut): for benchmarks.
  std::uint64_t handoffs() const;
  std::uint64_t shortcuts() const;

 private:
  friend class Actor;
  struct Impl;
  ClockState clock_;
  std::unique_ptr<Impl> impl_;
  std::vector<std::unique_ptr<Actor>> actors_;
};

}  // namespace semsim::core
