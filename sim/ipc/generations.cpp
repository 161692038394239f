// The registry of kernel generations and the struct layouts they imply.
#include <algorithm>

#include "ipc/kernel_policy.hpp"
#include "ipc/sem_kernel.hpp"

namespace semsim::ipc {

std::unique_ptr<Generation> make_global_lock_generation();
std::unique_ptr<Generation> make_hysteresis_generation();

const std::vector<KernelPolicy>& generations() {
  static const std::vector<KernelPolicy> all = {global_lock_policy(), hysteresis_policy()};
  return all;
}

const KernelPolicy* find_generation(const std::string& id) {
  const auto& all = generations();
  auto it = std::find_if(all.begin(), all.end(), [&](const KernelPolicy& p) { return p.id == id; });
  return it == all.end() ? nullptr : &*it;
}

std::unique_ptr<Generation> make_generation(const KernelPolicy& p) {
  switch (p.sem_lock) {
    case LockProtocol::GlobalLock:
      return make_global_lock_generation();
    case LockProtocol::Hysteresis:
      return make_hysteresis_generation();
  }
  return make_hysteresis_generation();
}

namespace {

int sem_size(SemLayout l) {
  switch (l) {
    case SemLayout::Packed24:
      return 24;
    case SemLayout::Packed32:
      return 32;
    case SemLayout::Unaligned48:
      return 48;
    case SemLayout::Aligned64:
      return 64;
  }
  return 64;
}

int round_up(int x, int to) { return (x + to - 1) / to * to; }

}  // namespace

ArrayLayout layout_for(const KernelPolicy& p) {
  ArrayLayout l;
  const int h = p.header_bytes;
  l.sem_size = sem_size(p.sem_layout);
  if (p.sem_lock == LockProtocol::GlobalLock) {
    // struct sem_array of 3.9/3.10 after the ipc_rcu header (section 2.3 of
    // the reference): kern_ipc_perm (56 B), then sem_otime at +56,
    // sem_base/pending at +72..+119, sem_nsems/complex_count at +120; the
    // struct sem array follows the 128-byte struct.
    l.lock = h + 0;
    l.perm = h + 8;
    l.security = h + 48;
    l.otime = h + 56;
    l.sem_base = h + 72;
    l.pending = h + 80;
    l.nsems = h + 120;
    l.sems = h + 128;
  } else {
    // The current layout: kern_ipc_perm fills line 0 (lock, ids, security),
    // rcu/refcount line 1, pending lists and counters line 2,
    // use_global_lock line 3, then the cache-line aligned struct sem array.
    l.lock = h + 0;
    l.perm = h + 8;
    l.security = h + 56;
    l.pending = h + 136;
    l.nsems = h + 184;
    l.mode_flag = h + 192;
    l.sems = h + 256;
  }
  if (p.sem_layout == SemLayout::Aligned64) l.sems = round_up(l.sems, 64);
  if (p.sem_lock != LockProtocol::GlobalLock) {
    l.sem_lock = 8;
    l.sem_pending = 16;
  }
  l.sem_otime = (p.otime == OtimeLocation::PerSem && l.sem_size >= 64) ? 56 : -1;
  if (p.otime == OtimeLocation::PerSem) l.otime = -1;
  return l;
}

}  // namespace semsim::ipc
