// Generation C, Linux 3.10 (Rik van Riel's "fine grained locking for
// semtimedop", 6062a8dc0517, with the 3.10-rc fixes; code as in 3.10.4).
// 3.11 kept this sem_lock(); 3.12 replaced it.
//
// Locking:
//  - A simple operation reads complex_count; if 0 it takes its semaphore's
//    lock, re-reads complex_count (non-zero: it goes global, as complex
//    sleepers are on the array's queue) and tests
//    spin_is_locked(&sma->sem_perm.lock) (locked: it drops its lock, waits
//    for the array lock with spin_unlock_wait() and starts again, as a
//    complex operation may be running).
//  - A complex operation, semctl() and exit_sem() take the array lock and
//    spin_unlock_wait() every semaphore's lock, so that no simple operation
//    is still inside its section.
//
// Memory ordering: no barrier after the per-semaphore spin_lock() (the
// "fence" policy may add one); complex_count and the array lock word are
// read with plain loads.
//
// The race it carries (fixed by the 3.12 rewrite): complex_count is tested
// BEFORE spin_is_locked(). A complex operation that scanned the semaphore
// locks before we took ours can go to sleep (complex_count = 1) and release
// the array lock between our two reads, so we proceed on the fast path while
// a complex operation sleeps: our do_smart_update() then completes sleepers
// of the array's queue, and changes their semaphores, holding only our lock.
//
// The 3.10 queues (Rik's "have only one list in struct sem_queue",
// 9f1bc2c9022c): a sleeper is on exactly one list, a simple one on its
// semaphore's sem_pending, a complex one on the array's; alter operations at
// the tail, wait-for-zero at the head. do_smart_update() scans the array's
// list first, so complex sleepers are always tried before simple ones.
//
// The missed-wakeup fix of 3.10 (patch 1/4 of Manfred Spraul's May 2013
// series, reconstructed from the 3.10.4 code): do_smart_update() iterates to
// a fixed point, rescanning the array's list and, after a complex wakeup,
// every semaphore's list. Without it (3.10-rc, per_sem_lock_rc) it does one
// pass, and two wakeups are lost: a woken complex operation that increments
// a semaphore the caller did not touch leaves that semaphore's sleepers
// asleep; a simple decrement that reaches 0 does not rescan the complex
// wait-for-zero sleepers.
#include <cerrno>

#include "ipc/kernel_policy.hpp"
#include "ipc/sem_kernel.hpp"
#include "ipc/update_queue_3x.hpp"

namespace semsim::ipc {

KernelPolicy per_sem_lock_policy() {
  KernelPolicy p;
  p.id = "per_sem_lock";
  p.kernels = "3.10";
  p.description =
      "per-semaphore locks, complex_count, shared sem_otime, 32-byte struct sem (two per line), "
      "one list per sleeper, missed-wakeup fix";
  p.spinlock = SpinlockKind::Ticket;
  p.sem_lock = LockProtocol::PerSemLock;
  p.fence = FastPathFence::None;
  p.sem_layout = SemLayout::Packed32;
  p.array_layout = ArrayLayoutKind::V3_9;
  p.otime = OtimeLocation::Array;
  p.otime_all_ops = false;
  p.queues = QueueScheme::OneList;
  p.missed_wakeup_fix = true;
  p.wakeup = WakeupDelivery::InWakeup;
  p.blocking_store = false;  // 3.16+
  p.two_pass = false;        // 4.10+
  p.header_bytes = 24;       // struct ipc_rcu { rcu_head; atomic_t refcount; }, unaligned
  return p;
}

namespace {

using machine::Task;

class PerSemLockGeneration final : public Generation {
 public:
  int sem_lock(SemKernel& k, Task& t, std::span<const Sembuf> sops) override {
    k.path(t, PathFn::SemLock);
    auto& sma = k.array();
    if (sops.size() == 1) {
      const int n = sops[0].sem_num;
      for (;;) {  // again:
        k.sched_point(t, "read complex_count");
        k.read(t, Field::ComplexCount);
        if (sma.complex_count != 0) break;  // lock_array
        k.spin_lock(t, n);
        k.fast_path_fence(t);  // none in 3.10; a what-if may add one
        k.sched_point(t, "recheck complex_count");
        k.read(t, Field::ComplexCount);
        if (sma.complex_count != 0) {
          k.spin_unlock(t, n);
          break;  // goto lock_array
        }
        if (k.spin_is_locked(t, kGlobalLock)) {
          k.spin_unlock(t, n);
          k.spin_unlock_wait(t, kGlobalLock);
          continue;  // goto again
        }
        return n;
      }
    }
    // lock_array: the array lock, then wait for every simple op in flight.
    k.spin_lock(t, kGlobalLock);
    for (int i = 0; i < sma.nsems(); ++i) k.spin_unlock_wait(t, i);
    return kGlobalLock;
  }

