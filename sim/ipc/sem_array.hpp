// The kernel objects of one simulated semaphore array: values, the lock
// words, the pending queues, and the cache lines they live on.
//
// Which field shares a line with which is per generation (reference
// semc-generations.md section 2.3): ArrayLayout gives byte offsets from the
// allocation start, and the lines are derived from them, so the layout is
// data, not code (the tables are in generations.cpp).
//
// Locking (the lock sem_lock() returned; <= 3.9 has only the array lock):
//  - semval[n], sempid[n], pending_alter[n], pending_const[n]: sem[n]'s lock
//    or the array lock.
//  - global_alter, global_const, complex_count: the array lock only, because
//    a semaphore's lock excludes no other semaphore; a simple operation that
//    finds complex operations asleep takes the array lock for that reason.
//  - complex_mode (4.9-4.10), use_global_lock (4.11+): written under the
//    array lock, read by sem_lock()'s fast path without one (the generation's
//    file gives the barriers that make that safe).
//  - deleted: written under the array lock (IPC_RMID), tested under either.
//  The March 2013 series' array lock is an rwlock: a simple operation holds
//  it for reading beside its semaphore's lock, every other path for writing.
#pragma once

#include <array>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ipc/kernel_policy.hpp"
#include "ipc/sembuf.hpp"
#include "machine/cache_line.hpp"
#include "machine/rwlock.hpp"
#include "machine/spinlock.hpp"
#include "machine/task.hpp"

namespace semsim::ipc {

constexpr int kCacheLineBytes = 64;

// Byte offsets from the start of the allocation (header included); -1: no such field.
struct ArrayLayout {
  int lock = 0;       // sem_perm.lock (the rwlock in the March 2013 series)
  int perm = 0;       // deleted, id, uid..mode: ipc_valid_object(), ipcperms()
  int seq = 0;        // sem_perm.seq: ipc_checkid() in ipc_obtain_object_check()
  int security = 0;   // sem_perm.security: the LSM hook
  int otime = -1;     // sma->sem_otime (<= 3.10)
  int sem_base = -1;  // sma->sem_base pointer (<= 4.12)
  int pending = 0;    // global pending list heads
  int nsems = 0;      // sem_nsems
  int complex_count = 0;
  int mode_flag = -1;  // complex_mode (4.8-4.10) / use_global_lock (4.11+)
  int sems = 0;        // struct sem sems[0]
  int sem_size = 64;   // sizeof(struct sem), alignment included
  // Offsets inside struct sem.
  int sem_lock = -1;    // the per-semaphore spinlock (3.10+)
  int sem_pending = 8;  // its pending list(s)
  int sem_otime = -1;   // the per-semaphore sem_otime (3.11+)
  int sem_lists = 1;    // 1: sem_pending; 2: pending_alter + pending_const

