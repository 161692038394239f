// 3.10-rc2 with Manfred Spraul's May 2013 4-patch series (seed 000): the
// missed-wakeup fix, "separate wait-for-zero and alter tasks into seperate
// queues" (1a82e9e1d0f1), "always use only one queue for alter operations"
// (f269f40ad5ae) and the try_atomic_semop() -> perform_atomic_semop() rename.
// sem_lock() is still 3.10's; struct sem grows to 48 bytes (two list heads),
// unaligned, so semaphores straddle lines; sem_otime is still the array's.
//
// This file holds the queues of 3.11 and every later kernel:
//  - per semaphore and per array, pending_alter and pending_const, all FIFO;
//  - a simple alter op sleeps on its semaphore's pending_alter, or on the
//    array's while complex ops sleep; a complex op on the array's queues;
//  - the first complex sleeper merge_queues()s every semaphore's
//    pending_alter into the array's with list_splice_init(), which puts each
//    list at the FRONT: the last semaphore's sleepers end up first (the order
//    the current kernel was verified to have, verify/sem_reference.hpp);
//  - sem_unlock(sma, -1) unmerge_queues() them once complex_count is 0;
//  - do_smart_update(): wait-for-zero sleepers first (do_smart_wakeup_zero),
//    then the array's alter queue if it is not empty, else the alter queues
//    of the semaphores the operation increased; a completed alter sleeper
//    releases its own wait-for-zero sleepers before it is woken, and
//    check_restart() rescans while complex alter ops sleep.
//
// Locking:
//  - A semaphore's queues: its own lock or the array lock.
//  - The array's queues and complex_count: the array lock. A simple op holds
//    only its semaphore's lock when no complex op sleeps, i.e. when the
//    array's queues are empty, so its do_smart_update() may look at them.
//  - merge_queues() and unmerge_queues() move sleepers between the two,
//    under the array lock: while the array's alter queue is in use, every
//    alter sleeper is on it, so one FIFO orders them all.
#include <cerrno>

#include "ipc/kernel_policy.hpp"
#include "ipc/sem_kernel.hpp"

namespace semsim::ipc {

KernelPolicy split_queues_policy() {
  KernelPolicy p = per_sem_lock_policy();
  p.id = "split_queues";
  p.kernels = "3.10-rc2 + May 2013 series";
  p.description =
      "per_sem_lock plus separate wait-for-zero queues and one alter queue; 48-byte struct sem, "
      "unaligned";
  p.sem_layout = SemLayout::Unaligned48;
  p.array_layout = ArrayLayoutKind::V3_10Split;
  p.queues = QueueScheme::Merged;
  p.missed_wakeup_fix = true;
  return p;
}

namespace {

using machine::Task;

class MergedQueue final : public QueueOps {
 public:
  void enqueue(SemKernel& k, Task& t, SemQueue& q) override {
    auto& sma = k.array();
    k.read(t, Field::ComplexCount);
    if (q.sops.size() == 1) {
      const int n = q.sops[0].sem_num;
      const auto un = static_cast<std::size_t>(n);
      if (q.alter) {
        if (sma.complex_count != 0)
          k.list_add_tail(t, sma.global_alter, -1, q);
        else
          k.list_add_tail(t, sma.pending_alter[un], n, q);
      } else {
        k.list_add_tail(t, sma.pending_const[un], n, q);
      }
    } else {
      if (sma.complex_count == 0) merge_queues(k, t);
      k.list_add_tail(t, q.alter ? sma.global_alter : sma.global_const, -1, q);
      k.complex_count_add(t, +1);
    }
  }

  void unlink_queue(SemKernel& k, Task& t, SemQueue& q) override {
    k.list_del(t, q);
    if (q.sops.size() > 1) k.complex_count_add(t, -1);
  }

  void unmerge_queues(SemKernel& k, Task& t) override {
    auto& sma = k.array();
    k.read(t, Field::ComplexCount);
    if (sma.complex_count != 0) return;  // complex operations still around
    k.read(t, Field::Pending);
    const std::vector<SemQueue*> all(sma.global_alter.begin(), sma.global_alter.end());
    for (SemQueue* q : all) {
      const int n = q->sops[0].sem_num;
      k.list_del(t, *q);
      k.list_add_tail(t, sma.pending_alter[static_cast<std::size_t>(n)], n, *q);
    }
  }

