// Early Linux 3.10-rc (after "have only one list in struct sem_queue" and
// before patch 1/4 of Manfred Spraul's May 2013 series, "fix missing wakeups
// in do_smart_update()"): the 3.10 code of gen_per_sem_lock.cpp with the
// one-pass do_smart_update(). Kept so the simulator can show the missed
// wakeup happen (verify/explorer.hpp) and the fix remove it.
#include "ipc/kernel_policy.hpp"

namespace semsim::ipc {

KernelPolicy per_sem_lock_rc_policy() {
  KernelPolicy p = per_sem_lock_policy();
  p.id = "per_sem_lock_rc";
  p.kernels = "3.10-rc";
  p.description =
      "3.10 without the missed-wakeup fix: do_smart_update() makes one pass (loses wakeups)";
  p.missed_wakeup_fix = false;
  return p;
}

}  // namespace semsim::ipc
