// Calibration probes of wake-ups and switches: how long a woken task is protected from
// wake-up preemption (run to parity), what preempting a busy remote CPU costs the
// waker, and what a switch between processes (not threads) costs.
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <latch>
#include <new>
#include <thread>
#include <vector>

#include "calibrate/probe_threads.hpp"
#include "calibrate/probes.hpp"
#include "core/errors.hpp"
#include "native/run_support.hpp"

namespace semsim::calibrate::probes {

namespace {

using native::detail::monotonic_ns;

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
    native::detail::pin_current_thread(s.cpu);
    sleep_and_answer(word, ran, stop);
  });
  std::thread waker([&] {
    native::detail::pin_current_thread(s.cpu);
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
        native::detail::pin_current_thread(cpu_b);
        ready.arrive_and_wait();
        while (!stop.load(std::memory_order_relaxed)) {
        }
      });
      std::thread sleeper([&] {
        native::detail::pin_current_thread(cpu_b);
        if (batch) set_batch_policy();
        ready.arrive_and_wait();
        sleep_and_answer(word, ran, stop);
      });
      std::vector<double> calls;
      std::thread waker([&] {
        native::detail::pin_current_thread(cpu_a);
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

CountedShare futex_pairs_busy_pull(int pairs, const Settings& s) {
  const std::int64_t run_ns = s.quick ? 40'000'000 : 150'000'000;  // per repeat
  const int n = 2 * pairs;
  CountedShare out;
  for (int r = 0; r < s.repeats; ++r) {
    std::vector<RingTurn> turns(static_cast<std::size_t>(n));
    std::vector<std::atomic<int>> poster_cpu(static_cast<std::size_t>(n));  // per thread
    for (auto& c : poster_cpu) c.store(-1);
    std::atomic<bool> stop{false};
    std::atomic<long> seen{0}, moved{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < n; ++i) {
      threads.emplace_back([&, i] {
        // Pair p is the token ring of threads 2p and 2p + 1 (members 0 and 1).
        TokenRing ring(&turns[static_cast<std::size_t>(i & ~1)], 2, false);
        const int me = i & 1;
        const auto partner = static_cast<std::size_t>(i ^ 1);
        long mine = 0, mine_moved = 0;
        for (;;) {
          const int before = sched_getcpu();
          // Only waits that sleep end with a wake-up (a token already there does not).
          const bool sleeps =
              turns[static_cast<std::size_t>(i)].word.load(std::memory_order_acquire) == 0;
          ring.wait_turn(me);
          const int after = sched_getcpu();
          const int waker = poster_cpu[static_cast<std::size_t>(i)].load(std::memory_order_relaxed);
          if (sleeps && waker >= 0 && before != waker) {
            ++mine;
            if (after == waker) ++mine_moved;
          }
          const bool done = stop.load(std::memory_order_relaxed);
          poster_cpu[partner].store(after, std::memory_order_relaxed);
          ring.pass(me);
          if (done) break;
        }
        seen.fetch_add(mine);
        moved.fetch_add(mine_moved);
      });
    }
    for (int p = 0; p < pairs; ++p) {
      TokenRing ring(&turns[static_cast<std::size_t>(2 * p)], 2, false);
      ring.start();
    }
    run_for_then_stop(run_ns, stop, threads);
    out.samples += seen.load();
    out.hits += moved.load();
  }
  return out;
}

Stat futex_ring_processes(int k, const Settings& s) {
  const long handoffs = s.quick ? 3000 : 20000;  // per repeat
  struct Shared {
    RingClock clock;
    std::atomic<int> ready{0};
  };
  // The turns start on a line of their own: RingTurn's alignment (the word of
  // member 0 beside the clock's counter would be a line the ring shares).
  constexpr std::size_t turns_at =
      (sizeof(Shared) + alignof(RingTurn) - 1) / alignof(RingTurn) * alignof(RingTurn);
  const std::size_t bytes = turns_at + static_cast<std::size_t>(k) * sizeof(RingTurn);
  void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) throw SimulationError("calibrate: cannot map the process ring");
  auto* sh = new (mem) Shared();
  auto* turns = new (static_cast<char*>(mem) + turns_at) RingTurn[static_cast<std::size_t>(k)];
  TokenRing ring(turns, k, true);  // shared futexes: the ring spans processes
  std::vector<double> reps;
  for (int r = 0; r < s.repeats; ++r) {
    sh->clock.left.store(handoffs);
    sh->ready.store(0);
    for (int i = 0; i < k; ++i) turns[i].word.store(0);
    std::vector<pid_t> pids;
    for (int i = 0; i < k; ++i) {
      const pid_t pid = fork();
      if (pid == 0) {  // only async-signal-safe work from here on, then _exit
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        native::detail::pin_current_thread(s.cpu);
        set_batch_policy();
        sh->ready.fetch_add(1);
        timed_ring_member(ring, i, k, handoffs, sh->clock);
        _exit(0);
      }
      if (pid < 0) {
        for (pid_t p : pids) kill(p, SIGKILL);
        for (pid_t p : pids) waitpid(p, nullptr, 0);
        munmap(mem, bytes);
        throw SimulationError("calibrate: fork of a process ring member failed");
      }
      pids.push_back(pid);
    }
    while (sh->ready.load() < k) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ring.start();
    for (pid_t p : pids) waitpid(p, nullptr, 0);
    reps.push_back(sh->clock.per_handoff(handoffs));
  }
  munmap(mem, bytes);
  return summarize(reps);
}

}  // namespace semsim::calibrate::probes
