#include "machine/task.hpp"

#include <string>

#include "core/errors.hpp"

namespace semsim::machine {

const char* func_name(Func f) {
  switch (f) {
    case Func::User:
      return "[user] benchmark loop";
    case Func::SyscallEntry:
      return "entry_SYSCALL_64";
    case Func::SysSemtimedop:
      return "do_semtimedop";
    case Func::IpcObtain:
      return "ipc_obtain_object_check";
    case Func::SemLock:
      return "sem_lock";
    case Func::RawSpinLock:
      return "_raw_spin_lock";
    case Func::PerformAtomic:
      return "perform_atomic_semop";
    case Func::DoSmartUpdate:
      return "do_smart_update";
    case Func::UpdateQueue:
      return "update_queue";
    case Func::DoSmartWakeupZero:
      return "do_smart_wakeup_zero";
    case Func::WakeConstOps:
      return "wake_const_ops";
    case Func::IpcPerms:
      return "ipcperms";
    case Func::SecuritySemop:
      return "security_sem_semop";
    case Func::SemUnlock:
      return "_raw_spin_unlock";
    case Func::Wakeup:
      return "try_to_wake_up";
    case Func::Schedule:
      return "schedule";
    case Func::RawReadLock:
      return "_raw_read_lock";
    case Func::RawWriteLock:
      return "_raw_write_lock";
    case Func::RawRwUnlock:
      return "_raw_rw_unlock";
    case Func::Interrupt:
      return "[irq] interrupts and host";
    case Func::CopyFromUser:
      return "copy_user_enhanced_fast_string";
    case Func::IpcHasPerm:
      return "ipc_has_perm";
    case Func::AvcHasPerm:
      return "avc_has_perm_flags";
    case Func::AuditSyscallExit:
      return "__audit_syscall_exit";
    case Func::LockTortureWriter:
      return "lock_torture_writer";
    case Func::DelayTsc:
      return "delay_tsc";
    case Func::Count:
      break;
  }
  return "?";
}

const char* category_name(CpuCategory c) {
  switch (c) {
    case CpuCategory::User:
      return "user";
    case CpuCategory::Syscall:
      return "syscall";
    case CpuCategory::Kernel:
      return "kernel";
    case CpuCategory::Spin:
      return "spin";
    case CpuCategory::ContextSwitch:
      return "context_switch";
    case CpuCategory::Count:
      break;
  }
  return "?";
}

Tick CpuBreakdown::busy_total() const {
  Tick t = 0;
  for (Tick b : busy) t += b;
  return t;
}

double CpuBreakdown::share(CpuCategory c) const {
  const Tick total = busy_total() + idle;
  return total > 0 ? static_cast<double>(of(c)) / static_cast<double>(total) : 0.0;
}

double CpuBreakdown::idle_share() const {
  const Tick total = busy_total() + idle;
  return total > 0 ? static_cast<double>(idle) / static_cast<double>(total) : 0.0;
}

void Task::resumed_in_the_past() const {
  throw SimulationError("time order: task " + std::to_string(id) + " resumed at " +
                        std::to_string(ticks_to_ns(cursor)) + " ns, before the clock at " +
                        std::to_string(ticks_to_ns(actor->now())) + " ns");
}

CpuBreakdown breakdown_of(const FuncTimes& times, Tick elapsed) {
  CpuBreakdown b;
  for (int f = 0; f < kFuncCount; ++f)
    b.busy[static_cast<std::size_t>(category_of(static_cast<Func>(f)))] +=
        times[static_cast<std::size_t>(f)];
  const Tick busy = b.busy_total();
  b.idle = elapsed > busy ? elapsed - busy : 0;
  return b;
}

}  // namespace semsim::machine
