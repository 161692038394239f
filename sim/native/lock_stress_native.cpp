#include "native/lock_stress_native.hpp"

#include <pthread.h>
#include <sched.h>
#include <x86intrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "core/errors.hpp"

namespace semsim::native {

namespace {

constexpr std::size_t kLine = 64;

// A busy wait of `ticks` TSC ticks, polling the TSC without PAUSE: one PAUSE takes
// about 140 cycles on Skylake and later, so a PAUSE loop rounds every wait up by
// that much (the 100-cycle critical section took about 180).
inline void spin_raw(std::int64_t ticks) {
  if (ticks <= 0) return;
  const auto start = __rdtsc();
  while (static_cast<std::int64_t>(__rdtsc() - start) < ticks) {
  }
}

// A wait that takes `ticks` on average: what spin_raw(ticks) overshoots by on this host
// (the read that sees the target passed, the loop's exit: 38 ticks for 100 on the
// 2026-12 Intel guest, whose RDTSC takes 23) is measured before the run, for each
// length the run waits, and taken off. The least of 5 batches' means: a batch that an
// interrupt lands in only reads longer.
class Wait {
 public:
  explicit Wait(std::int64_t ticks) : ticks_(ticks) {
    if (ticks <= 0) return;
    constexpr int kBatches = 5, kSpins = 2000;
    std::int64_t best = -1;
    for (int b = 0; b < kBatches; ++b) {
      const auto t0 = __rdtsc();
      for (int i = 0; i < kSpins; ++i) spin_raw(ticks);
      const auto mean = static_cast<std::int64_t>((__rdtsc() - t0) / kSpins);
      if (best < 0 || mean < best) best = mean;
    }
    ticks_ = ticks - std::max<std::int64_t>(0, best - ticks);
  }
  void operator()() const { spin_raw(ticks_); }

