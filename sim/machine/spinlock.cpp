#include "machine/spinlock.hpp"

#include <cmath>

#include "core/errors.hpp"

namespace semsim::machine {

void Spinlock::set_markov_oracle(Tick serial, Tick per_waiter) {
  if (kind_ != LockKind::Ticket)
    throw SimulationError("the Markov oracle mode is a ticket-lock mode");
  if (serial <= 0 || per_waiter < 0)
    throw SimulationError("the Markov oracle needs serial > 0, per_waiter >= 0");
  oracle_serial_ = serial;
  oracle_per_waiter_ = per_waiter;
}

void Spinlock::lock(const Topology& topo, Task& task) {
  // Catch up with simulated time first: whether the lock is free is decided
  // at the date we reach it, after every earlier event.
  task.sync();
  InFunc in(task, Func::RawSpinLock);
  ++task.lock_depth;
  if (markov_oracle()) {
    if (holder_ == nullptr && waiters_.empty()) {
      holder_ = &task;
      acquired_at_ = task.cursor;
      stats_.acquired_on(task.cpu);
      return;
    }
    stats_.contended_on(task.cpu);
    waiters_.push_back({&task, task.cursor, task.cursor, false});
    task.actor->park();
    return;
  }
  // Ticket: fetch-and-add on the tail; queued: cmpxchg on the lock word, or
  // setting the pending bit, or xchg of the tail.
  Tick t = line_->access(topo, task.cpu, Access::Rmw, task.cursor);
  task.advance_to(t);
  if (holder_ == nullptr && waiters_.empty()) {
    if (free_at_ > task.cursor) {
      // Released at a date still ahead of us: we spin until the store is visible.
      stats_.contended_on(task.cpu);
      if (kind_ == LockKind::Queued) ++stats_.pending_path;
      Tick seen = line_->access(topo, task.cpu, Access::Read, free_at_);
      stats_.add_wait(seen - task.cursor);
      if (task.trace != nullptr) task.trace->lock_wait(this, task, task.cursor, seen, nullptr);
      task.advance_to(seen);
    }
    holder_ = &task;
    acquired_at_ = task.cursor;
    stats_.acquired_on(task.cpu);
    return;
  }
  stats_.contended_on(task.cpu);
  Waiter w{&task, task.cursor, task.cursor, false};
  if (kind_ == LockKind::Queued) {
    if (waiters_.empty()) {
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
  task.actor->park();  // the releaser sets our cursor to the hand-off date and unparks us then
}

void Spinlock::unlock(const Topology& topo, Task& task) {
  if (markov_oracle()) {
    oracle_unlock(task);
    return;
  }
  // The release must happen at its date in simulated time: a contender that
  // arrives while we hold the lock has to find it held and queue (and count
  // among the spinners of a ticket hand-off). Without this sync, a holder
  // that does not sleep inside its critical section would lock and unlock in
  // one SimGrid step and nobody would ever queue behind it.
  task.sync();
  InFunc in(task, Func::SemUnlock);
  ++stats_.acquisitions;
  stats_.add_hold(task.cursor - acquired_at_);
  if (task.trace != nullptr) task.trace->lock_held(this, task, acquired_at_, task.cursor);
  --task.lock_depth;
  // The release is a plain store to the lock word (head++ / locked byte = 0).
  Tick released = line_->access(topo, task.cpu, Access::Write, task.cursor);
  task.advance_to(released);
  if (waiters_.empty()) {
    holder_ = nullptr;
    free_at_ = released;
    last_releaser_ = task.cpu;
    return;
  }
  Waiter next = waiters_.front();
  waiters_.pop_front();
  Tick granted;
  if (kind_ == LockKind::Ticket) {
    // Every spinner (the next owner among them) re-reads the line; the
    // directory serves them one by one and the next owner's read lands at a
    // uniformly random place in that sequence.
    const auto spinners = waiters_.size() + 1;
    const Tick per_read = topo.transfer(task.cpu, next.task->cpu);
    const auto position = rng_.below(spinners) + 1;
    granted = released + static_cast<Tick>(position) * per_read;
    line_->occupy_until(released + static_cast<Tick>(spinners) * per_read);
    line_->add_sharer(next.task->cpu);
    for (const auto& w : waiters_) line_->add_sharer(w.task->cpu);
  } else {
    // The waiter spinning on the lock word sees the store with one transfer
    // and claims the lock word with an atomic (clear_pending_set_locked /
    // set_locked), whatever the number of waiters.
    const Tick watching = next.head_at == kNotYet ? released : std::max(released, next.head_at);
    granted = line_->access(topo, next.task->cpu, Access::Rmw, watching);
    // An MCS node that takes the lock makes the node behind it the new head:
    // its store reaches that CPU one transfer later.
    if (next.mcs && !waiters_.empty() && waiters_.front().head_at == kNotYet)
      waiters_.front().head_at =
          granted + topo.transfer(next.task->cpu, waiters_.front().task->cpu);
  }
  stats_.add_wait(granted - next.since);
  if (task.trace != nullptr) task.trace->lock_wait(this, *next.task, next.since, granted, &task);
  holder_ = next.task;
  acquired_at_ = granted;
  stats_.acquired_on(next.task->cpu);
  {
    InFunc spin(*next.task, Func::RawSpinLock);
    next.task->advance_to(granted);
  }
  next.task->actor->unpark_at(granted);
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
    free_at_ = task.cursor;
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
  next.task->actor->unpark_at(task.cursor);
}

bool Spinlock::is_locked(const Topology& topo, Task& task) {
  task.advance_to(line_->access(topo, task.cpu, Access::Read, task.cursor));
  return holder_ != nullptr || free_at_ > task.cursor;
}

}  // namespace semsim::machine
