// sem_lock "lock_all": Rik van Riel's v3 series as posted (lkml, 20 March 2013,
// the series seed 001 measured with swingbench) and as merged in 6062a8dc0517
// ("ipc,sem: fine grained locking for semtimedop", 3.10-rc1), whose message
// says: "If the call needs to manipulate multiple semaphores, or another caller
// is in a transaction that manipulates multiple semaphores, the sem_array lock
// is taken, as well as all the locks for the individual semaphores."
//
// Locking (reconstructed from that message and the later fix, reference
// section 5.1; the 3.10 release replaced the loop of spin_lock()s with
// spin_unlock_wait()s and a spin_is_locked() back-off, gen_per_sem_lock.cpp,
// because holding hundreds of spinlocks overflowed lockdep's MAX_LOCK_DEPTH):
//  - A simple operation with complex_count 0 takes its semaphore's lock and
//    re-reads complex_count (non-zero: it drops the lock and goes global). It
//    never looks at the array lock: a complex operation holds every semaphore
//    lock, so it cannot run beside one.
//  - A complex operation, semctl() and exit_sem() take the array lock and then
//    every semaphore's lock in index order; sem_unlock(-1) releases them all,
//    then the array lock. Every one of these acquisitions is a _raw_spin_lock.
//
// The rest (queues, layout, otime) is the base generation's: it is a what-if
// composition, {"base": "per_sem_lock", "sem_lock": "lock_all"}.
#include "ipc/kernel_policy.hpp"
#include "ipc/sem_kernel.hpp"

namespace semsim::ipc {

namespace {

using machine::Task;

class LockAllGeneration final : public Generation {
 public:
  int sem_lock(SemKernel& k, Task& t, std::span<const Sembuf> sops) override {
    k.path(t, PathFn::SemLock);
    auto& sma = k.array();
    if (sops.size() == 1) {
      k.sched_point(t, "read complex_count");
      k.read(t, Field::ComplexCount);
      if (sma.complex_count == 0) {
        const int n = sops[0].sem_num;
        k.spin_lock(t, n);
        k.fast_path_fence(t);  // none in the series; a what-if may add one
        k.sched_point(t, "recheck complex_count");
        k.read(t, Field::ComplexCount);
        if (sma.complex_count == 0) return n;
        k.spin_unlock(t, n);  // a complex op went to sleep meanwhile: lock_all
      }
    }
    k.spin_lock(t, kGlobalLock);
    for (int i = 0; i < sma.nsems(); ++i) k.spin_lock(t, i);
    return kGlobalLock;
  }

  void sem_unlock(SemKernel& k, Task& t, int locknum) override {
    if (locknum == kGlobalLock)
      for (int i = 0; i < k.array().nsems(); ++i) k.spin_unlock(t, i);
    k.spin_unlock(t, locknum);
  }
};

}  // namespace

std::unique_ptr<Generation> make_lock_all_generation() {
  return std::make_unique<LockAllGeneration>();
}

}  // namespace semsim::ipc
