// The registry of kernel generations, the consistency rules of what-if
// compositions, and the struct layouts they imply (reference section 2.3), as
// data tables.
#include <fmt/format.h>

#include <algorithm>

#include "ipc/kernel_policy.hpp"
#include "ipc/sem_kernel.hpp"

namespace semsim::ipc {

std::unique_ptr<Generation> make_global_lock_generation();
std::unique_ptr<Generation> make_rwlock_generation();
std::unique_ptr<Generation> make_per_sem_lock_generation();
std::unique_ptr<Generation> make_lock_all_generation();
std::unique_ptr<Generation> make_wait_array_generation();
std::unique_ptr<Generation> make_complex_mode_generation();
std::unique_ptr<Generation> make_hysteresis_generation();
std::unique_ptr<QueueOps> make_global_queue();    // gen_global_lock.cpp (<= 3.9)
std::unique_ptr<QueueOps> make_one_list_queue();  // gen_per_sem_lock.cpp (3.10)
std::unique_ptr<QueueOps> make_merged_queue();    // gen_split_queues.cpp (3.11+)

const std::vector<KernelPolicy>& generations() {
  static const std::vector<KernelPolicy> all = {
      global_lock_policy(),  rwlock_policy(),       per_sem_lock_rc_policy(),
      per_sem_lock_policy(), split_queues_policy(), moved_otime_policy(),
      wait_array_policy(),   complex_mode_policy(), hysteresis_policy()};
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
    case LockProtocol::RwLock:
      return make_rwlock_generation();
    case LockProtocol::PerSemLock:
      return make_per_sem_lock_generation();
    case LockProtocol::LockAll:
      return make_lock_all_generation();
    case LockProtocol::WaitArray:
      return make_wait_array_generation();
    case LockProtocol::ComplexMode:
      return make_complex_mode_generation();
    case LockProtocol::Hysteresis:
      return make_hysteresis_generation();
  }
  return make_hysteresis_generation();
}

std::unique_ptr<QueueOps> make_queue_ops(const KernelPolicy& p) {
  switch (p.queues) {
    case QueueScheme::Global:
      return make_global_queue();
    case QueueScheme::OneList:
      return make_one_list_queue();
    case QueueScheme::Merged:
      return make_merged_queue();
  }
  return make_merged_queue();
}

namespace {

// struct sem_array, offsets from sma (x86-64, no lock debugging; reference 2.2/2.3).
struct SmaTable {
  ArrayLayoutKind kind;
  int lock, perm, seq, security, otime, sem_base, pending, nsems, complex_count, mode_flag;
  int size;     // sizeof(struct sem_array): where sem_base points (&sma[1])
  bool embeds;  // 4.13+: struct sem sems[] at +size
};
constexpr SmaTable kSmaTables[] = {
    // kern_ipc_perm (56 B: lock, deleted/id/key/ids/mode, seq +40, security +48), sem_otime +56,
    // sem_ctime +64, sem_base +72, sem_pending +80, list_id +96, sem_nsems +112,
    // complex_count +116; 120 B, rounded to 128 by the aligned sem_perm.
    {ArrayLayoutKind::V3_9, 0, 4, 40, 48, 56, 72, 80, 112, 116, -1, 128, false},
    // The same with pending_alter +80 and pending_const +96: list_id +112,
    // sem_nsems +128, complex_count +132; 136 B, rounded to 192.
    {ArrayLayoutKind::V3_10Split, 0, 4, 40, 48, 56, 72, 80, 128, 132, -1, 192, false},
    // No sem_otime: sem_ctime +56, sem_base +64, pending_alter +72, pending_const +88,
    // list_id +104, sem_nsems +120, complex_count +124; 128 B.
    {ArrayLayoutKind::V3_11, 0, 4, 40, 48, -1, 64, 72, 120, 124, -1, 128, false},
    // + complex_mode / use_global_lock at +128: 192 B.
    {ArrayLayoutKind::V4_8, 0, 4, 40, 48, -1, 64, 72, 120, 124, 128, 192, false},
    // kern_ipc_perm grows to 128 B (khtnode, rcu, refcount on line 1), sem_ctime +128,
    // pending_alter +136, pending_const +152, list_id +168, sem_nsems +184,
    // complex_count +188, use_global_lock +192, sems[] at +256.
    {ArrayLayoutKind::Current, 0, 4, 40, 48, -1, -1, 136, 184, 188, 192, 256, true},
};

// struct sem, offsets inside it.
struct SemTable {
  SemLayout kind;
  int size, lock, pending, lists, otime;
  bool aligned;
};
constexpr SemTable kSemTables[] = {
    {SemLayout::Packed24, 24, -1, 8, 1, -1, false},     // semval, sempid, sem_pending
    {SemLayout::Packed32, 32, 8, 16, 1, -1, false},     // + lock
    {SemLayout::Unaligned48, 48, 8, 16, 2, -1, false},  // + pending_alter/pending_const
    {SemLayout::Unaligned56, 56, 8, 16, 2, 48, false},  // + sem_otime
    {SemLayout::Aligned64, 64, 8, 16, 2, 48, true},     // ____cacheline_aligned_in_smp
};

const SmaTable& sma_table(ArrayLayoutKind k) {
  for (const auto& t : kSmaTables)
    if (t.kind == k) return t;
  return kSmaTables[0];
}
const SemTable& sem_table(SemLayout k) {
  for (const auto& t : kSemTables)
    if (t.kind == k) return t;
  return kSemTables[0];
}

int round_up(int x, int to) { return (x + to - 1) / to * to; }

const char* protocol_name(LockProtocol p) {
  switch (p) {
    case LockProtocol::GlobalLock:
      return "global_lock";
    case LockProtocol::RwLock:
      return "rwlock";
    case LockProtocol::PerSemLock:
      return "per_sem_lock";
    case LockProtocol::LockAll:
      return "lock_all";
    case LockProtocol::WaitArray:
      return "wait_array";
    case LockProtocol::ComplexMode:
      return "complex_mode";
    case LockProtocol::Hysteresis:
      return "hysteresis";
  }
  return "?";
}

}  // namespace

