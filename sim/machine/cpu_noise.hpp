// OS noise: the interruptions a running CPU takes that belong to no simulated task
// (timer ticks, device interrupts and, on a VM, the hypervisor taking the vCPU away).
//
// Why it matters: the model's costs are calibrated on short batches that no
// interruption hit (the probes take the lower quartile), so without noise two
// simulated tasks with equal costs can lock into a phase forever, such as
// lat_sem's two processes alternating on the global lock without ever sleeping,
// where the real ones are knocked out of it by the next tick and fall into the
// sleep-and-wake regime. Noise also takes its share of every CPU-bound point.
//
// The model: interruptions arrive as a Poisson process at the probed rate over a
// CPU's running time (the rate of a CPU that runs nothing does not matter: nothing
// is delayed), each lasting one of the probed durations (equal-count bins, drawn
// uniformly). Each CPU has its own seeded stream. The Poisson assumption ignores
// the tick's period; it keeps the phase of the interruptions independent of the
// simulated tasks, which is what breaks their lock-step.
#pragma once

#include <cstdint>
#include <vector>

#include "core/rng.hpp"
#include "core/time.hpp"

namespace semsim::machine {

class CpuNoise {
 public:
  CpuNoise(double per_s, std::vector<Tick> durations, Rng rng);

  // A task works for `d` from `from`: the total length of the interruptions that land
  // in that work, which delay it by all of it (the work resumes after each).
  Tick during_work(Tick from, Tick d) {
    if (next_ >= from + d) return 0;  // the common case: none due yet
    return interrupt_work(from, d);
  }
  // A task waits from `from` to `until` (spins, stalls on a line): an interruption
  // that begins in the wait only delays it by the part that runs past `until`.
  Tick past_wait(Tick from, Tick until) {
    if (next_ >= until) return 0;
    return interrupt_wait(from, until);
  }

  // Would past_wait(from, until) have anything to say (an arrival due before `until`)?
  bool due_before(Tick until) const { return next_ < until; }

  std::uint64_t interruptions() const { return count_; }

 private:
  Tick interrupt_work(Tick from, Tick d);
  Tick interrupt_wait(Tick from, Tick until);
  // Nothing ran on the CPU since the pending arrival: by the Poisson process's lack of
  // memory, the next one is as far from `from` as from any other date.
  void catch_up(Tick from) {
    if (next_ < from) next_ = from + gap();
  }
  Tick gap() { return static_cast<Tick>(rng_.exponential(mean_gap_)) + 1; }
  Tick duration() { return durations_[static_cast<std::size_t>(rng_.below(durations_.size()))]; }

  double mean_gap_;  // ticks between arrivals
  std::vector<Tick> durations_;
  Rng rng_;
  Tick next_;  // the next arrival
  std::uint64_t count_ = 0;
};

}  // namespace semsim::machine
