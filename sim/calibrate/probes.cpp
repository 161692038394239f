#include "calibrate/probes.hpp"

#include <linux/futex.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/sem.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <latch>
#include <memory>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "calibrate/probe_threads.hpp"
#include "core/errors.hpp"
#include "core/rng.hpp"
#include "native/run_support.hpp"
#include "native/sysv_array.hpp"
#include "native/task_loop.hpp"
#include "workloads/aim9_shm_def.hpp"
#include "workloads/semop_multi_def.hpp"
#include "workloads/step_def.hpp"

namespace semsim::calibrate::probes {

namespace {

using native::detail::monotonic_ns;

// The runner-key index calibration arrays use (one at a time); measure() and
// calibrate() never run together (they share the runner's lock).
constexpr int kProbeArrayIndex = native::kMaxArraysPerProcess - 1;
// The runner-loop probes' array: semop-multi's default of 8 semaphores.
constexpr int kRunnerProbeSems = 8;

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 == 1 ? v[m] : (v[m - 1] + v[m]) / 2.0;
}

// Runs f() on a new thread pinned to `cpu` and returns its result.
template <class F>
auto on_cpu(int cpu, F f) -> decltype(f()) {
  decltype(f()) result{};
  std::exception_ptr error;
  std::thread th([&] {
    try {
      if (native::detail::pin_current_thread(cpu) != 0) {
        throw SimulationError("calibrate: cannot pin a probe thread to CPU " + std::to_string(cpu));
      }
      result = f();
    } catch (...) {
      error = std::current_exception();
    }
  });
  th.join();
  if (error) std::rethrow_exception(error);
  return result;
}

// The lower quartile of a sample: robust to a host whose other tasks take the CPU
// during some batches (those only get slower), barely biased when none do.
double lower_quartile(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[(v.size() - 1) / 4];
}

// A repeat: `batches` timed batches of `ops` operations; ns per op of the lower-quartile
// batch. Batches are short (~250 us, see loop_probe) so that most of them run
// without losing the CPU even on a busy host.
template <class Body>
double batched(int batches, long ops, Body body) {
  std::vector<double> per;
  per.reserve(static_cast<std::size_t>(batches));
  for (int b = 0; b < batches; ++b) {
    const std::int64_t t0 = monotonic_ns();
    body(ops);
    const std::int64_t t1 = monotonic_ns();
    per.push_back(static_cast<double>(t1 - t0) / static_cast<double>(ops));
  }
  return lower_quartile(per);
}

constexpr std::int64_t kBatchTargetNs = 250'000;

// Warms up caches, TLB and branch predictors with body(first), body(4 first), ...,
// and returns the batch size (at least `least`) that makes a batch last about 250 us.
template <class Body>
long warmed_batch(Body& body, long first, long least) {
  long ops = first;
  for (;;) {
    const std::int64_t t0 = monotonic_ns();
    body(ops);
    const std::int64_t took = monotonic_ns() - t0;
    if (took >= kBatchTargetNs / 2 || ops >= (1L << 40))
      return std::max<long>(
          least, static_cast<long>(static_cast<double>(ops) * kBatchTargetNs /
                                   static_cast<double>(std::max<std::int64_t>(took, 1))));
    ops *= 4;
  }
}

int batches_per_repeat(const Settings& s) { return s.quick ? 15 : 31; }

// A single-CPU probe: `repeats` repeats of batched(), on the settings' CPU. The batch
// size is set from a warm-up so that a batch lasts about 250 us.
template <class Body>
Stat loop_probe(const Settings& s, Body body) {
  return on_cpu(s.cpu, [&] {
    const long ops = warmed_batch(body, 16, 1);
    std::vector<double> reps;
    for (int r = 0; r < s.repeats; ++r) reps.push_back(batched(batches_per_repeat(s), ops, body));
    return summarize(reps);
  });
}

inline void compiler_barrier() { __asm__ __volatile__("" ::: "memory"); }

}  // namespace

double trimmed_mean(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t keep = values.size() - values.size() / 100;  // drop the slowest 1 %
  double sum = 0;
  for (std::size_t i = 0; i < keep; ++i) sum += values[i];
  return sum / static_cast<double>(keep);
}

