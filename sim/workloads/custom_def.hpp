// custom: per-task op scripts from the scenario, for mixes no benchmark covers.
//
// Setup: `sets` arrays (default 1) of `semaphores` semaphores each, set to
// `initial` (default all 0; only with one set) before the tasks start. Task i
// (0 <= i < threads) runs script tasks[i mod len(tasks)]: `repeat` times (0: until
// the measurement window ends) through its ops, each op one call on the array its
// `set` names (default 0): a semop() with its sops, or a semctl(SETVAL) when it has
// `setval` [num, value] instead (an application that posts by setting the value:
// Oracle's post/wait), followed by `think_ns` of busy time.
//
// Processes: tasks whose scripts name the same `process` id are threads of one
// process (they share SEM_UNDO adjustments, applied when that process exits);
// a script without one gives each of its tasks a process of its own. Each task is
// pinned to its script's `cpu` when given, else to CPU i mod cpus when the workload
// is pinned (default unpinned).
//
// Window: if every task's script has a finite repeat, the run goes to completion:
// no warm-up, the window runs from the start to the last task's end, or to
// duration_ms at the latest (a script can block for ever; the result says whether
// every task completed). Otherwise the usual warm-up and window, finite tasks simply
// stopping early. A call that fails with EAGAIN (IPC_NOWAIT) counts as a call and is reported.
//
// Figures: ops_per_s counts every semop() call; rounds_per_s counts completed passes
// through a script (over all tasks).
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <vector>

#include "workloads/step_def.hpp"

namespace semsim::workloads {

struct CustomOp {
  std::vector<ipc::Sembuf> sops;  // empty: a semctl(SETVAL) of setval_sem to setval_value
  int setval_sem = 0;
  int setval_value = 0;
  int set = 0;  // which of the workload's arrays
  std::int64_t think_ns = 0;
};

struct CustomScript {
  std::vector<CustomOp> ops;
  std::int64_t repeat = 0;  // passes through ops; 0 = until the window ends
  int process = -1;         // process id shared with other scripts; -1 = a process per task
  int cpu = -1;             // pin to this CPU; -1 = as workload.pin says
};

struct CustomParams {
  int semaphores = 1;  // per set
  int sets = 1;
  std::vector<int> initial;  // empty: all 0; else one value per semaphore
  std::vector<CustomScript> tasks;
};

inline const CustomScript& custom_script_of(const CustomParams& p, int task) {
  return p.tasks[static_cast<std::size_t>(task) % p.tasks.size()];
}

// The process of each of `tasks` tasks, numbered 0, 1, ... in order of first
// appearance: tasks sharing a script `process` id share a process.
inline std::vector<int> custom_processes(const CustomParams& p, int tasks) {
  std::vector<int> out(static_cast<std::size_t>(tasks));
  std::map<int, int> by_id;
  int next = 0;
  for (int t = 0; t < tasks; ++t) {
    const int id = custom_script_of(p, t).process;
    if (id < 0) {
      out[static_cast<std::size_t>(t)] = next++;
      continue;
    }
    auto it = by_id.find(id);
    if (it == by_id.end()) it = by_id.emplace(id, next++).first;
    out[static_cast<std::size_t>(t)] = it->second;
  }
  return out;
}

inline bool custom_runs_to_completion(const CustomParams& p, int tasks) {
  for (int t = 0; t < tasks && t < static_cast<int>(p.tasks.size()); ++t) {
    if (custom_script_of(p, t).repeat == 0) return false;
  }
  return true;
}

inline int custom_max_sops(const CustomParams& p) {
  std::size_t most = 0;
  for (const auto& script : p.tasks)
    for (const auto& op : script.ops) most = std::max(most, op.sops.size());
  return static_cast<int>(most);
}

class CustomProgram {
 public:
  explicit CustomProgram(const CustomScript& script) : script_(&script) {}

  bool next(Step& s) {
    s.clear();
    const auto& ops = script_->ops;
    if (ops.empty() || (script_->repeat > 0 && pass_ >= script_->repeat)) return false;
    const CustomOp& op = ops[index_];
    s.array = op.set;
    if (op.sops.empty()) {
      s.kind = StepKind::SetVal;
      s.sem = op.setval_sem;
      s.value = op.setval_value;
    } else {
      s.sops = op.sops.data();
      s.nsops = static_cast<int>(op.sops.size());
    }
    s.think_ns = op.think_ns;
    if (++index_ == ops.size()) {
      index_ = 0;
      ++pass_;
      s.rounds = 1;
    }
    return true;
  }

 private:
  const CustomScript* script_;
  std::size_t index_ = 0;
  std::int64_t pass_ = 0;
};

}  // namespace semsim::workloads
