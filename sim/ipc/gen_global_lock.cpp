// Generation A, Linux <= 3.9: one spinlock per array.
//
// Locking:
//  - sem_lock() is ipc_lock_check(): rcu_read_lock(), idr_find(), then
//    spin_lock(&sma->sem_perm.lock), for every operation, simple or complex,
//    and for semctl() and exit_sem(): nothing runs beside anything.
//  - The header checks (ipc_checkid(), ipcperms(), security) run under the
//    lock (lookup_under_lock()): every critical section includes them.
//
// Memory ordering: spin_lock() and spin_unlock() only.
//
// Every successful altering op writes sma->sem_otime, on the line that also
// holds sem_base and security.
//
// This file also holds the <= 3.9 queues (identical back to 3.0): every
// sleeper is on the array's sma->sem_pending list, and a single-sop sleeper
// also on its semaphore's sem_pending (through q->simple_list). Alter
// operations go at the tail, wait-for-zero ones at the head (list_add), in
// both lists. do_smart_update() scans the global list whenever a complex
// operation sleeps, so alter operations are then served in arrival order,
// wait-for-zero first; otherwise the per-semaphore lists of the semaphores
// the operation changed. Wakeups use the IN_WAKEUP protocol.
#include <cerrno>

#include "ipc/kernel_policy.hpp"
#include "ipc/sem_kernel.hpp"
#include "ipc/update_queue_3x.hpp"

namespace semsim::ipc {

KernelPolicy global_lock_policy() {
  KernelPolicy p;
  p.id = "global_lock";
  p.kernels = "<= 3.9";
  p.description =
      "one spinlock per array, sem_otime in the array, 24-byte struct sem, IN_WAKEUP wakeups";
  p.spinlock = SpinlockKind::Ticket;
  p.sem_lock = LockProtocol::GlobalLock;
  p.fence = FastPathFence::None;
  p.sem_layout = SemLayout::Packed24;
  p.array_layout = ArrayLayoutKind::V3_9;
  p.otime = OtimeLocation::Array;
  p.otime_all_ops = false;
  p.queues = QueueScheme::Global;
  p.missed_wakeup_fix = true;  // one global list: nothing to miss
  p.wakeup = WakeupDelivery::InWakeup;
  p.blocking_store = false;  // 3.16+
  p.two_pass = false;        // 4.10+
  p.header_bytes = 16;       // ipc_rcu_alloc(): HDRLEN_KMALLOC
  return p;
}

namespace {

using machine::Task;

class GlobalLockGeneration final : public Generation {
 public:
  int sem_lock(SemKernel& k, Task& t, std::span<const Sembuf>) override {
    machine::InFunc in(t, machine::Func::IpcObtain);
    k.spin_lock(t, kGlobalLock);  // ipc_lock(): the one lock of the array
    return kGlobalLock;
  }
  void sem_unlock(SemKernel& k, Task& t, int) override { k.spin_unlock(t, kGlobalLock); }
  bool lookup_under_lock() const override { return true; }
};

// The <= 3.9 queues: sma->sem_pending (global_alter here) and each
// semaphore's sem_pending (pending_alter[n]).
class GlobalQueue final : public QueueOps {
 public:
  void enqueue(SemKernel& k, Task& t, SemQueue& q) override {
    auto& sma = k.array();
    if (q.alter)
      k.list_add_tail(t, sma.global_alter, -1, q);
    else
      k.list_add(t, sma.global_alter, -1, q);
    if (q.sops.size() == 1) {
      const int n = q.sops[0].sem_num;
      auto& curr = sma.pending_alter[static_cast<std::size_t>(n)];
      if (q.alter)
        k.list_add_tail(t, curr, n, q, true);
      else
        k.list_add(t, curr, n, q, true);
    } else {
      k.complex_count_add(t, +1);
    }
  }

  void unlink_queue(SemKernel& k, Task& t, SemQueue& q) override {
    k.list_del(t, q);
    if (q.sops.size() == 1)
      k.list_del(t, q, true);
    else
      k.complex_count_add(t, -1);
  }

  void do_smart_update(SemKernel& k, Task& t, std::span<const Sembuf> sops, bool otime,
                       WakeList& wake) override {
    k.path(t, PathFn::DoSmartUpdate);
    auto& sma = k.array();
    k.read(t, Field::ComplexCount);
    if (sma.complex_count != 0 || sops.empty()) {
      if (update_queue(k, t, -1, wake)) otime = true;
    } else {
      for (const auto& sop : sops) {
        if (sop.sem_op > 0 ||
            (sop.sem_op < 0 && sma.semval[static_cast<std::size_t>(sop.sem_num)] == 0)) {
          if (update_queue(k, t, sop.sem_num, wake)) otime = true;
        }
      }
    }
    if (otime) k.set_semotime(t, sops);
  }

  void freeary(SemKernel& k, Task& t, WakeList& wake) override {
    auto& sma = k.array();
    const std::vector<SemQueue*> all(sma.global_alter.begin(), sma.global_alter.end());
    for (SemQueue* q : all) {
      unlink_queue(k, t, *q);
      k.wake_up_sem_queue_prepare(t, *q, -EIDRM, wake);
    }
  }

 private:
  bool update_queue(SemKernel& k, Task& t, int semnum, WakeList& wake) {
    return update_queue_3x(*this, k, t, semnum, wake);
  }
};

}  // namespace

std::unique_ptr<Generation> make_global_lock_generation() {
  return std::make_unique<GlobalLockGeneration>();
}
std::unique_ptr<QueueOps> make_global_queue() { return std::make_unique<GlobalQueue>(); }

}  // namespace semsim::ipc
