// Does a cross-CPU wake-up cost less when the waker stays busy than when it goes to sleep
// right after, as in the calibration's futex ping-pong? (sembench: a busy-looping waker
// and one pinned worker took 3.9-4.4 us a round on the AMD guest, the model 7.6 us from
// the ping-pong's 2.4 us wake call and 3.9 us latency.)
//
// A sleeper pinned to CPU 1 waits on a futex; the waker, pinned to CPU 0, lets the
// sleeper's CPU idle for a while (0 .. 400 us), stamps the time, calls FUTEX_WAKE (timed), then either spins until the sleeper has run (busy) or
// waits on a futex for the sleeper's answer (sleeps, as the ping-pong does). The sleeper
// stamps when it runs. Per mode: the median wake call and wake-to-run latency in us.
//
//   g++ -O2 -pthread -o /tmp/x validation/experiments/wake_busy_waker.cpp && /tmp/x [ROUNDS]
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

static long now_ns() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000L + t.tv_nsec;
}
static void fwait(std::atomic<int>* a, int v) {
  syscall(SYS_futex, reinterpret_cast<int*>(a), FUTEX_WAIT_PRIVATE, v, nullptr, nullptr, 0);
}
static void fwake(std::atomic<int>* a) {
  syscall(SYS_futex, reinterpret_cast<int*>(a), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
}
static void pin(int cpu) {
  cpu_set_t s;
  CPU_ZERO(&s);
  CPU_SET(cpu, &s);
  sched_setaffinity(0, sizeof s, &s);
}
static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? atoi(argv[1]) : 2000;
  for (long idle_ns : {0L, 2000L, 5000L, 20000L, 100000L, 400000L})
  for (int busy = 0; busy < 2; ++busy) {
    std::atomic<int> word{0}, answer{0}, asleep{0};
    std::atomic<long> ran_at{0};
    std::vector<double> call, latency;
    std::thread sleeper([&] {
      pin(1);
      for (int r = 0; r < rounds; ++r) {
        asleep.store(1);
        while (word.load() == 0) fwait(&word, 0);
        ran_at.store(now_ns());
        word.store(0);
        answer.store(1);
        if (!busy) fwake(&answer);
      }
    });
    pin(0);
    for (int r = 0; r < rounds; ++r) {
      while (asleep.load() == 0) {
      }
      asleep.store(0);
      const long idle_until = now_ns() + idle_ns;  // how long the sleeper's CPU idles
      while (now_ns() < idle_until) {
      }
      answer.store(0);
      const long t0 = now_ns();
      word.store(1);
      fwake(&word);
      const long t1 = now_ns();
      if (busy) {
        while (answer.load() == 0) {
        }
      } else {
        while (answer.load() == 0) fwait(&answer, 0);
      }
      call.push_back((t1 - t0) / 1e3);
      latency.push_back((ran_at.load() - t0) / 1e3);
    }
    sleeper.join();
    std::printf("sleeper's CPU idle %6.1f us, waker %s after the wake: wake call %.2f us, "
                "wake to run %.2f us (medians of %d)\n",
                idle_ns / 1e3, busy ? "spins " : "sleeps", median(call), median(latency), rounds);
  }
}
