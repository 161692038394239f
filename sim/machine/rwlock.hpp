// The reader-writer spinlock of the March 2013 semaphore series (Rik van
// Riel's first version of "ipc,sem: fine grained locking"): simple semops
// take the array's rwlock for reading, complex ones for writing.
//
// It replays the x86 arch_rwlock_t of that time (one 32-bit word biased by
// RW_LOCK_BIAS): read_lock is a `lock decl` and read_unlock a `lock incl` on
// that word, so readers run their critical sections in parallel but every
// read_lock and read_unlock is an atomic RMW that pulls the line over: the
// line ping-pongs between readers. write_lock subtracts the bias and succeeds
// only when no reader holds the lock; write_unlock adds it back (another RMW).
//
// Same calling convention and parking model as Spinlock: every operation
// happens at the task's cursor, in time order (machine/task.hpp), so the RMWs
// reach the line in the order of their dates and the ping-pong comes out
// right; waiters park on their own token and the releaser computes when each
// of them observes the lock (at its own date: the retries it issues for them
// are dated at the release) and unparks it then. Waiting is accounted as spin
// time (_raw_read_lock / _raw_write_lock).
//
// Model choices (assumptions, stated here):
//  - Reader preference, as the pre-qrwlock x86 rwlock: a waiting writer does
//    not keep new readers out (it undoes its decrement and spins), so a
//    steady stream of readers can starve a writer, as it did on real
//    machines. When a writer releases, every waiting reader gets in (their
//    retried RMWs are serialised on the line, one transfer each); waiting
//    writers get the lock when the last reader leaves, in FIFO order.
//  - A spinning waiter's re-reads of the word are not modelled as line
//    traffic; only the successful RMW is (unless line spinning is on, below).
//  - When the last reader leaves and a writer waits, the writer is granted the
//    lock at the date its RMW lands; a reader that arrives in between is
//    counted as behind the writer (a window of one line transfer).
//
// Line spinning (set_line_spinning()): the waiters spin as the code does,
// with the contended-line spin of machine/line_spin.hpp (the one the ticket
// spinlock and lock-stress use) instead of being granted by the releaser. A
// reader that finds a writer undoes its decrement (lock incl) and spins
// reading the word until it shows no writer, then retries (__read_lock_failed);
// a writer that finds the lock taken adds the bias back and spins until the
// word shows it free, then retries (__write_lock_failed). Every RMW on the
// word -- each reader's lock decl and lock incl among them -- and every store
// to other data on the line makes every spinner re-read it at its own
// distance. Reader preference and writer starvation come out of the retries.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "machine/cache_line.hpp"
#include "machine/line_spin.hpp"
#include "machine/spinlock.hpp"
#include "machine/task.hpp"

namespace semsim::machine {

struct RwLockStats {
  LockStats read, write;
  std::uint64_t max_readers = 0;  // most readers inside at once
  std::uint64_t rereads = 0;      // line spinning: the waiters' re-reads of the word
  LockStats total() const {
    return {read.acquisitions + write.acquisitions, read.contended + write.contended,
            read.wait + write.wait, read.hold + write.hold};
  }
};

class RwLock {
 public:
  explicit RwLock(CacheLine* line, std::uint64_t seed = 1) : line_(line), watchers_(seed) {}
  RwLock(const RwLock&) = delete;  // its line may point at its watchers
  RwLock& operator=(const RwLock&) = delete;

  // The waiters spin on the line (see above) instead of being granted.
  void set_line_spinning(bool on);
  bool line_spinning() const { return line_spinning_; }

  // read_lock(): returns with a read hold and the task's cursor at the date it got in.
  void read_lock(const Topology& topo, Task& task);
  void read_unlock(const Topology& topo, Task& task);
  // write_lock(): waits for the readers to drain, then excludes them.
  void write_lock(const Topology& topo, Task& task);
  void write_unlock(const Topology& topo, Task& task);

  int readers() const { return static_cast<int>(readers_.size()); }
  bool write_held() const { return writer_ != nullptr; }
  std::size_t waiting_readers() const { return waiting_readers_.size(); }
  std::size_t waiting_writers() const { return waiting_writers_.size(); }
  CacheLine& line() { return *line_; }
  const RwLockStats& stats() const { return stats_; }
  void reset_stats() { stats_ = {}; }

 private:
  struct Waiter {
    Task* task;
    Tick since;
  };
  struct Reader {
    Task* task;
    Tick since;  // when it got in
  };
  void grant_writer(const Topology& topo, Tick from);
  // write_unlock(): the waiting readers, or else the next writer, get in from
  // `released` (the releaser's cursor is at its RMW's completion, nothing run past it).
  void hand_on(const Topology& topo, Task& task, Tick released);
  void read_lock_on_line(const Topology& topo, Task& task);
  void write_lock_on_line(const Topology& topo, Task& task);

  CacheLine* line_;
  LineWatchers watchers_;
  bool line_spinning_ = false;
  Task* writer_ = nullptr;
  Tick writer_since_ = 0;
  std::vector<Reader> readers_;  // inside now (small: linear search, no pointer hashing)
  std::deque<Waiter> waiting_readers_, waiting_writers_;
  RwLockStats stats_;
};

}  // namespace semsim::machine
