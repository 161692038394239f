// sembench (Chris Mason, Oracle 2007; davidlohr/sembench-ng sembench.c, "-o 0" ipc
// mode) as task programs. Reference: ../shared/reference/benchmarks.md section 6a.
//
// Setup: ceil(threads / 250) arrays of 250 semaphores, all 0. `threads` worker threads
// of one process; worker i uses semaphore i mod 250 of array i / 250 and is pinned
// round-robin over the CPUs (worker i -> the (i mod cpus)-th CPU) unless the scenario
// says unpinned. One more thread, the waker (the original's main thread, unpinned),
// is not counted in `threads`.
//   worker: loop { ready = 1 (after a full fence); semop({own, -1, 0}) (sleeps);
//                  burns++ }
//   waker:  loop { take up to wake_num ready workers, scanning the ready flags
//                  round-robin from where the last scan stopped, clearing each;
//                  per array, post them in calls of at most wake_batch (64) sops
//                  {idx, +1, IPC_NOWAIT} }
// A waker round that finds nobody ready makes no call and scans again at once (the
// original's busy loop). Worker calls are simple ops that sleep; waker calls are
// multi-sop (complex) posts.
//
// Figures: ops_per_s counts every semop() call (workers' and the waker's);
// worker_burns_per_s is sembench's own "worker burns per second".
#pragma once

#include <algorithm>
#include <vector>

#include "workloads/step_def.hpp"

namespace semsim::workloads {

constexpr int kSembenchSemsPerArray = 250;  // SEMS_PERID
constexpr int kSembenchMaxBatch = 64;       // the original's cap on sops per call

struct SembenchParams {
  int wake_num = 256;   // workers woken per waker round (-w)
  int wake_batch = 64;  // most sops per waker call (the original's 64)
};

inline int sembench_arrays(int threads) {
  return (threads + kSembenchSemsPerArray - 1) / kSembenchSemsPerArray;
}
// Every array has 250 semaphores, the last one too (the original's semget size).
inline int sembench_array_size() { return kSembenchSemsPerArray; }
inline int sembench_array_of(int worker) { return worker / kSembenchSemsPerArray; }
inline int sembench_sem_of(int worker) { return worker % kSembenchSemsPerArray; }

class SembenchWorkerProgram {
 public:
  explicit SembenchWorkerProgram(int worker)
      : array_(sembench_array_of(worker)), op_{sembench_sem_of(worker), -1, 0} {}

  bool next(Step& s) {
    s.clear();
    s.array = array_;
    s.sops = &op_;
    s.nsops = 1;
    s.announce_ready = true;
    s.rounds = 1;
    return true;
  }

 private:
  int array_;
  ipc::Sembuf op_;
};

// The waker. `Ready` is any type with `bool take(int worker)`: if the worker's ready
// flag is set, clear it and return true (the native runner reads shared flags; a
// simulator keeps its own). Scanning order is the original's worklist_rm(): from
// the last worker found, round-robin over all workers.
template <class Ready>
class SembenchWakerProgram {
 public:
  SembenchWakerProgram(const SembenchParams& p, int workers, Ready ready)
      : p_(p),
        workers_(workers),
        ready_(ready),
        pending_(static_cast<std::size_t>(sembench_arrays(workers))),
        buf_(static_cast<std::size_t>(std::max(1, p.wake_batch))) {}

  bool next(Step& s) {
    s.clear();
    if (!has_pending()) collect();
    for (std::size_t a = 0; a < pending_.size(); ++a) {
      auto& list = pending_[a];
      if (pos_[a] >= list.size()) continue;
      const std::size_t n =
          std::min<std::size_t>(list.size() - pos_[a], static_cast<std::size_t>(p_.wake_batch));
      for (std::size_t i = 0; i < n; ++i)
        buf_[i] = ipc::Sembuf{list[pos_[a] + i], +1, ipc::kIpcNowait};
      pos_[a] += n;
      s.array = static_cast<int>(a);
      s.sops = buf_.data();
      s.nsops = static_cast<int>(n);
      return true;
    }
    s.kind = StepKind::UserOnly;  // nobody was ready: scan again
    s.counts_op = false;
    return true;
  }

 private:
  bool has_pending() const {
    for (std::size_t a = 0; a < pending_.size(); ++a)
      if (pos_.size() > a && pos_[a] < pending_[a].size()) return true;
    return false;
  }

  // ipc_wake_some(): take up to wake_num ready workers, grouped by array.
  void collect() {
    pos_.assign(pending_.size(), 0);
    for (auto& list : pending_) list.clear();
    for (int taken = 0; taken < p_.wake_num; ++taken) {
      const int w = take_next();
      if (w < 0) break;
      pending_[static_cast<std::size_t>(sembench_array_of(w))].push_back(sembench_sem_of(w));
    }
  }

  // worklist_rm(): the next ready worker from last_index on, or -1.
  int take_next() {
    for (int i = 0; i < workers_; ++i) {
      const int test = (last_index_ + i) % workers_;
      if (ready_.take(test)) {
        last_index_ = test;
        return test;
      }
    }
    return -1;
  }

  SembenchParams p_;
  int workers_;
  Ready ready_;
  int last_index_ = 0;
  std::vector<std::vector<int>> pending_;  // per array: semaphores to post
  std::vector<std::size_t> pos_;           // per array: how many already posted
  std::vector<ipc::Sembuf> buf_;
};

}  // namespace semsim::workloads
