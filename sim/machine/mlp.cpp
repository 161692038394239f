#include "machine/mlp.hpp"

#include <algorithm>

#include "machine/cache_line.hpp"
#include "machine/store_buffer.hpp"
#include "machine/topology.hpp"

namespace semsim::machine {

int LoadWindow::outstanding(Tick now) const {
  int n = 0;
  for (const Pending& p : loads_)
    if (p.miss && p.done > now) ++n;
  return n;
}

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
  bool merges = false;  // a line still outstanding in the window takes no second buffer
  for (const Pending& p : loads_) merges = merges || (p.line == &line && p.done > task.cursor);
  if (!merges && outstanding(task.cursor) >= buffers) {
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
  // At the cursor (after a store to it, if any); the kernel's own load, so it may read ahead.
  Tick done = issue_private_load(topo, task, line);
  const bool miss = done > task.cursor + m.l1_hit;
  if (!miss) {
    // A hit on a line whose fill is still outstanding: its data comes with the fill.
    for (const Pending& p : loads_)
      if (p.line == &line && p.done > done) done = p.done;
  }
  loads_.push_back({&line, done, task.func, miss});
  task.advance_private(
      std::min(done, task.cursor + m.l1_hit));  // the load's issue; the core goes on
  return done;
}

void LoadWindow::drain(Task& task) {
  Tick last = task.cursor;
  for (const Pending& p : loads_) last = std::max(last, p.done);
  stall_until(task, last);
  loads_.clear();
}

}  // namespace semsim::machine
