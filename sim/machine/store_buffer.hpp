// The x86-TSO store buffer of a core, and the memory operations that go
// through it.
//
//   A plain store does not stall the core: it is issued at the core's date
//   (the line request is made then, so the line serves it in date order, see
//   cache_line.hpp) and sits in the buffer until its line is here; the core
//   goes on after the store's issue cost (an L1 write, l1_hit). Stores become
//   visible to the other CPUs in program order: a store's visibility date is
//   its line's arrival or the previous store's visibility, whichever is later.
//   A full buffer (store_buffer_entries stores not yet visible) stalls the
//   next store until the oldest one is visible.
//   A locked RMW first waits until every buffered store is visible (the
//   LOCK prefix drains the buffer), then does its own line request. Its
//   store keeps draining for locked_drain after the core may go on (later
//   loads run past it speculatively).
//   A full fence (smp_mb()) waits until the buffered stores and the last
//   locked RMW's store are done, then costs full_fence:
//     cost = max(0, pending completion - now) + full_fence.
//   A load of a line this core has a store in flight to waits for the line
//   (the store's data could be forwarded, but not the rest of the line).
//
// The buffer belongs to the task, not the CPU: a context switch runs locked
// operations (rq->lock) that drain it, so a task never finds another task's
// stores in it. store_buffer_entries = 0 turns the buffer off: every store
// stalls until its line is here, as the model did before.
//
// Time order: every line request is made at the task's cursor; the buffer
// only holds dates, so nothing here is scheduled in the future.
#pragma once

#include <cstdint>
#include <vector>

#include "core/time.hpp"

namespace semsim::machine {

class CacheLine;
class Topology;
struct Task;

class StoreBuffer {
 public:
  struct Entry {
    const CacheLine* line;
    Tick arrives;  // its line is here (the RFO is done)
    Tick visible;  // other CPUs see it (program order)
  };
  // Drops the stores visible by `now`; returns how many are still pending.
  std::size_t pending(Tick now);
  // The oldest pending store's visibility (call only when pending() > 0).
  Tick oldest_visible() const { return at(0).visible; }
  // Records a store issued with its line arriving at `arrives`; returns its visibility.
  Tick push(const CacheLine* line, Tick arrives);
  // When every buffered store is visible (earlier than now: nothing pending).
  Tick drained() const { return last_visible_; }
  // When this core's store to `line` has its line here (earlier than now: none in flight).
  Tick line_arrival(const CacheLine* line) const;
  // The last locked RMW's store is done at this date.
  void set_locked_done(Tick t) { locked_done_ = t; }
  Tick locked_done() const { return locked_done_; }

 private:
  // The pending stores, oldest first: a ring whose size is a power of two, grown
  // (never shrunk) when full, so a steady stream of stores allocates nothing.
  const Entry& at(std::size_t i) const { return ring_[(head_ + i) & (ring_.size() - 1)]; }
  void grow();
  std::vector<Entry> ring_;
  std::size_t head_ = 0, size_ = 0;
  Tick last_visible_ = 0;
  Tick locked_done_ = 0;
};

// The visibility of a store and when its issuer may go on.
struct IssuedStore {
  Tick issued;   // the issuing core goes on from here (advance_to it)
  Tick visible;  // other CPUs see the store from here
};

// A store by `task` to `line` at its cursor. The line request is made now;
// the caller applies the store's effect, then advances the task to `issued`.
IssuedStore issue_store(const Topology& topo, Task& task, CacheLine& line);
// A locked RMW at the task's cursor, after the buffer drained (the task
// waits for that); returns when the RMW completes (the caller advances to it).
Tick issue_rmw(const Topology& topo, Task& task, CacheLine& line);
// issue_rmw() in its two steps, for a caller that looks at shared state at the RMW's
// issue date: its turn, then the wait for the store buffer to drain (the LOCK prefix);
// then the RMW itself at the task's cursor.
void drain_for_rmw(Task& task);
Tick issue_drained_rmw(const Topology& topo, Task& task, CacheLine& line);
// A load at the task's cursor (after this core's own store to the line, if
// one is in flight, has its line); returns when it completes.
Tick issue_load(const Topology& topo, Task& task, CacheLine& line);
// The same for a load whose wait is the task's own (Turn::Owe): a hit on a
// quiet line may go ahead of the owed turn (machine/task.hpp, "Read-ahead").
// With `in_run`, also inside an SMT run whose dates may still move: the task
// then waits the hit's latency itself (Task::read_ahead_in_run()) and the result
// is the run's start, a final date no later than the hit's end, so that the
// caller's wait for it, and every later one, is none at any of the run's dates.
Tick issue_private_load(const Topology& topo, Task& task, CacheLine& line, bool in_run);
// smp_mb(): waits for the pending stores and the last locked RMW's store, then full_fence.
void full_fence(const Topology& topo, Task& task);

// How the task waits for an access: Take its turn at the wait's end (locks, the
// scheduler, every spin loop: their code acts on what it sees there), or Owe it
// (the kernel's accesses to its data, ipc/sem_kernel.cpp: the wait is the task's
// own, Task::advance_private(), and the turn is paid before its next shared step).
enum class Turn : std::uint8_t { Take, Owe };
// The same, with the task advanced to the completion (a store: to its issue);
// a store returns its visibility date.
Tick store(const Topology& topo, Task& task, CacheLine& line, Turn turn = Turn::Take);
void rmw(const Topology& topo, Task& task, CacheLine& line, Turn turn = Turn::Take);
void load(const Topology& topo, Task& task, CacheLine& line, Turn turn = Turn::Take);

}  // namespace semsim::machine