  // The line index (from the allocation start) of a field at byte offset `off`.
  static int line_of(int off) { return off / kCacheLineBytes; }
};

// The fields a memory access can name, for the trace hook and the line map.
enum class Field : std::uint8_t {
  Lock,          // sem_perm.lock (or the rwlock word)
  Perm,          // deleted / permissions (uid, gid, mode)
  Seq,           // sem_perm.seq (ipc_checkid)
  Security,      // sem_perm.security
  Otime,         // sma->sem_otime
  SemBase,       // sma->sem_base
  Pending,       // the array's pending list heads
  Nsems,         // sma->sem_nsems
  ComplexCount,  // sma->complex_count
  ModeFlag,      // complex_mode / use_global_lock
  SemVal,        // sem->semval and sem->sempid
  SemLock,       // sem->lock
  SemPending,    // sem->sem_pending / pending_alter / pending_const
  SemOtime,      // sem->sem_otime
  SleeperStack,  // the sleeper's struct sem_queue (its kernel stack)
  TaskStruct,    // the sleeper's task_struct (wake_q, usage count)
  UndoList,      // the process's sem_undo_list and sem_undo
  Barrier,       // not a field: a memory barrier
};
const char* field_name(Field f);
// The machine layer's lock for a generation's spinlock kind.
machine::LockKind lock_kind(SpinlockKind k);

struct SemQueue;
using SemList = std::list<SemQueue*>;

// A sleeping operation: struct sem_queue, which lives on the sleeper's stack.
struct SemQueue {
  machine::Task* sleeper = nullptr;
  int process = 0;
  std::vector<Sembuf> sops;
  bool alter = false;
  bool undo = false;
  int blocking = 0;       // index of the sop that blocked at the last try (count_semcnt)
  int status = kPending;  // written by the waker: 0 or -errno
  Tick status_at = 0;     // when the final status is visible (IN_WAKEUP: after ttwu)
  // Where it is queued: struct sem_queue.list, and 3.9's second list (simple_list).
  SemList* list = nullptr;
  SemList::iterator pos;
  int list_owner = -1;  // the semaphore whose list it is, or -1 for the array's
  SemList* simple = nullptr;
  SemList::iterator simple_pos;
  int simple_owner = -1;
  machine::CacheLine* stack_line = nullptr;
  machine::CacheLine* task_line = nullptr;
  std::uint64_t seq = 0;  // which sleep of its task this is
  static constexpr int kPending = 1;
  bool completed() const { return status != kPending; }
};

class SemArray {
 public:
  SemArray(const KernelPolicy& policy, const ArrayLayout& layout, const machine::Topology& topo,
           int nsems, std::uint64_t seed);

  int nsems() const { return static_cast<int>(semval.size()); }
  // Every shared access of the model goes through here: the lookup inline, a
  // line's first touch out of line.
  machine::CacheLine& line_at(int byte_offset) {
    const auto index = static_cast<std::size_t>(byte_offset / kCacheLineBytes);
    if (index < lines_.size() && lines_[index]) [[likely]]
      return *lines_[index];
    return new_line_at(byte_offset);
  }
  machine::CacheLine& new_line_at(int byte_offset);
  machine::CacheLine& sem_line(int sem, int field_offset) {
    return line_at(layout.sems + sem * layout.sem_size + field_offset);
  }
  // The byte offset of a field of the array or of semaphore `sem`; -1 if the
  // layout has no such field.
  // Every modelled access asks: read from a table made once per array (a field
  // of semaphore `sem` is its offset in semaphore 0 plus sem * sem_size).
  int offset_of(Field f, int sem = 0) const {
    const auto i = static_cast<std::size_t>(f);
    const int off = field_offsets_[i];
    return off < 0 || !per_sem_[i] ? off : off + sem * layout.sem_size;
  }
  // Every distinct line, in address order, for the per-line report.
  std::vector<const machine::CacheLine*> lines() const;

  const KernelPolicy policy;
  const ArrayLayout layout;
  std::vector<int> semval;
  std::vector<int> sempid;
  int complex_count = 0;
  int use_global_lock = 0;    // 4.11+
  bool complex_mode = false;  // 4.9-4.10
  bool deleted = false;       // IPC_RMID done (sem_perm.deleted)

  std::unique_ptr<machine::Spinlock> array_lock;
  std::unique_ptr<machine::RwLock>
      rwlock;  // the March 2013 series' array rwlock (on the lock word)
  std::vector<std::unique_ptr<machine::Spinlock>> sem_locks;  // per-semaphore (3.10+)

  // Pending operations. With QueueScheme::Global and OneList only the
  // *_alter lists are used, as sem_pending.
  std::vector<SemList> pending_alter, pending_const;  // per semaphore
  SemList global_alter, global_const;                 // the array's

 private:
  bool line_spinning_;    // the machine's kernel_line_spinning
  bool line_contention_;  // the machine's kernel_line_contention
  // offset_of()'s table: offset_of_field(f, 0) for every field, and whether
  // the field is one of each semaphore.
  static constexpr std::size_t kFields = static_cast<std::size_t>(Field::Barrier) + 1;
  int offset_of_field(Field f, int sem) const;  // the layout's rule
  std::array<int, kFields> field_offsets_{};
  std::array<bool, kFields> per_sem_{};
  std::vector<std::unique_ptr<machine::CacheLine>> lines_;  // by line index; null: never touched
};

}  // namespace semsim::ipc
