// Schedule exploration of the simulated ipc/sem.c: invariant checkers that
// watch a run, a small rig that runs scripted tasks against one array, and
// two seeded explorers that perturb the schedule.
//
// The invariants (checked on every run the checker observes):
//  - lost wakeup: whenever no critical section is open, no task sleeps in
//    semop while its operation could proceed (perform_atomic_semop() on the
//    current values would complete it, or fail it with an error);
//  - race: no semaphore (value, pid, queues) nor the array's queues and
//    complex_count are changed by a task whose lock does not exclude every
//    other modifier, i.e. (a) outside the scope of the lock it holds (a task
//    holding sem[n].lock changes sem[m] or the array's queue), or (b) while
//    another task's critical section that may change the same object is open
//    (a per-semaphore critical section beside an array-wide one).
// A critical section runs from sem_lock() returning to the protocol's release
// in sem_unlock() (the first lock release landing, or the store that leaves
// global mode in 4.9+); sections are compared in simulated time.
//
// The explorers install a schedule hook (SemKernel::set_schedule_hook), which
// makes every lock attempt, every racy read and write of sem_lock() and a few
// points inside critical sections synchronisation points, and delay or pause
// tasks there:
//  - search_mixed(): random perturbation (ExploreOptions) of a fixed mixed
//    workload of nine tasks, twelve operations each;
//  - search_small(): every one- and two-point perturbation plan of one task
//    (small_plan()) of small seeded scenarios (small_scenario()).
// A schedule is replayed from its seed (and plan): runs are deterministic.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "config/machine_config.hpp"
#include "core/simulation.hpp"
#include "ipc/sem_kernel.hpp"
#include "machine/scheduler.hpp"

namespace semsim::ipc {

struct Violation {
  enum class Kind { LostWakeup, Race };
  Kind kind;
  Tick at = 0;
  std::string what;
};
const char* violation_kind_name(Violation::Kind k);

class InvariantChecker final : public KernelObserver {
 public:
  explicit InvariantChecker(SemKernel& k) : k_(k) {}
  void on_cs_begin(const machine::Task& t, int locknum) override;
  void on_cs_end(const machine::Task& t, int locknum) override;
  void on_modify(const machine::Task& t, int object) override;
  // The lost-wakeup check; also run at each end of a critical section that
  // leaves none open. `now`: the simulated date of the check.
  void check_lost_wakeups(Tick now);
  const std::vector<Violation>& violations() const { return violations_; }
  std::uint64_t critical_sections() const { return sections_; }

 private:
  struct Section {
    std::uint64_t id = 0;
    int task = 0;
    int locknum = 0;
    Tick start = 0;
    Tick end = 0;
    std::vector<std::pair<int, Tick>> writes;  // object, date
  };
  void report(Violation::Kind kind, Tick at, std::string what);
  void check_overlap(const Section& a, const Section& b);
  SemKernel& k_;
  std::map<int, Section> open_;  // by task
  std::deque<Section> closed_;   // recent ones, for overlap checks
  std::set<std::pair<int, std::uint64_t>> reported_sleeps_;
  std::set<std::pair<std::uint64_t, std::uint64_t>> reported_pairs_;
  std::vector<Violation> violations_;
  std::uint64_t sections_ = 0;
};

// A small simulated machine with one array: tasks run scripted bodies (each
// placed on its own CPU, pinned), and a controller runs beside them without
// a CPU of its own (it only takes the array lock: semctl, checks, exits).
class Rig {
 public:
  using Body = std::function<void(Rig&, machine::Task&)>;
  Rig(const KernelPolicy& policy, const config::MachineParams& machine, int nsems,
      std::uint64_t seed);
  ~Rig();
  // A task of `process` on CPU `cpu` (default: its index modulo the CPUs).
  machine::Task& add_task(int process, Body body, int cpu = -1);
  // The controller's body; it gets a task of its own (id after the others).
  void set_controller(Body body);
  void run();

