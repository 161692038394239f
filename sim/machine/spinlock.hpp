// Kernel spinlocks: the ticket lock (Linux until 4.1) and the queued spinlock
// (MCS-based qspinlock, 4.2+, with its pending bit).
//
// Spinners do not simulate spin iterations: a waiter parks (its fiber waits
// in the calendar) and the releaser computes, from the model, when the next owner
// observes the lock and unparks it at that date. A spinning task keeps its
// CPU; the wait is accounted as _raw_spin_lock time.
//   ticket: after a release every spinner re-reads the lock line; the
//     directory answers them one after another and the next owner's read
//     comes, on average, after half of them: hand-off grows with spinners
//     (Boyd-Wickizer et al. 2012).
//   queued: the releaser's store is seen by the waiter spinning on the lock
//     word with one line transfer and claimed with an atomic, whatever the
//     number of waiters (constant hand-off). Who spins on the lock word:
//       - the pending waiter: a contender that finds the lock held and
//         nobody waiting sets the pending bit and spins on the lock word
//         itself, without an MCS node (queued_spin_lock_slowpath's pending
//         fast path); it is next in line;
//       - the MCS queue head: later contenders xchg the tail and queue an MCS
//         node; the first node spins on the lock word (until both the locked
//         byte and the pending bit are clear) from the start, every later
//         node spins on its own node until the node ahead of it takes the
//         lock and hands the head role on (arch_mcs_spin_unlock_contended: a
//         store into our node, one transfer from its CPU to ours). That store
//         leaves through the store buffer: it is not charged to the new owner,
//         but the new head cannot see a release before it arrives.
//     Paravirt (the machine's pv_spinlock: a KVM guest with PV spinlocks): the
//     release is __pv_queued_spin_unlock's locked cmpxchg of the locked byte,
//     not a store; the releaser drains its store buffer, takes the line and goes
//     on when the atomic is done, and the lock is free from then. The waiters'
//     halt and kick (pv_wait_node(), pv_kick()) after SPIN_THRESHOLD spins are
//     not modelled: in a kernel profile of sem-scalebench mode 4 (2 tasks) on
//     such a guest, neither the unlock's slow path nor a kick appeared.
//
//   cna: the queued lock with the NUMA-aware slow path of the CNA series
//     (Dice and Kogan, "Compact NUMA-aware Locks", EuroSys 2019; "[PATCH v11
//     0/5] Add NUMA-awareness to qspinlock", LKML 2020-09-15, not merged). An
//     MCS node that takes the lock passes the head role to the first waiter
//     of the main queue on its own NUMA node (a die here); the waiters it
//     skips move, in order, to a secondary queue. With none of its node in
//     the main queue, the secondary queue goes back in front of it. While the
//     secondary queue is empty the head passes in FIFO order and starts
//     looking only once in kCnaShuffleOdds hand-offs (the series' shuffle
//     reduction, SHUFFLE_REDUCTION_PROB_ARG 7: 1 in 2^7); after
//     kCnaIntraNodeHandoffs hand-offs within one node the secondary queue goes
//     back in front (the long-term fairness threshold,
//     intra_node_handoff_threshold = 1 << 16 of v9-v11 [recalled, not
//     verified here]; later versions bound it by 10 ms instead). The head's
//     walk of the queue (cna_order_queue) runs while it spins and is not
//     charged.
//
// Line spinning (set_line_spinning(), ticket kind): instead of the hand-off
// formula above, the ticket lock is the contended-line spin of
// machine/line_spin.hpp, the implementation lock-stress's ticket lock uses:
// lock() is an xadd on the tail and a spin reading the head until it
// shows our ticket; every write to the lock's line (a release, a
// newcomer's xadd, the holder's store to other data on the same line) makes
// every spinner re-read the line, each at its own date and its own distance
// from the cache that serves it, so the spinners stay visible on the line
// for as long as the lock is held; unlock() is a store to the head.
//
// Time order (machine/task.hpp): a task reads the lock's state once its request on
// the line is over -- lock() decides when its atomic completes, is_locked() when its
// read does, unlock() hands on at its release's issue end -- after every event dated
// earlier, by the turn it takes there. Where what it finds there is settled at the
// request's issue, that wait is the task's own and the turn at its end is owed, as
// for the kernel's data accesses (settled_at_issue(), counted by settled_lock_steps()):
//   lock() of a free lock with nobody waiting and no other task between a request
//     on the line and the decision it takes from the lock's state (deciding_:
//     lock()'s atomic, is_locked()'s read): every later request on the line queues
//     behind this atomic and completes after it (costs > 0), so nobody reads or
//     changes the lock before this task decides, and it finds the lock free. The
//     line need not be idle: a request in flight that decides nothing (data on the
//     lock's line) only delays the atomic. With OS noise due in the wait the task
//     decides later (after the interruption), so that wait is not settled;
//   unlock() with nobody waiting and nobody deciding: the lock goes free at the
//     issue's end whatever runs before it.
// Never where something else can reorder the strict order's decisions: wake-up IPIs
// (ipi_target), SMT runs (machine/smt.hpp re-dates them), a trace (recorded as made),
// an observer's turn before the wait's end (it reads the lock's statistics), or a
// line whose reads can complete without the home agent or inside another's transfer
// (llc_hit, smt_shared_l1, read_occupancy < 1). The reference mode takes every one
// of these turns, so the fast path is checked against it (tests/fuzz/order_fuzz.py,
// tests/cpp/test_settled_locks.cpp).
//
// Oracle mode (tests only, ticket kind): set_markov_oracle() turns the lock
// into the Boyd-Wickizer birth-death model exactly. The holder's whole service
// (critical section plus hand-off) is drawn by the lock at unlock() as an
// exponential of mean s + c*k/2, k = waiters at each moment, re-sampled when
// k changes (done by thinning: candidate completions at rate 1/s, each
// accepted with probability s/(s + c*k/2)); lock() is free of line costs.
// With exponential think times the simulation is then the model's CTMC.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <limits>
#include <string>

