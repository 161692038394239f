// update_queue() and check_restart() as Linux 3.0-3.10 had them: the same code
// served the one global list of <= 3.9 and the one-list-per-sleeper scheme of
// 3.10 (they differ only in how a sleeper is unlinked, which the queue scheme
// passed in does). 3.11's split queues replaced both.
//
// Locking: the caller holds the lock that covers the list it scans (the
// array lock for the array's list), since every sleeper it completes is
// unlinked from that list.
#pragma once

#include "ipc/sem_kernel.hpp"

namespace semsim::ipc {

// check_restart(): may the completion of q let an earlier entry proceed?
inline bool check_restart_3x(const SemArray& sma, const SemQueue& q) {
  if (!q.alter) return false;               // it did not modify the array
  if (sma.complex_count != 0) return true;  // pending complex ops: too difficult
  if (q.sops.size() > 1) return true;       // it was complex itself
  const auto n = static_cast<std::size_t>(q.sops[0].sem_num);
  const auto& curr = sma.pending_alter[n];
  if (curr.empty()) return false;
  // A decrement: only wait-for-zero sleepers (at the head) can gain, and only at 0.
  if (sma.semval[n] != 0) return false;
  return curr.front()->sops[0].sem_op == 0;
}

// update_queue(): try every sleeper of the list (semnum < 0: the array's list);
// completed ones are unlinked and their wakeup prepared, then the scan
// restarts if check_restart() says so. Returns whether any op completed.
inline bool update_queue_3x(QueueOps& queues, SemKernel& k, machine::Task& t, int semnum,
                            WakeList& wake) {
  machine::InFunc in(t, machine::Func::UpdateQueue);
  k.path(t, PathFn::UpdateQueue);
  auto& sma = k.array();
  SemList& list =
      semnum < 0 ? sma.global_alter : sma.pending_alter[static_cast<std::size_t>(semnum)];
  k.read(t, semnum < 0 ? Field::Pending : Field::SemPending, semnum < 0 ? 0 : semnum);
  bool completed = false;
again:
  for (auto walk = list.begin(); walk != list.end();) {
    SemQueue* q = *walk;
    ++walk;
    // On a semaphore's list at value 0 no alter entry can proceed: simple
    // increments never sleep, decrements cannot succeed.
    if (semnum >= 0 && sma.semval[static_cast<std::size_t>(semnum)] == 0 && q->alter) break;
    const int error = k.perform_atomic_semop(t, *q);  // try_atomic_semop()
    if (error > 0) continue;
    queues.unlink_queue(k, t, *q);
    bool restart = false;
    if (error == 0) {
      completed = true;
      restart = check_restart_3x(sma, *q);
    }
    k.wake_up_sem_queue_prepare(t, *q, error, wake);
    if (restart) goto again;
  }
  return completed;
}

}  // namespace semsim::ipc
