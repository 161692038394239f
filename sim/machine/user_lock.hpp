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
// A spinner on a shared copy parks until the next write to the line it
// watches and then re-reads (machine/line_spin.hpp, the implementation the
// kernel's ticket spinlock and rwlock share).
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "machine/cache_line.hpp"
#include "machine/line_spin.hpp"
#include "machine/task.hpp"

namespace semsim::machine {

enum class UserLockKind : std::uint8_t { Tas, Ttas, Ticket, Mcs };
// "tas" | "ttas" | "ticket" | "mcs"; throws InputError naming `field` otherwise.
UserLockKind user_lock_kind(const std::string& name, const std::string& field);
const char* user_lock_name(UserLockKind k);

// The contended-line mechanisms lock-stress applies to its lines: the ones
// calibrated on the published lock curves (cache_line.hpp).
inline LineContention lock_stress_contention() { return calibrated_line_contention(); }

struct UserLockStats {
  std::uint64_t acquisitions = 0;  // counted at release
  std::uint64_t rereads = 0;       // re-reads of a watched line after a write to it
  // Diagnostics (validation/lock-curves.md); nothing here changes when things happen.
  std::uint64_t rmws = 0;       // locked RMWs on the lock's line (TAS/TTAS attempts, xadd, xchg)
  Tick hold = 0;                // acquisition to the release's issue, summed
  Tick handover = 0;            // a release's visibility to the next acquisition, summed
  std::uint64_t handovers = 0;  // acquisitions that followed a release (handover's count)
  // The next acquirer's distance from the last releaser (Self: the releaser again).
  std::array<std::uint64_t, kDistanceClasses> winner{};
};

class UserLock {
 public:
  // cpus: the machine's CPU count (one MCS node line per CPU); `contention`
  // applies to the lock's line and to the MCS node lines.
  UserLock(UserLockKind kind, int cpus, const LineContention& contention, std::uint64_t seed);
  UserLock(const UserLock&) = delete;  // its lines point at its watchers
  UserLock& operator=(const UserLock&) = delete;
  // Acquire at the task's cursor; returns with the lock held.
  void lock(const Topology& topo, Task& task);
  // Release at the task's cursor.
  void unlock(const Topology& topo, Task& task);
  UserLockKind kind() const { return kind_; }
  CacheLine& line() { return line_; }
  const UserLockStats& stats() const { return stats_; }
  void reset_stats() { stats_ = {}; }

 private:
  void lock_tas(const Topology& topo, Task& task);
  void lock_ttas(const Topology& topo, Task& task);
  void lock_ticket(const Topology& topo, Task& task);
  void lock_mcs(const Topology& topo, Task& task);
  void unlock_mcs(const Topology& topo, Task& task);
  struct Node {  // one MCS queue node: its line and what is stored in it
    explicit Node(std::uint64_t seed) : watchers(seed) {}
    CacheLine line;
    LineWatchers watchers;
    bool waiting = false;
    int next = -1;  // the successor's CPU
  };

  UserLockKind kind_;
  CacheLine line_{"user_lock"};
  LineWatchers watchers_;
  bool held_ = false;                                // TAS/TTAS word
  std::uint64_t next_ticket_ = 0, now_serving_ = 0;  // ticket
  int tail_ = -1;                                    // MCS: the CPU of the last queued node
  std::deque<Node> nodes_;
  UserLockStats stats_;
  // Diagnostics: the holder's acquisition date and the last release.
  void acquired(const Topology& topo, const Task& task);
  void released(const Task& task, Tick visible);
  Tick acquired_at_ = 0, released_visible_ = -1;
  int released_by_ = -1;
};

}  // namespace semsim::machine