std::vector<double> bin_means(std::vector<double> values, int bins) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  const auto b = std::min(n, static_cast<std::size_t>(std::max(bins, 0)));
  std::vector<double> means;
  for (std::size_t i = 0; i < b; ++i) {
    const std::size_t lo = i * n / b, hi = (i + 1) * n / b;
    double sum = 0;
    for (std::size_t j = lo; j < hi; ++j) sum += values[j];
    means.push_back(sum / static_cast<double>(hi - lo));
  }
  return means;
}

std::vector<double> shape_of(std::vector<double> values, int bins) {
  std::sort(values.begin(), values.end());
  values.resize(values.size() - values.size() / 100);  // drop the slowest 1 %
  if (bins <= 0 || values.size() < static_cast<std::size_t>(bins)) return {};
  std::vector<double> shape = bin_means(std::move(values), bins);
  double sum_of_means = 0;
  for (double x : shape) {
    if (!(x > 0)) return {};  // a draw must be a positive multiple of the mean
    sum_of_means += x;
  }
  for (double& x : shape) x *= static_cast<double>(shape.size()) / sum_of_means;
  return shape;
}

Stat summarize(std::vector<double> values) {
  Stat s;
  s.repeats = static_cast<int>(values.size());
  if (values.empty()) return s;
  s.median = median_of(values);
  s.min = *std::min_element(values.begin(), values.end());
  s.max = *std::max_element(values.begin(), values.end());
  return s;
}

// ---------------------------------------------------------------------------
// Cache lines.

Stat line_pingpong(int cpu_a, int cpu_b, const Settings& s) {
  const long trips = s.quick ? 1000 : 2000;  // ~250-500 us per batch at ~100 ns a transfer
  const int batches = batches_per_repeat(s);
  struct alignas(128) Line {
    std::atomic<std::uint64_t> v{0};
  };
  std::vector<double> reps;
  for (int r = 0; r < s.repeats; ++r) {
    auto line = std::make_unique<Line>();
    std::latch start(2);
    std::vector<double> per_batch;
    const long total = trips * (batches + 1);  // one warm-up batch
    std::thread b([&] {
      native::detail::pin_current_thread(cpu_b);
      start.arrive_and_wait();
      for (long i = 0; i < total; ++i) {
        const std::uint64_t want = 2 * static_cast<std::uint64_t>(i) + 1;
        while (line->v.load(std::memory_order_acquire) != want) {
        }
        line->v.store(want + 1, std::memory_order_release);
      }
    });
    std::thread a([&] {
      native::detail::pin_current_thread(cpu_a);
      start.arrive_and_wait();
      long i = 0;
      for (int batch = 0; batch <= batches; ++batch) {
        const std::int64_t t0 = monotonic_ns();
        for (long k = 0; k < trips; ++k, ++i) {
          const std::uint64_t sent = 2 * static_cast<std::uint64_t>(i) + 1;
          line->v.store(sent, std::memory_order_release);
          while (line->v.load(std::memory_order_acquire) != sent + 1) {
          }
        }
        const std::int64_t t1 = monotonic_ns();
        if (batch > 0)
          per_batch.push_back(static_cast<double>(t1 - t0) / static_cast<double>(2 * trips));
      }
    });
    a.join();
    b.join();
    reps.push_back(lower_quartile(per_batch));
  }
  return summarize(reps);
}

// ---------------------------------------------------------------------------
// Atomics, fences, system calls.

Stat atomic_rmw(const Settings& s) {
  return loop_probe(s, [](long n) {
    alignas(64) static std::atomic<std::uint64_t> word{0};
    for (long i = 0; i < n; ++i) word.fetch_add(1, std::memory_order_seq_cst);
  });
}

Stat locked_add_fence(const Settings& s) {
  return loop_probe(s, [](long n) {
    for (long i = 0; i < n; ++i) {
#if defined(__x86_64__)
      __asm__ __volatile__("lock; addl $0,-4(%%rsp)" ::: "memory", "cc");
#else
      std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
    }
  });
}

Stat mfence(const Settings& s) {
  return loop_probe(s, [](long n) {
    for (long i = 0; i < n; ++i) {
#if defined(__x86_64__) || defined(__i386__)
      __asm__ __volatile__("mfence" ::: "memory");
#else
      std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
    }
  });
}

