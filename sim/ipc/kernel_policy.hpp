// A kernel generation as a composition of policies (design section 3).
//
// Each generation file (gen_*.cpp) fills one KernelPolicy with what its
// ipc/sem.c did; a scenario may name a base generation and override any
// policy, so a user can ask what one change would do.
#pragma once

#include <string>
#include <vector>

namespace semsim::ipc {

enum class SpinlockKind { Ticket, Queued };  // ticket until 4.1, qspinlock from 4.2
// Which sem_lock()/sem_unlock() protocol the generation uses.
enum class LockProtocol { GlobalLock, Hysteresis };
enum class FastPathFence { None, Full, ReadOnly };  // barrier after the per-semaphore lock
// sizeof(struct sem) and alignment: how many semaphores share a cache line.
enum class SemLayout { Packed24, Packed32, Unaligned48, Aligned64 };
enum class OtimeLocation { Array, PerSem };     // where semop writes sem_otime
enum class WakeupDelivery { InWakeup, WakeQ };  // <= 4.9 IN_WAKEUP, >= 4.10 wake_q

struct KernelPolicy {
  std::string id;           // generation id, or "<base>+overrides" for what-if kernels
  std::string kernels;      // the releases it replays, e.g. "<= 3.9"
  std::string description;  // one line for `semsim list`
  SpinlockKind spinlock = SpinlockKind::Queued;
  LockProtocol sem_lock = LockProtocol::Hysteresis;
  FastPathFence fence = FastPathFence::None;
  int hysteresis = 10;  // USE_GLOBAL_LOCK_HYSTERESIS (4.11+)
  SemLayout sem_layout = SemLayout::Aligned64;
  OtimeLocation otime = OtimeLocation::PerSem;
  bool otime_all_ops = true;  // 3.12+: set_semotime() also for wait-for-zero
  WakeupDelivery wakeup = WakeupDelivery::WakeQ;
  int header_bytes = 0;  // allocation header before struct sem_array (ipc_rcu)
};

// The released generations, in kernel order.
const std::vector<KernelPolicy>& generations();
const KernelPolicy* find_generation(const std::string& id);

// Registered by each generation file.
KernelPolicy global_lock_policy();
KernelPolicy hysteresis_policy();

}  // namespace semsim::ipc
