// ipc/sem.c of one generation, over one simulated array: semtimedop() and
// the paths it runs (sem_lock, perform_atomic_semop, do_smart_update,
// update_queue, the sleep and wakeup protocol), semctl() and exit_sem(),
// charging each memory access to the cache line it touches and each step to
// the kernel function that performs it. Each kernel function also charges its
// own instructions (path(), kernel_path.hpp) where the generation calls it.
//
// What differs between generations is isolated in two objects built from the
// KernelPolicy: a Generation (the sem_lock()/sem_unlock() protocol,
// gen_<id>.cpp) and a QueueOps (where sleepers queue and the order
// do_smart_update() wakes them: the <= 3.9 code in gen_global_lock.cpp, the
// 3.10 code in gen_per_sem_lock.cpp, the 3.11+ code in gen_split_queues.cpp).
//
// Locking:
//  - sem_lock() returns the lock it took: a semaphore's (a simple operation
//    on its fast path) or kGlobalLock (the array path); sem_unlock() drops
//    that one. Which fields each lock covers: sem_array.hpp.
//  - semctl() and exit_sem() take the array path (sem_lock(sma, NULL, -1)):
//    they may change every semaphore.
//  - Wakeups are prepared under the lock (wake_up_sem_queue_prepare()) and
//    delivered after sem_unlock() (wake_up_sem_queue_do()), so that a woken
//    task does not find the lock still held by its waker.
//
// Memory ordering:
//  - A critical section ends when the release store of sem_unlock() lands
//    (cs_released()): until then the other CPUs see the lock held.
//  - IN_WAKEUP (<= 4.9): the waker stores IN_WAKEUP under the lock and the
//    result only after try_to_wake_up(); a sleeper that wakes first spins
//    (get_queue_result()) until the result lands, because its sem_queue is
//    on its stack and the waker still writes to it.
//  - wake_q (4.10+): the result is stored under the lock, after a reference
//    on the sleeper's task_struct is taken (wake_q_add()), so the sleeper may
//    return as soon as it sees the result.
//
// Exploration support: a KernelObserver sees every memory access (the trace
// hook of the per-op traffic test), every critical section, every change to
// a semaphore or queue and every wakeup (the invariant checkers of
// verify/explorer.hpp); set_precise() makes every racy read of sem_lock() a
// synchronisation point of the simulation, and set_jitter() adds seeded
// random delays there, so that the schedule explorer can make the windows of
// the kernels' races open.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "core/rng.hpp"
#include "ipc/kernel_path.hpp"
#include "ipc/kernel_policy.hpp"
#include "ipc/sem_array.hpp"
#include "machine/mlp.hpp"
#include "machine/scheduler.hpp"

