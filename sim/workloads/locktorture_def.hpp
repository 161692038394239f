// locktorture: the kernel's lock torture module (kernel/locking/locktorture.c,
// torture_type=spin_lock, the default), its writer kthreads only. Each writer
// loops (lock_torture_writer(), v5.7 to v5.9, the kernels of the published
// qspinlock/CNA figures):
//
//   spin_lock(&torture_spinlock);             the kernel's spinlock (ticket up to
//                                             4.1, qspinlock from 4.2: the
//                                             scenario's kernel says which)
//   lock_is_write_held = true;                a global flag (its line moves with
//   WARN_ON(lock_is_read_held);                 the lock: every holder writes it)
//   lwsp->n_lock_acquired++;                  the writer's own counter in an array
//                                             of 16-byte lock_stress_stats: four
//                                             writers share each 64-byte line
//   torture_spin_lock_write_delay():          three torture_random() draws, each
//     1 in (writers * 2000 * longdelay_ms):     taken modulo a product (a 64-bit
//       mdelay(longdelay_ms)                    DIV each); the delays are TSC
//     1 in (writers * 2 * shortdelay_us):       busy-waits, held under the lock
//       udelay(shortdelay_us)
//     1 in (writers * 20000): preempt check
//   lock_is_write_held = false;
//   spin_unlock(&torture_spinlock);
//   stutter_wait(); torture_must_stop();      read-mostly globals, outside the lock
//
// The figure is ops_per_s = acquisitions per second, all writers (the module
// prints the writers' n_lock_acquired sums). What the model leaves out, each a
// constant factor on every thread count: the stutter kthread, which halves
// every writer's running time by default; the 1-in-2^20 sleep of a jiffy at
// the loop's top; set_user_nice() (the machine runs nothing else).
// The random state is per writer since v5.7 ("locktorture: Use private
// random-number generators"), so it is private data here.
#pragma once

#include <cstdint>

namespace semsim::workloads {

struct LocktortureParams {
  // The module's constants in torture_spin_lock_write_delay(): 100 ms held
  // once in writers * 2000 * 100 acquisitions, 2 us once in writers * 2 * 2.
  // A run must be long to see the long hold at all (at 1 M acquisitions/s,
  // one in 0.2 s x writers): 0 turns it off (semsim reproduce adds its mean
  // analytically, python/semsim/reproduce_locktorture.py).
  std::int64_t longdelay_ms = 100;
  std::int64_t shortdelay_us = 2;
};

}  // namespace semsim::workloads
