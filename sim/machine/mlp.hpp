// Memory-level parallelism: a load miss overlaps with the work after it that
// does not need its value.
//
// An out-of-order x86 core does not wait for a load that misses: the
// instructions after it whose inputs do not depend on its value execute at
// once, and the next loads whose addresses do not depend on it issue too, each
// outstanding miss holding one of the core's line fill buffers (`fill_buffers`)
// until its line is here. The core waits only where the code uses the value:
// a dependent load or computation (its input is the missing value), a locked
// RMW or a fence (on x86 neither passes earlier loads: Intel SDM vol. 3A,
// 8.2.2), or a full set of fill buffers. So a miss of length M followed by
// independent work of length W costs max(M, W), not M + W; two independent
// misses cost about one; two dependent ones pay twice.
//
// LoadWindow: the loads of one task whose values are not needed yet.
//   load(line): the request is made at the task's cursor, so the line serves
//     it in simulated-time order at its own date (cache_line.hpp); the core
//     goes on after the load's issue (an L1 lookup, l1_hit: what a hit costs
//     outside a window). A load of a line this core has a store in flight to
//     waits for that line first (store_buffer.hpp's issue_load). A miss takes a
//     fill buffer; with every buffer taken, the load first waits for the
//     earliest outstanding miss to complete. A second load of a line still
//     outstanding merges with it (one fill buffer per line) and completes with
//     its fill. Returns when the value is here. The model cannot tell a hit
//     before its request, so with every buffer taken a load that would hit
//     waits too (a real core serves it at once; with 10 buffers the kernel
//     path's few loads never get there).
//   Work the caller charges between loads (instructions that do not need their
//     values) runs in their shadow, as the core executes past a miss.
//   use(done): a dependent use of one load's value: the core waits for it.
//   drain(): the core waits until every load of the window is done (the
//     window's end: the code's first use of the values, a locked RMW, a fence).
//   A stall is charged in retirement order, as a cycles profile sees it: until
//     the oldest incomplete load is done, to the function that issued it, then
//     to the next one's, and so on.
//   fill_buffers <= 1 leaves no parallelism between misses (each waits for the
//     last); work still runs in a miss's shadow.
// Not modelled: the reorder buffer's bound on the work in a miss's shadow
// (168 entries on Sandy Bridge / Ivy Bridge: Intel 64 and IA-32 Architectures
// Optimization Reference Manual, section 2.2 [recalled, not verified here]); a
// caller opens a window only over code shorter than that (kernel path: the
// 3.10 lookup's ~140 cycles, SemKernel::do_semtimedop()).
//
// Time order: every request is made at the task's cursor after keep_order()
// (task.hpp), and the window holds only completion dates: nothing is scheduled
// ahead of the clock, and a fast run equals a reference-order run.
#pragma once

#include <vector>

#include "core/time.hpp"
#include "machine/task.hpp"

namespace semsim::machine {

class CacheLine;
class Topology;

class LoadWindow {
 public:
  // A load by `task` at its cursor; returns when its value is here (the task
  // goes on after the issue: use() or drain() waits for it).
  Tick load(const Topology& topo, Task& task, CacheLine& line);
  // A dependent use of a value that is here at `done` (a load() result).
  void use(Task& task, Tick done) { stall_until(task, done); }
  // Wait until every load issued since the last drain is done; empties the window.
  void drain(Task& task);
  bool empty() const { return loads_.empty(); }

 private:
  struct Pending {
    const CacheLine* line;
    Tick done;  // its value is here
    Func func;  // the function that issued it (the stall's attribution)
    bool miss;  // it took a fill buffer
  };
  // Advance the task to `until`, the stall charged in retirement order.
  void stall_until(Task& task, Tick until);
  std::vector<Pending> loads_;  // in program order
  Tick latest_ = -1;            // the latest completion in loads_ (-1: none)
};

}  // namespace semsim::machine
