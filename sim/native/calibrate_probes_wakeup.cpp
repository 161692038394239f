// Calibration probes of wake-up preemption: how long a woken task is protected from
// it (run to parity), and what preempting a busy remote CPU costs the waker.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <latch>
#include <thread>
#include <vector>

#include "native/calibrate_probes.hpp"
#include "native/probe_threads.hpp"
#include "native/run_support.hpp"

namespace semsim::native::probes {

namespace {

using detail::monotonic_ns;

void spin_for(std::int64_t ns) {
  const std::int64_t end = monotonic_ns() + ns;
  while (monotonic_ns() < end) {
  }
}

// The sleeper of both probes: waits on `word`, marks that it ran, clears the word.
void sleep_and_answer(std::atomic<int>& word, std::atomic<int>& ran,
                      const std::atomic<bool>& stop) {
  while (!stop.load(std::memory_order_acquire)) {
    while (word.load(std::memory_order_acquire) == 0 && !stop.load(std::memory_order_acquire))
      futex(word, FUTEX_WAIT, 0);
    ran.store(1, std::memory_order_release);
    word.store(0, std::memory_order_release);
  }
}

void release(std::atomic<int>& word, std::atomic<bool>& stop) {
  stop.store(true, std::memory_order_release);
  word.store(1, std::memory_order_release);
  futex(word, FUTEX_WAKE, 1);
}

}  // namespace

std::vector<std::int64_t> protection_run_lengths() {
  return {0, 250'000, 500'000, 1'000'000, 1'500'000, 2'000'000, 3'000'000, 4'000'000};
}

ProtectionCurve wakeup_protection(const Settings& s) {
  const int rounds = s.quick ? 20 : 60;  // per run length
  ProtectionCurve out;
  alignas(64) std::atomic<int> word{0};
  alignas(64) std::atomic<int> ran{0};
  std::atomic<bool> stop{false};
  std::thread sleeper([&] {
    detail::pin_current_thread(s.cpu);
    sleep_and_answer(word, ran, stop);
  });
  std::thread waker([&] {
    detail::pin_current_thread(s.cpu);
    for (std::int64_t run : protection_run_lengths()) {
      int preempted = 0;
      for (int i = 0; i < rounds; ++i) {
        // A timer sleep, so that this thread's run on the CPU begins with a wake-up.
        std::this_thread::sleep_for(std::chrono::microseconds(300));
        spin_for(run);
        ran.store(0, std::memory_order_release);
        word.store(1, std::memory_order_release);
        futex(word, FUTEX_WAKE, 1);
        if (ran.load(std::memory_order_acquire) != 0) ++preempted;
        while (word.load(std::memory_order_acquire) != 0) sched_yield();
      }
      out.preempted_share.emplace_back(run, static_cast<double>(preempted) / rounds);
    }
  });
  waker.join();
  release(word, stop);
  sleeper.join();
  return out;
}

RemoteWake futex_wake_busy_remote(int cpu_a, int cpu_b, const Settings& s) {
  const int rounds = s.quick ? 40 : 150;  // per repeat and policy
  RemoteWake out;
  for (const bool batch : {false, true}) {
    std::vector<double> reps;
    for (int r = 0; r < s.repeats; ++r) {
      alignas(64) std::atomic<int> word{0};
      alignas(64) std::atomic<int> ran{0};
      std::atomic<bool> stop{false};
      std::latch ready(3);
      std::thread spinner([&] {
        detail::pin_current_thread(cpu_b);
        ready.arrive_and_wait();
        while (!stop.load(std::memory_order_relaxed)) {
        }
      });
      std::thread sleeper([&] {
        detail::pin_current_thread(cpu_b);
        if (batch) set_batch_policy();
        ready.arrive_and_wait();
        sleep_and_answer(word, ran, stop);
      });
      std::vector<double> calls;
      std::thread waker([&] {
        detail::pin_current_thread(cpu_a);
        ready.arrive_and_wait();
        for (int i = 0; i < rounds; ++i) {
          std::this_thread::sleep_for(std::chrono::microseconds(200));
          word.store(1, std::memory_order_release);
          const std::int64_t t0 = monotonic_ns();
          futex(word, FUTEX_WAKE, 1);
          calls.push_back(static_cast<double>(monotonic_ns() - t0));
          // A SCHED_BATCH sleeper runs when the spinner's slice ends: wait for it.
          const std::int64_t give_up = monotonic_ns() + 50'000'000;
          while (word.load(std::memory_order_acquire) != 0 && monotonic_ns() < give_up) {
          }
        }
      });
      waker.join();
      release(word, stop);
      sleeper.join();
      spinner.join();
      reps.push_back(trimmed_mean(calls));
    }
    (batch ? out.queueing : out.preempting) = summarize(reps);
  }
  return out;
}

}  // namespace semsim::native::probes
