// How often, and for how long, is a CPU-bound thread interrupted on this host? (OS and
// host noise: timer ticks, interrupts, the hypervisor taking the vCPU.) A thread pinned
// to each CPU in turn reads the clock in a tight loop for SECONDS and records every gap
// above 1 us between two reads (a read takes about 20-40 ns).
//
//   g++ -O2 -pthread -o /tmp/x validation/experiments/os_noise.cpp && /tmp/x [SECONDS]
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

static long now_ns() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000L + t.tv_nsec;
}

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? atof(argv[1]) : 1.0;
  for (int cpu = 0; cpu < 2; ++cpu) {
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    sched_setaffinity(0, sizeof s, &s);
    std::vector<long> gaps;
    const long start = now_ns(), end = start + static_cast<long>(seconds * 1e9);
    long prev = start, reads = 0;
    while (prev < end) {
      const long t = now_ns();
      ++reads;
      if (t - prev > 1000) gaps.push_back(t - prev);
      prev = t;
    }
    std::sort(gaps.begin(), gaps.end());
    long lost = 0;
    for (long g : gaps) lost += g;
    auto q = [&](double f) {
      return gaps.empty() ? 0L : gaps[static_cast<size_t>(f * (gaps.size() - 1))];
    };
    std::printf(
        "cpu %d: %.1f ns per read; %zu gaps > 1 us (%.0f per s), lost %.2f %% of the time; "
        "gap p10 %.1f p50 %.1f p90 %.1f p99 %.1f max %.1f us\n",
        cpu, (double)(end - start) / reads, gaps.size(), gaps.size() / seconds,
        100.0 * lost / (end - start), q(0.1) / 1e3, q(0.5) / 1e3, q(0.9) / 1e3, q(0.99) / 1e3,
        q(1.0) / 1e3);
    // Inter-arrival of the gaps: are they periodic (the tick)?
  }
}
