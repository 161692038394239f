#include "ipc/kernel_path.hpp"

namespace semsim::ipc {

namespace {

// Cycles per call on the reference (3.10-rc2 with SELinux and audit, laptop-4).
// The sem.c functions are counted from their uncontended single-sop path in the
// 3.10.4 / 3.11 sources (reference/semc-generations.md sections 5.2, 7.2),
// at about one instruction per cycle: assumptions, each with its reading. The
// syscall body is what is left of the 425 cycles of the seed-000 derivation,
// so that the reference path sums to it (test KernelPath.ReferenceSum).
// Consistency with the seed-000 profile (3.10-rc2: SYSC_semtimedop 18.14 %,
// ipc_obtain_object_check 5.24 %, _raw_spin_lock 4.67 % of 922 cycles per op)
// is a check of the model (`semsim reproduce --only laptop4`), not a source.
constexpr PathCost kCosts[] = {
    {PathFn::SyscallBody, "SYSC_semtimedop", 243,
     "the rest of the seed-000 derivation's 425 cycles (cpu_models/README.md, laptop-4) after "
     "the functions below: copy_from_user of one sembuf (copy_user_enhanced_fast_string, listed "
     "in the 3.9 profile of 16df3674efe3), the nsops/undo/alter scan, the EFBIG and timeout "
     "checks, the sem_queue set-up and the return"},
    {PathFn::IpcObtainObjectCheck, "ipc_obtain_object_check", 25,
     "assumption: idr_find() through the idr hint (3.10's inline fast path) and ipc_checkid(), "
     "about 25 instructions; its load of sem_perm.seq is charged as a cache-line access"},
    {PathFn::Ipcperms, "ipcperms", 50,
     "assumption: audit_ipc_obj() and the uid/gid/mode tests (~30 instructions) plus "
     "security_ipc_permission(), one SELinux avc_has_perm: ~20 cycles, bounded by seed 000's "
     "3.10-rc2 profile, where avc_has_perm_flags (both calls of a semop) is not among the rows "
     "above _raw_spin_lock's 4.67 % of ~922 cycles per op, so below ~43 cycles for the two"},
    {PathFn::SecuritySemSemop, "security_sem_semop", 30,
     "assumption: the LSM call and selinux_sem_semop()'s ipc_has_perm (~10 instructions) plus "
     "one avc_has_perm (~20 cycles, bounded as in ipcperms)"},
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