  void sem_unlock(SemKernel& k, Task& t, int locknum) override { k.spin_unlock(t, locknum); }
};

// The 3.10 queues: each semaphore's sem_pending (pending_alter[n]) and the
// array's sma->sem_pending (global_alter).
class OneListQueue final : public QueueOps {
 public:
  void enqueue(SemKernel& k, Task& t, SemQueue& q) override {
    auto& sma = k.array();
    if (q.sops.size() == 1) {
      const int n = q.sops[0].sem_num;
      auto& curr = sma.pending_alter[static_cast<std::size_t>(n)];
      if (q.alter)
        k.list_add_tail(t, curr, n, q);
      else
        k.list_add(t, curr, n, q);
    } else {
      if (q.alter)
        k.list_add_tail(t, sma.global_alter, -1, q);
      else
        k.list_add(t, sma.global_alter, -1, q);
      k.complex_count_add(t, +1);
    }
  }

  void unlink_queue(SemKernel& k, Task& t, SemQueue& q) override {
    k.list_del(t, q);
    if (q.sops.size() > 1) k.complex_count_add(t, -1);
  }

  void do_smart_update(SemKernel& k, Task& t, std::span<const Sembuf> sops, bool otime,
                       WakeList& wake) override {
    k.path(t, PathFn::DoSmartUpdate);
    if (k.policy().missed_wakeup_fix)
      do_smart_update_fixed(k, t, sops, otime, wake);
    else
      do_smart_update_rc(k, t, sops, otime, wake);
  }

  void freeary(SemKernel& k, Task& t, WakeList& wake) override {
    auto& sma = k.array();
    const auto fail_all = [&](SemList& list) {
      const std::vector<SemQueue*> all(list.begin(), list.end());
      for (SemQueue* q : all) {
        unlink_queue(k, t, *q);
        k.wake_up_sem_queue_prepare(t, *q, -EIDRM, wake);
      }
    };
    fail_all(sma.global_alter);
    for (auto& list : sma.pending_alter) fail_all(list);
  }

 private:
  static bool increments_or_zeroes(const SemArray& sma, const Sembuf& sop) {
    return sop.sem_op > 0 ||
           (sop.sem_op < 0 && sma.semval[static_cast<std::size_t>(sop.sem_num)] == 0);
  }

  // 3.10-rc: one pass, the array's list (while complex ops sleep, or for
  // semctl), then the lists of the semaphores named in the caller's sops.
  void do_smart_update_rc(SemKernel& k, Task& t, std::span<const Sembuf> sops, bool otime,
                          WakeList& wake) {
    auto& sma = k.array();
    k.read(t, Field::ComplexCount);
    if (sma.complex_count != 0 || sops.empty()) {
      if (update_queue(k, t, -1, wake)) otime = true;
    }
    if (sops.empty()) {
      for (int i = 0; i < sma.nsems(); ++i)
        if (update_queue(k, t, i, wake)) otime = true;
    } else {
      for (const auto& sop : sops)
        if (increments_or_zeroes(sma, sop) && update_queue(k, t, sop.sem_num, wake)) otime = true;
    }
    if (otime) k.set_semotime(t, sops);
  }

  // 3.10 as released: iterate to a fixed point (retry_global).
  void do_smart_update_fixed(SemKernel& k, Task& t, std::span<const Sembuf> sops, bool otime,
                             WakeList& wake) {
    auto& sma = k.array();
    bool progress = true;
    bool unknown = sops.empty();  // sops == NULL: the changed semaphores are unknown
    for (;;) {                    // retry_global:
      k.read(t, Field::ComplexCount);
      if (sma.complex_count != 0) {
        if (update_queue(k, t, -1, wake)) {
          progress = true;
          otime = true;
          unknown = true;  // a complex op completed: unknown changes
        }
      }
      if (!progress) break;  // goto done
      if (unknown) {
        for (int i = 0; i < sma.nsems(); ++i) {
          if (update_queue(k, t, i, wake)) {
            otime = true;
            progress = true;
          }
        }
      } else {
        for (const auto& sop : sops) {
          if (increments_or_zeroes(sma, sop) && update_queue(k, t, sop.sem_num, wake)) {
            otime = true;
            progress = true;
          }
        }
      }
      // done_checkretry:
      if (!progress) break;
      progress = false;
    }
    if (otime) k.set_semotime(t, sops);
  }

  bool update_queue(SemKernel& k, Task& t, int semnum, WakeList& wake) {
    return update_queue_3x(*this, k, t, semnum, wake);
  }
};

}  // namespace

std::unique_ptr<Generation> make_per_sem_lock_generation() {
  return std::make_unique<PerSemLockGeneration>();
}
std::unique_ptr<QueueOps> make_one_list_queue() { return std::make_unique<OneListQueue>(); }

}  // namespace semsim::ipc
