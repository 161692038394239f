#include "report/kernel_symbols.hpp"

namespace semsim::report {

using ipc::LockProtocol;
using machine::Func;

namespace {

bool sem_lock_inlined(const ipc::KernelPolicy& p) {
  return p.sem_lock != LockProtocol::GlobalLock && p.sem_lock != LockProtocol::RwLock;
}

// try_atomic_semop() until the May 2013 series renamed it (patch 4/4).
const char* atomic_symbol(const ipc::KernelPolicy& p) {
  return p.queues == ipc::QueueScheme::Merged ? "perform_atomic_semop" : "try_atomic_semop";
}

}  // namespace

std::string syscall_entry_symbol(const ipc::KernelPolicy& p) {
  // Linux 4.2 renamed system_call to entry_SYSCALL_64 (x86/asm/entry), the release
  // that also brought the queued spinlock: the generations' spinlock kind tells them apart.
  return p.spinlock == ipc::SpinlockKind::Ticket ? "system_call" : "entry_SYSCALL_64";
}

std::string syscall_body_symbol(const ipc::KernelPolicy& p) {
  switch (p.sem_lock) {
    case LockProtocol::GlobalLock:
    case LockProtocol::RwLock:  // the March 2013 series was on 3.9
      return "sys_semtimedop";
    case LockProtocol::Hysteresis:  // 4.11+: do_semtimedop from 4.17 on
      return "do_semtimedop";
    default:
      return "SYSC_semtimedop";
  }
}

std::string kernel_symbol(Func f, const ipc::KernelPolicy& p) {
  switch (f) {
    case Func::SysSemtimedop:
      return syscall_body_symbol(p);
    case Func::SemLock:
      return sem_lock_inlined(p) ? syscall_body_symbol(p) : "sem_lock";
    case Func::IpcObtain:
      return p.sem_lock == LockProtocol::GlobalLock ? "ipc_lock" : "ipc_obtain_object_check";
    case Func::PerformAtomic:
      return atomic_symbol(p);
    case Func::SyscallEntry:
      return syscall_entry_symbol(p);
    default:
      return machine::func_name(f);
  }
}

std::string kernel_stack(Func f, const ipc::KernelPolicy& p, const std::string& kthread) {
  if (!kthread.empty()) {
    const std::string base = "kthread;" + kthread;
    switch (f) {
      case Func::Interrupt:
        return "[irq]";
      case Func::LockTortureWriter:
        return base;
      case Func::DelayTsc:
        return base + ";torture_spin_lock_write_delay;delay_tsc";
      default:
        return base + ";" + kernel_symbol(f, p);
    }
  }
  const std::string entry = syscall_entry_symbol(p);
  const std::string sys = entry + ";" + syscall_body_symbol(p);
  const std::string sym = kernel_symbol(f, p);
  switch (f) {
    case Func::User:
      return "[user]";
    case Func::SyscallEntry:
      return entry;
    case Func::AuditSyscallExit:
      return entry + ";__audit_syscall_exit";
    case Func::IpcHasPerm:  // also reached from ipcperms' security_ipc_permission()
      return sys + ";security_sem_semop;ipc_has_perm";
    case Func::AvcHasPerm:
      return sys + ";security_sem_semop;ipc_has_perm;avc_has_perm_flags";
    case Func::Interrupt:
      return "[irq]";
    case Func::SysSemtimedop:
      return sys;
    case Func::SemLock:
      return sem_lock_inlined(p) ? sys : sys + ";sem_lock";
    case Func::RawSpinLock:
      if (p.sem_lock == LockProtocol::GlobalLock) return sys + ";ipc_lock;_raw_spin_lock";
      return sem_lock_inlined(p) ? sys + ";_raw_spin_lock" : sys + ";sem_lock;_raw_spin_lock";
    case Func::RawReadLock:
    case Func::RawWriteLock:
      return sys + ";sem_lock;" + sym;
    case Func::SemUnlock:
    case Func::RawRwUnlock:
      return sys + ";sem_unlock;" + sym;
    case Func::UpdateQueue:
      return sys + ";do_smart_update;update_queue";
    case Func::DoSmartWakeupZero:
      return sys + ";do_smart_update;do_smart_wakeup_zero";
    case Func::WakeConstOps:
      return sys + ";do_smart_update;do_smart_wakeup_zero;wake_const_ops";
    case Func::Wakeup:
      return sys + ";wake_up_sem_queue_do;try_to_wake_up";
    default:
      return sys + ";" + sym;
  }
}

}  // namespace semsim::report
