// Linux 3.12-4.8: "ipc/sem.c: fix race in sem_lock()" (the rewrite without
// loops) and "optimize sem_lock()" (6d07b68ce16a), plus "update sem_otime
// for all operations" (set_semotime() for wait-for-zero too).
//
// Locking:
//  - A simple operation: if complex_count == 0, it takes its semaphore's
//    lock; if spin_is_locked(&sma->sem_perm.lock) is false and complex_count
//    is still 0, the fast path is ours. Otherwise the array lock: if
//    complex_count is 0 there ("false alarm"), it takes the semaphore's lock
//    and drops the array's; else it keeps the array lock and
//    sem_wait_array()s.
//  - A complex operation, semctl() and exit_sem() take the array lock and
//    sem_wait_array(): spin_unlock_wait() on every semaphore lock, skipped
//    while complex_count != 0 ("the thread that increased complex_count
//    waited on all sem->lock locks").
//
// Memory ordering: between spin_is_locked() and the re-read of
// complex_count, smp_mb() until 3.18 and smp_rmb() from 3.19 (2e094abfd1f2;
// the "fence" policy), because spin_is_locked() is not a memory barrier.
//
// The race it carries (fixed in 4.9 by complex_mode, 5864a2fd3088): a simple
// op A passes the first complex_count test; a complex op B scans the locks
// (A does not hold its lock yet) and goes to sleep (complex_count = 1); A
// takes its lock and sees the array lock free; a complex op C takes the
// array lock WITHOUT scanning (complex_count != 0), completes B
// (complex_count = 0); A re-tests complex_count, passes, and runs beside C.
#include "ipc/kernel_policy.hpp"
#include "ipc/sem_kernel.hpp"

namespace semsim::ipc {

KernelPolicy wait_array_policy() {
  KernelPolicy p = moved_otime_policy();
  p.id = "wait_array";
  p.kernels = "3.12-4.8";
  p.description =
      "sem_lock() rewrite with sem_wait_array(); full fence until 3.18 (\"fence\": \"rmb\" for "
      "3.19-4.8), sem_otime for all ops";
  p.sem_lock = LockProtocol::WaitArray;
  p.fence = FastPathFence::Full;
  p.otime_all_ops = true;
  // 3.16-4.8 (with the full fence: 3.16-3.18); "blocking_store": false for 3.12-3.15.
  p.blocking_store = true;
  p.spinlock = SpinlockKind::Ticket;  // 3.12-4.1; "spinlock": "queued" for 4.2-4.8
  return p;
}

namespace {

using machine::Task;

class WaitArrayGeneration final : public Generation {
 public:
  int sem_lock(SemKernel& k, Task& t, std::span<const Sembuf> sops) override {
    k.path(t, PathFn::SemLock);
    auto& sma = k.array();
    if (sops.size() != 1) {
      // Complex operation: the full lock, then wait for the simple ops in flight.
      k.spin_lock(t, kGlobalLock);
      sem_wait_array(k, t);
      return kGlobalLock;
    }
    const int n = sops[0].sem_num;
    k.sched_point(t, "read complex_count");
    k.read(t, Field::ComplexCount);
    if (sma.complex_count == 0) {
      // It appears that no complex operation is around.
      k.spin_lock(t, n);
      if (!k.spin_is_locked(t, kGlobalLock)) {
        k.fast_path_fence(t);  // spin_is_locked() is not a memory barrier
        k.sched_point(t, "recheck complex_count");
        k.read(t, Field::ComplexCount);
        if (sma.complex_count == 0) return n;  // fast path successful
      }
      k.spin_unlock(t, n);
    }
    // Slow path: the full lock.
    k.spin_lock(t, kGlobalLock);
    k.sched_point(t, "read complex_count");
    k.read(t, Field::ComplexCount);
    if (sma.complex_count == 0) {
      // False alarm: no complex operation, back to the fast path.
      k.spin_lock(t, n);
      k.spin_unlock(t, kGlobalLock);
      return n;
    }
    sem_wait_array(k, t);
    return kGlobalLock;
  }

  void sem_unlock(SemKernel& k, Task& t, int locknum) override { k.spin_unlock(t, locknum); }

 private:
  static void sem_wait_array(SemKernel& k, Task& t) {
    auto& sma = k.array();
    k.sched_point(t, "read complex_count");
    k.read(t, Field::ComplexCount);
    if (sma.complex_count != 0) return;  // its incrementer already waited on every lock
    for (int i = 0; i < sma.nsems(); ++i) k.spin_unlock_wait(t, i);
  }
};

}  // namespace

std::unique_ptr<Generation> make_wait_array_generation() {
  return std::make_unique<WaitArrayGeneration>();
}

}  // namespace semsim::ipc
