// lmbench lat_sem as task programs. Reference: ../shared/reference/benchmarks.md
// section 6b.
//
// Setup: one array of 2 semaphores, both 0; exactly two PROCESSES (lmbench's child
// and parent), unpinned unless the scenario pins them (then task i on CPU i mod cpus).
//   task 0 (lmbench's child):  semop({1,+1,0}) once (not counted), then loops
//                              semop({0,-1,0}, {1,+1,0})
//   task 1 (lmbench's parent): loops semop({1,-1,0}, {0,+1,0})
// Every call is a 2-sop complex op that sleeps until the partner has posted: a
// complex-op ping-pong on the global lock and the global queues.
//
// Figures: ops_per_s counts the calls of both processes; latency_us is lmbench's
// "Semaphore latency" (one-way: the time per call, i.e. 1e6 / ops_per_s).
#pragma once

#include "workloads/step_def.hpp"

namespace semsim::workloads {

constexpr int kLatSemTasks = 2;
constexpr int kLatSemArraySize = 2;

class LatSemProgram {
 public:
  explicit LatSemProgram(int task) : task_(task), need_token_(task == 0) {}

  bool next(Step& s) {
    s.clear();
    s.sops = sops_;
    if (need_token_) {
      need_token_ = false;
      sops_[0] = ipc::Sembuf{1, +1, 0};
      s.nsops = 1;
      s.counts_op = false;
      return true;
    }
    if (task_ == 0) {
      sops_[0] = ipc::Sembuf{0, -1, 0};
      sops_[1] = ipc::Sembuf{1, +1, 0};
    } else {
      sops_[0] = ipc::Sembuf{1, -1, 0};
      sops_[1] = ipc::Sembuf{0, +1, 0};
    }
    s.nsops = 2;
    s.rounds = 1;
    return true;
  }

 private:
  int task_;
  bool need_token_;
  ipc::Sembuf sops_[2]{};
};

}  // namespace semsim::workloads