std::vector<PolicyProblem> check_policy(const KernelPolicy& p) {
  std::vector<PolicyProblem> out;
  const auto& sem = sem_table(p.sem_layout);
  const auto& sma = sma_table(p.array_layout);
  if (p.sem_lock != LockProtocol::GlobalLock && sem.lock < 0)
    out.push_back(
        {"sem_layout", fmt::format("packed24 has no per-semaphore lock, which sem_lock {} needs; "
                                   "allowed: packed32, unaligned48, unaligned56, aligned64",
                                   protocol_name(p.sem_lock))});
  if (p.queues == QueueScheme::Merged && sem.lists < 2)
    out.push_back({"queues",
                   "merged needs struct sem with pending_alter and pending_const: sem_layout "
                   "unaligned48, unaligned56 or aligned64 (or queues global / one_list)"});
  if (p.queues == QueueScheme::Merged && p.array_layout == ArrayLayoutKind::V3_9)
    out.push_back({"queues",
                   "merged needs the array's pending_alter and pending_const: array_layout "
                   "v3_10_split, v3_11, v4_8 or current (or queues global / one_list)"});
  if (p.otime == OtimeLocation::PerSem && sem.otime < 0)
    out.push_back({"otime",
                   "per_sem needs a struct sem with sem_otime: sem_layout unaligned56 or aligned64 "
                   "(or otime array)"});
  if (p.otime == OtimeLocation::Array && sma.otime < 0)
    out.push_back({"otime",
                   "array needs a struct sem_array with sem_otime: array_layout v3_9 or "
                   "v3_10_split (or otime per_sem)"});
  if ((p.sem_lock == LockProtocol::ComplexMode || p.sem_lock == LockProtocol::Hysteresis) &&
      sma.mode_flag < 0)
    out.push_back(
        {"sem_lock", fmt::format("{} needs the complex_mode/use_global_lock field: array_layout "
                                 "v4_8 or current",
                                 protocol_name(p.sem_lock))});
  if (p.hysteresis < 1) out.push_back({"hysteresis", "must be at least 1"});
  if (p.header_bytes < 0) out.push_back({"header_bytes", "must be at least 0"});
  return out;
}

ArrayLayout layout_for(const KernelPolicy& p) {
  const auto& sma = sma_table(p.array_layout);
  const auto& sem = sem_table(p.sem_layout);
  const int h = p.header_bytes;
  const auto at = [&](int off) { return off < 0 ? -1 : h + off; };
  ArrayLayout l;
  l.lock = at(sma.lock);
  l.perm = at(sma.perm);
  l.seq = at(sma.seq);
  l.security = at(sma.security);
  l.otime = p.otime == OtimeLocation::Array ? at(sma.otime) : -1;
  l.sem_base = at(sma.sem_base);
  l.pending = at(sma.pending);
  l.nsems = at(sma.nsems);
  l.complex_count = at(sma.complex_count);
  l.mode_flag = at(sma.mode_flag);
  l.sems = h + sma.size;
  l.sem_size = sem.aligned ? round_up(sem.size, kCacheLineBytes) : sem.size;
  if (sem.aligned) l.sems = round_up(l.sems, kCacheLineBytes);
  l.sem_lock = sem.lock;
  l.sem_pending = sem.pending;
  l.sem_lists = sem.lists;
  l.sem_otime = p.otime == OtimeLocation::PerSem ? sem.otime : -1;
  return l;
}

}  // namespace semsim::ipc