  SemKernel& kernel() { return *kernel_; }
  core::Simulation& sim() { return sim_; }
  machine::Scheduler& sched() { return sched_; }
  const machine::Topology& topo() const { return topo_; }
  machine::Task& task(int i) { return tasks_[static_cast<std::size_t>(i)]; }
  int tasks() const { return static_cast<int>(tasks_.size()) - (controller_ ? 1 : 0); }
  bool finished(int i) const { return finished_[static_cast<std::size_t>(i)]; }
  // Every task has returned or sleeps in semop.
  bool quiescent() const;
  bool all_finished() const;

 private:
  core::Simulation sim_;
  machine::Topology topo_;
  machine::Scheduler sched_;
  std::unique_ptr<SemKernel> kernel_;
  std::deque<machine::Task> tasks_;
  std::deque<bool> finished_;
  std::vector<Body> bodies_;
  Body controller_;
};

// One task of an explored scenario: its operations (semtimedop with a
// timeout when timeout >= 0), done `iterations` times over, after `start`.
struct ExploreOp {
  std::vector<Sembuf> sops;
  Tick timeout = -1;
};
struct ExploreTask {
  std::vector<ExploreOp> ops;
  Tick start = 0;
};

// The mixed workload (all tasks of their own process, every op `iterations` times):
//   T0: -1 on s1            T1: +1 on s0            T2: {-1 s0, +1 s1}
//   T3: -1 on s2            T4: {0 s2, +1 s3}       T5: -1 on s3      T6: +1 on s2
//   T7, T8: +1 then -1 on their own semaphore (s4, s5)
// Balanced, so every task finishes unless a wakeup is lost. Simple ops race
// with complex ones that sleep (T2, T4) and are woken by simple (T1, T3, T6)
// or complex ops; a complex wakeup changes a semaphore other sleepers wait on
// (T2 -> T0), and a simple wakeup drives a semaphore to 0 that a complex
// wait-for-zero waits on (T6 wakes T3 -> T4): the two wakeups 3.10-rc lost.
std::vector<ExploreTask> mixed_workload();

// Perturbation (see Perturber in explorer.cpp), drawn from the seed: one task
// is the slow one; at each code location where it reaches a synchronisation
// point (the labels of SemKernel::set_schedule_hook) it gets, with
// probability rule_probability (other_rule_probability for the other
// tasks), a rule applied there every time (with
// probability rule_repeat): a delay, or a pause until the other tasks have
// passed 1..max_pause_steps synchronisation points, or changed complex_count /
// the mode flag once or twice, or ended one or two critical sections (a
// preemption counted in the other tasks' steps, the paused task resuming just
// after the event; at most max_jitter). Every task also gets delays with
// probability jitter_probability at each point. Delays are log-uniform in
// [min_jitter, max_jitter].
struct ExploreOptions {
  std::uint64_t seed = 1;
  int iterations = 12;
  double rule_probability = 0.35;
  double other_rule_probability = 0.0;  // the same for every other task
  double rule_repeat = 1.0;
  double jitter_probability = 0.02;
  Tick min_jitter = 50 * kTicksPerNs;
  Tick max_jitter = 3 * kTicksPerUs;
  int max_pause_steps = 16;
  Tick max_think = 2 * kTicksPerUs;  // user time before each op, uniform
  Tick horizon = 20 * kTicksPerMs;   // then the array is removed, whatever is left
  KernelObserver* also = nullptr;    // a second observer (e.g. a trace printer)
  // Planned perturbations, on top of the random ones: at the occurrence-th
  // synchronisation point of `task` (counted from 0), kind 0: a delay of
  // `delay`; 1: a pause for `remaining` points of others; 2: until others
  // changed complex_count or the mode flag `remaining` times; 3: until others
  // ended `remaining` critical sections.
  struct Planned {
    int task = 0;
    int occurrence = 0;
    int kind = 0;
    int remaining = 1;
    Tick delay = 0;
  };
  std::vector<Planned> plan;
  // The slow task (-1: drawn from the seed) and rules imposed on it by code
  // location (kind as in Planned; none is drawn for those locations).
  int slow_task = -1;
  struct Rule {
    std::string point;
    int kind = 0;
    int remaining = 1;
    Tick delay = 0;
  };
  std::vector<Rule> rules;
  // The scenario (one process per task); empty: mixed_workload().
  std::vector<ExploreTask> tasks;
  std::vector<int> initial;  // initial values (default all 0)
};

// A small random scenario drawn from the seed: 3 or 4 tasks of one or two
// operations each (simple or two-sop, increments, decrements, wait-for-zero,
// some with a timeout) on 3 or 4 semaphores with random initial values and
// start dates, and no random perturbation.
ExploreOptions small_scenario(std::uint64_t seed);
// The number of systematic perturbation plans of a small scenario, and plan
// `index` applied to it: one task gets one or two perturbations at its
// synchronisation points number o1 <= o2 < 8, each a delay (log-uniform,
// drawn from seed and index), a pause until another task changes
// complex_count or the mode flag, or a pause until another task ends a
// critical section. Index 0 is the unperturbed scenario.
int small_plans(const ExploreOptions& scenario);
ExploreOptions small_plan(std::uint64_t seed, int index);

struct ExploreResult {
  std::vector<Violation> violations;
  std::uint64_t semops = 0;
  std::uint64_t critical_sections = 0;
  int stuck = 0;  // tasks still asleep at the end (removed with EIDRM)
  Tick end = 0;
};

// Forwards every callback to two observers.
class TeeObserver final : public KernelObserver {
 public:
  TeeObserver(KernelObserver& a, KernelObserver& b) : a_(a), b_(b) {}
  void on_access(const machine::Task& t, const AccessEvent& e) override {
    a_.on_access(t, e);
    b_.on_access(t, e);
  }
  void on_cs_begin(const machine::Task& t, int locknum) override {
    a_.on_cs_begin(t, locknum);
    b_.on_cs_begin(t, locknum);
  }
  void on_cs_end(const machine::Task& t, int locknum) override {
    a_.on_cs_end(t, locknum);
    b_.on_cs_end(t, locknum);
  }
  void on_modify(const machine::Task& t, int object) override {
    a_.on_modify(t, object);
    b_.on_modify(t, object);
  }
  void on_wake(const machine::Task& waker, const machine::Task& wakee, int status) override {
    a_.on_wake(waker, wakee, status);
    b_.on_wake(waker, wakee, status);
  }