#include "core/rng.hpp"
#include "machine/cache_line.hpp"
#include "machine/line_spin.hpp"
#include "machine/task.hpp"

namespace semsim::machine {

enum class LockKind : std::uint8_t { Ticket, Queued, Cna };
// May a lock or unlock owe the turn at its wait's end where its outcome is settled
// at the issue (Time order, below)?
enum class Settle : std::uint8_t { Never, AtIssue };

// Lock and unlock waits settled at their issue so far in this process (Time order,
// above): for benchmarks and tests.
std::uint64_t settled_lock_steps();
namespace detail {
extern std::uint64_t g_settled_lock_steps;
}  // namespace detail

struct LockStats {
  // acquisitions: counted when released (so a measurement window counts the
  // critical sections that ended in it, like the operations it counts);
  // contended: counted when a contender had to wait.
  std::uint64_t acquisitions = 0, contended = 0;
  Tick wait = 0, hold = 0;
  // Queued spinlock only: contended acquisitions that took the pending-bit
  // path (no MCS node) and those that queued an MCS node.
  std::uint64_t pending_path = 0, mcs_path = 0;
  // Line spinning only: the spinners' re-reads of the lock's line after a write to it.
  std::uint64_t rereads = 0;
  // The /proc/lock_stat columns beyond the sums: the longest wait and hold,
  // and the bounces (an acquisition, or a contention, on another CPU than the
  // lock's last acquirer: lock_stat's own definition, i.e. the lock word's line
  // moved). Bookkeeping only: nothing here changes when things happen.
  Tick wait_max = 0, hold_max = 0;
  std::uint64_t acq_bounces = 0, con_bounces = 0;
  int last_cpu = -1;  // the CPU of the last acquisition (-1: none since the reset)
  void add_wait(Tick w) {
    wait += w;
    wait_max = std::max(wait_max, w);
  }
  void add_hold(Tick h) {
    hold += h;
    hold_max = std::max(hold_max, h);
  }
  void contended_on(int cpu) {
    ++contended;
    if (last_cpu >= 0 && last_cpu != cpu) ++con_bounces;
  }
  void acquired_on(int cpu) {
    if (last_cpu >= 0 && last_cpu != cpu) ++acq_bounces;
    last_cpu = cpu;
  }
};

class Spinlock {
 public:
  Spinlock(LockKind kind, CacheLine* line, std::uint64_t seed)
      : kind_(kind), line_(line), rng_(seed), watchers_(seed) {}
  Spinlock(const Spinlock&) = delete;  // its line may point at its watchers
  Spinlock& operator=(const Spinlock&) = delete;

