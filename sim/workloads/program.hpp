// A task program behind one interface, so that a Workload hands out the
// programs of its *_def.hpp and both executors run them without knowing the
// workload: the simulator (sim_tasks.cpp) and the native runner
// (native/task_loop.hpp).
#pragma once

#include <utility>

#include "workloads/step_def.hpp"

namespace semsim::workloads {

class Program {
 public:
  virtual ~Program() = default;
  // The task's next step; false when its program has ended.
  virtual bool next(Step& s) = 0;
};

// Any *_def.hpp program class (one with `bool next(Step&)`) as a Program.
template <class P>
class ProgramOf final : public Program {
 public:
  template <class... Args>
  explicit ProgramOf(Args&&... args) : p_(std::forward<Args>(args)...) {}
  bool next(Step& s) override { return p_.next(s); }

 private:
  P p_;
};

// The program of a workload whose tasks are not semaphore programs (lock-stress,
// locktorture: each has its own task body): it has no step, and is never run.
class NoProgram final : public Program {
 public:
  bool next(Step& /*s*/) override { return false; }
};

// sembench's ready flags as a waker sees them: each executor keeps its own
// (the simulator a vector, the native runner flags in shared memory).
class ReadyFlags {
 public:
  // If worker's flag is set, clear it and return true.
  virtual bool take(int worker) = 0;

 protected:
  ~ReadyFlags() = default;
};

// ReadyFlags as the `Ready` value type SembenchWakerProgram takes.
struct ReadyRef {
  ReadyFlags* flags;
  bool take(int worker) const { return flags->take(worker); }
};

}  // namespace semsim::workloads
