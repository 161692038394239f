#include "ipc/sem_array.hpp"

#include <fmt/format.h>

namespace semsim::ipc {

namespace {
constexpr int kLineBytes = 64;
machine::LockKind lock_kind(SpinlockKind k) {
  return k == SpinlockKind::Ticket ? machine::LockKind::Ticket : machine::LockKind::Queued;
}
}  // namespace

SemArray::SemArray(const KernelPolicy& p, const ArrayLayout& l, const machine::Topology& topo,
                   int n, std::uint64_t seed)
    : policy(p),
      layout(l),
      semval(static_cast<std::size_t>(n), 0),
      sempid(static_cast<std::size_t>(n), 0),
      pending_alter(static_cast<std::size_t>(n)),
      pending_const(static_cast<std::size_t>(n)) {
  (void)topo;
  // Name the array lines after the fields on them, for the hottest-lines report.
  auto name = [&](int off, const char* field) {
    if (off < 0) return;
    auto& line = line_at(off);
    line.set_name(line.name().empty() ? fmt::format("sma line {}: {}", off / kLineBytes, field)
                                      : line.name() + ", " + field);
  };
  name(l.lock, "sem_perm.lock");
  if (l.perm != l.lock) name(l.perm, "perm/seq");
  name(l.security, "security");
  name(l.otime, "sem_otime");
  name(l.sem_base, "sem_base");
  name(l.pending, "pending lists");
  name(l.nsems, "sem_nsems/complex_count");
  name(l.mode_flag, p.sem_lock == LockProtocol::Hysteresis ? "use_global_lock" : "complex_mode");
  for (int i = 0; i < n; ++i) {
    int first = (l.sems + i * l.sem_size) / kLineBytes;
    int last = (l.sems + (i + 1) * l.sem_size - 1) / kLineBytes;
    for (int li = first; li <= last; ++li) {
      auto& line = line_at(li * kLineBytes);
      line.set_name(line.name().empty() ? fmt::format("sem[{}]", i)
                                        : line.name() + fmt::format(", sem[{}]", i));
    }
  }
  array_lock = std::make_unique<machine::Spinlock>(lock_kind(p.spinlock), &line_at(l.lock), seed);
  if (l.sem_lock >= 0) {
    for (int i = 0; i < n; ++i)
      sem_locks.push_back(
          std::make_unique<machine::Spinlock>(lock_kind(p.spinlock), &sem_line(i, l.sem_lock),
                                              seed + 1 + static_cast<std::uint64_t>(i)));
  }
}

machine::CacheLine& SemArray::line_at(int byte_offset) {
  int index = byte_offset / kLineBytes;
  auto& slot = lines_[index];
  if (!slot) slot = std::make_unique<machine::CacheLine>();
  return *slot;
}

std::vector<const machine::CacheLine*> SemArray::lines() const {
  std::vector<const machine::CacheLine*> out;
  for (const auto& [index, line] : lines_) out.push_back(line.get());
  return out;
}

}  // namespace semsim::ipc
