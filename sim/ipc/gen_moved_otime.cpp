// Linux 3.11: the split_queues code plus Manfred Spraul's "replace shared
// sem_otime with per-semaphore value" (d12e1e50e47e): semop writes the
// sem_otime of its own semaphore, never a shared array line; "cacheline
// align the semaphore structures" (struct sem ____cacheline_aligned_in_smp,
// one line each) and the cache-line aligned ipc_rcu allocation header.
// sem_lock() is still 3.10's (gen_per_sem_lock.cpp), with its race; the
// queues are those of gen_split_queues.cpp. set_semotime() is called only by
// altering operations until 3.12.
#include "ipc/kernel_policy.hpp"

namespace semsim::ipc {

KernelPolicy moved_otime_policy() {
  KernelPolicy p = split_queues_policy();
  p.id = "moved_otime";
  p.kernels = "3.11";
  p.description =
      "split_queues plus per-semaphore sem_otime, cache-line aligned struct sem and allocation "
      "header";
  p.sem_layout = SemLayout::Aligned64;
  p.array_layout = ArrayLayoutKind::V3_11;
  p.otime = OtimeLocation::PerSem;
  p.otime_all_ops = false;
  p.header_bytes = 64;  // struct ipc_rcu ____cacheline_aligned_in_smp
  return p;
}

}  // namespace semsim::ipc
