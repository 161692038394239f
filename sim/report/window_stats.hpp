// Statistics of a measurement window: snapshots of every task, lock and
// cache line at its start, differences at its end, as the point JSON
// (throughput, fairness, CPU-time breakdown, profile, locks, hottest lines).
#pragma once

#include <array>
#include <deque>
#include <string>
#include <vector>

#include "core/json.hpp"
#include "ipc/sem_array.hpp"
#include "machine/scheduler.hpp"
#include "machine/task.hpp"
#include "report/lockstat.hpp"

namespace semsim::report {

// The workload's own-figure counters (one per task) summed as of `date`: without
// the rounds a task counted past it while ahead of its turn (Task::rounds_past).
std::uint64_t rounds_at(const std::vector<std::uint64_t>& rounds,
                        const std::deque<machine::Task>& tasks, Tick date);

class WindowStats {
 public:
  WindowStats(const machine::Topology& topo, ipc::SemArray& sma,
              const std::deque<machine::Task>& tasks, const std::vector<std::uint64_t>* rounds)
      : topo_(topo), sma_(sma), tasks_(tasks), rounds_(rounds) {}
  void begin(Tick now);
  // Moves the window's start without a new snapshot (a run-to-completion
  // workload that starts its clock after setting up).
  void rebase(Tick start) { start_ = start; }
  void end(Tick now);
  void set_completed(bool c) { completed_ = c; }
  // The scheduler whose per-CPU rq->lock lines the lock table reports (none: no rq->lock row).
  void set_scheduler(const machine::Scheduler* sched) { sched_ = sched; }
  // The tasks are kernel threads running `function` (locktorture's writers): the
  // profile's stacks start there, not at a syscall.
  void set_kthread(std::string function) { kthread_ = std::move(function); }
  // A workload's own kernel locks and lines (outside the semaphore arrays):
  // reset with the array's at the window's start, reported beside them.
  void add_workload_lock(NamedLock lock) { workload_locks_.push_back(std::move(lock)); }
  void add_workload_line(machine::CacheLine* line) { workload_lines_.push_back(line); }
  Json to_json() const;

 private:
  struct TaskSnap {
    std::uint64_t semops = 0, voluntary = 0, involuntary = 0;
    std::array<std::uint64_t, 3> wakes{};  // same CPU, remote busy, remote idle
    std::array<Tick, machine::kFuncCount> time{};
  };
  // Every task as of `now` (a task ahead of the clock counts only its work before it).
  std::vector<TaskSnap> snapshot(Tick now) const;
  const machine::Topology& topo_;
  ipc::SemArray& sma_;
  const std::deque<machine::Task>& tasks_;
  const std::vector<std::uint64_t>* rounds_;
  std::uint64_t rounds_at_start_ = 0, rounds_at_end_ = 0;
  bool completed_ = true;
  Tick start_ = 0, stop_ = 0;
  std::vector<TaskSnap> at_start_, at_end_;
  std::vector<machine::LockStats> locks_at_end_;
  const machine::Scheduler* sched_ = nullptr;
  std::string kthread_;  // set_kthread()
  std::vector<NamedLock> workload_locks_;
  std::vector<machine::CacheLine*> workload_lines_;
  std::vector<machine::LineStats> rq_at_start_;  // rq->lock lines are not reset: differences
};

}  // namespace semsim::report
