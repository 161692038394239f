#include "ipc/sem_array.hpp"

#include <fmt/format.h>

namespace semsim::ipc {

machine::LockKind lock_kind(SpinlockKind k) {
  switch (k) {
    case SpinlockKind::Ticket:
      return machine::LockKind::Ticket;
    case SpinlockKind::Cna:
      return machine::LockKind::Cna;
    default:
      return machine::LockKind::Queued;
  }
}

const char* field_name(Field f) {
  switch (f) {
    case Field::Lock:
      return "sem_perm.lock";
    case Field::Perm:
      return "sem_perm (deleted/perms)";
    case Field::Seq:
      return "sem_perm.seq";
    case Field::Security:
      return "sem_perm.security";
    case Field::Otime:
      return "sma->sem_otime";
    case Field::SemBase:
      return "sma->sem_base";
    case Field::Pending:
      return "sma->pending";
    case Field::Nsems:
      return "sma->sem_nsems";
    case Field::ComplexCount:
      return "sma->complex_count";
    case Field::ModeFlag:
      return "complex_mode/use_global_lock";
    case Field::SemVal:
      return "sem->semval";
    case Field::SemLock:
      return "sem->lock";
    case Field::SemPending:
      return "sem->pending";
    case Field::SemOtime:
      return "sem->sem_otime";
    case Field::SleeperStack:
      return "sem_queue (sleeper stack)";
    case Field::TaskStruct:
      return "task_struct";
    case Field::UndoList:
      return "sem_undo";
    case Field::Barrier:
      return "barrier";
  }
  return "?";
}

SemArray::SemArray(const KernelPolicy& p, const ArrayLayout& l, const machine::Topology& topo,
                   int n, std::uint64_t seed)
    : policy(p),
      layout(l),
      semval(static_cast<std::size_t>(n), 0),
      sempid(static_cast<std::size_t>(n), 0),
      pending_alter(static_cast<std::size_t>(n)),
      pending_const(static_cast<std::size_t>(n)),
      line_spinning_(topo.params().kernel_line_spinning),
      line_contention_(topo.params().kernel_line_contention) {
  for (std::size_t i = 0; i < kFields; ++i) {
    const auto f = static_cast<Field>(i);
    field_offsets_[i] = offset_of_field(f, 0);
    per_sem_[i] =
        f == Field::SemVal || f == Field::SemLock || f == Field::SemPending || f == Field::SemOtime;
  }
  // Name the array lines after the fields on them, for the hottest-lines report.
  auto name = [&](int off, const char* field) {
    if (off < 0) return;
    auto& line = line_at(off);
    if (line.name().find(field) != std::string::npos) return;
    line.set_name(line.name().empty() ? fmt::format("sma line {}: {}", off / kCacheLineBytes, field)
                                      : line.name() + ", " + field);
  };
  name(l.lock, p.sem_lock == LockProtocol::RwLock ? "rwlock" : "sem_perm.lock");
  name(l.perm, "perm");
  name(l.seq, "seq");
  name(l.security, "security");
  name(l.otime, "sem_otime");
  name(l.sem_base, "sem_base");
  name(l.pending, "pending lists");
  name(l.nsems, "sem_nsems");
  name(l.complex_count, "complex_count");
  name(l.mode_flag, p.sem_lock == LockProtocol::Hysteresis ? "use_global_lock" : "complex_mode");
  for (int i = 0; i < n; ++i) {
    const int first = (l.sems + i * l.sem_size) / kCacheLineBytes;
    const int last = (l.sems + (i + 1) * l.sem_size - 1) / kCacheLineBytes;
    for (int li = first; li <= last; ++li) {
      auto& line = line_at(li * kCacheLineBytes);
      line.set_name(line.name().empty() ? fmt::format("sem[{}]", i)
                                        : line.name() + fmt::format(", sem[{}]", i));
    }
  }
  // The March 2013 series' lock word is the rwlock: its spinners are the rwlock's.
  const bool rw = p.sem_lock == LockProtocol::RwLock;
  array_lock = std::make_unique<machine::Spinlock>(lock_kind(p.spinlock), &line_at(l.lock), seed);
  if (!rw) array_lock->set_line_spinning(line_spinning_);
  if (rw) {
    rwlock = std::make_unique<machine::RwLock>(&line_at(l.lock), seed);
    rwlock->set_line_spinning(line_spinning_);
  }
  if (l.sem_lock >= 0) {
    for (int i = 0; i < n; ++i) {
      sem_locks.push_back(
          std::make_unique<machine::Spinlock>(lock_kind(p.spinlock), &sem_line(i, l.sem_lock),
                                              seed + 1 + static_cast<std::uint64_t>(i)));
      sem_locks.back()->set_line_spinning(line_spinning_);
    }
  }
}

int SemArray::offset_of_field(Field f, int sem) const {
  const auto in_sem = [&](int off) {
    return off < 0 ? -1 : layout.sems + sem * layout.sem_size + off;
  };
  switch (f) {
    case Field::Lock:
      return layout.lock;
    case Field::Perm:
      return layout.perm;
    case Field::Seq:
      return layout.seq;
    case Field::Security:
      return layout.security;
    case Field::Otime:
      return layout.otime;
    case Field::SemBase:
      return layout.sem_base;
    case Field::Pending:
      return layout.pending;
    case Field::Nsems:
      return layout.nsems;
    case Field::ComplexCount:
      return layout.complex_count;
    case Field::ModeFlag:
      return layout.mode_flag;
    case Field::SemVal:
      return in_sem(0);
    case Field::SemLock:
      return in_sem(layout.sem_lock);
    case Field::SemPending:
      return in_sem(layout.sem_pending);
    case Field::SemOtime:
      return in_sem(layout.sem_otime);
    case Field::SleeperStack:
    case Field::TaskStruct:
    case Field::UndoList:
    case Field::Barrier:
      return -1;
  }
  return -1;
}

machine::CacheLine& SemArray::new_line_at(int byte_offset) {
  const auto index = static_cast<std::size_t>(byte_offset / kCacheLineBytes);
  if (index >= lines_.size()) lines_.resize(index + 1);
  auto& slot = lines_[index];
  if (!slot) {
    slot = std::make_unique<machine::CacheLine>();
    // kernel_line_contention: the array's lines take the line mechanisms
    // calibrated on the lock curves (machine/cache_line.hpp).
    if (line_contention_) slot->set_contention(machine::calibrated_line_contention());
  }
  return *slot;
}

std::vector<const machine::CacheLine*> SemArray::lines() const {
  std::vector<const machine::CacheLine*> out;
  for (const auto& line : lines_)
    if (line) out.push_back(line.get());
  return out;
}

}  // namespace semsim::ipc
