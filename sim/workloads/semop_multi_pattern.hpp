// Which semaphore a semop-multi thread uses on each iteration.
//
// Rik van Riel's semop-multi (2013) was never published, so the choice is a
// scenario parameter. One definition, used by the simulator and the native
// runner, so both run the same workload:
//   stride: thread t starts at semaphore t mod M and steps by t each iteration
//           (thread 0 always uses semaphore 0), as recalled of the original;
//   own:    thread t always uses semaphore t mod M;
//   random: a uniform draw per iteration from the thread's own seeded stream.
#pragma once

#include <cstdint>
#include <string>

#include "core/rng.hpp"

namespace semsim::workloads {

enum class SemopMultiPattern { Stride, Own, Random };

inline SemopMultiPattern parse_semop_multi_pattern(const std::string& s) {
  if (s == "own") return SemopMultiPattern::Own;
  if (s == "random") return SemopMultiPattern::Random;
  return SemopMultiPattern::Stride;  // validated upstream: stride | own | random
}

class SemopMultiChooser {
 public:
  SemopMultiChooser(SemopMultiPattern pattern, int thread, int semaphores, std::uint64_t seed)
      : pattern_(pattern),
        thread_(thread),
        nsems_(semaphores),
        current_(thread % semaphores),
        rng_(Rng::derive(seed, 0x5E30000ULL + static_cast<std::uint64_t>(thread))) {}

  // The semaphore for the next +1/-1 pair.
  int next() {
    switch (pattern_) {
      case SemopMultiPattern::Own:
        return current_;
      case SemopMultiPattern::Random:
        return static_cast<int>(rng_.below(static_cast<std::uint64_t>(nsems_)));
      case SemopMultiPattern::Stride:
        break;
    }
    const int chosen = current_;
    current_ = static_cast<int>((static_cast<long long>(current_) + thread_) % nsems_);
    return chosen;
  }

 private:
  SemopMultiPattern pattern_;
  int thread_;
  int nsems_;
  int current_;
  Rng rng_;
};

}  // namespace semsim::workloads
