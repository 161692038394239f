#include "machine/mlp.hpp"

#include <algorithm>

#include "machine/cache_line.hpp"
#include "machine/store_buffer.hpp"
#include "machine/topology.hpp"

namespace semsim::machine {

void LoadWindow::stall_until(Task& task, Tick until) {
  // Retirement order: the oldest load not done yet holds the core.
  for (const Pending& p : loads_) {
    if (task.cursor >= until) return;
    if (p.done <= task.cursor) continue;
    InFunc in(task, p.func);
    task.advance_to(std::min(p.done, until));
  }
  task.advance_to(until);
}

Tick LoadWindow::load(const Topology& topo, Task& task, CacheLine& line) {
  const MachineParams& m = topo.params();
  const int buffers = std::max(1, static_cast<int>(m.fill_buffers));
  // One pass over the window: the latest fill of this line in it (a line still
  // outstanding takes no second buffer, and a hit on it waits for that fill) and
  // the misses holding a buffer now.
  // When every load in it is done by the cursor (a run of hits, the usual case),
  // no fill is outstanding, none holds a buffer and the pass is skipped.
  const Tick latest = latest_;
  Tick same_line = -1;
  int busy = 0;
  if (latest > task.cursor) {
    for (const Pending& p : loads_) {
      if (p.line == &line) same_line = std::max(same_line, p.done);
      if (p.miss && p.done > task.cursor) ++busy;
    }
  }
  const bool merges = same_line > task.cursor;
  if (!merges && busy >= buffers) {
    // Every fill buffer is taken: wait for the first one to free.
    Tick first = 0;
    bool any = false;
    for (const Pending& p : loads_)
      if (p.miss && p.done > task.cursor && (!any || p.done < first)) {
        first = p.done;
        any = true;
      }
    stall_until(task, first);
  }
  // At the cursor (after a store to it, if any); the kernel's own load, so it may read
  // ahead; inside an SMT run only while every load in the window is done by the run's
  // start: then each comparison above and in stall_until() with the cursor, a date the
  // run's turn may still move, has the same answer at every date of the run.
  Tick done = issue_private_load(topo, task, line, latest <= task.smt_from);
  const bool miss = done > task.cursor + m.l1_hit;
  // A hit on a line whose fill is still outstanding: its data comes with the fill.
  if (!miss) done = std::max(done, same_line);
  loads_.push_back({&line, done, task.func, miss});
  latest_ = std::max(latest_, done);
  task.advance_private(
      std::min(done, task.cursor + m.l1_hit));  // the load's issue; the core goes on
  return done;
}

void LoadWindow::drain(Task& task) {
  stall_until(task, std::max(task.cursor, latest_));
  loads_.clear();
  latest_ = -1;
}

}  // namespace semsim::machine