 private:
  std::int64_t ticks_;
};

struct alignas(kLine) Word {
  std::atomic<std::uint32_t> v{0};
};
struct alignas(kLine) Ticket {
  std::atomic<std::uint32_t> next{0};
  std::atomic<std::uint32_t> serving{0};
};
struct alignas(kLine) McsNode {
  std::atomic<McsNode*> next{nullptr};
  std::atomic<bool> waiting{false};
};
struct alignas(kLine) Counter {
  std::atomic<std::uint64_t> n{0};
  std::uint64_t checked = 0;  // its acquisitions counted in Exclusion (read after the join)
};
// The mutual-exclusion check: a plain counter incremented under the lock before the
// window only. In the window it would be a line that moves with every hand-off, which
// the scenario's critical section does not have.
struct alignas(kLine) Exclusion {
  std::uint64_t n = 0;
};
struct alignas(kLine) DataLine {
  volatile std::uint64_t v = 0;
};

struct Shared {
  Word word;
  Ticket ticket;
  alignas(kLine) std::atomic<McsNode*> tail{nullptr};
  // Read every iteration, written a few times a run: a line of their own, not the
  // MCS tail's (an exchange on every acquisition).
  alignas(kLine) std::atomic<bool> go{false}, stop{false}, window{false};
};

void lock_tas(Word& w) {
  while (w.v.exchange(1, std::memory_order_acquire) != 0) _mm_pause();
}
void lock_ttas(Word& w) {
  for (;;) {
    while (w.v.load(std::memory_order_relaxed) != 0) _mm_pause();
    if (w.v.exchange(1, std::memory_order_acquire) == 0) return;
  }
}
void lock_ticket(Ticket& t) {
  const auto mine = t.next.fetch_add(1, std::memory_order_relaxed);
  while (t.serving.load(std::memory_order_acquire) != mine) _mm_pause();
}
void unlock_ticket(Ticket& t) {
  t.serving.store(t.serving.load(std::memory_order_relaxed) + 1, std::memory_order_release);
}
void lock_mcs(std::atomic<McsNode*>& tail, McsNode& me) {
  me.next.store(nullptr, std::memory_order_relaxed);
  me.waiting.store(true, std::memory_order_relaxed);
  McsNode* pred = tail.exchange(&me, std::memory_order_acq_rel);
  if (pred == nullptr) return;
  pred->next.store(&me, std::memory_order_release);
  while (me.waiting.load(std::memory_order_acquire)) _mm_pause();
}
void unlock_mcs(std::atomic<McsNode*>& tail, McsNode& me) {
  McsNode* succ = me.next.load(std::memory_order_acquire);
  if (succ == nullptr) {
    McsNode* expected = &me;
    if (tail.compare_exchange_strong(expected, nullptr, std::memory_order_release,
                                     std::memory_order_relaxed))
      return;
    while ((succ = me.next.load(std::memory_order_acquire)) == nullptr) _mm_pause();
  }
  succ->waiting.store(false, std::memory_order_release);
}

}  // namespace

LockStressMeasurement measure_lock_stress(const workloads::LockStressParams& p, int threads,
                                          const std::vector<int>& cpus, double warmup_s,
                                          double duration_s) {
  enum { Tas, Ttas, TicketLock, Mcs } kind;
  if (p.lock == "tas")
    kind = Tas;
  else if (p.lock == "ttas")
    kind = Ttas;
  else if (p.lock == "ticket")
    kind = TicketLock;
  else if (p.lock == "mcs")
    kind = Mcs;
  else
    throw InputError("workload.lock: '" + p.lock + "' is not a lock kind (tas, ttas, ticket, mcs)");
  // Measured now, before any thread of the run spins beside them.
  const Wait critical(p.critical_cycles), delay(p.delay_cycles);
  auto shared = std::make_unique<Shared>();
  const auto n = static_cast<std::size_t>(threads);
  auto counters = std::make_unique<Counter[]>(n);
  auto nodes = std::make_unique<McsNode[]>(n);
  auto data = std::make_unique<DataLine[]>(static_cast<std::size_t>(std::max(1, p.data_lines)));
  Exclusion exclusion;
  std::vector<std::thread> pool;
  for (std::size_t i = 0; i < n; ++i) {
    pool.emplace_back([&, i] {
      if (!cpus.empty()) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpus[i % cpus.size()], &set);
        pthread_setaffinity_np(pthread_self(), sizeof set, &set);
      }
      while (!shared->go.load(std::memory_order_acquire)) _mm_pause();
      auto& count = counters[i].n;
      while (!shared->stop.load(std::memory_order_relaxed)) {
        const bool check = !shared->window.load(std::memory_order_relaxed);
        switch (kind) {
          case Tas:
            lock_tas(shared->word);
            break;
          case Ttas:
            lock_ttas(shared->word);
            break;
          case TicketLock:
            lock_ticket(shared->ticket);
            break;
          case Mcs:
            lock_mcs(shared->tail, nodes[i]);
            break;
        }
        critical();
        for (int d = 0; d < p.data_lines; ++d) data[static_cast<std::size_t>(d)].v = i;
        if (check) ++exclusion.n;
        switch (kind) {
          case Tas:
          case Ttas:
            shared->word.v.store(0, std::memory_order_release);
            break;
          case TicketLock:
            unlock_ticket(shared->ticket);
            break;
          case Mcs:
            unlock_mcs(shared->tail, nodes[i]);
            break;
        }
        count.store(count.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
        if (check) ++counters[i].checked;
        delay();
      }
    });
  }
  auto total = [&] {
    std::uint64_t s = 0;
    for (std::size_t i = 0; i < n; ++i) s += counters[i].n.load(std::memory_order_relaxed);
    return s;
  };
  using clock = std::chrono::steady_clock;
  shared->go.store(true, std::memory_order_release);
  std::this_thread::sleep_for(std::chrono::duration<double>(warmup_s));
  const auto begin = total();
  const auto t0 = clock::now();
  std::vector<std::uint64_t> first(n);
  for (std::size_t i = 0; i < n; ++i) first[i] = counters[i].n.load(std::memory_order_relaxed);
  shared->window.store(true, std::memory_order_relaxed);
  std::this_thread::sleep_for(std::chrono::duration<double>(duration_s));
  const auto end = total();
  const auto t1 = clock::now();
  LockStressMeasurement out;
  for (std::size_t i = 0; i < n; ++i)
    out.per_thread.push_back(counters[i].n.load(std::memory_order_relaxed) - first[i]);
  shared->stop.store(true, std::memory_order_relaxed);
  for (auto& t : pool) t.join();
  out.window_s = std::chrono::duration<double>(t1 - t0).count();
  out.acquisitions = end - begin;
  out.ops_per_s = out.window_s > 0 ? static_cast<double>(out.acquisitions) / out.window_s : 0;
  std::uint64_t checked = 0;
  for (std::size_t i = 0; i < n; ++i) checked += counters[i].checked;
  out.exclusive = exclusion.n == checked;
  return out;
}

namespace detail {

RunResult run_lock_stress_once(const Scenario& sc, int threads, const std::vector<int>& cpus) {
  const bool pinned = sc.workload.pin != Pinning::Unpinned;
  const auto m =
      measure_lock_stress(sc.workload.lockstress, threads, pinned ? cpus : std::vector<int>{},
                          sc.warmup_ms / 1e3, sc.duration_ms / 1e3);
  if (!m.exclusive) throw SimulationError("lock-stress: the lock let two threads in at once");
  RunResult r;
  const auto n = static_cast<std::size_t>(threads);
  r.window_s = m.window_s;
  r.ops_per_s = m.ops_per_s;
  r.ops_total = m.acquisitions;
  r.tasks = threads;
  r.per_task_ops = m.per_thread;
  r.per_task_rounds.assign(n, 0);
  r.voluntary.assign(n, 0);
  r.involuntary.assign(n, 0);
  for (std::size_t i = 0; i < n; ++i)
    r.cpu.push_back(pinned && !cpus.empty() ? cpus[i % cpus.size()] : -1);
  r.completed = true;
  return r;
}

}  // namespace detail

}  // namespace semsim::native
