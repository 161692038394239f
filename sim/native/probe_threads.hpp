// Small helpers the calibration probes share: private futex calls and the
// per-thread scheduling policy. Internal to sim/native.
#pragma once

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>

namespace semsim::native::probes {

// Private futexes (threads of one process): no mm/page lookup for the key, closer to the
// kernel-internal wake-ups of the semaphore code.
inline int futex(std::atomic<int>& word, int op, int val) {
  op |= FUTEX_PRIVATE_FLAG;
  return static_cast<int>(
      syscall(SYS_futex, reinterpret_cast<int*>(&word), op, val, nullptr, nullptr, 0));
}

// SCHED_BATCH for the calling thread only (no privilege needed): its wake-ups never
// preempt the task running on its CPU.
inline void set_batch_policy() {
  struct sched_param sp {};
  sched_setscheduler(0, SCHED_BATCH, &sp);
}

}  // namespace semsim::native::probes
