// A kernel generation as a composition of policies (design section 3).
//
// Each generation file (gen_*.cpp) fills one KernelPolicy with what its
// ipc/sem.c did; a scenario may name a base generation and override any
// policy ("kernel": {"base": id, <policy>: value}), so a user can ask what one
// change would do and attribute a gain to each part of a patch series.
#pragma once

#include <string>
#include <vector>

namespace semsim::ipc {

// Ticket until 4.1, qspinlock from 4.2; Cna: qspinlock with the NUMA-aware slow
// path of the CNA series (NUMA_AWARE_SPINLOCKS, posted 2019-2021, not merged).
enum class SpinlockKind { Ticket, Queued, Cna };

// Which sem_lock()/sem_unlock() protocol the generation uses.
enum class LockProtocol {
  GlobalLock,  // <= 3.9: ipc_lock() of the one array lock, for everything
  RwLock,      // March 2013 series: read_lock(array) + spin_lock(sem) / write_lock(array)
  PerSemLock,  // 3.10, 3.11: complex_count test, spin_is_locked() back-off, spin_unlock_wait() scan
  LockAll,     // the v3 series as posted (6062a8dc, 3.10-rc1): complex ops take every sem lock
  WaitArray,   // 3.12-4.8: the rewrite with sem_wait_array() skipped while complex_count != 0
  ComplexMode,  // 4.9-4.10: complex_mode flag, complexmode_enter()/complexmode_tryleave()
  Hysteresis,   // 4.11+: use_global_lock with hysteresis, lock/unlock of every sem lock on entry
};

// The barrier after the per-semaphore spin_lock() in sem_lock()'s fast path.
enum class FastPathFence {
  None,
  Full,      // smp_mb(): 3.12-3.18, and 4.9-4.10
  ReadOnly,  // smp_rmb(): 3.19-4.8 ("up to 10% faster"); a compiler barrier on x86
};

// struct sem: its fields and alignment, i.e. how many semaphores share a line.
enum class SemLayout {
  Packed24,     // <= 3.9: semval, sempid, sem_pending (no lock)
  Packed32,     // 3.10: + spinlock: two semaphores per 64-byte line
  Unaligned48,  // 3.10-rc2 + May 2013 series: pending_alter + pending_const, unaligned
  Unaligned56,  // what-if: 3.11's fields (with sem_otime) without the cache-line alignment
  Aligned64,    // 3.11+: ____cacheline_aligned_in_smp, one line each
};

// struct sem_array: where its fields sit (reference section 2.3).
enum class ArrayLayoutKind {
  V3_9,        // <= 3.10: sem_otime in the array, one global sem_pending list
  V3_10Split,  // 3.10-rc2 + May 2013 series: sem_otime still in the array, two global lists
  V3_11,       // 3.11-4.7: no sem_otime, pending_alter/pending_const
  V4_8,        // 4.8-4.12: + complex_mode / use_global_lock on its own line
  Current,     // 4.13+: struct sem embedded (sems[]), kern_ipc_perm with rcu/refcount
};

enum class OtimeLocation { Array, PerSem };  // where semop writes sem_otime

// Where sleepers queue and in which order they are woken.
enum class QueueScheme {
  Global,   // <= 3.9: every sleeper on sma->sem_pending (+ simple ones on their semaphore's
            // list); alter ops at the tail, wait-for-zero at the head
  OneList,  // 3.10: each sleeper on exactly one list (simple: its semaphore's, complex: the
            // array's); complex sleepers are tried first
  Merged,   // 3.11+: pending_alter/pending_const per semaphore and per array, wait-for-zero
            // first, one alter queue (merge_queues) while complex ops sleep
};

enum class WakeupDelivery { InWakeup, WakeQ };  // <= 4.9 IN_WAKEUP, >= 4.10 wake_q

struct KernelPolicy {
  std::string id;           // generation id, or "<base>+key=value..." for what-if kernels
  std::string kernels;      // the releases it replays, e.g. "<= 3.9"
  std::string description;  // one line for `semsim list`
  SpinlockKind spinlock = SpinlockKind::Queued;
  LockProtocol sem_lock = LockProtocol::Hysteresis;
  FastPathFence fence = FastPathFence::None;
  int hysteresis = 10;  // USE_GLOBAL_LOCK_HYSTERESIS (4.11+)
  SemLayout sem_layout = SemLayout::Aligned64;
  ArrayLayoutKind array_layout = ArrayLayoutKind::Current;
  OtimeLocation otime = OtimeLocation::PerSem;
  bool otime_all_ops = true;  // 3.12+: set_semotime() also for wait-for-zero
  QueueScheme queues = QueueScheme::Merged;
  bool missed_wakeup_fix = true;  // 3.10: do_smart_update() iterates to a fixed point
  WakeupDelivery wakeup = WakeupDelivery::WakeQ;
  // 3.16+: a blocked attempt records the sop that blocked it in the queue entry
  // (q->blocking, for count_semcnt()), so a scan that tries a sleeper and fails
  // stores to the sleeper's sem_queue, a line on the sleeper's stack.
  bool blocking_store = true;
  // 4.10+: perform_atomic_semop() checks every sop before it writes any. Before,
  // one pass applied each sop in turn and, when a later one blocked or failed,
  // undid those applied: a failed try wrote their semaphores' lines twice.
  bool two_pass = true;
  int header_bytes = 0;  // allocation header before struct sem_array (ipc_rcu)
};

// Why a policy cannot be built (a field missing from a layout the
// protocol needs), naming the policy field and what would be allowed; empty
// if it is consistent. parse_kernel() reports it as an input error.
struct PolicyProblem {
  std::string field;  // the policy key, e.g. "sem_layout"
  std::string what;
};
std::vector<PolicyProblem> check_policy(const KernelPolicy& p);

// The released generations, in kernel order.
const std::vector<KernelPolicy>& generations();
const KernelPolicy* find_generation(const std::string& id);

// Registered by each generation file.
KernelPolicy global_lock_policy();
KernelPolicy rwlock_policy();
KernelPolicy per_sem_lock_policy();
KernelPolicy per_sem_lock_rc_policy();
KernelPolicy split_queues_policy();
KernelPolicy moved_otime_policy();
KernelPolicy wait_array_policy();
KernelPolicy complex_mode_policy();
KernelPolicy hysteresis_policy();

}  // namespace semsim::ipc
