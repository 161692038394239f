// The per-lock table of a measurement window in the columns of
// /proc/lock_stat and `perf lock contention`, one row per lock class under the
// kernel's names: sma->sem_perm.lock (the array spinlock, or the March 2013
// series' rwlock as -W and -R rows), sem->lock (every semaphore's lock: one
// lockdep class, so one row, as lock_stat shows it) and rq->lock (every CPU's
// run-queue lock, which the model knows only as one atomic on its line).
#pragma once

#include <string>
#include <vector>

#include "core/json.hpp"
#include "ipc/sem_array.hpp"
#include "machine/scheduler.hpp"

namespace semsim::report {

// A kernel spinlock a workload keeps outside the semaphore arrays
// (locktorture's torture_spinlock), under the name lock_stat gives its class.
struct NamedLock {
  std::string name;
  machine::Spinlock* lock;
};

// Rows with neither acquisitions nor contentions are left out. `rq_at_start`
// are the rq->lock lines' counters at the window's start (they are not reset).
// The workload's own locks come after the array's.
Json lockstat_table(const ipc::SemArray& sma, const machine::Scheduler* sched,
                    const std::vector<machine::LineStats>& rq_at_start,
                    const std::vector<NamedLock>& workload_locks = {});

}  // namespace semsim::report
