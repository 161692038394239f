// Simulator speed for contended spinlocks: simulated lock acquisitions per
// wall-clock second, for a ticket lock and a queued (MCS) lock contended by
// 64 tasks on the uniform-64 preset. A benchmark, not a timed test: run
//   cmake -S . -B build/bench -DSEMSIM_BUILD_BENCH=ON && cmake --build build/bench
//   build/bench/semsim_bench --benchmark_filter=Lock
// and read the acquisitions_per_wall_s counter.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>

#include "../cpp/test_machine_harness.hpp"
#include "config/machine_config.hpp"
#include "core/rng.hpp"
#include "machine/spinlock.hpp"

namespace {

using semsim::Tick;
using namespace semsim;

struct Result {
  std::uint64_t acquisitions = 0;
};

// 64 tasks, one per CPU, each looping: exponential think time (mean 2 us),
// spin_lock, a 200 ns critical section, spin_unlock; for `simulated` of
// simulated time. Heavily contended: the lock is the bottleneck for both kinds.
Result run(machine::LockKind kind, const config::MachineParams& m, Tick simulated,
           std::uint64_t seed) {
  machine::Topology topo(m);
  machine::CacheLine line("lock");
  machine::Spinlock lock(kind, &line, seed);
  machine_test::TaskSet set;
  for (int i = 0; i < topo.cpus(); ++i)
    set.add(i, [&, i](machine::Task& t) {
      Rng rng = Rng::derive(seed, static_cast<std::uint64_t>(i));
      for (;;) {
        t.charge(static_cast<Tick>(std::llround(rng.exponential(2000.0 * kTicksPerNs))));
        lock.lock(topo, t);
        t.charge(ns_to_ticks(200));
        lock.unlock(topo, t);
      }
    });
  set.stop_at(simulated);
  set.sim.run();
  return {lock.stats().acquisitions};
}

void BM_ContendedLock64(benchmark::State& state, machine::LockKind kind) {
  const auto m = config::load_machine("uniform-64");
  const Tick simulated = ns_to_ticks(2e6);  // 2 ms of simulated time per iteration
  std::uint64_t acquisitions = 0;
  std::uint64_t seed = 1;
  for (auto _ : state) {
    const auto r = run(kind, m, simulated, seed++);
    acquisitions += r.acquisitions;
  }
  state.counters["acquisitions_per_wall_s"] =
      benchmark::Counter(static_cast<double>(acquisitions), benchmark::Counter::kIsRate);
  state.counters["simulated_acq_per_simulated_s"] =
      static_cast<double>(acquisitions) /
      (static_cast<double>(state.iterations()) * ticks_to_seconds(simulated));
}

BENCHMARK_CAPTURE(BM_ContendedLock64, ticket, semsim::machine::LockKind::Ticket)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(2.0);
BENCHMARK_CAPTURE(BM_ContendedLock64, queued_mcs, semsim::machine::LockKind::Queued)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(2.0);

}  // namespace
