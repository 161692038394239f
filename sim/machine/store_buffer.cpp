#include "machine/store_buffer.hpp"

#include <algorithm>

#include "machine/cache_line.hpp"
#include "machine/task.hpp"
#include "machine/topology.hpp"

namespace semsim::machine {

namespace {
// How long a locked RMW's store drains after the core may go on (params.hpp).
Tick locked_drain(const MachineParams& p) {
  return p.locked_drain >= 0 ? p.locked_drain : p.atomic_rmw;
}
}  // namespace

std::size_t StoreBuffer::pending(Tick now) {
  while (size_ > 0 && at(0).visible <= now) {
    head_ = (head_ + 1) & (ring_.size() - 1);
    --size_;
  }
  return size_;
}

void StoreBuffer::grow() {
  std::vector<Entry> bigger(ring_.empty() ? 8 : 2 * ring_.size());
  for (std::size_t i = 0; i < size_; ++i) bigger[i] = at(i);
  ring_.swap(bigger);
  head_ = 0;
}

Tick StoreBuffer::push(const CacheLine* line, Tick arrives) {
  const Tick visible = std::max(arrives, last_visible_);
  if (size_ == ring_.size()) grow();
  ring_[(head_ + size_) & (ring_.size() - 1)] = {line, arrives, visible};
  ++size_;
  last_visible_ = visible;
  return visible;
}

Tick StoreBuffer::line_arrival(const CacheLine* line) const {
  Tick t = 0;
  for (std::size_t i = 0; i < size_; ++i)
    if (at(i).line == line) t = std::max(t, at(i).arrives);
  return t;
}

IssuedStore issue_store(const Topology& topo, Task& task, CacheLine& line) {
  task.pay_turn();
  const MachineParams& p = topo.params();
  const auto depth = static_cast<std::size_t>(std::max(p.store_buffer_entries, 0.0));
  if (depth == 0) {  // no buffer: the store stalls the core until its line is here
    const Tick done = line.access(topo, task.cpu, Access::Write, task.cursor);
    return {done, done};
  }
  StoreBuffer& sb = task.stores;
  // A full buffer: the store waits for an entry.
  if (sb.pending(task.cursor) >= depth) task.advance_to(sb.oldest_visible());
  sb.pending(task.cursor);
  // Visible behind the earlier stores (push): the line wakes its spinners then.
  const Tick arrives = line.access(topo, task.cpu, Access::Write, task.cursor, sb.drained());
  return {task.cursor + p.l1_hit, sb.push(&line, arrives)};
}

void drain_for_rmw(Task& task) {
  task.pay_turn();
  task.advance_to(task.stores.drained());  // the LOCK prefix drains the buffer first
}

Tick issue_drained_rmw(const Topology& topo, Task& task, CacheLine& line) {
  const Tick done = line.access(topo, task.cpu, Access::Rmw, task.cursor);
  task.stores.set_locked_done(done + locked_drain(topo.params()));
  return done;
}

Tick issue_rmw(const Topology& topo, Task& task, CacheLine& line) {
  drain_for_rmw(task);
  return issue_drained_rmw(topo, task, line);
}

Tick issue_load(const Topology& topo, Task& task, CacheLine& line) {
  task.pay_turn();
  StoreBuffer& sb = task.stores;
  if (sb.pending(task.cursor) > 0) task.advance_to(sb.line_arrival(&line));
  return line.access(topo, task.cpu, Access::Read, task.cursor);
}

namespace {
// issue_private_load(), inlined into load() as well: most of the kernel's reads
// come through load() and end in the read-ahead branch.
[[gnu::always_inline]] inline Tick private_load(const Topology& topo, Task& task, CacheLine& line,
                                                bool in_run) {
  StoreBuffer& sb = task.stores;
  // A read that may be a quiet hit: a turn owed, and no wait for an own store in
  // flight to the line (issue_load() would take it). Whether it is one is the
  // line's to say at the read's date, ahead of the turn or after it.
  if (!task.turn_owed() || (sb.pending(task.cursor) > 0 && sb.line_arrival(&line) > task.cursor))
    return issue_load(topo, task, line);
  if (task.may_read_ahead()) {
    const bool final = task.read_date_final();
    if (final || (in_run && task.may_read_ahead_in_run())) {
      if (const Tick done = line.read_ahead(topo, task.cpu, task.cursor); done >= 0) {
        task.actor->note_read_ahead();
        if (final) return done;
        task.read_ahead_in_run(line, done - task.cursor);
        return task.smt_from;  // final, and before the hit's end wherever the run moves
      }
    }
  }
  // Its turn in strict order; the IPIs posted meanwhile (machine/ipi_queue.hpp)
  // are its to pay now unless the read is a quiet hit, as when it reads ahead.
  task.pay_turn_for_quiet_read();
  if (!line.quiet_hit(task.cpu)) task.take_ipis();
  return line.access(topo, task.cpu, Access::Read, task.cursor);
}
}  // namespace

Tick issue_private_load(const Topology& topo, Task& task, CacheLine& line, bool in_run) {
  return private_load(topo, task, line, in_run);
}

void full_fence(const Topology& topo, Task& task) {
  const StoreBuffer& sb = task.stores;
  task.advance_to(std::max(sb.drained(), sb.locked_done()));
  task.charge(topo.params().full_fence);
}

namespace {
void wait_for(Task& task, Tick t, Turn turn) {
  if (turn == Turn::Owe)
    task.advance_private(t);
  else
    task.advance_to(t);
}
}  // namespace

Tick store(const Topology& topo, Task& task, CacheLine& line, Turn turn) {
  const IssuedStore s = issue_store(topo, task, line);
  wait_for(task, s.issued, turn);
  return s.visible;
}

void rmw(const Topology& topo, Task& task, CacheLine& line, Turn turn) {
  wait_for(task, issue_rmw(topo, task, line), turn);
}

void load(const Topology& topo, Task& task, CacheLine& line, Turn turn) {
  wait_for(task,
           turn == Turn::Owe ? private_load(topo, task, line, true) : issue_load(topo, task, line),
           turn);
}

}  // namespace semsim::machine
