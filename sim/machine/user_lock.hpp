// User-space spinlocks of the lock-stress workload: TAS, TTAS,
// ticket and MCS, as in the LPD-EPFL libslock family that the published
// mctop lock curves ran. Unlike the kernel Spinlock (spinlock.hpp), which
// computes a hand-off from a formula, every step here is a request to a
// CacheLine at the requesting task's own date, so a lock's cost is the line
// transfers it makes, each at the real distance between the CPUs involved:
//   TAS:    every spinner loops on xchg (an RMW per iteration); the release
//           store queues at the home agent behind the spinners' RMWs.
//   TTAS:   spinners read the word and spin on their shared copy; a write to
//           the line invalidates it and each re-reads at its own distance;
//           those that see it free try an xchg, one wins.
//   ticket: xadd on next_ticket, spin reading now_serving (same line); every
//           write to the line (a release, a newcomer's xadd) makes every
//           spinner re-read it: the re-reads of one write queue at the line.
//   MCS:    xchg on the tail, link into the predecessor's node, spin on our
//           own node's line; the hand-off is a store into the successor's
//           node: one invalidation and the successor's re-read.
// A spinner on a shared copy does not simulate its hits: it parks until the
// next write to the line it watches and then re-reads (one request per write,
// which is what the coherence traffic is). The wake order of a line's
// spinners is shuffled with the lock's seed: the home agent's arbitration
// among simultaneous re-reads is not FIFO.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "machine/cache_line.hpp"
#include "machine/task.hpp"

namespace semsim::machine {

enum class UserLockKind : std::uint8_t { Tas, Ttas, Ticket, Mcs };
// "tas" | "ttas" | "ticket" | "mcs"; throws InputError naming `field` otherwise.
UserLockKind user_lock_kind(const std::string& name, const std::string& field);
const char* user_lock_name(UserLockKind k);

// The contended-line mechanisms lock-stress applies to its lines, the same
// on every machine, calibrated together on the published
// mctop lock curves (shared/reference/data/mctop_locks, no_backoff, both
// machines; SEMSIM_LOCK_BENCH=1 build/dev/semsim_tests
// --gtest_filter=LockCurveBench* prints them; grid in the lock-curve report):
//   spinners re-read after every write to the line (UserLock: structural, no
//     parameter);
//   nearest_sharer = true: assumption (a shared line is forwarded by a nearby
//     holder, as MESIF's F and MOESI's O states migrate); with the
//     last-writer rule the ticket curves came out 2-3x too steep on the
//     8-socket machine;
//   read_occupancy = 0.5: assumption, calibrated (grid 0.3-1.0): the home
//     agent pipelines reads of one line, each holding it half its transfer;
//     1.0 left every ticket curve 30-45 % too steep, 0.3 made the Opteron's
//     too flat;
//   queue_factor = 0: calibrated (grid 0-0.05): any growth of the ownership
//     transfers with the queue made TAS too steep once reads pipeline;
//   llc_hit = 0 (off): serving shared reads from the Westmere-EX's inclusive
//     LLC (78 cycles, mctop_diassrv8.csv) made its ticket curve 50-120 % too
//     flat.
inline LineContention lock_stress_contention() {
  LineContention c;
  c.nearest_sharer = true;
  c.read_occupancy = 0.5;
  return c;
}

struct UserLockStats {
  std::uint64_t acquisitions = 0;  // counted at release
  std::uint64_t rereads = 0;       // re-reads of a watched line after a write to it
};

// Tasks spinning on their shared copy of one line, waiting for a write to it.
class LineWatchers {
 public:
  void park(Task& t);
  // A write to the line completed at `date`: every watcher re-reads from then,
  // in an order drawn from rng.
  void wake_all(Tick date, Rng& rng);
  bool empty() const { return parked_.empty(); }

 private:
  std::vector<Task*> parked_;
};

class UserLock {
 public:
  // cpus: the machine's CPU count (one MCS node line per CPU); `contention`
  // applies to the lock's line and to the MCS node lines.
  UserLock(UserLockKind kind, int cpus, const LineContention& contention, std::uint64_t seed);
  // Acquire at the task's cursor; returns with the lock held.
  void lock(const Topology& topo, Task& task);
  // Release at the task's cursor.
  void unlock(const Topology& topo, Task& task);
  // The ticket lock's newcomers' xadds wake the spinners (the
  // "re-read after every write"); off: only a release does (tests).
  void set_reread_on_every_write(bool on) { reread_every_write_ = on; }
  UserLockKind kind() const { return kind_; }
  CacheLine& line() { return line_; }
  const UserLockStats& stats() const { return stats_; }
  void reset_stats() { stats_ = {}; }

 private:
  void wake(LineWatchers& w, Tick date);
  void lock_tas(const Topology& topo, Task& task);
  void lock_ttas(const Topology& topo, Task& task);
  void lock_ticket(const Topology& topo, Task& task);
  void lock_mcs(const Topology& topo, Task& task);
  void unlock_mcs(const Topology& topo, Task& task);
  struct Node {  // one MCS queue node: its line and what is stored in it
    CacheLine line;
    LineWatchers watchers;
    bool waiting = false;
    int next = -1;             // the successor's CPU
    std::uint64_t writes = 0;  // stores to the node so far (a spinner's read is stale after one)
  };

  UserLockKind kind_;
  CacheLine line_{"user_lock"};
  LineWatchers watchers_;
  std::uint64_t line_writes_ = 0;  // stores and RMWs to the lock line so far
  Rng rng_;
  bool reread_every_write_ = true;
  bool held_ = false;                                // TAS/TTAS word
  std::uint64_t next_ticket_ = 0, now_serving_ = 0;  // ticket
  int tail_ = -1;                                    // MCS: the CPU of the last queued node
  std::deque<Node> nodes_;
  UserLockStats stats_;
};

}  // namespace semsim::machine
