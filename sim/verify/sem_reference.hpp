// A sequential reference model of one SysV semaphore array with sleeping
// tasks, as the current kernel (4.11 and later, i.e. 5.x/6.x) behaves.
//
// It has no locks and no time: every call runs to completion, the way a call
// does under the array lock. The simulated generations are checked against it,
// and it is checked against the real kernel (tests/cpp/test_semantics_diff.cpp).
//
// What it replays (names follow ipc/sem.c):
//  - semtimedop(): argument checks, perform_atomic_semop(), sleeping on the
//    per-semaphore or global queues (pending_alter / pending_const), the
//    merge_queues()/unmerge_queues() switch while complex operations sleep.
//  - do_smart_update(): wait-for-zero sleepers first (do_smart_wakeup_zero),
//    then the alter sleepers (update_queue, with check_restart()), the waker
//    performing each woken operation on the sleeper's behalf.
//  - semctl() SETVAL/SETALL/GETVAL/GETALL/GETPID/GETNCNT/GETZCNT/IPC_RMID with
//    the kernel's errors, count_semcnt(), freeary(), exit_sem().
//  - Timeouts and signals ending a sleep, and process exit (SEM_UNDO).
//
// Tasks are identified by ints; each task belongs to a process (by default a
// process of its own id). The threads of a process share one undo list.
// All results use the kernel's convention: a value >= 0, or -errno.
#pragma once

#include <list>
#include <map>
#include <span>
#include <vector>

#include "ipc/sembuf.hpp"

namespace semsim::ipc {

class SemArrayModel {
 public:
  enum class SemopKind { kDone, kBlocked, kError };
  struct SemopOutcome {
    SemopKind kind = SemopKind::kDone;
    int error = 0;  // -errno when kind == kError, else 0
    bool operator==(const SemopOutcome&) const = default;
  };
  // A task whose sleep ended during the last call, and its semop's result.
  struct Wakeup {
    int task = 0;
    int status = 0;  // 0 (its operation was performed) or -errno
    bool operator==(const Wakeup&) const = default;
  };

  // nsems in [1, SEMMSL]; semopm is the namespace's SEMOPM (kernel.sem[2]).
  explicit SemArrayModel(int nsems, int semopm = kSemopmDefault);

  // Puts a task in a process (threads of one process share its undo list).
  // Tasks never named here are processes of their own id.
  void set_process(int task, int process);
  int process_of(int task) const;

  // semop()/semtimedop() by a task that is not sleeping (std::logic_error if
  // it is). has_timeout says whether a sleep may later end by timeout(). On
  // kBlocked the task sleeps until woken by another call (see woken()),
  // timeout(), signal(), exit of its process or IPC_RMID.
  SemopOutcome semop(int task, std::span<const Sembuf> sops, bool has_timeout = false);

  // semctl(). The caller's process only matters for GETPID (sempid).
  int setval(int semnum, int value, int caller_process = 0);
  // values: one per semaphore, as the unsigned shorts user space passes
  // (anything outside [0, SEMVMX] is -ERANGE).
  int setall(std::span<const int> values, int caller_process = 0);
  int getval(int semnum) const;
  int getall(std::vector<int>* out) const;
  int getpid(int semnum) const;
  int getncnt(int semnum) const;
  int getzcnt(int semnum) const;
  int rmid();

  // The timeout of a sleeping task with has_timeout expires: it leaves the
  // queue with -EAGAIN. Returns false if the task is not sleeping (its
  // wakeup won the race), true otherwise; std::logic_error if it sleeps
  // without a timeout.
  bool timeout(int task);
  // A signal interrupts a sleeping task: it leaves with -EINTR. Returns false
  // if the task is not sleeping (a signal does not affect a running semop).
  bool signal(int task);
  // The process exits: its sleeping tasks are interrupted (-EINTR), then
  // exit_sem() applies its undo adjustments, clamped to [0, SEMVMX], and
  // wakes whoever that lets proceed.
  void exit_process(int process);

  // The tasks whose sleep ended during the last call, in wake order, i.e. the
  // order of the kernel's wake_q (the caller of semop() is not listed: its
  // result is the return value). User space cannot observe this order on a
  // real kernel; the differential test checks who completes and with what.
  const std::vector<Wakeup>& woken() const { return woken_; }

  // Inspection.
  int nsems() const { return static_cast<int>(semval_.size()); }
  int semopm() const { return semopm_; }
  bool removed() const { return removed_; }
  bool sleeping(int task) const { return sleepers_.count(task) != 0; }
  std::vector<int> sleeping_tasks() const;  // ascending task id
  std::span<const int> values() const { return semval_; }
  // The undo adjustments of a process for this array, or nullptr if it has
  // none (no SEM_UNDO operation yet, exited, or the array was removed).
  const std::vector<int>* semadj(int process) const;
  int complex_count() const { return complex_count_; }

 private:
  using Queue = std::list<int>;  // task ids, FIFO

  struct Sleeper {
    int task = 0;
    int process = 0;
    std::vector<Sembuf> sops;
    bool undo = false;  // has a SEM_UNDO sop: uses the process's semadj
    bool has_timeout = false;
    int blocking = 0;  // index of the sop that blocked at the last try
    // The list it sleeps on: semaphore queue_sem's (-1: the array's), the
    // alter or the const one. An index rather than a pointer or iterator, so
    // the model stays copyable (a copy is how a caller asks "what if").
    int queue_sem = -1;
    bool queue_alter = false;
  };

  int perform(Sleeper& q);
  int perform_for(int process, std::span<const Sembuf> sops, bool undo, int* blocking);
  void set_sempid(std::span<const Sembuf> sops, int process);
  Queue& queue_of(int semnum, bool alter);
  void enqueue(Sleeper& q, int semnum, bool alter);
  void unlink_queue(Sleeper& q);
  void wake(int task, int status);
  void merge_queues();
  void unmerge_queues();
  bool wake_const_ops(int semnum);
  // sops empty: the changed semaphores are not known (semctl, exit_sem).
  bool do_smart_wakeup_zero(std::span<const Sembuf> sops);
  bool update_queue(int semnum);
  void do_smart_update(std::span<const Sembuf> sops);
  void end_sleep(int task, int status);
  void begin_call() { woken_.clear(); }
  void end_call();
  int count_semcnt(int semnum, bool count_zero) const;

  int semopm_;
  bool removed_ = false;
  std::vector<int> semval_;
  std::vector<int> sempid_;
  std::vector<Queue> sem_alter_;  // per-semaphore pending_alter
  std::vector<Queue> sem_const_;  // per-semaphore pending_const
  Queue global_alter_;            // sma->pending_alter
  Queue global_const_;            // sma->pending_const
  int complex_count_ = 0;
  std::map<int, Sleeper> sleepers_;       // by task
  std::map<int, std::vector<int>> undo_;  // by process
  std::map<int, int> process_of_;         // task -> process, when not its own id
  std::vector<Wakeup> woken_;
};

}  // namespace semsim::ipc
