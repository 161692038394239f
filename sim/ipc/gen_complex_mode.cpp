// Linux 4.9-4.10: "ipc/sem.c: fix complex_count vs. simple op race"
// (5864a2fd3088, 4.9-rc1 and stable): one flag, complex_mode, tracks both
// reasons a simple op must not run in parallel (a complex op holding the
// array lock, complex ops sleeping).
//
// Locking:
//  - A simple operation reads complex_mode; if false, it takes its
//    semaphore's lock and re-reads it; still false: the fast path.
//    Otherwise the array lock, and the semaphore's lock instead if
//    complex_count is 0 there.
//  - A complex operation, semctl() and exit_sem() take the array lock;
//    complexmode_enter() sets complex_mode and spin_unlock_wait()s every
//    semaphore lock, unless it was already set. complexmode_tryleave() clears
//    it at sem_unlock(sma, -1) once no complex op sleeps.
//
// Memory ordering:
//  - Fast path: a full smp_mb() after the per-semaphore spin_lock(), because
//    its ACQUIRE does not order the lock store before the re-read of
//    complex_mode on every architecture; the re-read is smp_load_acquire().
//  - complexmode_enter(): smp_store_mb() of the flag before the scan, so a
//    simple op either sees the flag or is seen holding its lock; smp_rmb()
//    after it, as spin_unlock_wait() is only a control barrier.
//  - complexmode_tryleave(): smp_store_release() of false; simple ops may
//    run from that store on.
// The full fence on every simple op is what aim9 paid (-8.9%, given back in
// 4.11).
//
// Wakeups still use IN_WAKEUP (wake_q came in 4.10; "wakeup": "wake_q"
// replays 4.10).
#include "ipc/kernel_policy.hpp"
#include "ipc/sem_kernel.hpp"

namespace semsim::ipc {

KernelPolicy complex_mode_policy() {
  KernelPolicy p = wait_array_policy();
  p.id = "complex_mode";
  p.kernels = "4.9";
  p.description =
      "complex_mode flag, full fence after the per-semaphore lock, queued spinlocks, IN_WAKEUP";
  p.sem_lock = LockProtocol::ComplexMode;
  p.fence = FastPathFence::Full;
  p.spinlock = SpinlockKind::Queued;
  p.array_layout = ArrayLayoutKind::V4_8;
  p.wakeup = WakeupDelivery::InWakeup;
  return p;
}

namespace {

using machine::Task;

class ComplexModeGeneration final : public Generation {
 public:
  void newary(SemKernel& k) override {
    // newary() sets complex_mode = true; its own sem_unlock(-1) clears it.
    k.array().complex_mode = false;
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
    k.sched_point(t, "read mode flag");
    k.read(t, Field::ModeFlag);
    if (!sma.complex_mode) {
      k.spin_lock(t, n);
      k.fast_path_fence(t);  // smp_mb()
      k.sched_point(t, "recheck mode flag");
      k.read(t, Field::ModeFlag);  // smp_load_acquire(&sma->complex_mode)
      if (!sma.complex_mode) return n;
      k.spin_unlock(t, n);
    }
    k.spin_lock(t, kGlobalLock);
    k.read(t, Field::ComplexCount);
    if (sma.complex_count == 0) {
      k.spin_lock(t, n);
      k.spin_unlock(t, kGlobalLock);
      return n;
    }
    complexmode_enter(k, t);
    return kGlobalLock;
  }

  void sem_unlock(SemKernel& k, Task& t, int locknum) override {
    if (locknum != kGlobalLock) {
      k.spin_unlock(t, locknum);
      return;
    }
    complexmode_tryleave(k, t);
    k.spin_unlock(t, kGlobalLock);
  }

 private:
  static void complexmode_enter(SemKernel& k, Task& t) {
    auto& sma = k.array();
    k.read(t, Field::ModeFlag);
    if (sma.complex_mode) return;
    k.sched_point(t, "write mode flag");
    k.write(t, Field::ModeFlag);  // smp_store_mb(sma->complex_mode, true)
    sma.complex_mode = true;
    k.fence(t);
    for (int i = 0; i < sma.nsems(); ++i) k.spin_unlock_wait(t, i);
    k.rmb(t);
  }

  static void complexmode_tryleave(SemKernel& k, Task& t) {
    auto& sma = k.array();
    k.read(t, Field::ComplexCount);
    if (sma.complex_count != 0) return;
    k.sched_point(t, "write mode flag");
    k.write(t, Field::ModeFlag);  // smp_store_release(&sma->complex_mode, false)
    sma.complex_mode = false;
    k.cs_released(t);  // simple ops may run from here
  }
};

}  // namespace

std::unique_ptr<Generation> make_complex_mode_generation() {
  return std::make_unique<ComplexModeGeneration>();
}

}  // namespace semsim::ipc