namespace {
// lock xadd on a private line, then the fence F (none, mfence, lock addl), then four
// dependent loads along a cycle of L1-resident pointers that do not depend on the
// xadd: without a fence the loads run while the locked RMW completes; a fence makes
// them wait for it.
enum class InContext { None, Mfence, LockAdd };
template <InContext F>
Stat rmw_then_loads(const Settings& s) {
  return loop_probe(s, [](long n) {
    alignas(64) static std::atomic<std::uint64_t> word{0};
    alignas(64) static void* ring[8 * 8];  // 8 pointers, one per line
    static const bool linked = [] {
      for (int i = 0; i < 8; ++i) ring[i * 8] = &ring[((i + 3) % 8) * 8];
      return true;
    }();
    (void)linked;
    void* p = ring[0];
    for (long i = 0; i < n; ++i) {
#if defined(__x86_64__)
      std::uint64_t one = 1;
      __asm__ __volatile__("lock; xaddq %0, %1" : "+r"(one), "+m"(word)::"memory", "cc");
      if constexpr (F == InContext::Mfence) __asm__ __volatile__("mfence" ::: "memory");
      if constexpr (F == InContext::LockAdd)
        __asm__ __volatile__("lock; addl $0,-4(%%rsp)" ::: "memory", "cc");
#else
      word.fetch_add(1, std::memory_order_relaxed);
      if constexpr (F != InContext::None) std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
      p = *static_cast<void**>(p);
      p = *static_cast<void**>(p);
      p = *static_cast<void**>(p);
      p = *static_cast<void**>(p);
    }
    __asm__ __volatile__("" : : "r"(p) : "memory");
  });
}
}  // namespace

Stat rmw_loads(const Settings& s) { return rmw_then_loads<InContext::None>(s); }
Stat rmw_mfence_loads(const Settings& s) { return rmw_then_loads<InContext::Mfence>(s); }
Stat rmw_lockadd_loads(const Settings& s) { return rmw_then_loads<InContext::LockAdd>(s); }

Stat syscall_getppid(const Settings& s) {
  return loop_probe(s, [](long n) {
    for (long i = 0; i < n; ++i) syscall(SYS_getppid);
  });
}

// ---------------------------------------------------------------------------
// Semaphore paths.

namespace {

// A private array for one probe, with the runner's key scheme so that a killed
// calibration leaves nothing cleanup_leftovers() cannot find.
struct ProbeArray {
  explicit ProbeArray(int value) : array(1, kProbeArrayIndex, {value}) {}
  native::SemArray array;
};

int semop1(int id, int num, int op) {
  struct sembuf b{};
  b.sem_num = static_cast<unsigned short>(num);
  b.sem_op = static_cast<short>(op);
  b.sem_flg = 0;
  return semop(id, &b, 1);
}

}  // namespace

Stat semop_efbig(const Settings& s) {
  ProbeArray p(0);
  const int id = p.array.id();
  if (semop1(id, 1, 0) == 0 || errno != EFBIG)
    throw SimulationError("calibrate: the EFBIG probe did not fail with EFBIG");
  return loop_probe(s, [id](long n) {
    for (long i = 0; i < n; ++i) semop1(id, 1, 0);
  });
}

Stat semctl_getval(const Settings& s) {
  ProbeArray p(3);
  const int id = p.array.id();
  if (semctl(id, 0, GETVAL) != 3)
    throw SimulationError("calibrate: GETVAL probe read a wrong value");
  return loop_probe(s, [id](long n) {
    for (long i = 0; i < n; ++i) semctl(id, 0, GETVAL);
  });
}

Stat semctl_getval_removed(const Settings& s) {
  int id = -1;
  {
    ProbeArray p(0);
    id = p.array.id();
  }  // removed: its id now names nothing
  return loop_probe(s, [id](long n) {
    for (long i = 0; i < n; ++i) semctl(id, 0, GETVAL);
  });
}

Stat semop_uncontended(const Settings& s) {
  ProbeArray p(1);
  const int id = p.array.id();
  return loop_probe(s, [id](long n) {
    for (long i = 0; i < n; i += 2) {
      semop1(id, 0, -1);
      semop1(id, 0, +1);
    }
  });
}

Stat semop_wait_for_zero(const Settings& s) {
  ProbeArray p(0);
  const int id = p.array.id();
  return loop_probe(s, [id](long n) {
    for (long i = 0; i < n; ++i) semop1(id, 0, 0);
  });
}

// ---------------------------------------------------------------------------
// Futex wake-ups.

