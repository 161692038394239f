// The intermediate "rwlock" variant of March 2013 (Davidlohr Bueso's "reduce
// ipc lock contention" series with Rik van Riel's first fine-grained
// patches): never merged. Its text could not be retrieved (reference section
// 4, [R]); this is the design the merged commit's table and the reference
// describe.
//
// Locking:
//  - A simple operation takes the array's rwlock for reading, then its
//    semaphore's spinlock: critical sections on different semaphores run in
//    parallel, but read_lock() and read_unlock() are atomic RMWs on the one
//    rwlock word, so its line ping-pongs between all CPUs (machine::RwLock).
//  - A complex operation, semctl() and exit_sem() take it for writing, which
//    excludes every simple operation.
//  - While complex operations sleep (complex_count != 0, which only changes
//    under the write lock), a simple operation takes the write lock too, as
//    its do_smart_update() must scan the array's queue (reconstruction: the
//    series had to exclude that somehow; this way is race-free).
//
// Memory ordering: the locks' acquire and release only; the complex_count
// read is under the read lock, which every writer of it excludes.
//
// Davidlohr's lockless ipc_obtain_object_check() is in (3.10-rc1), as are the
// 3.10 queues (one list per sleeper) and struct sem with its lock (32 bytes).
// The missed-wakeup fix came later (May 2013); it is on here so this
// generation shows the locking alone ("missed_wakeup_fix": false for the bug).
//
// What the series ran on, where it differs from 3.10 as released:
//  - The allocation header is 3.9's: ipc_rcu_alloc() puts HDRLEN_KMALLOC =
//    max(sizeof(ipc_rcu_grace), sizeof(ipc_rcu_hdr)) = 16 bytes before the
//    array (reference section 2.2, read in the 3.9.6 ipc/util.c) [assumption:
//    Davidlohr's four patches and the rwlock patches left ipc_rcu_alloc()
//    alone; the 24-byte struct ipc_rcu of per_sem_lock is read in 3.10.4,
//    after the series]. With 16 bytes, sem_perm.seq (sma+40) lies on
//    line 0 with the rwlock word: ipc_checkid()'s read of it, before the
//    lock, is a read of the rwlock's line, which every reader's RMW has just
//    taken away; and sem[0] and sem[1] (lock included) share line 2 with
//    complex_count and sem_nsems.
//  - No re-read of sem_perm.deleted once the lock is held: the semtimedop()
//    of 3.9/3.10 goes from sem_lock() to the un->semid check and the
//    operation (reference section 5.2); the re-check the model gives later
//    generations (ipc_valid_object()) is not in that code. With the rwlock,
//    that read would be one more miss on the hottest line.
#include "ipc/kernel_policy.hpp"
#include "ipc/sem_kernel.hpp"

namespace semsim::ipc {

KernelPolicy rwlock_policy() {
  KernelPolicy p = per_sem_lock_policy();
  p.id = "rwlock";
  p.kernels = "March 2013 series (never merged)";
  p.description =
      "rwlock on the array (read for simple ops, write for complex ones) + per-semaphore lock";
  p.sem_lock = LockProtocol::RwLock;
  p.header_bytes = 16;  // 3.9's ipc_rcu_alloc() header (HDRLEN_KMALLOC), see above
  return p;
}

namespace {

using machine::Task;

class RwLockGeneration final : public Generation {
 public:
  int sem_lock(SemKernel& k, Task& t, std::span<const Sembuf> sops) override {
    k.path(t, PathFn::SemLock);
    auto& sma = k.array();
    if (sops.size() == 1) {
      k.read_lock(t);
      k.read(t, Field::ComplexCount);
      if (sma.complex_count == 0) {
        k.spin_lock(t, sops[0].sem_num);
        return sops[0].sem_num;
      }
      k.read_unlock(t);  // complex ops sleep: the array's queue needs the write lock
    }
    k.write_lock(t);
    return kGlobalLock;
  }

  bool valid_object_after_lock() const override { return false; }  // see above

  void sem_unlock(SemKernel& k, Task& t, int locknum) override {
    if (locknum == kGlobalLock) {
      k.write_unlock(t);
      return;
    }
    k.spin_unlock(t, locknum);
    k.read_unlock(t);
  }
};

}  // namespace

std::unique_ptr<Generation> make_rwlock_generation() {
  return std::make_unique<RwLockGeneration>();
}

}  // namespace semsim::ipc
