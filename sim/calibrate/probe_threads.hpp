// Small helpers the calibration probes share: futex calls, the per-thread scheduling
// policy and the token ring of the switch probes. Internal to sim/calibrate.
#pragma once

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "native/run_support.hpp"

namespace semsim::calibrate::probes {

// Private futexes (threads of one process): no mm/page lookup for the key, closer to the
// kernel-internal wake-ups of the semaphore code. `shared`: a word in memory shared
// between processes.
inline int futex(std::atomic<int>& word, int op, int val, bool shared = false) {
  if (!shared) op |= FUTEX_PRIVATE_FLAG;
  return static_cast<int>(
      syscall(SYS_futex, reinterpret_cast<int*>(&word), op, val, nullptr, nullptr, 0));
}

// SCHED_BATCH for the calling thread only (no privilege needed): its wake-ups never
// preempt the task running on its CPU.
inline void set_batch_policy() {
  struct sched_param sp{};
  sched_setscheduler(0, SCHED_BATCH, &sp);
}

// The futex words of a token ring of k members: member i waits for its turn, then
// passes the token to member i + 1 (mod k). The words live where the caller puts them
// (memory shared between processes when `shared`).
struct alignas(64) RingTurn {
  std::atomic<int> word{0};
};
class TokenRing {
 public:
  TokenRing(RingTurn* turns, int k, bool shared) : turns_(turns), k_(k), shared_(shared) {}
  void wait_turn(int i) {
    std::atomic<int>& word = turns_[i].word;
    while (word.load(std::memory_order_acquire) == 0) futex(word, FUTEX_WAIT, 0, shared_);
    word.store(0, std::memory_order_relaxed);
  }
  void pass(int i) {
    std::atomic<int>& word = turns_[(i + 1) % k_].word;
    word.store(1, std::memory_order_release);
    futex(word, FUTEX_WAKE, 1, shared_);
  }
  void start() { pass(k_ - 1); }  // the token to member 0

 private:
  RingTurn* turns_;
  int k_;
  bool shared_;
};

// Lets `threads` run for `run_ns`, then raises `stop` and joins them.
inline void run_for_then_stop(std::int64_t run_ns, std::atomic<bool>& stop,
                              std::vector<std::thread>& threads) {
  const std::int64_t end = native::detail::monotonic_ns() + run_ns;
  while (native::detail::monotonic_ns() < end)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  stop.store(true);
  for (auto& t : threads) t.join();
}

// The clock of a timed ring: hand-offs left, and the times of the first and last.
struct RingClock {
  std::atomic<long> left{0};
  std::atomic<std::int64_t> t0{0}, t1{0};
  double per_handoff(long handoffs) const {
    return static_cast<double>(t1.load() - t0.load()) / static_cast<double>(handoffs - 1);
  }
};

// Member i of a ring of k timing `handoffs` hand-offs; returns once the token has gone
// round once more after the last, so that every member has seen the end.
inline void timed_ring_member(TokenRing& ring, int i, int k, long handoffs, RingClock& clock) {
  for (;;) {
    ring.wait_turn(i);
    const long n = clock.left.fetch_sub(1, std::memory_order_relaxed);
    if (n == handoffs) clock.t0.store(native::detail::monotonic_ns(), std::memory_order_relaxed);
    if (n == 1) clock.t1.store(native::detail::monotonic_ns(), std::memory_order_relaxed);
    ring.pass(i);
    if (n <= 1 - k) return;
  }
}

}  // namespace semsim::calibrate::probes