FutexStats futex_pingpong(int cpu_a, int cpu_b, bool batch_policy, const Settings& s) {
  const int handoffs = s.quick ? 200 : 2000;  // per repeat, both directions
  struct Shared {
    alignas(64) std::atomic<int> word[2] = {0, 0};  // [0]: A -> B, [1]: B -> A
    alignas(64) std::atomic<std::int64_t> t_send[2] = {0, 0};
  };
  struct Record {
    std::int64_t wake_ns = 0;  // sender: FUTEX_WAKE duration
    std::int64_t after_wake = 0;
    bool woke = false;         // sender: it woke someone
    std::int64_t handoff = 0;  // receiver
    std::int64_t received = 0;
    bool slept = false;  // receiver: it was asleep in FUTEX_WAIT
  };
  std::vector<double> handoff_reps, wake_reps, handoff_all, wake_all;
  std::vector<double> wake_rel, latency_rel;  // single hand-offs over their repeat's mean
  long preempted = 0;
  long counted = 0;
  for (int r = 0; r < s.repeats; ++r) {
    auto sh = std::make_unique<Shared>();
    std::vector<Record> rec(static_cast<std::size_t>(handoffs));
    std::latch start(2);
    auto send = [&](int k, Record& out) {
      const std::int64_t t0 = monotonic_ns();
      sh->t_send[k].store(t0, std::memory_order_relaxed);
      sh->word[k].store(1, std::memory_order_release);
      const int woken = futex(sh->word[k], FUTEX_WAKE, 1);
      const std::int64_t t1 = monotonic_ns();
      out.wake_ns = t1 - t0;
      out.after_wake = t1;
      out.woke = woken == 1;
    };
    auto receive = [&](int k, Record& out) {
      bool slept = false;
      while (sh->word[k].load(std::memory_order_acquire) == 0) {
        futex(sh->word[k], FUTEX_WAIT, 0);
        slept = true;
      }
      const std::int64_t t = monotonic_ns();
      sh->word[k].store(0, std::memory_order_relaxed);
      out.received = t;
      out.handoff = t - sh->t_send[k].load(std::memory_order_relaxed);
      out.slept = slept;
    };
    // Hand-off j goes A -> B for even j, B -> A for odd j.
    auto policy = [batch_policy] {
      if (!batch_policy) return;
      set_batch_policy();
    };
    std::thread b([&] {
      native::detail::pin_current_thread(cpu_b);
      policy();
      start.arrive_and_wait();
      for (int j = 0; j < handoffs; j += 2) {
        receive(0, rec[static_cast<std::size_t>(j)]);
        if (j + 1 < handoffs) send(1, rec[static_cast<std::size_t>(j + 1)]);
      }
    });
    std::thread a([&] {
      native::detail::pin_current_thread(cpu_a);
      policy();
      start.arrive_and_wait();
      for (int j = 0; j < handoffs; j += 2) {
        send(0, rec[static_cast<std::size_t>(j)]);
        if (j + 1 < handoffs) receive(1, rec[static_cast<std::size_t>(j + 1)]);
      }
    });
    a.join();
    b.join();
    std::vector<double> hs, ws;
    for (std::size_t j = 1; j < rec.size(); ++j) {  // the first hand-off warms up
      const Record& x = rec[j];
      if (!x.woke || !x.slept) continue;
      hs.push_back(static_cast<double>(x.handoff));
      ws.push_back(static_cast<double>(x.wake_ns));
      ++counted;
      if (x.received < x.after_wake) ++preempted;
    }
    if (!hs.empty()) {
      handoff_reps.push_back(trimmed_mean(hs));
      wake_reps.push_back(trimmed_mean(ws));
      handoff_all.insert(handoff_all.end(), hs.begin(), hs.end());
      wake_all.insert(wake_all.end(), ws.begin(), ws.end());
      // Relative to this repeat's means: the spread of single hand-offs, not the
      // drift of the host between repeats (which the repeats' range reports).
      std::vector<double> ls(hs.size());
      for (std::size_t i = 0; i < hs.size(); ++i) ls[i] = std::max(0.0, hs[i] - ws[i]);
      const double wm = trimmed_mean(ws), lm = trimmed_mean(ls);
      for (std::size_t i = 0; i < hs.size(); ++i) {
        if (wm > 0) wake_rel.push_back(ws[i] / wm);
        if (lm > 0) latency_rel.push_back(ls[i] / lm);
      }
    }
  }
  // The value is the mean over every counted hand-off of every repeat (the slowest 1 %
  // dropped: preemptions by other tasks), the spread the range of the repeats' means.
  // A mean, not a median: the model's throughput is a sum of hand-offs, and on a VM
  // the cross-CPU hand-off is bimodal (about 24 and 35 us here, the mode changing from
  // one repeat to the next), where a median follows whichever mode is the larger.
  FutexStats out;
  out.handoff = summarize(handoff_reps);
  out.wake_call = summarize(wake_reps);
  if (!handoff_all.empty()) {
    out.handoff.median = trimmed_mean(handoff_all);
    out.wake_call.median = trimmed_mean(wake_all);
  }
  out.preempted = counted > 0 ? static_cast<double>(preempted) / static_cast<double>(counted) : 0;
  out.wake_call_shape = shape_of(std::move(wake_rel), 20);
  out.latency_shape = shape_of(std::move(latency_rel), 20);
  return out;
}