  // spin_lock() at the task's cursor. Returns with the lock held and the
  // task's cursor at the acquisition time. With Settle::AtIssue its wait is owed
  // where it is settled at the atomic's issue (Time order, above): for callers
  // whose code under and after the lock orders every access to shared state by a
  // request of its own (the semaphore array's locks), not the scheduler's (it
  // writes a task's state for wakers that read it before taking the lock).
  void lock(const Topology& topo, Task& task, Settle settle = Settle::Never);
  // spin_unlock() at the task's cursor; hands the lock to the next waiter.
  void unlock(const Topology& topo, Task& task, Settle settle = Settle::Never);
  // spin_is_locked() as a plain read of the lock word at the task's cursor.
  bool is_locked(const Topology& topo, Task& task);
  bool held() const { return holder_ != nullptr; }
  std::size_t waiters() const {
    return line_spinning_ ? spinning_ : waiters_.size() + secondary_.size();
  }
  LockKind kind() const { return kind_; }
  CacheLine& line() { return *line_; }
  const LockStats& stats() const { return stats_; }
  void reset_stats() { stats_ = {}; }

  // Line spinning (see above); ticket kind only (a queued lock ignores it:
  // its waiters already see a release at their own distance); not with the oracle.
  void set_line_spinning(bool on);
  bool line_spinning() const { return line_spinning_; }

  // The Boyd-Wickizer oracle mode (see above); ticket kind only; serial > 0.
  void set_markov_oracle(Tick serial, Tick per_waiter);
  bool markov_oracle() const { return oracle_serial_ > 0; }

 private:
  static constexpr Tick kNotYet = std::numeric_limits<Tick>::max();
  struct Waiter {
    Task* task;
    Tick since;    // when it started spinning
    Tick head_at;  // queued: when it spins on the lock word (kNotYet: on its MCS node)
    bool mcs;      // queued: it queued an MCS node (else: pending bit)
  };
  void oracle_unlock(Task& task);
  // At the issue of lock()'s atomic (with the lock free) or of unlock()'s release:
  // is what it finds at its end settled, whatever runs before that? (See lock().)
  bool settled_at_issue(const Topology& topo, const Task& task, Settle settle) const;
  void lock_on_line(const Topology& topo, Task& task);
  void unlock_on_line(const Topology& topo, Task& task);
  // CNA: the MCS node that took the lock at `owner` picks the next head (above).
  void cna_pass_head(const Topology& topo, const Task& owner);
  bool queued() const { return kind_ != LockKind::Ticket; }
  static constexpr std::uint64_t kCnaShuffleOdds = 128;
  static constexpr std::uint64_t kCnaIntraNodeHandoffs = 1u << 16;
  // unlock(): the lock goes to the next waiter, or is free, from `released`
  // (the releaser's cursor is at its store's issue end, nothing run past it).
  void hand_on(const Topology& topo, Task& task, Tick released);
  LockKind kind_;
  CacheLine* line_;
  Rng rng_;
  LineWatchers watchers_;  // the line's spinners, unless another lock on the line attached first
  bool line_spinning_ = false;
  std::uint64_t next_ticket_ = 0, now_serving_ = 0;  // line spinning: tail and head
  std::size_t spinning_ = 0;
  Task* holder_ = nullptr;
  // Tasks between a request on the line and what they decide from the lock's state
  // (lock(): the atomic, is_locked(): the read), which they read once their wait is over.
  int deciding_ = 0;
  // Do the machine and the line let a wait settle at all (settled_at_issue(); -1: not asked yet)?
  mutable int machine_settles_ = -1;
  Tick acquired_at_ = 0;
  const Task* handed_by_ = nullptr;  // the releaser of the latest hand-off (for the trace)
  Tick free_at_ = 0;                 // the last release with nobody waiting is visible from here
  int freed_by_ = -1;                // on this CPU
  std::deque<Waiter> waiters_;       // queued kinds: the pending waiter, then the MCS queue
  std::deque<Waiter> secondary_;     // CNA: waiters of other nodes, set aside in order
  std::uint64_t intra_node_ = 0;     // CNA: hand-offs within one node since the last flush
  LockStats stats_;
  Tick oracle_serial_ = 0, oracle_per_waiter_ = 0;
};

}  // namespace semsim::machine
