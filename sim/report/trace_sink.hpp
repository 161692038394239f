// The events a Perfetto trace is drawn from, as the machine reports them.
//
// A task carries a pointer to a sink (null: tracing off, which costs one
// pointer test per hook and changes nothing in the run). The machine calls it
// at a few points only, each a one-line `if (task.trace != nullptr) ...`:
//   Task::account                       CPU time of a task in one function
//   Spinlock / RwLock unlock            a lock held from..to
//   Spinlock / RwLock grant             a contender waited from..to (and who handed it over)
//   Scheduler::wake                     a wake-up of a sleeping task
//   Scheduler (run-queue changes)       the run queues may have changed length
// Recording only: a sink never feeds anything back into the simulation.
#pragma once

#include <cstdint>

#include "core/time.hpp"

namespace semsim::machine {
struct Task;
enum class Func : std::uint8_t;
class Scheduler;
}  // namespace semsim::machine

namespace semsim::report {

class TraceSink {
 public:
  virtual ~TraceSink() = default;
  // `task` runs function f on its CPU for d, from `at`.
  virtual void cpu_time(const machine::Task& task, machine::Func f, Tick at, Tick d) = 0;
  // Its latest cpu_time() ended at `end` after all (a turn that came earlier).
  virtual void cut_cpu_time(const machine::Task& task, Tick end) = 0;
  // `holder` held `lock` from..to (read: a shared hold of an rwlock).
  virtual void lock_held(const void* lock, const machine::Task& holder, Tick from, Tick to,
                         bool read = false) = 0;
  // `waiter` waited for `lock` from..to; `releaser` handed it over (null: it found it free).
  virtual void lock_wait(const void* lock, const machine::Task& waiter, Tick from, Tick to,
                         const machine::Task* releaser, bool read = false) = 0;
  // `waker` woke the sleeping `wakee` at `at`.
  virtual void wake(const machine::Task& waker, const machine::Task& wakee, Tick at) = 0;
  // A run queue of `sched` may have changed length at `at`.
  virtual void runqueues(const machine::Scheduler& sched, Tick at) = 0;
};

}  // namespace semsim::report