namespace semsim::ipc {

class SemKernel;

// A wakeup prepared under the lock and delivered after it (wake_up_sem_queue_do / wake_up_q).
struct PendingWake {
  SemQueue* q;
  machine::Task* sleeper;
  std::uint64_t seq;  // the sleep it ends: a stale entry never wakes a later sleep
};
using WakeList = std::vector<PendingWake>;

// The sem_lock()/sem_unlock() protocol of a generation.
class Generation {
 public:
  virtual ~Generation() = default;
  // sops.size() == 1 is a simple operation; anything else, including no sops
  // at all (semctl() and exit_sem(): sem_lock(sma, NULL, -1)), takes the
  // array path. Returns the semaphore whose lock is held, or kGlobalLock.
  virtual int sem_lock(SemKernel& k, machine::Task& t, std::span<const Sembuf> sops) = 0;
  virtual void sem_unlock(SemKernel& k, machine::Task& t, int locknum) = 0;
  // The array's lock state as newary() leaves it.
  virtual void newary(SemKernel& k) { (void)k; }
  // <= 3.9: the idr lookup and permission reads run under ipc_lock().
  virtual bool lookup_under_lock() const { return false; }
  // Whether semtimedop() re-reads sem_perm.deleted once the lock is held
  // (ipc_valid_object()); the March 2013 series' code did not.
  virtual bool valid_object_after_lock() const { return true; }
  static constexpr int kGlobalLock = -1;
};

// Where sleepers queue and in which order do_smart_update() wakes them.
class QueueOps {
 public:
  virtual ~QueueOps() = default;
  // Under the lock, in semtimedop(): queue the caller's sem_queue.
  virtual void enqueue(SemKernel& k, machine::Task& t, SemQueue& q) = 0;
  virtual void unlink_queue(SemKernel& k, machine::Task& t, SemQueue& q) = 0;
  // sops empty stands for sops == NULL (semctl(), exit_sem()): the changed
  // semaphores are unknown. `otime`: the caller's own operation succeeded.
  virtual void do_smart_update(SemKernel& k, machine::Task& t, std::span<const Sembuf> sops,
                               bool otime, WakeList& wake) = 0;
  // sem_unlock(sma, -1) of 3.11+: move the alter sleepers back to their semaphores.
  virtual void unmerge_queues(SemKernel& k, machine::Task& t) {
    (void)k;
    (void)t;
  }
  // freeary(): fail every sleeper with EIDRM, in the kernel's list order.
  virtual void freeary(SemKernel& k, machine::Task& t, WakeList& wake) = 0;
};

ArrayLayout layout_for(const KernelPolicy& p);
std::unique_ptr<Generation> make_generation(const KernelPolicy& p);
std::unique_ptr<QueueOps> make_queue_ops(const KernelPolicy& p);

enum class AccessKind : std::uint8_t { Read, Write, Rmw, Fence, ReadBarrier };
const char* access_kind_name(AccessKind k);

// One memory access (or barrier) of the simulated kernel code.
struct AccessEvent {
  Field field;
  int sem = -1;   // the semaphore, for per-semaphore fields
  int line = -1;  // line index from the array allocation's start; -1: not an array line
  AccessKind kind;
};

// Sees what the simulated kernel does; every callback runs inside the
// simulation, at the acting task's cursor. Objects: a semaphore's index, or
// kArrayObject for the array's queues and complex_count.
class KernelObserver {
 public:
  static constexpr int kArrayObject = -1;
  virtual ~KernelObserver() = default;
  virtual void on_access(const machine::Task& t, const AccessEvent& e) {
    (void)t;
    (void)e;
  }
  // A critical section: from sem_lock() returning to sem_unlock()'s release
  // store landing (on_cs_end runs after it, before the wakeups are delivered).
  virtual void on_cs_begin(const machine::Task& t, int locknum) {
    (void)t;
    (void)locknum;
  }
  virtual void on_cs_end(const machine::Task& t, int locknum) {
    (void)t;
    (void)locknum;
  }
  // A change to a semaphore's value, pid or queues, or to the array's queues.
  virtual void on_modify(const machine::Task& t, int object) {
    (void)t;
    (void)object;
  }
  // wake_up_sem_queue_prepare(): `waker` completed `wakee`'s operation (or failed it).
  virtual void on_wake(const machine::Task& waker, const machine::Task& wakee, int status) {
    (void)waker;
    (void)wakee;
    (void)status;
  }
  // A kernel function's own instructions were charged (kernel_path.hpp).
  virtual void on_path(const machine::Task& t, PathFn f) {
    (void)t;
    (void)f;
  }
};

class SemKernel {
 public:
  SemKernel(const KernelPolicy& policy, const machine::Topology& topo, machine::Scheduler& sched,
            int nsems, std::uint64_t seed);
  ~SemKernel();
  SemKernel(const SemKernel&) = delete;
  SemKernel& operator=(const SemKernel&) = delete;

