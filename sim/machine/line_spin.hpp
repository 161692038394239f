// Spinning on a cache line, the one implementation of the contended-line
// spinners shared by the user-space locks (user_lock.hpp) and the kernel's
// ticket spinlock and rwlock (spinlock.hpp, rwlock.hpp).
//
// A spinner reads the line and, while what it read does not let it go on,
// spins on its shared copy. It does not simulate the hits of that spin: it
// parks on the line's LineWatchers, and every write or RMW to the line
// (CacheLine::access: a release, a newcomer's xadd, the holder's store to
// other data on the same line) wakes every spinner at the write's
// completion; each then re-reads the line at its own date and at its own
// distance from whichever cache serves it. That is the coherence traffic of
// a spin on a shared copy: one re-read per spinner per write to the line, so
// the spinners stay visible for as long as the lock is held.
// The wake order of a line's spinners is shuffled with the watchers' own
// seeded Rng: the home agent's arbitration among simultaneous re-reads is not
// FIFO. Locks that share one line (two semaphores' spinlocks on one line)
// share its watchers: every spinner on the line re-reads after every write to
// it, whichever lock it waits for.
#pragma once

#include <cstdint>
#include <vector>

#include "core/rng.hpp"
#include "machine/cache_line.hpp"
#include "machine/store_buffer.hpp"
#include "machine/task.hpp"

namespace semsim::machine {

// Tasks spinning on their shared copy of one line, waiting for a write to it.
class LineWatchers {
 public:
  explicit LineWatchers(std::uint64_t seed) : rng_(seed) {}
  // Attach to `line` unless it has watchers already (another lock on the
  // line); returns the line's watchers. This must outlive the line's use.
  LineWatchers* attach(CacheLine& line);
  void park(Task& t);
  // A write to the line completed at `date`: every watcher re-reads from then,
  // in an order drawn from the rng.
  void wake_all(Tick date);
  bool empty() const { return parked_.empty(); }

 private:
  Rng rng_;
  std::vector<Task*> parked_;
};

// Re-read `line` (which must have watchers) until ok() holds: ok() is
// evaluated at the request's issue date, which is also the order in which
// the line serves it; between reads, spin on the shared copy, i.e. park until
// the next write to the line, unless one came in the meantime. `rereads`
// counts the reads after the first. A read goes through the task's store
// buffer (issue_load: after its own store to the line, if one is in flight);
// a write wakes the spinners once it is visible (CacheLine::access).
template <class Ok>
void spin_on_line(const Topology& topo, Task& task, CacheLine& line, std::uint64_t& rereads,
                  Ok ok) {
  for (bool first = true;; first = false) {
    if (!first) ++rereads;
    const std::uint64_t seen = line.writes();
    const Tick done = issue_load(topo, task, line);
    const bool good = ok();
    task.advance_to(done);
    if (good) return;
    if (line.writes() == seen) line.watchers()->park(task);
  }
}

}  // namespace semsim::machine