Stat futex_ring_one_cpu(int k, const Settings& s) {
  const long handoffs = s.quick ? 3000 : 20000;  // per repeat
  std::vector<double> reps;
  for (int r = 0; r < s.repeats; ++r) {
    std::vector<RingTurn> turns(static_cast<std::size_t>(k));
    TokenRing ring(turns.data(), k, false);
    RingClock clock;
    clock.left.store(handoffs);
    std::latch ready(k);
    std::vector<std::thread> threads;
    for (int i = 0; i < k; ++i) {
      threads.emplace_back([&, i] {
        native::detail::pin_current_thread(s.cpu);
        set_batch_policy();
        ready.count_down();
        timed_ring_member(ring, i, k, handoffs, clock);
      });
    }
    ready.wait();
    ring.start();
    for (auto& t : threads) t.join();
    reps.push_back(clock.per_handoff(handoffs));
  }
  return summarize(reps);
}

CountedShare futex_ring_idle_search(int k, const Settings& s) {
  const std::int64_t run_ns = s.quick ? 40'000'000 : 100'000'000;  // per repeat
  CountedShare out;
  for (int r = 0; r < s.repeats; ++r) {
    std::vector<RingTurn> turns(static_cast<std::size_t>(k));
    TokenRing ring(turns.data(), k, false);
    std::atomic<int> waker_cpu{-1};
    std::atomic<bool> stop{false};
    std::atomic<long> seen{0};
    std::atomic<long> left{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < k; ++i) {
      threads.emplace_back([&, i] {
        int last_cpu = -1;
        for (;;) {
          ring.wait_turn(i);
          const int cpu = sched_getcpu();
          const int waker = waker_cpu.load(std::memory_order_relaxed);
          if (last_cpu >= 0 && waker >= 0 && last_cpu == waker) {
            seen.fetch_add(1, std::memory_order_relaxed);
            if (cpu != waker) left.fetch_add(1, std::memory_order_relaxed);
          }
          last_cpu = cpu;
          const bool done = stop.load(std::memory_order_relaxed);
          waker_cpu.store(cpu, std::memory_order_relaxed);
          ring.pass(i);
          if (done) return;
        }
      });
    }
    ring.start();
    run_for_then_stop(run_ns, stop, threads);
    out.samples += seen.load();
    out.hits += left.load();
  }
  return out;
}

Stat futex_wake_nobody(const Settings& s) {
  return loop_probe(s, [](long n) {
    alignas(64) static std::atomic<int> word{0};
    for (long i = 0; i < n; ++i) futex(word, FUTEX_WAKE, 1);
  });
}

// ---------------------------------------------------------------------------
// Memory.