  // --- system calls, from user space to user space (0 or a value, or -errno)
  // semop(2). May block until another operation completes this one.
  int semop(machine::Task& t, std::span<const Sembuf> sops);
  // semtimedop(2): as semop, but a sleep ends with -EAGAIN after `timeout`
  // (ticks, >= 0; negative is -EINVAL).
  int semtimedop(machine::Task& t, std::span<const Sembuf> sops, Tick timeout);
  // semctl(2), one call per command, through the kernel's envelope: semctl_main()
  // (GETALL, SETALL, GETVAL, GETPID, GETNCNT, GETZCNT), semctl_setval() (SETVAL),
  // semctl_down() (IPC_RMID), each under the array lock (sem_lock(sma, NULL, -1)).
  int setval(machine::Task& t, int semnum, int value);
  int setall(machine::Task& t, std::span<const int> values);  // one value per semaphore
  int getval(machine::Task& t, int semnum);
  int getall(machine::Task& t, std::vector<int>* out);
  int getpid(machine::Task& t, int semnum);
  int getncnt(machine::Task& t, int semnum);
  int getzcnt(machine::Task& t, int semnum);
  int rmid(machine::Task& t);  // IPC_RMID: every sleeper fails with EIDRM
  // The last task of t.process exits: exit_sem() applies the process's
  // SEM_UNDO adjustments (clamped to [0, SEMVMX]) and wakes whom that lets
  // proceed. Tasks of the process still asleep in semop are failed with
  // EINTR first (the kernel kills them before the undo list goes).
  void exit_process(machine::Task& t);
  // A signal to `target`: if it sleeps in semop, it wakes and returns -EINTR
  // (unless its operation was completed first). Returns whether it slept there.
  bool signal(machine::Task& sender, machine::Task& target);

  // --- inspection
  SemArray& array() { return sma_; }
  const SemArray& array() const { return sma_; }
  const KernelPolicy& policy() const { return sma_.policy; }
  const machine::Topology& topo() const { return topo_; }
  // The process's undo adjustments, or nullptr (no SEM_UNDO yet, exited, removed).
  const std::vector<int>* semadj(int process) const;
  // Whether the task sleeps in semop (queued, its operation not completed).
  bool sleeping(const machine::Task& t) const;
  // Every queued sleeper whose operation is not completed, by task id.
  std::vector<const SemQueue*> sleepers() const;

  // --- exploration hooks
  void set_observer(KernelObserver* o) { observer_ = o; }
  // Every racy read and write of sem_lock() and every lock attempt becomes a
  // synchronisation point, so that they happen in simulated-time order.
  void set_precise(bool on) { precise_ = on; }
  // With probability p, a synchronisation point first delays the task by a
  // log-uniform min_delay..max_delay ticks (seeded). Implies set_precise(true).
  void set_jitter(std::uint64_t seed, double probability, Tick max_delay, Tick min_delay = 1);
  // A delay (ticks, before the jitter) for the task at a synchronisation
  // point, named by what follows it ("syscall" (entry), "perform_atomic_semop",
  // "wake_up_sem_queue_prepare", "sem_unlock" (inside critical sections), "spin_lock",
  // "spin_is_locked", "spin_unlock_wait", "read complex_count", "recheck complex_count" (after
  // taking the semaphore's lock), "write complex_count", "read mode flag",
  // "recheck mode flag", "write mode flag", "read_lock", "write_lock").
  // Implies set_precise(true).
  using ScheduleHook = std::function<Tick(const machine::Task&, const char* point)>;
  void set_schedule_hook(ScheduleHook hook) {
    hook_ = std::move(hook);
    precise_ = true;
  }

