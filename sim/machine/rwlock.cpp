#include "machine/rwlock.hpp"

#include <algorithm>

#include "machine/store_buffer.hpp"

namespace semsim::machine {

void RwLock::set_line_spinning(bool on) {
  line_spinning_ = on;
  if (on) watchers_.attach(*line_);
}

// Line spinning: what an RMW finds is the word at its issue date (the line
// serves requests in issue order, so that is also the order their effects land).
// Every RMW goes through the store buffer (issue_rmw/rmw: the LOCK prefix drains it).
void RwLock::read_lock_on_line(const Topology& topo, Task& task) {
  const Tick since = task.cursor;
  bool waited = false;
  for (;;) {
    const Tick done = issue_rmw(topo, task, *line_);  // lock decl
    const bool got = writer_ == nullptr;
    if (got) readers_.push_back({&task, done});
    task.advance_to(done);
    if (got) break;
    if (!waited) stats_.read.contended_on(task.cpu);
    waited = true;
    rmw(topo, task, *line_);  // lock incl (undo)
    spin_on_line(topo, task, *line_, stats_.rereads, [&] { return writer_ == nullptr; });
  }
  if (waited) {
    stats_.read.add_wait(task.cursor - since);
    if (task.trace != nullptr) task.trace->lock_wait(this, task, since, task.cursor, nullptr, true);
  }
  stats_.read.acquired_on(task.cpu);
  stats_.max_readers = std::max<std::uint64_t>(stats_.max_readers, readers_.size());
}

void RwLock::write_lock_on_line(const Topology& topo, Task& task) {
  const Tick since = task.cursor;
  bool waited = false;
  const auto free = [&] { return writer_ == nullptr && readers_.empty(); };
  for (;;) {
    const Tick done = issue_rmw(topo, task, *line_);  // lock sub BIAS
    const bool got = free();
    if (got) writer_ = &task;
    task.advance_to(done);
    if (got) break;
    if (!waited) stats_.write.contended_on(task.cpu);
    waited = true;
    rmw(topo, task, *line_);  // lock add (undo)
    spin_on_line(topo, task, *line_, stats_.rereads, free);
  }
  writer_since_ = task.cursor;
  if (waited) {
    stats_.write.add_wait(task.cursor - since);
    if (task.trace != nullptr) task.trace->lock_wait(this, task, since, task.cursor, nullptr);
  }
  stats_.write.acquired_on(task.cpu);
}

void RwLock::read_lock(const Topology& topo, Task& task) {
  task.pay_turn();
  InFunc in(task, Func::RawReadLock);
  if (line_spinning_) {
    ++task.lock_depth;
    read_lock_on_line(topo, task);
    return;
  }
  // Whether a writer holds it is decided when our atomic completes.
  rmw(topo, task, *line_);  // lock decl
  ++task.lock_depth;
  if (writer_ == nullptr) {
    readers_.push_back({&task, task.cursor});
    stats_.read.acquired_on(task.cpu);
    stats_.max_readers = std::max<std::uint64_t>(stats_.max_readers, readers_.size());
    return;
  }
  stats_.read.contended_on(task.cpu);
  waiting_readers_.push_back({&task, task.cursor});
  task.park_spinning();  // write_unlock sets our cursor to the date we get in and unparks us then
}

void RwLock::read_unlock(const Topology& topo, Task& task) {
  task.pay_turn();
  InFunc in(task, Func::RawRwUnlock);
  auto it = std::find_if(readers_.begin(), readers_.end(),
                         [&](const Reader& r) { return r.task == &task; });
  ++stats_.read.acquisitions;
  if (it != readers_.end()) {
    stats_.read.add_hold(task.cursor - it->since);
    if (task.trace != nullptr) task.trace->lock_held(this, task, it->since, task.cursor, true);
    readers_.erase(it);
  }
  --task.lock_depth;
  if (line_spinning_) {
    rmw(topo, task, *line_);  // lock incl: the waiters see it themselves
    return;
  }
  // A grant is dated at the RMW's completion: the interruptions of the wait are
  // paid after it (Task::wait_until).
  const Tick done = issue_rmw(topo, task, *line_);  // lock incl
  const Tick waited_from = task.cursor;
  task.wait_until(done);
  // Readers that left while our RMW was in flight may have granted it already.
  if (readers_.empty() && writer_ == nullptr && !waiting_writers_.empty())
    grant_writer(topo, task.cursor);
  task.interrupts_after_wait(waited_from);
}

void RwLock::write_lock(const Topology& topo, Task& task) {
  task.pay_turn();
  InFunc in(task, Func::RawWriteLock);
  if (line_spinning_) {
    ++task.lock_depth;
    write_lock_on_line(topo, task);
    return;
  }
  rmw(topo, task, *line_);  // lock sub RW_LOCK_BIAS
  ++task.lock_depth;
  if (writer_ == nullptr && readers_.empty() && waiting_writers_.empty()) {
    writer_ = &task;
    writer_since_ = task.cursor;
    stats_.write.acquired_on(task.cpu);
    return;
  }
  stats_.write.contended_on(task.cpu);
  waiting_writers_.push_back({&task, task.cursor});
  task.park_spinning();
}

void RwLock::write_unlock(const Topology& topo, Task& task) {
  task.pay_turn();
  InFunc in(task, Func::RawRwUnlock);
  ++stats_.write.acquisitions;
  stats_.write.add_hold(task.cursor - writer_since_);
  if (task.trace != nullptr) task.trace->lock_held(this, task, writer_since_, task.cursor);
  --task.lock_depth;
  if (line_spinning_) {
    writer_ = nullptr;        // at the RMW's issue date; the spinners re-read once it lands
    rmw(topo, task, *line_);  // lock add
    return;
  }
  // The waiters get in from the RMW's completion; the interruptions of the wait
  // are paid after their grants (Task::wait_until).
  const Tick done = issue_rmw(topo, task, *line_);  // lock add RW_LOCK_BIAS
  const Tick waited_from = task.cursor;
  task.wait_until(done);
  hand_on(topo, task, task.cursor);
  task.interrupts_after_wait(waited_from);
}

void RwLock::hand_on(const Topology& topo, Task& task, Tick released) {
  writer_ = nullptr;
  if (!waiting_readers_.empty()) {
    // Reader preference: every spinning reader retries its decrement; the
    // retries are serialised on the line, one transfer each, in FIFO order.
    for (const auto& w : waiting_readers_) {
      const Tick got = line_->access(topo, w.task->cpu, Access::Rmw, released);
      stats_.read.add_wait(got - w.since);
      if (task.trace != nullptr) task.trace->lock_wait(this, *w.task, w.since, got, &task, true);
      readers_.push_back({w.task, got});
      stats_.read.acquired_on(w.task->cpu);
      {
        InFunc spin(*w.task, Func::RawReadLock);
        w.task->advance_to(got);
      }
      w.task->resume_at_cursor();
    }
    waiting_readers_.clear();
    stats_.max_readers = std::max<std::uint64_t>(stats_.max_readers, readers_.size());
    return;
  }
  if (!waiting_writers_.empty()) grant_writer(topo, released);
}

void RwLock::grant_writer(const Topology& topo, Tick from) {
  Waiter next = waiting_writers_.front();
  waiting_writers_.pop_front();
  const Tick got = line_->access(topo, next.task->cpu, Access::Rmw, from);
  stats_.write.add_wait(got - next.since);
  if (next.task->trace != nullptr)
    next.task->trace->lock_wait(this, *next.task, next.since, got, nullptr);
  writer_ = next.task;
  writer_since_ = got;
  stats_.write.acquired_on(next.task->cpu);
  {
    InFunc spin(*next.task, Func::RawWriteLock);
    next.task->advance_to(got);
  }
  next.task->resume_at_cursor();
}

}  // namespace semsim::machine
