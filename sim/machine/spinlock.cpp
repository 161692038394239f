#include "machine/spinlock.hpp"

#include <algorithm>
#include <cmath>

#include "core/errors.hpp"
#include "machine/store_buffer.hpp"

namespace semsim::machine {

namespace detail {
std::uint64_t g_settled_lock_steps = 0;
}  // namespace detail
std::uint64_t settled_lock_steps() { return detail::g_settled_lock_steps; }

void Spinlock::set_markov_oracle(Tick serial, Tick per_waiter) {
  if (line_spinning_)
    throw SimulationError("line spinning and the Markov oracle exclude each other");
  if (kind_ != LockKind::Ticket)
    throw SimulationError("the Markov oracle mode is a ticket-lock mode");
  if (serial <= 0 || per_waiter < 0)
    throw SimulationError("the Markov oracle needs serial > 0, per_waiter >= 0");
  oracle_serial_ = serial;
  oracle_per_waiter_ = per_waiter;
}

void Spinlock::set_line_spinning(bool on) {
  if (on && markov_oracle())
    throw SimulationError("line spinning and the Markov oracle exclude each other");
  line_spinning_ = on && kind_ == LockKind::Ticket;
  if (line_spinning_) watchers_.attach(*line_);
}

void Spinlock::lock_on_line(const Topology& topo, Task& task) {
  // xadd on the tail (after the store buffer drained); like every write to the
  // line it makes the spinners re-read.
  const Tick done = issue_rmw(topo, task, *line_);
  const std::uint64_t mine = next_ticket_++;
  task.advance_to(done);
  if (mine == now_serving_) {
    holder_ = &task;
    acquired_at_ = task.cursor;
    stats_.acquired_on(task.cpu);
    return;
  }
  stats_.contended_on(task.cpu);
  const Tick since = task.cursor;
  ++spinning_;
  spin_on_line(topo, task, *line_, stats_.rereads, [&] { return now_serving_ == mine; });
  --spinning_;
  holder_ = &task;
  stats_.add_wait(task.cursor - since);
  if (task.trace != nullptr) task.trace->lock_wait(this, task, since, task.cursor, handed_by_);
  acquired_at_ = task.cursor;
  stats_.acquired_on(task.cpu);
}

void Spinlock::unlock_on_line(const Topology& topo, Task& task) {
  // The store to the head, through the store buffer: the releaser goes on,
  // the spinners re-read once it is visible (the line wakes them); the one
  // whose ticket it shows takes the lock when its read completes.
  const IssuedStore release = issue_store(topo, task, *line_);
  ++now_serving_;
  holder_ = nullptr;
  handed_by_ = &task;
  task.advance_to(release.issued);
}

void Spinlock::lock(const Topology& topo, Task& task, Settle settle) {
  task.sync();
  InFunc in(task, Func::RawSpinLock);
  ++task.lock_depth;
  if (line_spinning_) {
    lock_on_line(topo, task);
    return;
  }
  if (markov_oracle()) {
    if (holder_ == nullptr && waiters_.empty()) {
      holder_ = &task;
      acquired_at_ = task.cursor;
      stats_.acquired_on(task.cpu);
      return;
    }
    stats_.contended_on(task.cpu);
    waiters_.push_back({&task, task.cursor, task.cursor, false});
    task.park_spinning();
    return;
  }
  // Ticket: fetch-and-add on the tail; queued: cmpxchg on the lock word, or
  // setting the pending bit, or xchg of the tail. Whether the lock was free is
  // decided when the atomic completes, after every earlier event; where that is
  // settled at the issue, the wait is the task's own (Time order, spinlock.hpp).
  drain_for_rmw(task);  // the check is at the issue
  const bool settled = holder_ == nullptr && settled_at_issue(topo, task, settle);
  const Tick done = issue_drained_rmw(topo, task, *line_);
  ++deciding_;
  if (settled && done < task.actor->read_ahead_barrier() && !task.interrupts_due(done)) {
    ++detail::g_settled_lock_steps;
    task.advance_private(done);
  } else {
    task.advance_to(done);
  }
  --deciding_;
  if (holder_ == nullptr && waiters_.empty() && secondary_.empty()) {
    holder_ = &task;
    if (task.cursor < free_at_) {
      // The last release is still in its releaser's store buffer: we read the
      // lock held, and see it free one transfer after the store is visible.
      stats_.contended_on(task.cpu);
      const Tick since = task.cursor;
      task.advance_to(free_at_ + (freed_by_ == task.cpu ? 0 : topo.transfer(freed_by_, task.cpu)));
      stats_.add_wait(task.cursor - since);
      if (task.trace != nullptr) task.trace->lock_wait(this, task, since, task.cursor, nullptr);
    }
    acquired_at_ = task.cursor;
    stats_.acquired_on(task.cpu);
    return;
  }
  stats_.contended_on(task.cpu);
  Waiter w{&task, task.cursor, task.cursor, false};
  if (queued()) {
    if (waiters_.empty() && secondary_.empty()) {
      ++stats_.pending_path;  // locked, nobody pending or queued: set pending, spin on the word
    } else {
      ++stats_.mcs_path;
      w.mcs = true;
      // The first MCS node (only a pending waiter ahead) spins on the lock
      // word now; a later one waits on its node until promoted.
      const bool first_node = waiters_.size() == 1 && !waiters_.front().mcs;
      if (!first_node) w.head_at = kNotYet;
    }
  }
  waiters_.push_back(w);
  // unlock() makes us the holder, dates our cursor to when we see the release
  // and unparks us then.
  task.park_spinning();
  if (queued()) {
    // We see the release: claim the lock word with an atomic
    // (clear_pending_set_locked / set_locked), at our own date.
    rmw(topo, task, *line_);
    // An MCS node that takes the lock makes the node behind it the new head
    // (CNA: the one it picks): its store reaches that CPU one transfer later.
    if (w.mcs && kind_ == LockKind::Cna) cna_pass_head(topo, task);
    if (w.mcs && !waiters_.empty() && waiters_.front().head_at == kNotYet)
      waiters_.front().head_at = task.cursor + topo.transfer(task.cpu, waiters_.front().task->cpu);
  }
  stats_.add_wait(task.cursor - w.since);
  if (task.trace != nullptr) task.trace->lock_wait(this, task, w.since, task.cursor, handed_by_);
  acquired_at_ = task.cursor;
  stats_.acquired_on(task.cpu);
}

bool Spinlock::settled_at_issue(const Topology& topo, const Task& task, Settle settle) const {
  if (settle != Settle::AtIssue || deciding_ != 0 || !waiters_.empty() || !secondary_.empty() ||
      task.smt != nullptr || task.trace != nullptr || task.actor == nullptr ||
      !task.actor->running() || task.actor->reference_order())
    return false;
  if (machine_settles_ < 0) {  // the same for the whole run: asked once
    const MachineParams& p = topo.params();
    const LineContention& c = line_->contention();
    machine_settles_ = p.ipi_target == 0 && p.l1_hit > 0 && p.atomic_rmw > 0 && !c.smt_shared_l1 &&
                       c.llc_hit == 0 && c.read_occupancy >= 1;
  }
  return machine_settles_ > 0;
}

void Spinlock::unlock(const Topology& topo, Task& task, Settle settle) {
  task.pay_turn();
  if (markov_oracle()) {
    oracle_unlock(task);
    return;
  }
  if (holder_ != &task)
    throw SimulationError("spin_unlock of " + line_->name() + " by a task that does not hold it");
  InFunc in(task, Func::SemUnlock);
  ++stats_.acquisitions;
  stats_.add_hold(task.cursor - acquired_at_);
  if (task.trace != nullptr) task.trace->lock_held(this, task, acquired_at_, task.cursor);
  --task.lock_depth;
  if (line_spinning_) {
    unlock_on_line(topo, task);
    return;
  }
  // The release is a plain store to the lock word (head++ / locked byte = 0),
  // through the store buffer: the releaser goes on, the others see it free
  // once it is visible. Until then the lock reads held.
  // Paravirt qspinlock (pv_spinlock: a KVM guest): __pv_queued_spin_unlock is a
  // locked cmpxchg of the locked byte (it must see whether a halted waiter needs a
  // kick), so the releaser drains its store buffer, waits for the lock's line and
  // goes on once the cmpxchg is done; the lock is free from then.
  // The hand-off happens at the release's issue end (the cmpxchg's completion),
  // the date the releaser waits for: wait_until() there, hand on, and only then pay
  // the interruptions that landed in the wait (an IPI handler, OS noise). They delay
  // the releaser, not the release: paid first (advance_to), they moved the clock past
  // the release and the next owner was dated behind it (a time-order fault on the next line
  // it touched: box-64 sem-lockunlock, 256 tasks, with ipi_target on).
  // Settled at the issue (Time order, spinlock.hpp): with nobody waiting the lock goes
  // free at the issue's end whatever runs before it, so that wait is the releaser's
  // own (unless the store buffer or the drain held the issue back past the check).
  const Tick issue = task.cursor;
  const bool settled = settled_at_issue(topo, task, settle);
  IssuedStore release;
  if (kind_ == LockKind::Queued && topo.params().pv_spinlock) {
    const Tick done = issue_rmw(topo, task, *line_);
    release = {done, done};
  } else {
    release = issue_store(topo, task, *line_);
  }
  const Tick waited_from = task.cursor;
  task.owe_turns =
      settled && waited_from == issue && release.issued < task.actor->read_ahead_barrier();
  if (task.owe_turns) ++detail::g_settled_lock_steps;
  task.wait_until(release.issued);
  hand_on(topo, task, release.visible);
  task.interrupts_after_wait(waited_from);
  task.owe_turns = false;
}

void Spinlock::cna_pass_head(const Topology& topo, const Task& owner) {
  auto flush = [&] {  // the secondary queue back in front of the main queue
    waiters_.insert(waiters_.begin(), secondary_.begin(), secondary_.end());
    secondary_.clear();
    intra_node_ = 0;
  };
  if (waiters_.empty()) {
    if (!secondary_.empty()) flush();
    return;
  }
  if (secondary_.empty() && rng_.below(kCnaShuffleOdds) != 0) return;  // FIFO this time
  if (!secondary_.empty() && intra_node_ >= kCnaIntraNodeHandoffs) {
    flush();
    return;
  }
  const int node = topo.coords(owner.cpu).die;
  const auto local = std::find_if(waiters_.begin(), waiters_.end(), [&](const Waiter& w) {
    return topo.coords(w.task->cpu).die == node;
  });
  if (local == waiters_.end()) {
    if (!secondary_.empty()) flush();
    return;
  }
  secondary_.insert(secondary_.end(), waiters_.begin(), local);
  waiters_.erase(waiters_.begin(), local);
  ++intra_node_;
}

void Spinlock::hand_on(const Topology& topo, Task& task, Tick released) {
  if (waiters_.empty() && !secondary_.empty()) {  // CNA: only set-aside waiters are left
    waiters_.swap(secondary_);
    intra_node_ = 0;
    waiters_.front().head_at = released + topo.transfer(task.cpu, waiters_.front().task->cpu);
  }
  if (waiters_.empty()) {
    holder_ = nullptr;
    free_at_ = released;
    freed_by_ = task.cpu;
    return;
  }
  Waiter next = waiters_.front();
  waiters_.pop_front();
  Tick seen;
  if (kind_ == LockKind::Ticket) {
    // Every spinner (the next owner among them) re-reads the line; the
    // directory serves them one by one and the next owner's read lands at a
    // uniformly random place in that sequence.
    const auto spinners = waiters_.size() + 1;
    const Tick per_read = topo.transfer(task.cpu, next.task->cpu);
    const auto position = rng_.below(spinners) + 1;
    seen = released + static_cast<Tick>(position) * per_read;
    line_->occupy_until(released + static_cast<Tick>(spinners) * per_read);
    line_->add_sharer(next.task->cpu);
    for (const auto& w : waiters_) line_->add_sharer(w.task->cpu);
  } else {
    // The waiter spinning on the lock word sees the store once it spins there
    // (an MCS node only once promoted), whatever the number of waiters; it
    // claims the word itself when it runs again (lock()).
    seen = next.head_at == kNotYet ? released : std::max(released, next.head_at);
  }
  handed_by_ = &task;
  holder_ = next.task;
  {
    InFunc spin(*next.task, Func::RawSpinLock);
    next.task->advance_to(seen);
  }
  next.task->resume_at_cursor();
}

void Spinlock::oracle_unlock(Task& task) {
  // The holder's service, critical section and hand-off together, drawn as
  // an exponential whose rate follows the number of waiters k: candidate
  // completions come at rate 1/s and each is accepted with probability
  // s/(s + c*k/2), k read at the candidate's date (thinning: the first
  // accepted candidate has hazard 1/(s + c*k(t)/2), i.e. a memoryless
  // service re-sampled whenever k changes).
  const double s = static_cast<double>(oracle_serial_);
  for (;;) {
    task.charge(static_cast<Tick>(std::llround(rng_.exponential(s))));
    task.sync();
    const double mean =
        s + static_cast<double>(oracle_per_waiter_) * static_cast<double>(waiters_.size()) / 2;
    if (rng_.uniform() * mean < s) break;
  }
  ++stats_.acquisitions;
  stats_.add_hold(task.cursor - acquired_at_);
  if (task.trace != nullptr) task.trace->lock_held(this, task, acquired_at_, task.cursor);
  --task.lock_depth;
  if (waiters_.empty()) {
    holder_ = nullptr;
    return;
  }
  Waiter next = waiters_.front();
  waiters_.pop_front();
  stats_.add_wait(task.cursor - next.since);
  if (task.trace != nullptr)
    task.trace->lock_wait(this, *next.task, next.since, task.cursor, &task);
  holder_ = next.task;
  acquired_at_ = task.cursor;
  stats_.acquired_on(next.task->cpu);
  {
    InFunc spin(*next.task, Func::RawSpinLock);
    next.task->advance_to(task.cursor);
  }
  next.task->resume_at_cursor();
}

bool Spinlock::is_locked(const Topology& topo, Task& task) {
  task.pay_turn();
  if (line_spinning_) {
    // The word as it is at the read's date (head != tail).
    const Tick done = issue_load(topo, task, *line_);
    const bool locked = now_serving_ != next_ticket_;
    task.advance_to(done);
    return locked;
  }
  ++deciding_;
  load(topo, task, *line_);
  --deciding_;
  return holder_ != nullptr || task.cursor < free_at_;
}

}  // namespace semsim::machine
