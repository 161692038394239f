// Linux 4.11+ and current 6.x: per-semaphore locks for simple operations, the
// array lock for complex ones, and use_global_lock with hysteresis.
//
// sem_lock() fast path: a plain read of use_global_lock; if 0, spin_lock() the
// semaphore's own lock and confirm with a load-acquire. No full fence (4.11
// "avoid using spin_unlock_wait()"). Entering global mode from 0 does a
// lock/unlock of every semaphore's lock (complexmode_enter); every global-mode
// unlock without sleeping complex ops decrements the counter
// (complexmode_tryleave), so after a complex op the array stays in global
// mode for USE_GLOBAL_LOCK_HYSTERESIS operations. newary() leaves it at 9.
#include "ipc/kernel_policy.hpp"
#include "ipc/sem_kernel.hpp"

namespace semsim::ipc {

KernelPolicy hysteresis_policy() {
  KernelPolicy p;
  p.id = "hysteresis";
  p.kernels = ">= 4.11, current 6.x";
  p.description = "per-semaphore locks, use_global_lock hysteresis 10, wake_q, no fence";
  p.spinlock = SpinlockKind::Queued;
  p.sem_lock = LockProtocol::Hysteresis;
  p.fence = FastPathFence::None;
  p.hysteresis = 10;
  p.sem_layout = SemLayout::Aligned64;
  p.otime = OtimeLocation::PerSem;
  p.otime_all_ops = true;
  p.wakeup = WakeupDelivery::WakeQ;
  p.header_bytes = 0;  // kvzalloc(struct_size(sma, sems, nsems)), no separate header
  return p;
}

namespace {

using machine::Func;
using machine::InFunc;
using machine::Task;

class HysteresisGeneration final : public Generation {
 public:
  void newary(SemArray& sma) override {
    // newary() sets use_global_lock = HYSTERESIS; its own sem_unlock(-1) takes one off.
    sma.use_global_lock = sma.policy.hysteresis - 1;
  }

  int sem_lock(SemKernel& k, Task& t, std::span<const Sembuf> sops) override {
    auto& sma = k.array();
    InFunc in(t, Func::SemLock);
    auto& mode_line = sma.line_at(sma.layout.mode_flag);
    if (sops.size() != 1) {
      k.lock(t, *sma.array_lock);
      complexmode_enter(k, t);
      return kGlobalLock;
    }
    const int n = sops[0].sem_num;
    auto& sem_lock = *sma.sem_locks[static_cast<std::size_t>(n)];
    k.read(t, mode_line);  // READ_ONCE(sma->use_global_lock)
    if (sma.use_global_lock == 0) {
      k.lock(t, sem_lock);
      if (sma.policy.fence == FastPathFence::Full) k.fence(t);
      k.read(t, mode_line);                    // smp_load_acquire(&sma->use_global_lock)
      if (sma.use_global_lock == 0) return n;  // fast path
      k.unlock(t, sem_lock);
    }
    k.lock(t, *sma.array_lock);
    if (sma.use_global_lock == 0) {
      k.lock(t, sem_lock);
      k.unlock(t, *sma.array_lock);
      return n;
    }
    return kGlobalLock;
  }

  void sem_unlock(SemKernel& k, Task& t, int locknum) override {
    auto& sma = k.array();
    if (locknum != kGlobalLock) {
      k.unlock(t, *sma.sem_locks[static_cast<std::size_t>(locknum)]);
      return;
    }
    // complexmode_tryleave(): stay global while complex ops sleep.
    if (sma.complex_count == 0) {
      k.write(t, sma.line_at(sma.layout.mode_flag));
      --sma.use_global_lock;
    }
    k.unlock(t, *sma.array_lock);
  }

 private:
  static void complexmode_enter(SemKernel& k, Task& t) {
    auto& sma = k.array();
    const bool was_simple = sma.use_global_lock == 0;
    k.write(t, sma.line_at(sma.layout.mode_flag));
    sma.use_global_lock = sma.policy.hysteresis;
    if (!was_simple) return;
    // Wait out every simple op in flight: lock and unlock each semaphore.
    for (auto& l : sma.sem_locks) {
      k.lock(t, *l);
      k.unlock(t, *l);
    }
  }
};

}  // namespace

std::unique_ptr<Generation> make_hysteresis_generation() {
  return std::make_unique<HysteresisGeneration>();
}

}  // namespace semsim::ipc
