// Generation A, Linux <= 3.9: one spinlock per array.
//
// sem_lock() here is ipc_lock_check(): rcu_read_lock(), idr_find(), then
// spin_lock(&sma->sem_perm.lock) for every operation, simple or complex. The
// header checks run under the lock. Every successful altering op writes
// sma->sem_otime, on the line that also holds sem_base and security.
#include "ipc/kernel_policy.hpp"
#include "ipc/sem_kernel.hpp"

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
  p.otime = OtimeLocation::Array;
  p.otime_all_ops = false;
  p.wakeup = WakeupDelivery::InWakeup;
  p.header_bytes = 16;  // ipc_rcu_alloc(): HDRLEN_KMALLOC
  return p;
}

namespace {

class GlobalLockGeneration final : public Generation {
 public:
  int sem_lock(SemKernel& k, machine::Task& t, std::span<const Sembuf>) override {
    auto& sma = k.array();
    {
      machine::InFunc in(t, machine::Func::IpcObtain);
      k.lock(t, *sma.array_lock);  // ipc_lock(): the one lock of the array
    }
    return kGlobalLock;
  }
  void sem_unlock(SemKernel& k, machine::Task& t, int) override {
    k.unlock(t, *k.array().array_lock);
  }
};

}  // namespace

std::unique_ptr<Generation> make_global_lock_generation() {
  return std::make_unique<GlobalLockGeneration>();
}

}  // namespace semsim::ipc
