// semop-multi (Rik van Riel, 2013) as a task program: every thread loops on
//   semop(+1 on s); semop(-1 on s)
// with s chosen by the scenario's pattern (semop_multi_pattern.hpp). It never
// sleeps: +1 first always proceeds, and the -1 then finds the value it just added.
// Threads of one process, pinned thread t -> CPU t mod cpus by default. One array of
// `semaphores` semaphores, all 0. ops_per_s counts both calls; it is the benchmark's
// own figure ("ops/sec").
#pragma once

#include <cstdint>

#include "workloads/semop_multi_pattern.hpp"
#include "workloads/step_def.hpp"

namespace semsim::workloads {

class SemopMultiProgram {
 public:
  SemopMultiProgram(SemopMultiPattern pattern, int thread, int semaphores, std::uint64_t seed)
      : chooser_(pattern, thread, semaphores, seed) {}

  bool next(Step& s) {
    s.clear();
    if (!down_) {
      const int sem = chooser_.next();
      op_ = ipc::Sembuf{sem, +1, 0};
    } else {
      op_.sem_op = -1;
    }
    down_ = !down_;
    s.sops = &op_;
    s.nsops = 1;
    return true;
  }

 private:
  SemopMultiChooser chooser_;
  ipc::Sembuf op_{};
  bool down_ = false;  // the next call is the -1 of the current pair
};

}  // namespace semsim::workloads
