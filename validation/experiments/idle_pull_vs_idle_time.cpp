// Is a wakee whose previous CPU is idle pulled to the waker's CPU, and does that depend
// on how long its CPU has been idle, or on what the waker does after the wake-up?
//
// A sleeper thread runs on CPU 1 (affinity {1}, then widened to {0, 1} while it runs
// there, so it is unpinned but its previous CPU is 1), records when it sleeps, and waits
// on a futex. The waker, pinned to CPU 0, spins until the sleeper's CPU has been idle
// for IDLE_US, wakes it, then either spins AFTER_US more (stays busy) or sleeps at once
// (AFTER_US = 0: it waits for the sleeper's answer). The sleeper reports the CPU it woke on.
//
//   g++ -O2 -pthread -o /tmp/x validation/experiments/idle_pull_vs_idle_time.cpp
//   /tmp/x [ROUNDS]      prints one line per (IDLE_US, AFTER_US): pulled / rounds
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <thread>

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
static void pin(int cpu_a, int cpu_b) {
  cpu_set_t s;
  CPU_ZERO(&s);
  CPU_SET(cpu_a, &s);
  if (cpu_b >= 0) CPU_SET(cpu_b, &s);
  sched_setaffinity(0, sizeof s, &s);
}
static void spin_until(long t) {
  while (now_ns() < t) {
  }
}

struct Shared {
  std::atomic<int> word{0};   // the sleeper's futex: 1 = wake
  std::atomic<int> ready{0};  // the sleeper is about to sleep (its CPU goes idle)
  std::atomic<long> slept_at{0};
  std::atomic<int> woke_cpu{-1};
  std::atomic<int> answer{0};  // the sleeper's answer, for a waker that sleeps
};

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? atoi(argv[1]) : 200;
  const long idle_us[] = {5, 20, 50, 100, 300, 1000, 4000};
  const long after_us[] = {0, 200};
  for (long after : after_us)
    for (long idle : idle_us) {
      Shared sh;
      int pulled = 0;
      std::thread sleeper([&] {
        for (int r = 0; r < rounds; ++r) {
          pin(1, -1);
          while (sched_getcpu() != 1) sched_yield();
          pin(0, 1);
          sh.word.store(0);
          sh.slept_at.store(now_ns());
          sh.ready.store(1);
          while (sh.word.load() == 0) fwait(&sh.word, 0);
          sh.woke_cpu.store(sched_getcpu());
          sh.answer.store(1);
          fwake(&sh.answer);
        }
      });
      pin(0, -1);
      for (int r = 0; r < rounds; ++r) {
        while (sh.ready.load() == 0) {
        }
        sh.ready.store(0);
        spin_until(sh.slept_at.load() + idle * 1000);
        sh.answer.store(0);
        sh.word.store(1);
        fwake(&sh.word);
        if (after > 0) spin_until(now_ns() + after * 1000);
        while (sh.answer.load() == 0) fwait(&sh.answer, 0);
        if (sh.woke_cpu.load() == 0) ++pulled;
      }
      sleeper.join();
      std::printf("idle %5ld us, waker after wake-up: %s: pulled to the waker's CPU %3d / %d\n",
                  idle, after > 0 ? "spins 200 us" : "sleeps      ", pulled, rounds);
      std::fflush(stdout);
    }
}
