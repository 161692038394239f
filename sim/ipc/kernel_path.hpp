// The kernel path's own instructions, per function of ipc/sem.c (and the
// ipc/util.c and LSM functions semtimedop() calls), instead of one lumped
// figure for every generation.
//
// Each function's cost is in cycles of the reference machine and kernel: the
// seed-000 derivation (cpu_models/README.md, laptop-4): Linux 3.10-rc2 with
// SELinux and audit, semop-multi 256/128, 369 ns of CPU per semop of which 425
// cycles (170 ns at 2.5 GHz) are the instructions the simulator does not replay
// access by access. That 425 is the sum, over the functions one such semop runs
// under per_sem_lock_rc, of the table below (a test states it). A generation
// charges a function where its ipc/sem.c calls it (the generation files and
// sem_kernel.cpp), so a kernel that calls more functions costs more.
//
// The cycles are as measured: seed 000's and 16df3674efe3's profiles were taken
// with every hardware thread of the laptop busy, each thread beside a sibling
// that computes. A machine's `semop_kernel_path` (ns) is its own time for the
// reference path (no sibling busy): a function costs semop_kernel_path x
// cycles / 425, and SMT sharing (machine/smt.hpp) stretches that while siblings
// are busy. On laptop-4 semop_kernel_path is the 425 cycles at 2.5 GHz over
// its smt_compute_slowdown, so that with its siblings busy each function takes
// its cycles of the table again (test KernelPath.WithEverySiblingBusyOnLaptop4
// ARowIsItsMeasuredCycles). The other 2013-2016 presets still carry 425
// cycles at their clock as their own time (cpu_models/README.md); a calibrated
// host closes semop_kernel_path on its own probe.
//
// The functions perf lists as rows of their own (copy_user_enhanced_fast_string,
// avc_has_perm_flags, __audit_syscall_exit) are charged under their own symbols,
// so the syscall body's row holds only the body's own code, as in perf.
//
// What is NOT in these costs: the memory accesses of the functions (charged
// per cache line), the spinlocks, the fences, the syscall entry and exit.
#pragma once

#include <cstdint>

#include "core/time.hpp"

namespace semsim::ipc {

enum class PathFn : std::uint8_t {
  SyscallBody,           // SYSC_semtimedop's own code: the scan of the sops, the checks, the
                         // sem_queue set-up, the return (semctl: its body)
  CopyFromUser,          // copy_user_enhanced_fast_string: copy_from_user() of the sops
  IpcObtainObjectCheck,  // ipc_obtain_object_check (<= 3.9: ipc_lock_check): idr_find, ipc_checkid
  Ipcperms,              // ipcperms()'s own code: audit_ipc_obj, uid/gid/mode
  SecuritySemSemop,      // security_sem_semop(): the LSM hook's dispatch (selinux_sem_semop)
  IpcHasPerm,            // ipc_has_perm(), one call (from ipcperms' security_ipc_permission()
                         // and from security_sem_semop())
  AvcHasPerm,            // avc_has_perm_flags(), one call (one per ipc_has_perm())
  AuditSyscallExit,      // __audit_syscall_exit(), once per syscall, on its return
  SemLock,               // sem_lock()'s own code, outside the lock atomic and the loads
  PerformAtomicSemop,    // perform_atomic_semop() / try_atomic_semop(), one call
  DoSmartUpdate,         // do_smart_update()
  UpdateQueue,           // update_queue(), one call (the list walk's entries are accesses)
  DoSmartWakeupZero,     // do_smart_wakeup_zero() (3.11+ queues)
  WakeConstOps,          // wake_const_ops() (3.11+ queues), one call
  SetSemotime,           // get_seconds() and the store of sem_otime
  SemUnlock,             // sem_unlock()'s own code and rcu_read_unlock()
  Count
};
constexpr int kPathFnCount = static_cast<int>(PathFn::Count);

struct PathCost {
  PathFn fn;
  const char* name;  // the kernel function
  int cycles;        // on the reference machine and kernel
  const char* source;
};

// The reference path: cycles of one semop-multi semop under 3.10-rc2 on laptop-4.
constexpr int kReferencePathCycles = 425;

const PathCost& path_cost(PathFn f);
// What function f costs on a machine whose reference path takes `semop_kernel_path`.
Tick path_ticks(Tick semop_kernel_path, PathFn f);

}  // namespace semsim::ipc
