// The profile's rows under the kernel's own symbols, as perf report shows them
// for the generation: the syscall body's name of that release, functions the
// compiler inlined folded into their caller's row, the spinlock under its
// caller. The model attributes time to machine::Func; this maps a Func to the
// symbol perf would charge it to, and to its call chain (for folded stacks).
//
// Inlining, from the seeds' profiles and the sources:
//  - 3.10-rc2 (seed 000): _raw_spin_lock and ipc_obtain_object_check are called
//    from SYSC_semtimedop, so sem_lock() and sem_obtain_object_check() (static
//    inline in ipc/sem.c from 3.10) are part of SYSC_semtimedop's row;
//  - 3.9 (seed 000): _raw_spin_lock is called from ipc_lock (ipc_lock_check());
//  - the March 2013 series (seed 001): _raw_spin_lock is called from sem_lock,
//    still a function of its own there, from sys_semtimedop.
// copy_user_enhanced_fast_string, ipc_has_perm, avc_has_perm_flags and
// __audit_syscall_exit have rows of their own (commit 16df3674efe3's profiles).
// The other sem.c functions keep rows of their own (none of the seeds shows
// them folded; do_smart_update() has four callers).
#pragma once

#include <string>

#include "ipc/kernel_policy.hpp"
#include "machine/task.hpp"

namespace semsim::report {

// The syscall entry and return: system_call (<= 4.1), entry_SYSCALL_64 (4.2+).
std::string syscall_entry_symbol(const ipc::KernelPolicy& p);
// The syscall body: sys_semtimedop (<= 3.9), SYSC_semtimedop (3.10-4.16), do_semtimedop.
std::string syscall_body_symbol(const ipc::KernelPolicy& p);
// The row perf shows f's time under, for kernel p.
std::string kernel_symbol(machine::Func f, const ipc::KernelPolicy& p);
// f's call chain, outermost first, ';'-separated (the row's symbol last). With
// `kthread` (a kernel thread's function, e.g. "lock_torture_writer"), the tasks
// are that kernel thread: its lock and delay rows are under it, not a syscall.
std::string kernel_stack(machine::Func f, const ipc::KernelPolicy& p,
                         const std::string& kthread = "");

}  // namespace semsim::report