 private:
  KernelObserver& a_;
  KernelObserver& b_;
};

// One run of a scenario, perturbed as the options say; deterministic.
ExploreResult explore(const KernelPolicy& policy, const config::MachineParams& machine,
                      const ExploreOptions& options);

// A search for a violation, stopping at the first one.
struct SearchResult {
  bool found = false;
  std::uint64_t seed = 0;  // the replayable schedule: the seed...
  int plan = -1;           // ... and, for the small-scope search, the plan index
  int runs = 0;            // schedules tried
  ExploreResult result;    // of the last run (the violating one if found)
};
// Random exploration of the mixed workload: seeds first_seed, first_seed+1, ...
SearchResult search_mixed(const KernelPolicy& policy, const config::MachineParams& machine,
                          std::uint64_t first_seed, int max_runs);
// Systematic small-scope exploration: every plan of small_scenario(seed) for
// seeds first_seed, first_seed+1, ... (at most max_runs schedules).
SearchResult search_small(const KernelPolicy& policy, const config::MachineParams& machine,
                          std::uint64_t first_seed, int max_runs);

// A plain machine for the explorer and the tests: `cpus` CPUs on one die,
// with the given line transfer latency and round-number costs.
config::MachineParams test_machine(int cpus, double transfer_ns = 40.0);

}  // namespace semsim::ipc