  // --- the kernel paths, for Generation and QueueOps
  // Function f's own instructions (kernel_path.hpp), charged where it runs.
  void path(machine::Task& t, PathFn f);
  void read(machine::Task& t, Field f, int sem = 0);
  // Independent loads (machine/mlp.hpp): between begin_loads() and end_loads()
  // the task's read()s do not wait for their lines, so a miss overlaps with the
  // work charged after it and with the other loads' misses (up to the machine's
  // fill_buffers); end_loads() waits for them all. The caller opens a window
  // only over code whose loads feed predicted branches and whose other work
  // does not use their values, and that makes no other access (no store, RMW,
  // lock or fence: on x86 a locked RMW or a fence waits for earlier loads).
  void begin_loads(machine::Task& t);
  void end_loads(machine::Task& t);
  void write(machine::Task& t, Field f, int sem = 0);
  void rmw(machine::Task& t, Field f, int sem = 0);
  // Returns when the access is done (a store: when other CPUs see it).
  Tick access(machine::Task& t, Field f, machine::CacheLine& line, AccessKind kind);
  void fence(machine::Task& t);            // smp_mb()
  void rmb(machine::Task& t);              // smp_rmb(): a compiler barrier on x86
  void fast_path_fence(machine::Task& t);  // the policy's barrier after the per-sem lock
  // Spinlocks: n >= 0 is sem[n].lock, kGlobalLock the array's sem_perm.lock.
  void spin_lock(machine::Task& t, int n);
  void spin_unlock(machine::Task& t, int n);
  bool spin_is_locked(machine::Task& t, int n);
  void spin_unlock_wait(machine::Task& t, int n);
  // The array rwlock of the March 2013 series (RwLock protocol only).
  void read_lock(machine::Task& t);
  void read_unlock(machine::Task& t);
  void write_lock(machine::Task& t);
  void write_unlock(machine::Task& t);
  // A synchronisation point before a racy access (see set_precise).
  void sched_point(machine::Task& t, const char* point);
  // Reports a change of a semaphore (or kArrayObject) to the observer.
  void modified(machine::Task& t, int object);
  // The queue primitives, with their line traffic: list_add_tail() / list_add()
  // of q.list (or, simple_list = true, of 3.9's q.simple_list) on the
  // pending list of `owner` (a semaphore, or -1 for the array's).
  void list_add_tail(machine::Task& t, SemList& list, int owner, SemQueue& q,
                     bool simple_list = false);
  void list_add(machine::Task& t, SemList& list, int owner, SemQueue& q, bool simple_list = false);
  void list_del(machine::Task& t, SemQueue& q, bool simple_list = false);
  // Moves every entry of `from` (semaphore from_owner's) to the front
  // (list_splice_init) or the back of `to` (array's when to_owner is -1).
  void list_splice(machine::Task& t, SemList& from, int from_owner, SemList& to, int to_owner,
                   bool to_front);
  // perform_atomic_semop() (try_atomic_semop() before 3.11) of q's operation
  // by the task holding the lock, with q's undo list and pid: a sleeper's, or
  // (from semtimedop()) the caller's own.
  int perform_atomic_semop(machine::Task& t, SemQueue& q);
  // wake_up_sem_queue_prepare(): the result is stored (IN_WAKEUP: marked) in
  // the sleeper's sem_queue and the wakeup queued for after the unlock.
  void wake_up_sem_queue_prepare(machine::Task& t, SemQueue& q, int error, WakeList& wake);
  // set_semotime() / sma->sem_otime = get_seconds(), where the policy keeps it.
  void set_semotime(machine::Task& t, std::span<const Sembuf> sops);
  // Inside sem_unlock(): the protocol's release, from which other tasks may
  // enter (the first lock release, or 4.9+'s store that leaves global mode).
  // Ends the critical section for the observer; later calls do nothing.
  void cs_released(machine::Task& t);
  // complex_count changes, a synchronisation point for the racy readers.
  void complex_count_add(machine::Task& t, int delta);

