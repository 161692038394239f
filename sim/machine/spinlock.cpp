#include "machine/spinlock.hpp"

namespace semsim::machine {

void Spinlock::lock(const Topology& topo, Task& task) {
  // Catch up with simulated time first: whether the lock is free is decided
  // at the date we reach it, after every earlier event.
  task.sync();
  InFunc in(task, Func::RawSpinLock);
  ++stats_.acquisitions;
  // Ticket: fetch-and-add on the tail; queued: cmpxchg/xchg on the lock word.
  Tick t = line_->access(topo, task.cpu, Access::Rmw, task.cursor);
  task.advance_to(t);
  ++task.lock_depth;
  if (holder_ == nullptr && waiters_.empty()) {
    if (free_at_ > task.cursor) {
      // Released at a date still ahead of us: we spin until the store is visible.
      ++stats_.contended;
      Tick seen = line_->access(topo, task.cpu, Access::Read, free_at_);
      stats_.wait += seen - task.cursor;
      task.advance_to(seen);
    }
    holder_ = &task;
    acquired_at_ = task.cursor;
    return;
  }
  ++stats_.contended;
  waiters_.push_back({&task, task.cursor});
  task.actor->park();  // the releaser sets our cursor to the hand-off date and unparks us then
}

void Spinlock::unlock(const Topology& topo, Task& task) {
  InFunc in(task, Func::SemUnlock);
  stats_.hold += task.cursor - acquired_at_;
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
    // MCS hand-off: the head waiter sees the store with one transfer and
    // claims the lock word with an atomic.
    granted = line_->access(topo, next.task->cpu, Access::Rmw, released);
  }
  stats_.wait += granted - next.since;
  holder_ = next.task;
  acquired_at_ = granted;
  {
    InFunc spin(*next.task, Func::RawSpinLock);
    next.task->advance_to(granted);
  }
  next.task->actor->unpark_at(granted);
}

bool Spinlock::is_locked(const Topology& topo, Task& task) {
  task.advance_to(line_->access(topo, task.cpu, Access::Read, task.cursor));
  return holder_ != nullptr || free_at_ > task.cursor;
}

}  // namespace semsim::machine
