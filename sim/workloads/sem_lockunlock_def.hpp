// sem-lockunlock (Manfred Spraul, ipcscale; the successor of "osim", the Oracle
// simulation of 2013) as task programs. Reference: ../shared/reference/benchmarks.md
// section 2 ("./osim 64 256 1000000 0 0" = 64 semaphores, 256 tasks, 10^6 loops).
//
// Setup: one array of semaphores + 1 semaphores, all 0; semaphores 0..S-1 are locks,
// semaphore S counts the tasks still running. `threads` tasks are forked PROCESSES
// (not threads), unpinned unless the scenario pins them; task i uses lock i mod S and
// does ceil(loops / tasks) loops of
//     semop({id, -1, 0}); busy loop busy_in;  semop({id, +1, 0}); busy loop busy_out
// then semop({S, -1, IPC_NOWAIT}) (not counted in ops_per_s).
// The tasks start at once and block on their 0-valued lock. The parent starts the
// clock, does SETALL {1, ..., 1, tasks} (which starts the run and wakes every task),
// then sleeps in a wait-for-zero on S; when the last task has finished, it stops the
// clock. The run ends when the loops are done: duration_ms and warmup_ms do not apply.
//
// Figures: ops_per_s = 2 * tasks * loops_per_task / wall time (both calls of a loop);
// per_loop_us = wall time / (tasks * loops_per_task), the benchmark's own "per loop
// execution time" (the inverse of the aggregate loop rate, not a per-task latency).
#pragma once

#include <cstdint>
#include <vector>

#include "workloads/step_def.hpp"

namespace semsim::workloads {

struct LockunlockParams {
  int semaphores = 1;              // lock semaphores (the array has one more)
  std::int64_t loops = 1'000'000;  // loops in total over all tasks
  std::int64_t busy_in = 0;        // busy-loop iterations while holding the lock
  std::int64_t busy_out = 0;       // busy-loop iterations after releasing it
};

inline std::int64_t lockunlock_loops_per_task(const LockunlockParams& p, int tasks) {
  return (p.loops + tasks - 1) / tasks;
}
inline int lockunlock_array_size(const LockunlockParams& p) { return p.semaphores + 1; }
inline int lockunlock_counter_sem(const LockunlockParams& p) { return p.semaphores; }
inline int lockunlock_lock_of(const LockunlockParams& p, int task) { return task % p.semaphores; }

// The parent's SETALL values that start the run: every lock 1, the counter `tasks`.
inline std::vector<int> lockunlock_start_values(const LockunlockParams& p, int tasks) {
  std::vector<int> v(static_cast<std::size_t>(p.semaphores), 1);
  v.push_back(tasks);
  return v;
}

// The parent's operation after SETALL: wait until the counter is zero.
inline ipc::Sembuf lockunlock_parent_wait(const LockunlockParams& p) {
  return ipc::Sembuf{lockunlock_counter_sem(p), 0, 0};
}

class LockunlockProgram {
 public:
  LockunlockProgram(const LockunlockParams& p, int task, int tasks)
      : p_(p), lock_(lockunlock_lock_of(p, task)), loops_(lockunlock_loops_per_task(p, tasks)) {}

  bool next(Step& s) {
    s.clear();
    s.sops = &op_;
    s.nsops = 1;
    if (done_ < loops_) {
      if (!holding_) {
        op_ = ipc::Sembuf{lock_, -1, 0};
        s.busy_loops = p_.busy_in;
      } else {
        op_ = ipc::Sembuf{lock_, +1, 0};
        s.busy_loops = p_.busy_out;
        s.rounds = 1;
        ++done_;
      }
      holding_ = !holding_;
      return true;
    }
    if (!finished_) {  // tell the parent: one task fewer
      finished_ = true;
      op_ = ipc::Sembuf{lockunlock_counter_sem(p_), -1, ipc::kIpcNowait};
      s.counts_op = false;
      return true;
    }
    return false;
  }

 private:
  LockunlockParams p_;
  int lock_;
  std::int64_t loops_;
  std::int64_t done_ = 0;
  bool holding_ = false;
  bool finished_ = false;
  ipc::Sembuf op_{};
};

}  // namespace semsim::workloads
