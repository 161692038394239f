// Runs independent simulated runs at once, in forked worker processes.
//
// Why processes, not threads: a run owns a SimGrid engine, and SimGrid allows
// one engine per process at a time. Why fork: a worker starts with the
// caller's memory (the parsed scenarios, the machine models, the loaded
// library), so it costs a fork, not a new Python and library load. A worker
// is forked when a task needs one (at most `jobs`) and runs task after task,
// each index sent to it through a pipe and each result sent back through
// another; it ends with _exit (no atexit handler, no stdio flush, nothing of
// the caller's Python runs in it). One fork per worker, not per task: a fork
// of a large caller (semsim reproduce's: 160-190 MB) copies its page tables,
// and every page either side writes afterwards. A run's result depends only
// on its inputs (the core has no process-global clock; a process's runs one
// after the other give the bytes of fresh processes, as the one-process path
// of driver/simulate.cpp does), so it is the same bytes in a worker as in the
// caller; the results come back indexed by task, whatever order they finish.
// A task that crashes its worker is that task's error; a fresh worker takes
// the next task, as it does after a task that raised.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/json.hpp"
#include "driver/run_point.hpp"

namespace semsim::driver {

// What a task gives back: its JSON, or the error it raised (the type's name as
// the caller's layer knows it: "InputError", "SimulationError", else "Error").
struct TaskOutcome {
  bool ok = false;
  Json value;
  std::string error_type;
  std::string message;
};

struct PoolOptions {
  int jobs = 1;  // children at once (>= 1)
  // Called in the caller with each child's progress reports (throttled in the
  // child); `task` is the task's index. Empty: the children report nothing.
  std::function<void(std::size_t task, const RunProgress&)> progress;
  // Called in the caller when a task's outcome arrives.
  std::function<void(std::size_t task, const TaskOutcome&)> finished;
  // Called in the caller about every 100 ms of wall time while it waits; an
  // exception it throws (an interrupt the caller saw) ends every child and is
  // rethrown by run_pool.
  std::function<void()> poll;
  // Stop starting tasks after the first failure (the caller raises it).
  bool stop_on_error = true;
  // Asked of every running task after each outcome: a task it names is no
  // longer wanted, its process is ended at once and it gets no outcome (a
  // task begun ahead of a decision that went against it). Empty: none.
  std::function<bool(std::size_t task)> abandoned;
};

// Runs tasks[i] for every i, in the order given by `order` (a permutation of
// the indices: the longest first keeps the workers busy to the end), at most
// `jobs` at once. Returns one outcome per task, by index; a task that was
// never started (after a failure, with stop_on_error) has ok == false and an
// empty error_type.
std::vector<TaskOutcome> run_pool(const std::vector<std::function<Json()>>& tasks,
                                  const std::vector<std::size_t>& order,
                                  const PoolOptions& options);

// The same, with the next task chosen when a process is free: `pick` returns
// the task to start, or none when no task is ready now (a task may become
// ready in `finished`, when another ends). The pool ends when no task runs
// and `pick` has none. A task never picked has ok == false and no error_type.
std::vector<TaskOutcome> run_pool_picked(const std::vector<std::function<Json()>>& tasks,
                                         const std::function<std::optional<std::size_t>()>& pick,
                                         const PoolOptions& options);

}  // namespace semsim::driver
