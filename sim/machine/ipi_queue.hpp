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
// Read-ahead (machine/task.hpp): the task on the CPU that read a line ahead
// of the clock at date r goes on without the IPIs posted at r or earlier that
// the strict order would have posted first (and its work would have paid):
// such a post is a ReadAheadConflict, and the run is done again in strict order.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <string>

#include "core/errors.hpp"
#include "core/time.hpp"

namespace semsim::machine {

class IpiQueue {
 public:
  // An IPI arriving at `at` whose handler takes `cost` (dates never decrease).
  void post(Tick at, Tick cost) {
    if (at <= read_ahead_until_)
      throw ReadAheadConflict("read-ahead: an IPI posted at " + std::to_string(ticks_to_ns(at)) +
                              " ns to a CPU whose task read ahead to " +
                              std::to_string(ticks_to_ns(read_ahead_until_)) + " ns");
    pending_.push_back({at, cost});
    ++posted_;
  }
  // Work of length d from `from`: the handlers of the IPIs that arrive before it is
  // done (each pushes the end later; any that arrived earlier and are unpaid too).
  Tick during_work(Tick from, Tick d) {
    if (pending_.empty() || pending_.front().at >= from + d) return 0;
    Tick end = from + d, extra = 0;
    while (!pending_.empty() && pending_.front().at < end) {
      extra += pending_.front().cost;
      end += pending_.front().cost;
      pending_.pop_front();
    }
    return extra;
  }
  // A wait from `from` to `until`: handlers that begin in it delay only what runs
  // past `until`.
  Tick past_wait(Tick from, Tick until) {
    if (pending_.empty() || pending_.front().at >= until) return 0;
    Tick busy = from;
    while (!pending_.empty() && pending_.front().at < until) {
      busy = std::max(busy, pending_.front().at) + pending_.front().cost;
      pending_.pop_front();
    }
    return busy > until ? busy - until : 0;
  }
  // The task on this CPU read a line ahead of the clock at `date`.
  void note_read_ahead(Tick date) { read_ahead_until_ = std::max(read_ahead_until_, date); }
  // The CPU goes idle: its idle loop handles what is left (no task pays).
  void drop() { pending_.clear(); }
  std::uint64_t posted() const { return posted_; }

 private:
  struct Ipi {
    Tick at, cost;
  };
  std::deque<Ipi> pending_;
  std::uint64_t posted_ = 0;
  Tick read_ahead_until_ = -1;
};

}  // namespace semsim::machine
