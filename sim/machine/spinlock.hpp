// Kernel spinlocks: the ticket lock (Linux until 4.1) and the queued spinlock
// (MCS-based qspinlock, 4.2+).
//
// Spinners do not simulate spin iterations: a waiter parks on its SimGrid
// token and the releaser computes, from the model, when the next owner
// observes the lock and unparks it at that date. A spinning task keeps its
// CPU; the wait is accounted as _raw_spin_lock time.
//   ticket: after a release every spinner re-reads the lock line; the
//     directory answers them one after another and the next owner's read
//     comes, on average, after half of them: hand-off grows with spinners
//     (Boyd-Wickizer et al. 2012).
//   queued: the releaser's store is seen by the head waiter with one line
//     transfer, whatever the number of waiters (MCS hand-off).
#pragma once

#include <cstdint>
#include <deque>
#include <string>

#include "core/rng.hpp"
#include "machine/cache_line.hpp"
#include "machine/task.hpp"

namespace semsim::machine {

enum class LockKind : std::uint8_t { Ticket, Queued };

struct LockStats {
  std::uint64_t acquisitions = 0, contended = 0;
  Tick wait = 0, hold = 0;
};

class Spinlock {
 public:
  Spinlock(LockKind kind, CacheLine* line, std::uint64_t seed) : kind_(kind), line_(line), rng_(seed) {}

  // spin_lock(): first syncs the task to its cursor. Returns with the
  // lock held and the task's cursor at the acquisition time.
  void lock(const Topology& topo, Task& task);
  // spin_unlock() at the task's cursor; hands the lock to the next waiter.
  void unlock(const Topology& topo, Task& task);
  // spin_is_locked() as a plain read of the lock word at the task's cursor.
  bool is_locked(const Topology& topo, Task& task);
  bool held() const { return holder_ != nullptr; }
  std::size_t waiters() const { return waiters_.size(); }
  CacheLine& line() { return *line_; }
  const LockStats& stats() const { return stats_; }
  void reset_stats() { stats_ = {}; }

 private:
  struct Waiter {
    Task* task;
    Tick since;  // when it started spinning
  };
  LockKind kind_;
  CacheLine* line_;
  Rng rng_;
  Task* holder_ = nullptr;
  Tick acquired_at_ = 0;
  Tick free_at_ = 0;     // a release computed ahead of simulated time takes effect then
  int last_releaser_ = -1;
  std::deque<Waiter> waiters_;
  LockStats stats_;
};

}  // namespace semsim::machine
