// A workload type as one object: what the simulator, the native runner and the
// scenario loader ask of it. One subclass per type (sim/workloads/<type>.cpp),
// made from the validated spec through the registry (registry.hpp); the task
// programs themselves are in <type>_def.hpp, shared by both executors.
//
// Tasks: `threads` counted tasks, numbered from 0, then extra_tasks() more
// (sembench's waker) that both executors run, then, in the simulator only, the
// parent of a run started and ended by a parent (sem-lockunlock; the native
// runner's main thread plays it).
//
// Placement: task_cpu() indexes the CPUs a run may use (the machine's, or those
// the native runner may use); -1 leaves the task to the scheduler.
//
// Run length: a windowed workload runs warmup_ms, then a window the run-length
// rule sizes (at most duration_ms). A workload that runs to completion is timed
// as a whole: by its parent's SETALL and wait-for-zero (ByParent, bounded only
// by a safety cap), or from the start to the last task's end (WhenTasksEnd,
// bounded by warmup_ms + duration_ms, since a script may block for ever).
//
// Pure C++: no JSON, no SimGrid, no system calls.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "ipc/sembuf.hpp"
#include "workloads/program.hpp"
#include "workloads/spec.hpp"

namespace semsim::workloads {

enum class Completion { Windowed, ByParent, WhenTasksEnd };

// The benchmark's own figure, reported beside ops_per_s; empty name: none
// (ops/s is the benchmark's figure).
struct OwnFigure {
  enum class Of {
    RoundsPerSecond,  // the own counter per second of the window
    MicrosPerRound,   // the window in microseconds per count of the own counter
    MicrosPerCall,    // the window in microseconds per counted semop() call
  };
  std::string name;
  Of of = Of::RoundsPerSecond;
};
// The figure's value for a window of `window_s` seconds with `rounds` counts of
// the own counter and `calls` counted calls; 0 for an empty window or count.
double figure_value(const OwnFigure& f, double window_s, double rounds, double calls);

// A run started and ended by a parent: once `threads` tasks sleep on semaphores
// 0 .. locks-1 of array 0, the parent sets the array to `start_values` (the
// window opens), then sleeps in `end_wait` (the window closes when it returns).
struct ParentRun {
  int locks = 0;
  std::vector<int> start_values;
  ipc::Sembuf end_wait{};
};

// A problem with the spec, for config to report: the field path and what is wrong.
struct Problem {
  std::string field;
  std::string what;
};

// A field the native runner adds to each point to say which workload it measured.
struct PointLabel {
  std::string key;
  std::variant<std::int64_t, std::string> value;
};

class Workload {
 public:
  explicit Workload(const WorkloadSpec& spec) : spec_(spec) {}
  virtual ~Workload() = default;
  Workload(const Workload&) = delete;
  Workload& operator=(const Workload&) = delete;

  const WorkloadSpec& spec() const { return spec_; }

  // Checks beyond each field's own range, once the fields are read.
  virtual std::optional<Problem> check() const { return std::nullopt; }
  // Why `threads` tasks cannot run this workload ("" if they can).
  virtual std::string check_threads(int threads) const;

  // Its tasks take a user-space lock of the machine layer instead of making
  // semop() calls (lock-stress): both runners then use the user-lock task body.
  virtual bool takes_user_lock() const { return false; }
  // The kernel thread function its tasks run ("": they are user tasks making
  // system calls): the profile's stacks start there, and the simulator runs the
  // workload's own task body (locktorture's writers, on a kernel spinlock).
  virtual std::string kthread() const { return ""; }
  // Why the native runner cannot measure it on any host ("" if it can): one
  // line naming workload.type, for an InputError.
  virtual std::string native_refusal() const { return ""; }
  // Forked processes (true) or threads of one process.
  virtual bool uses_processes() const { return false; }
  // The process of each of `tasks` tasks, numbered from 0 (threads: all 0).
  virtual std::vector<int> task_processes(int tasks) const;
  virtual int extra_tasks() const { return 0; }
  // The CPU index task `task` is pinned to, or -1 (see above). The default pins
  // the counted tasks round-robin when the spec is pinned.
  virtual int task_cpu(int task, int threads, int cpus) const;

  // The arrays made before the tasks start, by size, and the values array 0
  // holds then (empty: all 0).
  virtual std::vector<int> array_sizes(int threads) const = 0;
  virtual std::vector<int> initial_values() const { return {}; }
  // Arrays each task makes for itself at a time (aim9-shm: one per call).
  virtual int arrays_per_task() const { return 0; }
  // The most sops one semop() call carries (for SEMOPM).
  virtual int max_sops_per_call() const { return 1; }
  // The scenario field that sets the size of the arrays, and the one that
  // sets the sops per call, for messages about host limits.
  virtual std::string size_field() const { return "workload.semaphores"; }
  virtual std::string sops_field() const { return "workload"; }

  virtual Completion completion(int /*threads*/) const { return Completion::Windowed; }
  bool runs_to_completion(int threads) const { return completion(threads) != Completion::Windowed; }
  // ByParent runs: what the parent does.
  virtual std::optional<ParentRun> parent(int /*threads*/) const { return std::nullopt; }
  // Whether task programs may end inside a windowed run too (custom's finite scripts).
  virtual bool programs_may_end() const { return false; }
  // Scripted calls: some may fail with EAGAIN and a task may never finish, so a
  // point reports both.
  virtual bool reports_script_outcome() const { return false; }

  virtual OwnFigure own_figure() const { return {}; }
  virtual std::vector<PointLabel> point_labels(int /*threads*/) const { return {}; }

  // The program of task `task` (0 .. threads + extra_tasks() - 1). `seed` is the
  // run's; `ready` the executor's sembench flags (only sembench reads them). The
  // program may refer to this Workload, which must outlive it.
  virtual std::unique_ptr<Program> program(int task, int threads, std::uint64_t seed,
                                           ReadyFlags* ready) const = 0;

  // Placement problems on `cpus` CPUs ("" if none): the workload's own CPU
  // limit, and the first task of `threads` that cannot be pinned. `whose` says
  // whose CPUs they are, as a clause the message ends with ("this host lets
  // the runner use 2 CPUs", "machine laptop-4 has 4 CPUs"): the native runner
  // asks about this host, the simulator about the scenario's machine, and
  // both refuse a placement the benchmark itself could not make.
  virtual std::string check_cpus(int /*cpus*/, const std::string& /*whose*/) const { return ""; }
  virtual std::string unplaceable(int threads, int cpus, const std::string& whose) const;

 protected:
  WorkloadSpec spec_;
};

}  // namespace semsim::workloads
