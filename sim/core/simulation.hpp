// The SimGrid adapter: the only part of semsim that sees SimGrid.
//
// A Simulation owns one SimGrid engine and the simulated tasks' actors. Model
// code talks to it through two small types:
//   Simulation: spawn tasks, run to completion, read the clock;
//   Actor:      what a task's body may do: read the clock, sleep until a date,
//               park on its own token, be unparked (now or at a future date).
// Time is integer picoseconds (core/time.hpp), measured from this run's own
// start, because SimGrid's clock is process-global and never reset.
//
// Traps handled here (design section 4): every actor body is guarded, so an
// exception inside the simulation stops it and is rethrown by run(), never an
// abort; a deadlock (every task parked, no pending event) becomes a
// SimulationError; the context factory and logging are set before each engine.
#pragma once

#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/time.hpp"

namespace semsim::core {

class Simulation;

class Actor {
 public:
  Actor(const Actor&) = delete;
  Actor& operator=(const Actor&) = delete;
  ~Actor();

  Tick now() const;
  // Block until the given date (no-op if it is not in the future).
  void sleep_until(Tick date);
  // Block until unparked. Each unpark() lets exactly one park() return.
  void park();
  // Let a park() of this actor return now (called by another actor).
  void unpark();
  // Let a park() of this actor return at a future date, without any actor
  // having to sleep until then (a kernel timer event).
  void unpark_at(Tick date);
  int id() const { return id_; }
  // The simulation this actor belongs to (e.g. to schedule a timer with at()).
  Simulation& simulation() const { return sim_; }

 private:
  friend class Simulation;
  struct Impl;
  Actor(Simulation& sim, int id);
  Simulation& sim_;
  int id_;
  std::unique_ptr<Impl> impl_;
};

class Simulation {
 public:
  Simulation();
  ~Simulation();
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  // Register a task; its body runs when run() is called.
  Actor& spawn(const std::string& name, std::function<void(Actor&)> body);
  // Schedule a callback at a date (runs outside any actor; it may unpark actors).
  void at(Tick date, std::function<void()> callback);
  // Run until every task has returned, or stop_all() was called. Rethrows the
  // first exception raised by a task; a deadlock is a SimulationError.
  void run();
  // End the simulation now: every task still alive is unwound (RAII runs).
  // Call from inside a task (e.g. a timekeeper at the end of the window).
  void stop_all();
  Tick now() const;

 private:
  friend class Actor;
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::vector<std::unique_ptr<Actor>> actors_;
};

}  // namespace semsim::core
