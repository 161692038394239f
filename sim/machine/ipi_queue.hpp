// Interrupts sent to a CPU at known dates by another CPU: the handling of a
// cross-LLC wake-up's IPI (TTWU_QUEUE: the waker queues the wakee on the target
// CPU's wake list and sends an IPI; the target's handler, sched_ttwu_pending(),
// takes its own rq->lock and enqueues the wakee). Whatever task runs on the target
// CPU pays each handler in full when its work reaches the IPI's date, as OS noise
// does (machine/cpu_noise.hpp).
//
// Time order: an IPI is posted at the waker's cursor, which no other task's cursor
// precedes. The task running on the target may have charged a chunk of work past
// that date already (its cursor is ahead, waiting in the calendar, or running ahead
// on owed turns: machine/task.hpp): its next charge or wait pays the handler then,
// late by at most that chunk (a charge, or the private work since its last turn),
// so the dates of its later requests are right but the chunk itself is not split
// (an assumption).
// A handler that lands in a wait delays what the task does after it, never the
// event waited for: where the task acts at the wait's end on others (a lock's
// release hands the lock on), it waits with Task::wait_until(), acts, and only
// then pays the handler (Task::interrupts_after_wait()). Paid first, the handler
// moved the clock past the release and the next owner was dated behind it, which
// Task::resume_at_cursor() now rejects (it was a line's time-order fault later).
//
// Which task pays (time order, exact with read-ahead): an IPI posted while the
// CPU's task waits for its turn is its to pay from that turn on (take()), except
// after the turn of a read of a quiet line (machine/store_buffer.cpp,
// issue_private_load()): those IPIs wait for the task's next turn or shared step.
// A quiet read may go ahead of the clock (read-ahead, machine/task.hpp), and then
// the IPIs the strict order would have posted during its turn are posted during
// the next one; deferring them in both orders makes the two runs pay them in the
// same charge, so read-ahead needs no conflict here. It adds the private work
// between a quiet read and the next shared step to the lateness above (an
// assumption of the same kind: the handler lands in a chunk of the kernel path
// that touches only the task's own state and quiet lines).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>

#include "core/time.hpp"

namespace semsim::machine {

class IpiQueue {
 public:
  // An IPI arriving at `at` whose handler takes `cost` (dates never decrease).
  void post(Tick at, Tick cost) {
    pending_.push_back({at, cost});
    ++size_;
    ++posted_;
  }
  // The IPIs posted so far are the running task's to pay (its turn, see the header).
  // Every turn of every task calls it: a count, not the deque's size() (a few
  // subtractions of its node pointers, measurable there).
  void take() { payable_ = size_; }
  // Work of length d from `from`: the handlers of the IPIs that arrive before it is
  // done (each pushes the end later; any that arrived earlier and are unpaid too).
  Tick during_work(Tick from, Tick d) {
    if (payable_ == 0 || pending_.front().at >= from + d) return 0;
    Tick end = from + d, extra = 0;
    while (payable_ > 0 && pending_.front().at < end) {
      extra += pending_.front().cost;
      end += pending_.front().cost;
      pop();
    }
    return extra;
  }
  // A wait from `from` to `until`: handlers that begin in it delay only what runs
  // past `until`.
  Tick past_wait(Tick from, Tick until) {
    if (payable_ == 0 || pending_.front().at >= until) return 0;
    Tick busy = from;
    while (payable_ > 0 && pending_.front().at < until) {
      busy = std::max(busy, pending_.front().at) + pending_.front().cost;
      pop();
    }
    return busy > until ? busy - until : 0;
  }
  // The CPU goes idle: its idle loop handles what is left (no task pays).
  void drop() {
    pending_.clear();
    size_ = 0;
    payable_ = 0;
  }
  std::uint64_t posted() const { return posted_; }
  // Posted and not yet paid; of those, the running task's to pay.
  std::size_t pending() const { return size_; }
  std::size_t payable() const { return payable_; }

 private:
  struct Ipi {
    Tick at, cost;
  };
  void pop() {
    pending_.pop_front();
    --size_;
    --payable_;
  }
  std::deque<Ipi> pending_;  // in posting order, which is date order
  std::size_t size_ = 0;     // pending_.size()
  std::size_t payable_ = 0;  // the first payable_ of pending_ (take())
  std::uint64_t posted_ = 0;
};

}  // namespace semsim::machine
