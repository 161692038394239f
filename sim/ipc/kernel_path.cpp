#include "ipc/kernel_path.hpp"

namespace semsim::ipc {

namespace {

// Cycles per call on the reference (3.10-rc2 with SELinux and audit, laptop-4).
// The sem.c functions are counted from their uncontended single-sop path in the
// 3.10.4 / 3.11 sources (reference/semc-generations.md sections 5.2, 7.2),
// at about one instruction per cycle: assumptions, each with its reading.
//
// The functions perf lists as rows of their own come from the two profiles of
// commit 16df3674efe3 ("ipc,sem: do not hold ipc lock more than necessary",
// Davidlohr Bueso, March 2013): the same laptop and semop-multi 256/128 as
// seed 000, 3.9-rc1 at 5,048,409 ops/s and the series at 9,105,213 ops/s on 4
// CPUs, so 792.3 and 439.3 ns of a CPU per semop. A row's share x that is the
// function's time per semop, in cycles at laptop-4's 2.5 GHz, in the frame of
// the seed-000 derivation (a CPU's time taken as its own, as the 425 cycles
// are). The first profile is the source, the second the test (within 5 %).
//
// The syscall body is what is left of the 425 cycles of the seed-000
// derivation, so that the reference path sums to it (test KernelPath.ReferenceSum).
// Consistency with the seed-000 profile (3.10-rc2: SYSC_semtimedop 18.14 %,
// ipc_obtain_object_check 5.24 %, _raw_spin_lock 4.67 %) and with 3.9's
// sys_semtimedop 6.48 % is a check of the model (`semsim reproduce --only
// laptop4`), not a source.
constexpr PathCost kCosts[] = {
    {PathFn::SyscallBody, "SYSC_semtimedop", 74,
     "the rest of the seed-000 derivation's 425 cycles (cpu_models/README.md, laptop-4) after "
     "the functions below: the nsops/undo/alter scan of the sops, the EFBIG and timeout checks, "
     "the sem_queue set-up and the return. 16df3674efe3's 3.9-rc1 profile has sys_semtimedop "
     "at 6.14 % of 792.3 ns = 122 cycles, with its misses on the array's lines, which the "
     "model charges per access"},
    {PathFn::CopyFromUser, "copy_user_enhanced_fast_string", 41,
     "16df3674efe3's 3.9-rc1 profile: 2.06 % of 792.3 ns per semop = 16.3 ns = 41 cycles at "
     "2.5 GHz (copy_from_user() of one sembuf, rep movsb's start-up)"},
    {PathFn::IpcObtainObjectCheck, "ipc_obtain_object_check", 25,
     "assumption: idr_find() through the idr hint (3.10's inline fast path) and ipc_checkid(), "
     "about 25 instructions; its load of sem_perm.seq is charged as a cache-line access"},
    {PathFn::Ipcperms, "ipcperms", 30,
     "assumption: audit_ipc_obj()'s test and the uid/gid/mode tests, about 30 instructions; "
     "below 16df3674efe3's 3.9-rc1 bound (not among its rows of 1.86 % and more: under 37 "
     "cycles); its security_ipc_permission() is ipc_has_perm and avc_has_perm_flags below"},
    {PathFn::SecuritySemSemop, "security_sem_semop", 10,
     "assumption: the LSM dispatch and selinux_sem_semop()'s choice of the permission, about "
     "10 instructions; its ipc_has_perm() and avc_has_perm_flags() are below"},
    {PathFn::IpcHasPerm, "ipc_has_perm", 10,
     "assumption: about 10 instructions per call (the isec and sid loads, the audit data set-up, "
     "the call); its load of sem_perm.security is charged as a cache-line access (16df3674efe3's "
     "series profile has ipc_has_perm.isra.21 at 7.70 %, 34 ns, with that line bouncing, its "
     "3.9-rc1 profile under 1.86 % for the two calls)"},
    {PathFn::AvcHasPerm, "avc_has_perm_flags", 38,
     "16df3674efe3's 3.9-rc1 profile: 3.84 % of 792.3 ns per semop = 30.4 ns = 76 cycles for "
     "the two calls (ipcperms' and security_sem_semop's); its series profile: 6.58 % of 439.3 ns "
     "= 72 cycles"},
    {PathFn::AuditSyscallExit, "__audit_syscall_exit", 72,
     "16df3674efe3's 3.9-rc1 profile: 3.64 % of 792.3 ns per semop = 28.8 ns = 72 cycles; its "
     "series profile: 6.54 % of 439.3 ns = 72 cycles (audit enabled: every syscall's return)"},
    {PathFn::SemLock, "sem_lock", 15,
     "assumption: 3.10's fast path besides its loads and the lock atomic: the nsops and "
     "complex_count tests, the semaphore's address, spin_is_locked()'s compare (~15 "
     "instructions)"},
    {PathFn::PerformAtomicSemop, "perform_atomic_semop", 25,
     "assumption: try_atomic_semop() for one sop: the loop, the range and sign tests, the "
     "semval and sempid stores, the undo test (~25 instructions)"},
    {PathFn::DoSmartUpdate, "do_smart_update", 15,
     "assumption: do_smart_update()'s complex_count test and loop over one sop (~15 "
     "instructions)"},
    {PathFn::UpdateQueue, "update_queue", 12,
     "assumption: update_queue() on an empty list: the list head, the loop test, the return "
     "(~12 instructions with call and return)"},
    {PathFn::DoSmartWakeupZero, "do_smart_wakeup_zero", 12,
     "assumption: 3.11's do_smart_wakeup_zero() for one sop: the loop, the semval test, the "
     "got_zero test (~12 instructions with call and return)"},
    {PathFn::WakeConstOps, "wake_const_ops", 12,
     "assumption: 3.11's wake_const_ops() on an empty list, as update_queue (~12 instructions "
     "with call and return)"},
    {PathFn::SetSemotime, "set_semotime", 5,
     "assumption: get_seconds() (one load of the timekeeper, a cached line) and the store "
     "(~5 instructions)"},
    {PathFn::SemUnlock, "sem_unlock", 5,
     "assumption: sem_unlock()'s locknum test and rcu_read_unlock() (~5 instructions; the "
     "release store is charged by the lock)"},
};
static_assert(sizeof(kCosts) / sizeof(kCosts[0]) == static_cast<std::size_t>(PathFn::Count));

}  // namespace

const PathCost& path_cost(PathFn f) { return kCosts[static_cast<std::size_t>(f)]; }

Tick path_ticks(Tick semop_kernel_path, PathFn f) {
  const Tick cycles = path_cost(f).cycles;
  return (semop_kernel_path * cycles + kReferencePathCycles / 2) / kReferencePathCycles;
}

}  // namespace semsim::ipc