  void do_smart_update(SemKernel& k, Task& t, std::span<const Sembuf> sops, bool otime,
                       WakeList& wake) override {
    k.path(t, PathFn::DoSmartUpdate);
    auto& sma = k.array();
    otime |= do_smart_wakeup_zero(k, t, sops, wake);
    k.read(t, Field::Pending);
    if (!sma.global_alter.empty()) {
      // The array uses the global queue: just process it.
      otime |= update_queue(k, t, -1, wake);
    } else if (sops.empty()) {
      for (int i = 0; i < sma.nsems(); ++i) otime |= update_queue(k, t, i, wake);
    } else {
      // No complex ops sleep, so every sleeper is a simple decrement: only
      // the semaphores this operation increased can release one.
      for (const auto& sop : sops)
        if (sop.sem_op > 0) otime |= update_queue(k, t, sop.sem_num, wake);
    }
    if (otime) k.set_semotime(t, sops);
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
    fail_all(sma.global_const);
    fail_all(sma.global_alter);
    for (std::size_t i = 0; i < sma.pending_alter.size(); ++i) {
      fail_all(sma.pending_const[i]);
      fail_all(sma.pending_alter[i]);
    }
  }

 private:
  // merge_queues(): list_splice_init() of every semaphore's pending_alter at
  // the head of the array's.
  static void merge_queues(SemKernel& k, Task& t) {
    auto& sma = k.array();
    for (int i = 0; i < sma.nsems(); ++i) {
      k.read(t, Field::SemPending, i);
      k.list_splice(t, sma.pending_alter[static_cast<std::size_t>(i)], i, sma.global_alter, -1,
                    true);
    }
  }

  // wake_const_ops(): every wait-for-zero sleeper of the list that can now
  // complete (or fails) is woken.
  bool wake_const_ops(SemKernel& k, Task& t, int semnum, WakeList& wake) {
    machine::InFunc in(t, machine::Func::WakeConstOps);
    k.path(t, PathFn::WakeConstOps);
    auto& sma = k.array();
    SemList& list =
        semnum < 0 ? sma.global_const : sma.pending_const[static_cast<std::size_t>(semnum)];
    k.read(t, semnum < 0 ? Field::Pending : Field::SemPending, semnum < 0 ? 0 : semnum);
    bool completed = false;
    for (auto walk = list.begin(); walk != list.end();) {
      SemQueue* q = *walk;
      ++walk;
      const int error = k.perform_atomic_semop(t, *q);
      if (error > 0) continue;
      unlink_queue(k, t, *q);
      k.wake_up_sem_queue_prepare(t, *q, error, wake);
      if (error == 0) completed = true;
    }
    return completed;
  }

  // do_smart_wakeup_zero(): for every semaphore of sops (all of them when
  // sops is NULL) that is now 0, its wait-for-zero sleepers, then the
  // array's if any reached 0.
  bool do_smart_wakeup_zero(SemKernel& k, Task& t, std::span<const Sembuf> sops, WakeList& wake) {
    machine::InFunc in(t, machine::Func::DoSmartWakeupZero);
    k.path(t, PathFn::DoSmartWakeupZero);
    auto& sma = k.array();
    bool completed = false;
    bool got_zero = false;
    const auto check = [&](int n) {
      k.read(t, Field::SemVal, n);
      if (sma.semval[static_cast<std::size_t>(n)] != 0) return;
      got_zero = true;
      completed |= wake_const_ops(k, t, n, wake);
    };
    if (!sops.empty()) {
      for (const auto& sop : sops) check(sop.sem_num);
    } else {
      for (int i = 0; i < sma.nsems(); ++i) check(i);
    }
    if (got_zero) completed |= wake_const_ops(k, t, -1, wake);
    return completed;
  }

  // check_restart(): complex alter ops sleeping, or q itself complex.
  static bool check_restart(const SemArray& sma, const SemQueue& q) {
    if (!sma.global_alter.empty()) return true;
    return q.sops.size() > 1;
  }

  bool update_queue(SemKernel& k, Task& t, int semnum, WakeList& wake) {
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
      // A semaphore's queue holds only simple decrements: none can proceed at 0.
      if (semnum >= 0 && sma.semval[static_cast<std::size_t>(semnum)] == 0) break;
      const int error = k.perform_atomic_semop(t, *q);
      if (error > 0) continue;
      unlink_queue(k, t, *q);
      bool restart = false;
      if (error == 0) {
        completed = true;
        do_smart_wakeup_zero(k, t, q->sops, wake);
        restart = check_restart(sma, *q);
      }
      k.wake_up_sem_queue_prepare(t, *q, error, wake);
      if (restart) goto again;
    }
    return completed;
  }
};

}  // namespace

std::unique_ptr<QueueOps> make_merged_queue() { return std::make_unique<MergedQueue>(); }

}  // namespace semsim::ipc
