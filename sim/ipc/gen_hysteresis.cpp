// Linux 4.11+ and current 6.x: per-semaphore locks for simple operations, the
// array lock for complex ones, and use_global_lock with hysteresis
// ("ipc/sem.c: avoid using spin_unlock_wait()", 27d7be1801a4, and "ipc/sem:
// add hysteresis", 9de5ab8a2eee).
//
// Locking:
//  - A simple operation reads use_global_lock; if 0, it takes its
//    semaphore's lock and re-reads it; still 0: the fast path. Otherwise the
//    array lock, and the semaphore's lock instead if use_global_lock is 0
//    there.
//  - A complex operation, semctl() and exit_sem() take the array lock.
//    Entering global mode from 0 (complexmode_enter()) sets use_global_lock
//    and locks and unlocks every semaphore's lock, which waits out the simple
//    ops in flight.
//  - Every global-mode unlock without sleeping complex ops decrements the
//    counter (complexmode_tryleave()), so after a complex op the array stays
//    in global mode for USE_GLOBAL_LOCK_HYSTERESIS operations: a switch costs
//    a pass over every lock, and a mix of simple and complex ops would pay
//    it on every complex one. newary() leaves it at 9: a fresh array runs its
//    first 9 operations under the array lock.
//
// Memory ordering (sem.c's SEM_BARRIER_1):
//  - The decrement to 0 is an smp_store_release(): a simple op may start
//    right after it.
//  - The fast path's re-read is an smp_load_acquire(). Setting the counter
//    from 0 is ordered before it by the lock and unlock of every semaphore
//    lock, so the fast path needs no full fence.
//
// Wakeups go through wake_q (4.10, 9ae949fa382b); struct sem is embedded in
// the array (4.13); the queues are 3.11's (gen_split_queues.cpp).
#include "ipc/kernel_policy.hpp"
#include "ipc/sem_kernel.hpp"

namespace semsim::ipc {

KernelPolicy hysteresis_policy() {
  KernelPolicy p;
  p.id = "hysteresis";
  p.kernels = ">= 4.11, current 6.x";
  p.description = "per-semaphore locks, use_global_lock hysteresis 10, wake_q, no fence";
  p.spinlock = SpinlockKind::Queued;
  p.sem_lock = LockProtocol::Hysteresis;
  p.fence = FastPathFence::None;
  p.hysteresis = 10;
  p.sem_layout = SemLayout::Aligned64;
  p.array_layout = ArrayLayoutKind::Current;
  p.otime = OtimeLocation::PerSem;
  p.otime_all_ops = true;
  p.queues = QueueScheme::Merged;
  p.missed_wakeup_fix = true;
  p.wakeup = WakeupDelivery::WakeQ;
  p.blocking_store = true;
  p.two_pass = true;
  p.header_bytes = 0;  // kvzalloc(struct_size(sma, sems, nsems)), no separate header
  return p;
}

namespace {

using machine::Task;

class HysteresisGeneration final : public Generation {
 public:
  void newary(SemKernel& k) override {
    // newary() sets use_global_lock = HYSTERESIS; its own sem_unlock(-1) takes one off.
    k.array().use_global_lock = k.policy().hysteresis - 1;
  }

  int sem_lock(SemKernel& k, Task& t, std::span<const Sembuf> sops) override {
    k.path(t, PathFn::SemLock);
    auto& sma = k.array();
    if (sops.size() != 1) {
      k.spin_lock(t, kGlobalLock);
      complexmode_enter(k, t);
      return kGlobalLock;
    }
    const int n = sops[0].sem_num;
    k.read(t, Field::Nsems);  // array_index_nospec(sops->sem_num, sma->sem_nsems)
    k.sched_point(t, "read mode flag");
    k.read(t, Field::ModeFlag);  // READ_ONCE(sma->use_global_lock)
    if (sma.use_global_lock == 0) {
      k.spin_lock(t, n);
      k.fast_path_fence(t);  // none since 4.11; a what-if may add one
      k.sched_point(t, "recheck mode flag");
      k.read(t, Field::ModeFlag);              // smp_load_acquire(&sma->use_global_lock)
      if (sma.use_global_lock == 0) return n;  // fast path
      k.spin_unlock(t, n);
    }
    k.spin_lock(t, kGlobalLock);
    k.read(t, Field::ModeFlag);
    if (sma.use_global_lock == 0) {
      k.spin_lock(t, n);
      k.spin_unlock(t, kGlobalLock);
      return n;
    }
    return kGlobalLock;
  }

  void sem_unlock(SemKernel& k, Task& t, int locknum) override {
    auto& sma = k.array();
    if (locknum != kGlobalLock) {
      k.spin_unlock(t, locknum);
      return;
    }
    // complexmode_tryleave(): stay global while complex ops sleep.
    k.read(t, Field::ComplexCount);
    if (sma.complex_count == 0) {
      k.sched_point(t, "write mode flag");
      k.write(t, Field::ModeFlag);
      // Back to 0 with smp_store_release(): simple ops may run from here.
      if (--sma.use_global_lock == 0) k.cs_released(t);
    }
    k.spin_unlock(t, kGlobalLock);
  }

 private:
  static void complexmode_enter(SemKernel& k, Task& t) {
    auto& sma = k.array();
    k.read(t, Field::ModeFlag);
    if (sma.use_global_lock > 0) {
      // Already global: only restart the hysteresis.
      k.write(t, Field::ModeFlag);
      sma.use_global_lock = sma.policy.hysteresis;
      return;
    }
    k.sched_point(t, "write mode flag");
    k.write(t, Field::ModeFlag);
    sma.use_global_lock = sma.policy.hysteresis;
    // Wait out every simple op in flight: lock and unlock each semaphore.
    for (int i = 0; i < sma.nsems(); ++i) {
      k.spin_lock(t, i);
      k.spin_unlock(t, i);
    }
  }
};

}  // namespace

std::unique_ptr<Generation> make_hysteresis_generation() {
  return std::make_unique<HysteresisGeneration>();
}

}  // namespace semsim::ipc
