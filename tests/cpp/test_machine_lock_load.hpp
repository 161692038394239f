// A closed lock-contention load for the lock oracles (issue 3, oracles 1-2):
// n tasks, one per CPU, each alternating an exponential think time (our
// Rng, mean a) and one acquisition of a single spinlock held for a fixed
// critical section s; and the Boyd-Wickizer et al. birth-death model of it.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "machine/spinlock.hpp"
#include "test_machine_harness.hpp"

namespace semsim::machine_test {

struct LockLoad {
  double think_ns;       // a: mean of the exponential think time
  double serial_ns;      // s: critical section
  double per_waiter_ns;  // c: the model's per-waiter hand-off cost (ticket oracle), or the line
                         // transfer
  Tick warmup;           // discarded
  Tick window;           // measured
  int batches = 20;      // for the batch-means standard error
  std::uint64_t seed = 1;
};

struct LockRun {
  double ops_per_s = 0;  // completed critical sections per simulated second in the window
  double std_error = 0;  // batch-means standard error of ops_per_s
  machine::LockStats stats;
  std::vector<machine::Task> tasks;  // copies, for their CPU-time breakdown
};

// kind Ticket with oracle = true: the Markov oracle mode (the lock samples
// the whole service); otherwise the model's own ticket / queued lock on a
// uniform topology whose transfer latency is per_waiter_ns.
inline LockRun run_lock_load(machine::LockKind kind, bool oracle, int n, const LockLoad& load) {
  const auto params = uniform_machine(64, load.per_waiter_ns);
  machine::Topology topo(params);
  machine::CacheLine line("lock");
  machine::Spinlock lock(kind, &line, load.seed);
  if (oracle) lock.set_markov_oracle(ns_to_ticks(load.serial_ns), ns_to_ticks(load.per_waiter_ns));
  const Tick start = load.warmup, end = load.warmup + load.window;
  std::vector<std::uint64_t> per_batch(static_cast<std::size_t>(load.batches), 0);
  const Tick serial = ns_to_ticks(load.serial_ns);
  TaskSet set;
  for (int i = 0; i < n; ++i) {
    set.add(i, [&, i](machine::Task& t) {
      Rng rng = Rng::derive(load.seed, static_cast<std::uint64_t>(i));
      for (;;) {
        {
          machine::InFunc in(t, machine::Func::User);
          t.charge(static_cast<Tick>(std::llround(rng.exponential(load.think_ns * kTicksPerNs))));
        }
        lock.lock(topo, t);
        if (!oracle) {
          machine::InFunc in(t, machine::Func::PerformAtomic);
          t.charge(serial);
        }
        lock.unlock(topo, t);
        if (t.cursor >= start && t.cursor < end)
          ++per_batch[static_cast<std::size_t>((t.cursor - start) * load.batches / load.window)];
      }
    });
  }
  LockRun out;
  set.sim.spawn("timekeeper", [&](core::Actor& self) {
    self.sleep_until(start);
    lock.reset_stats();
    self.sleep_until(end);
    out.stats = lock.stats();
    set.sim.stop_all();
  });
  set.sim.run();
  const double batch_s = ticks_to_seconds(load.window) / load.batches;
  double sum = 0, sum2 = 0;
  for (auto c : per_batch) {
    const double r = static_cast<double>(c) / batch_s;
    sum += r;
    sum2 += r * r;
  }
  const double b = load.batches;
  out.ops_per_s = sum / b;
  const double var = (sum2 - sum * sum / b) / (b - 1);
  out.std_error = std::sqrt(std::max(var, 0.0) / b);
  out.tasks.assign(set.tasks.begin(), set.tasks.end());
  return out;
}

// The Boyd-Wickizer birth-death model, closed form: state k = cores holding
// or waiting for the lock; birth rate (n-k)/a; death rate from k+1 to k
// 1/(s + c*k/2) (k waiters besides the holder). Returns the throughput
// sum_k P_k (n-k)/a, in operations per second.
inline double markov_throughput(int n, double a_ns, double s_ns, double c_ns) {
  std::vector<double> logp(static_cast<std::size_t>(n) + 1, 0.0);
  for (int k = 0; k < n; ++k) {
    const double birth = (n - k) / a_ns;
    const double death = 1.0 / (s_ns + c_ns * k / 2.0);
    logp[static_cast<std::size_t>(k) + 1] =
        logp[static_cast<std::size_t>(k)] + std::log(birth / death);
  }
  double top = logp[0];
  for (double v : logp) top = std::max(top, v);
  double norm = 0, x = 0;
  for (int k = 0; k <= n; ++k) {
    const double p = std::exp(logp[static_cast<std::size_t>(k)] - top);
    norm += p;
    x += p * (n - k) / a_ns;
  }
  return x / norm * 1e9;
}

}  // namespace semsim::machine_test