 private:
  struct TaskState {
    SemQueue queue;
    machine::CacheLine stack_line{"sleeper stack (struct sem_queue)"};
    machine::CacheLine task_line{"sleeper task_struct"};
    bool in_sleep = false;  // between queueing and returning from semop
    bool asleep = false;    // blocked in schedule(), not yet woken
    bool timed_out = false;
    bool signalled = false;
    std::uint64_t sleep_seq = 0;
    int cs_locknum = 0;         // the section sem_unlock() is ending
    bool cs_ending = false;     // ends at the first lock release of sem_unlock()
    machine::LoadWindow loads;  // begin_loads(): the loads not waited for yet
    bool loads_open = false;
    WakeList wake;  // do_semtimedop()'s wake_q (its capacity kept between calls)
  };
  struct ProcessState {
    std::vector<int> semadj;
    bool has_undo = false;
    machine::CacheLine undo_line{"sem_undo_list / sem_undo"};
  };

  // Every model step reads it: the lookup inline, the first one out of line.
  TaskState& state_of(machine::Task& t) {
    const auto id = static_cast<std::size_t>(t.id);
    if (id < tasks_.size() && tasks_[id]) [[likely]]
      return *tasks_[id];
    return new_state_of(t);
  }
  TaskState& new_state_of(machine::Task& t);
  int syscall(machine::Task& t, int result_if_fast, bool count);
  int do_semtimedop(machine::Task& t, std::span<const Sembuf> sops, const Tick* timeout);
  void ipc_obtain_object_check(machine::Task& t);
  void ipcperms(machine::Task& t);
  void security_sem_semop(machine::Task& t);
  // ipc_obtain_object_check(), the sem_nsems test, ipcperms() and the security
  // hook, their independent loads in one window (begin_loads()).
  void lookup_and_checks(machine::Task& t);
  void ipc_has_perm(machine::Task& t);  // security_ipc_permission() / the semop hook
  ProcessState& find_alloc_undo(machine::Task& t);
  enum class SemctlCmd { GetVal, GetPid, GetNcnt, GetZcnt, GetAll, SetAll, SetVal, Rmid };
  // union semun: SETVAL's value, SETALL's values, GETALL's destination.
  struct Semun {
    int val = 0;
    std::span<const int> setall;
    std::vector<int>* getall = nullptr;
  };
  int semctl(machine::Task& t, int semnum, SemctlCmd cmd, const Semun& arg);
  int semctl_main(machine::Task& t, int semnum, SemctlCmd cmd, const Semun& arg);
  int semctl_setval(machine::Task& t, int semnum, int val);
  int semctl_down(machine::Task& t);
  int lock_array_for_semctl(machine::Task& t);
  int sem_lock(machine::Task& t, std::span<const Sembuf> sops);
  void sem_unlock(machine::Task& t, int locknum);
  void wake_up_sem_queue_do(machine::Task& t, WakeList& wake);
  void wait_final_status(machine::Task& t, const SemQueue& q);
  void arm_timeout(machine::Task& t, TaskState& st, Tick date);
  int count_semcnt(int semnum, bool count_zero) const;
  void trace(const machine::Task& t, Field f, int sem, int line, AccessKind kind);
  machine::Spinlock& lock_of(int n);
  std::span<int> semadj_span(int process, bool undo);

  const machine::Topology& topo_;
  machine::Scheduler& sched_;
  SemArray sma_;
  std::unique_ptr<Generation> gen_;
  std::unique_ptr<QueueOps> queues_;
  std::vector<std::unique_ptr<TaskState>> tasks_;  // by task id
  std::array<Tick, kPathFnCount> path_ticks_{};    // path_ticks() of each function, once
  std::map<int, ProcessState> processes_;          // by process
  KernelObserver* observer_ = nullptr;
  bool precise_ = false;
  // The array's locks may owe a wait settled at its issue (machine/spinlock.hpp,
  // "Time order"), not while an exploration hook looks at every step.
  machine::Settle settle() const {
    return observer_ == nullptr && !precise_ ? machine::Settle::AtIssue : machine::Settle::Never;
  }
  double jitter_p_ = 0;
  Tick jitter_min_ = 1;
  Tick jitter_max_ = 0;
  Rng jitter_rng_{1};
  ScheduleHook hook_;
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);  // for timer callbacks
};

}  // namespace semsim::ipc