namespace {

// A random cyclic chain through `bytes` bytes of `buf`: the 4 KiB pages in random
// order, and within each page one line of every 128-byte pair in random order (the
// adjacent-line prefetcher fetches pairs), so that the chain defeats the prefetchers
// but takes one TLB miss per 32 loads, not per load. Below 4 KiB: 64-byte lines.
void build_chain(unsigned char* buf, std::size_t bytes, std::uint64_t seed) {
  const std::size_t kLine = bytes >= 4096 ? 128 : 64;
  constexpr std::size_t kPage = 4096;
  const std::size_t lines_per_page = std::min(bytes, kPage) / kLine;
  const std::size_t pages = std::max<std::size_t>(1, bytes / kPage);
  Rng rng(seed);
  auto shuffled = [&rng](std::size_t n) {
    std::vector<std::uint32_t> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint32_t>(i);
    for (std::size_t i = n - 1; i > 0; --i)
      std::swap(v[i], v[static_cast<std::size_t>(rng.below(i + 1))]);
    return v;
  };
  const std::vector<std::uint32_t> page_order = shuffled(pages);
  std::vector<unsigned char*> chain;
  chain.reserve(pages * lines_per_page);
  for (std::uint32_t page : page_order) {
    for (std::uint32_t line : shuffled(lines_per_page))
      chain.push_back(buf + static_cast<std::size_t>(page) * kPage +
                      static_cast<std::size_t>(line) * kLine);
  }
  for (std::size_t i = 0; i < chain.size(); ++i)
    *reinterpret_cast<void**>(chain[i]) = chain[(i + 1) % chain.size()];
}

Stat chase(const Settings& s, std::size_t bytes) {
  const std::size_t align = 2u << 20;
  const std::size_t alloc = (bytes + align - 1) / align * align;
  void* raw = std::aligned_alloc(align, alloc);
  if (raw == nullptr) throw SimulationError("calibrate: cannot allocate the pointer-chase buffer");
  std::unique_ptr<void, decltype(&std::free)> keep(raw, &std::free);
  madvise(raw, alloc, MADV_HUGEPAGE);  // fewer TLB misses in the chain (best effort)
  auto* buf = static_cast<unsigned char*>(raw);
  build_chain(buf, bytes, 0x5EED);
  void* volatile sink = nullptr;
  void** p = static_cast<void**>(*reinterpret_cast<void**>(buf));
  return loop_probe(s, [&](long n) {
    void** q = p;
    for (long i = 0; i < n; ++i) q = static_cast<void**>(*q);
    p = q;
    sink = q;
  });
}

}  // namespace

Stat l1_load(const Settings& s) { return chase(s, 16 * 1024); }

Stat memory_load(const Settings& s) { return chase(s, s.quick ? (128u << 20) : (512u << 20)); }

// ---------------------------------------------------------------------------
// User-space work.

namespace {

// semop-multi (the pattern the runner's loop is probed with) as the runner runs it,
// ending after `steps` calls: the task loop then reports and returns.
class LimitedSemopMulti {
 public:
  explicit LimitedSemopMulti(long steps)
      : program_(workloads::SemopMultiPattern::Stride, 3, kRunnerProbeSems, 1), left_(steps) {}
  bool next(workloads::Step& s) { return left_-- > 0 && program_.next(s); }

 private:
  workloads::SemopMultiProgram program_;
  long left_;
};

// Per call of `body`, without what a call of `body` costs once (the task loop's
// start and end: rusage, clocks, buffers): the slope between batches of n and 2n
// calls, each the lower quartile of its batches, over the repeats.
template <class Body>
Stat slope_probe(const Settings& s, Body body) {
  return on_cpu(s.cpu, [&] {
    const long ops = warmed_batch(body, 256, 256);
    std::vector<double> reps;
    for (int r = 0; r < s.repeats; ++r) {
      const double one = batched(batches_per_repeat(s), ops, body) * static_cast<double>(ops);
      const double two =
          batched(batches_per_repeat(s), 2 * ops, body) * static_cast<double>(2 * ops);
      reps.push_back((two - one) / static_cast<double>(ops));
    }
    return summarize(reps);
  });
}

}  // namespace

Stat runner_loop_semop(const Settings& s) {
  native::SemArray array(kRunnerProbeSems, kProbeArrayIndex);
  const int id = array.id();
  std::vector<std::uint64_t> samples(native::detail::kSampleCapacity);
  return slope_probe(s, [&](long n) {
    // The runner's own task loop (native/task_loop.hpp), already in its window:
    // no start barrier to wait at, and its stop is the program's end.
    native::detail::RunControl ctl;
    ctl.go.store(1);
    ctl.phase.store(native::detail::kWindow);
    native::detail::TaskSlot slot;
    native::detail::TaskEnv env;
    env.ctl = &ctl;
    env.slot = &slot;
    env.samples = samples.data();
    env.semids[0] = id;
    LimitedSemopMulti program(n);
    native::detail::run_task(program, env);
    if (ctl.failure.load() != native::detail::kNone)
      throw SimulationError("calibrate: the runner-loop probe's semop() failed");
  });
}

Stat semop_loop_bare(const Settings& s) {
  native::SemArray array(kRunnerProbeSems, kProbeArrayIndex);
  const int id = array.id();
  return slope_probe(s, [id](long n) {
    // The same calls: +1 then -1 on each semaphore in turn.
    for (long i = 0; i < n; i += 2) {
      const int sem = static_cast<int>((i / 2) % kRunnerProbeSems);
      semop1(id, sem, +1);
      semop1(id, sem, -1);
    }
  });
}

