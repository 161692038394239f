// The kernel objects of one simulated semaphore array: values, the lock
// words, the pending queues, and the cache lines they live on.
//
// Which field shares a line with which is per generation (reference
// semc-generations.md section 2.3): ArrayLayout gives byte offsets from the
// allocation start, and the lines are derived from them, so the layout is
// data, not code.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ipc/kernel_policy.hpp"
#include "ipc/sembuf.hpp"
#include "machine/cache_line.hpp"
#include "machine/spinlock.hpp"
#include "machine/task.hpp"

namespace semsim::ipc {

// Byte offsets from the start of the allocation (header included); -1: no such field.
struct ArrayLayout {
  int lock = 0;         // sem_perm.lock
  int perm = 0;         // deleted, id, seq, uid..mode: ipc_checkid(), ipcperms()
  int security = 0;     // sem_perm.security: the LSM hook
  int otime = -1;       // sma->sem_otime (<= 3.10)
  int sem_base = -1;    // sma->sem_base pointer (<= 4.12)
  int pending = 0;      // global pending list heads
  int nsems = 0;        // sem_nsems and complex_count
  int mode_flag = -1;   // complex_mode (4.8-4.10) / use_global_lock (4.11+)
  int sems = 0;         // struct sem sems[0]
  int sem_size = 64;    // sizeof(struct sem)
  int sem_lock = -1;    // offset of the per-semaphore spinlock in struct sem (3.10+)
  int sem_pending = 8;  // offset of its pending list(s)
  int sem_otime = -1;   // offset of the per-semaphore sem_otime (3.11+)
};

// A sleeping operation: struct sem_queue, which lives on the sleeper's stack.
struct SemQueue {
  machine::Task* sleeper = nullptr;
  std::vector<Sembuf> sops;
  bool alter = false;
  int status = 0;  // kPending until a waker completes the op
  machine::CacheLine* stack_line = nullptr;
  static constexpr int kPending = 1;
};

class SemArray {
 public:
  SemArray(const KernelPolicy& policy, const ArrayLayout& layout, const machine::Topology& topo,
           int nsems, std::uint64_t seed);

  int nsems() const { return static_cast<int>(semval.size()); }
  machine::CacheLine& line_at(int byte_offset);
  machine::CacheLine& sem_line(int sem, int field_offset) {
    return line_at(layout.sems + sem * layout.sem_size + field_offset);
  }
  // Every distinct line, in address order, for the per-line report.
  std::vector<const machine::CacheLine*> lines() const;

  const KernelPolicy policy;
  const ArrayLayout layout;
  std::vector<int> semval;
  std::vector<int> sempid;
  int complex_count = 0;
  int use_global_lock = 0;  // hysteresis generations

  std::unique_ptr<machine::Spinlock> array_lock;
  std::vector<std::unique_ptr<machine::Spinlock>> sem_locks;  // per-semaphore (3.10+)

  // Pending operations: per semaphore (simple ops) and global (complex ops).
  std::vector<std::deque<SemQueue*>> pending_alter, pending_const;
  std::deque<SemQueue*> global_alter, global_const;

 private:
  std::map<int, std::unique_ptr<machine::CacheLine>> lines_;  // keyed by line index
};

}  // namespace semsim::ipc
