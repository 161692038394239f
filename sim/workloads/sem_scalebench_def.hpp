// sem-scalebench (Manfred Spraul, ipcscale, v0.31, 2014-2016): one run of one
// (mode, threads, interleave, delay) combination, as task programs.
// Reference: ../shared/reference/benchmarks.md section 4.
//
// Setup: one array of distance * threads semaphores, all 0 (IPC_PRIVATE, no SETALL).
// Thread t uses semaphore distance - 1 + distance * t. Threads of one process, each
// pinned to get_cpunr(t) (scalebench_cpu below) unless the scenario says unpinned.
//
// Per iteration, by mode:
//   1 wait-for-zero: semop({own, 0, 0}); delay; rounds++          (never sleeps)
//   2 ping-pong, pairs (0,1), (2,3), ...; the odd thread first posts one token on its
//     own semaphore; then each loop
//       semop({own, -1, 0}); delay; rounds++                      (sleeps until posted)
//       semop({partner, +1, 0}); delay; rounds++                  (wakes the partner)
//     With complex_every = N > 0 (-x N), on the loops k with k mod N equal to the
//     thread's phase floor(N * t * 0.618...) mod N, the decrement becomes the 2-sop
//     {own, -1, 0}, {own, 0, 0} and the increment {partner, 0, 0}, {partner, +1, 0}.
//   4 complex no-wait: semop({own, 0, 0}, {own, +1, 0}); semop({own, -1, 0}); delay;
//     rounds++ (one round per pair of calls; never sleeps)
// ops_per_s counts every semop() call; rounds_per_s is the benchmark's own figure
// ("COUNT in T secs" / T).
//
// Two readings of our own, marked here because the v0.31 source could not be re-read:
// the -x phase formula is the reference's "(N * threadid * 0.618...) % N" with the
// product truncated to an integer before the modulo, and the test "rounds % N ==
// masterpos" is applied to the loop count k (once per loop, so both calls of that
// loop are complex), which makes exactly one loop in N complex for every thread.
#pragma once

#include <cstdint>

#include "workloads/step_def.hpp"

namespace semsim::workloads {

struct ScalebenchParams {
  int mode = 1;              // 1 wait-for-zero, 2 ping-pong, 4 complex no-wait (-o)
  int threads_per_core = 1;  // threads bound to the same CPU (-p)
  int interleave = 1;        // CPU stride of the placement (-i)
  int delay = 0;             // bubble-sort rounds after each counted call (-m, one value)
  int distance = 1;          // semaphore distance (-d)
  int complex_every = 0;     // ping-pong only: one loop in N uses 2-sop ops (-x); 0 = off
  int max_cpus = 0;          // CPUs the placement wraps at (-h); 0 = all CPUs of the machine
};

// get_cpunr(): the CPU of thread `thread`. Its group k = thread / threads_per_core is
// placed k steps of +interleave from CPU 0; a step that reaches max_cpus restarts at
// the next offset (1, 2, ...). Exactly the original's arithmetic, quirks included:
// with more groups than CPUs the offsets repeat CPUs and eventually pass max_cpus
// (the original then fails to bind); callers that pin must refuse such a placement
// (see scalebench_first_unplaceable).
inline int scalebench_cpu(int thread, int interleave, int threads_per_core, int max_cpus) {
  int off = 0;
  int cpu = 0;
  while (thread > threads_per_core - 1) {
    cpu += interleave;
    if (cpu >= max_cpus) {
      ++off;
      cpu = off;
    }
    thread -= threads_per_core;
  }
  return cpu;
}

// The first thread whose get_cpunr() CPU is >= max_cpus, or -1 when all `threads`
// threads can be pinned.
inline int scalebench_first_unplaceable(int threads, int interleave, int threads_per_core,
                                        int max_cpus) {
  for (int t = 0; t < threads; ++t) {
    if (scalebench_cpu(t, interleave, threads_per_core, max_cpus) >= max_cpus) return t;
  }
  return -1;
}

inline int scalebench_array_size(const ScalebenchParams& p, int threads) {
  return p.distance * threads;
}
inline int scalebench_sem(const ScalebenchParams& p, int thread) {
  return p.distance - 1 + p.distance * thread;
}
inline int scalebench_partner(int thread) { return thread + 1 - 2 * (thread % 2); }
inline bool scalebench_is_sender(int thread) { return thread % 2 == 1; }

// The loop (mod complex_every) on which a ping-pong thread uses complex ops.
inline int scalebench_complex_phase(int complex_every, int thread) {
  if (complex_every <= 0) return -1;
  constexpr double kGolden = 0.6180339887498949;
  const auto product = static_cast<long long>(static_cast<double>(complex_every) *
                                              static_cast<double>(thread) * kGolden);
  return static_cast<int>(product % complex_every);
}

// The most semops one call of this mode carries (for SEMOPM checks).
inline int scalebench_max_sops(const ScalebenchParams& p) {
  return p.mode == 4 || (p.mode == 2 && p.complex_every > 0) ? 2 : 1;
}

class ScalebenchProgram {
 public:
  ScalebenchProgram(const ScalebenchParams& p, int thread)
      : p_(p),
        own_(scalebench_sem(p, thread)),
        partner_(p.mode == 2 ? scalebench_sem(p, scalebench_partner(thread)) : own_),
        phase_(p.mode == 2 ? scalebench_complex_phase(p.complex_every, thread) : -1),
        need_token_(p.mode == 2 && scalebench_is_sender(thread)) {}

  bool next(Step& s) {
    s.clear();
    s.sops = sops_;
    switch (p_.mode) {
      case 2:
        return next_ping_pong(s);
      case 4:
        if (!second_) {
          set(s, {own_, 0, 0}, {own_, +1, 0});
        } else {
          set(s, {own_, -1, 0});
          s.delay_rounds = p_.delay;
          s.rounds = 1;
        }
        second_ = !second_;
        return true;
      default:  // 1
        set(s, {own_, 0, 0});
        s.delay_rounds = p_.delay;
        s.rounds = 1;
        return true;
    }
  }

  // Whether the loop in progress (or about to start) uses complex ops (mode 2).
  bool complex_loop() const { return complex_; }

 private:
  bool next_ping_pong(Step& s) {
    if (need_token_) {  // the sender inserts the pair's token, once, before the loop
      need_token_ = false;
      set(s, {own_, +1, 0});
      s.counts_op = false;
      return true;
    }
    if (!second_) {
      complex_ = phase_ >= 0 && static_cast<int>(loop_ % p_.complex_every) == phase_;
      if (complex_) {
        set(s, {own_, -1, 0}, {own_, 0, 0});
      } else {
        set(s, {own_, -1, 0});
      }
    } else {
      if (complex_) {
        set(s, {partner_, 0, 0}, {partner_, +1, 0});
      } else {
        set(s, {partner_, +1, 0});
      }
      ++loop_;
    }
    second_ = !second_;
    s.delay_rounds = p_.delay;
    s.rounds = 1;
    return true;
  }

  void set(Step& s, ipc::Sembuf a) {
    sops_[0] = a;
    s.nsops = 1;
  }
  void set(Step& s, ipc::Sembuf a, ipc::Sembuf b) {
    sops_[0] = a;
    sops_[1] = b;
    s.nsops = 2;
  }

  ScalebenchParams p_;
  int own_;
  int partner_;
  int phase_;
  bool need_token_;
  bool second_ = false;  // the next call is the second of the loop
  bool complex_ = false;
  std::uint64_t loop_ = 0;
  ipc::Sembuf sops_[2]{};
};

}  // namespace semsim::workloads
