#include "machine/cpu_noise.hpp"

#include <utility>

namespace semsim::machine {

CpuNoise::CpuNoise(double per_s, std::vector<Tick> durations, Rng rng)
    : mean_gap_(static_cast<double>(kTicksPerSecond) / per_s),
      durations_(std::move(durations)),
      rng_(rng),
      next_(gap()) {}

Tick CpuNoise::interrupt_work(Tick from, Tick d) {
  catch_up(from);
  Tick extra = 0;
  // Each interruption pushes the rest of the work back by its length, so one that
  // arrives in the pushed-back part counts too.
  while (next_ < from + d + extra) {
    const Tick len = duration();
    extra += len;
    next_ += len + gap();
    ++count_;
  }
  return extra;
}

Tick CpuNoise::interrupt_wait(Tick from, Tick until) {
  catch_up(from);
  Tick end = until;
  while (next_ < end) {
    const Tick over = next_ + duration();
    if (over > end) end = over;
    next_ = over + gap();
    ++count_;
  }
  return end - until;
}

}  // namespace semsim::machine