Stat busy_loop_iteration(const Settings& s) {
  return loop_probe(s, [](long n) { workloads::busy_loop(n); });
}

Stat bubble_sort_round(const Settings& s) {
  return loop_probe(s, [](long n) {
    volatile int sink = workloads::bubble_sort_delay(static_cast<int>(n));
    (void)sink;
  });
}

Stat memcpy_byte(const Settings& s) {
  // ns per byte over AIM9's size table (mean 328 bytes), buffers in L1, as aim9-shm's
  // copies are.
  long table_bytes = 0;
  for (int size : workloads::kAim9Sizes) table_bytes += size;
  const long calls_per_op = workloads::kAim9SizeCount;
  Stat per_table = loop_probe(s, [&](long n) {
    alignas(64) static unsigned char a[workloads::kAim9MaxBlock];
    alignas(64) static unsigned char b[workloads::kAim9MaxBlock];
    for (long i = 0; i < n; ++i) {
      for (long k = 0; k < calls_per_op; ++k) {
        std::memcpy((k & 1) ? a : b, (k & 1) ? b : a,
                    static_cast<std::size_t>(workloads::kAim9Sizes[k]));
        compiler_barrier();
      }
    }
  });
  const double bytes = static_cast<double>(table_bytes);
  per_table.median /= bytes;
  per_table.min /= bytes;
  per_table.max /= bytes;
  return per_table;
}

Stat time_slice(const Settings& s) {
  const std::int64_t span = s.quick ? 150'000'000 : 1'000'000'000;
  constexpr std::int64_t kGap = 50'000;
  std::vector<double> reps;
  for (int r = 0; r < s.repeats; ++r) {
    std::vector<double> runs[2];
    std::latch start(2);
    auto spin = [&](int who) {
      native::detail::pin_current_thread(s.cpu);
      start.arrive_and_wait();
      const std::int64_t end = monotonic_ns() + span;
      std::int64_t run_start = monotonic_ns();
      std::int64_t last = run_start;
      for (;;) {
        const std::int64_t now = monotonic_ns();
        if (now - last > kGap) {
          runs[who].push_back(static_cast<double>(last - run_start));
          run_start = now;
        }
        last = now;
        if (now >= end) break;
      }
    };
    std::thread a(spin, 0), b(spin, 1);
    a.join();
    b.join();
    std::vector<double> all;
    for (auto& v : runs) {
      if (v.size() > 2) all.insert(all.end(), v.begin() + 1, v.end() - 1);
    }
    if (!all.empty()) reps.push_back(median_of(all));
  }
  return summarize(reps);
}

std::vector<NoiseCpu> os_noise(const std::vector<int>& cpus, const Settings& s) {
  const std::int64_t span = s.quick ? 100'000'000 : 400'000'000;
  const auto gap = static_cast<std::int64_t>(kNoiseGapNs);
  std::vector<NoiseCpu> out;
  for (int cpu : cpus) {
    out.push_back(on_cpu(cpu, [&] {
      NoiseCpu r;
      r.cpu = cpu;
      const std::int64_t start = monotonic_ns(), end = start + span;
      std::int64_t last = start;
      while (last < end) {
        const std::int64_t now = monotonic_ns();
        if (now - last > gap) r.gaps_ns.push_back(static_cast<double>(now - last));
        last = now;
      }
      r.busy_s = static_cast<double>(last - start) * 1e-9;
      return r;
    }));
  }
  return out;
}

Stat tsc_ghz(const Settings& s) {
#if defined(__x86_64__) || defined(__i386__)
  std::vector<double> reps;
  const std::int64_t span = s.quick ? 5'000'000 : 20'000'000;
  for (int r = 0; r < s.repeats; ++r) {
    const std::int64_t t0 = monotonic_ns();
    const unsigned long long c0 = __rdtsc();
    while (monotonic_ns() - t0 < span) {
    }
    const unsigned long long c1 = __rdtsc();
    const std::int64_t t1 = monotonic_ns();
    reps.push_back(static_cast<double>(c1 - c0) / static_cast<double>(t1 - t0));
  }
  return summarize(reps);
#else
  (void)s;
  return Stat{};
#endif
}

}  // namespace semsim::calibrate::probes
