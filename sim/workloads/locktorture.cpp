// locktorture as a Workload (registry entry) and its simulated writers
// (locktorture_def.hpp says what the module does and what is left out).
#include "workloads/locktorture.hpp"

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "machine/mlp.hpp"
#include "machine/placement.hpp"
#include "machine/spinlock.hpp"
#include "machine/store_buffer.hpp"
#include "workloads/lock_stress.hpp"
#include "workloads/registry.hpp"

namespace semsim::workloads {

namespace {

class Locktorture final : public Workload {
 public:
  using Workload::Workload;
  std::string kthread() const override { return "lock_torture_writer"; }
  std::string native_refusal() const override {
    return "workload.type: locktorture is a kernel module (kernel/locking/locktorture.c, "
           "modprobe locktorture); the native runner measures user-space workloads only: "
           "simulate it with `semsim run`";
  }
  std::vector<int> array_sizes(int /*threads*/) const override { return {}; }
  // Pinned: writer i on CPU i mod cpus; the other placements are made by topology
  // (compact, spread, cores-first) or, unpinned, where fork balancing puts a new
  // kthread (locktorture_task_body).
  int task_cpu(int task, int threads, int cpus) const override {
    if (spec_.pin == Pinning::Unpinned || cpus < 1 || task >= threads) return -1;
    return task % cpus;
  }
  std::vector<PointLabel> point_labels(int /*threads*/) const override {
    const auto& p = spec_.locktorture;
    return {{"torture_type", "spin_lock"},
            {"longdelay_ms", p.longdelay_ms},
            {"shortdelay_us", p.shortdelay_us}};
  }
  std::unique_ptr<Program> program(int /*task*/, int /*threads*/, std::uint64_t /*seed*/,
                                   ReadyFlags* /*ready*/) const override {
    return std::make_unique<NoProgram>();  // the writers have their own body (below)
  }
};

// Cycles of the writer's own instructions (assumptions, on the machine's clock):
// inside the lock, torture_spin_lock_write_delay()'s three torture_random()
// draws (a multiply-add each) and the three `%` on unsigned long they feed,
// each a 64-bit DIV of a 32-bit value, 32-96 cycles of latency on Haswell and
// similar on its neighbours (Agner Fog, 'Instruction tables', DIV r64 [recalled,
// not verified here]), about 36 each for such small dividends, plus the calls
// and branches: about 140 cycles. Outside it, the loop's top draw and test,
// the dummy task_boost() call, stutter_wait() (cond_resched_tasks_rcu_qs() and a
// read of stutter_pause_test) and torture_must_stop(): about 60 cycles.
constexpr double kDelayCheckCycles = 140;
constexpr double kLoopCycles = 60;
// Writers per line of the lock_stress_stats array (two longs each, 64-byte lines).
constexpr int kStatsPerLine = 4;

struct State {
  State(const LocktortureParams& p, const machine::Topology& t, machine::LockKind kind,
        std::uint64_t seed, int writers)
      : lock_line("torture_spinlock"),
        lock(kind, &lock_line, seed ^ 0x7041ULL),
        flags("lock_is_write_held"),
        delay_check(machine::cycles_to_ticks(t, kDelayCheckCycles)),
        loop(machine::cycles_to_ticks(t, kLoopCycles)),
        long_delay(p.longdelay_ms * kTicksPerMs),
        short_delay(p.shortdelay_us * kTicksPerUs),
        long_odds(static_cast<std::uint64_t>(writers) * 2000 *
                  static_cast<std::uint64_t>(p.longdelay_ms)),
        short_odds(static_cast<std::uint64_t>(writers) * 2 *
                   static_cast<std::uint64_t>(p.shortdelay_us)) {
    const int lines = (writers + kStatsPerLine - 1) / kStatsPerLine;
    for (int i = 0; i < lines; ++i) stats.emplace_back("lwsa" + std::to_string(i));
  }
  machine::CacheLine lock_line;
  machine::Spinlock lock;
  machine::CacheLine flags;              // lock_is_write_held, lock_is_read_held
  std::deque<machine::CacheLine> stats;  // cxt.lwsa[]: four writers' counters a line
  Tick delay_check, loop, long_delay, short_delay;
  std::uint64_t long_odds, short_odds;  // 0: that delay is off
  std::vector<int> order;               // the writers' first CPUs
};

}  // namespace

TaskBody locktorture_task_body(SimContext& ctx, int index) {
  const auto& spec = ctx.workload.spec();
  if (!ctx.workload_state) {
    auto made =
        std::make_shared<State>(spec.locktorture, ctx.topo, ctx.spinlock, ctx.seed, ctx.threads);
    ctx.kernel_locks.emplace_back("torture_spinlock", &made->lock);
    ctx.kernel_lines.push_back(&made->lock_line);
    ctx.kernel_lines.push_back(&made->flags);
    for (auto& line : made->stats) ctx.kernel_lines.push_back(&line);
    ctx.workload_state = std::move(made);
  }
  auto state = std::static_pointer_cast<State>(ctx.workload_state);
  // Unpinned, the writers start where fork balancing puts new kthreads.
  if (state->order.empty())
    state->order = lock_task_order(ctx.topo, spec.pin, machine::Placement::ForkBalanced);
  return [&ctx, state, index](machine::Task& t) {
    auto& s = *state;
    // The module starts its writers one after another and each runs at once: the
    // first requests reach the lock in a random order, as lock-stress's.
    start_lock_task(ctx, t, s.order, index);
    Rng draws = Rng::derive(ctx.seed, 0x10c7ULL + static_cast<std::uint64_t>(index));
    machine::CacheLine& mine = s.stats[static_cast<std::size_t>(index / kStatsPerLine)];
    for (;;) {
      {
        machine::InFunc in(t, machine::Func::LockTortureWriter);
        t.charge_private(s.loop);
      }
      s.lock.lock(ctx.topo, t);
      {
        // The two misses are independent: the core issues both and runs the
        // delay's draws in their shadow (machine/mlp.hpp); the stores wait in
        // the store buffer, and the release becomes visible after them (TSO).
        machine::InFunc in(t, machine::Func::LockTortureWriter);
        machine::LoadWindow window;
        window.load(ctx.topo, t, s.flags);     // WARN_ON_ONCE(lock_is_write_held)
        machine::store(ctx.topo, t, s.flags);  // lock_is_write_held = true
        window.load(ctx.topo, t, mine);        // lwsp->n_lock_acquired++
        machine::store(ctx.topo, t, mine);
        t.charge_private(s.delay_check);
        const bool long_hold = s.long_odds > 0 && draws.below(s.long_odds) == 0;
        const bool short_hold = s.short_odds > 0 && draws.below(s.short_odds) == 0;
        if (long_hold || short_hold) {  // mdelay() / udelay(): TSC busy-waits
          machine::InFunc delay(t, machine::Func::DelayTsc);
          t.advance_to(t.cursor + (long_hold ? s.long_delay : 0) +
                       (short_hold ? s.short_delay : 0));
        }
        machine::store(ctx.topo, t, s.flags);  // lock_is_write_held = false
        window.drain(t);                       // the unlock retires after the loads
      }
      s.lock.unlock(ctx.topo, t);
      ++t.semops;
    }
  };
}

WorkloadType locktorture_type() {
  return {"locktorture",
          "the kernel's locktorture module, torture_type=spin_lock: N writer kthreads take "
          "one kernel spinlock (the kernel's kind), hold it for the module's checks, "
          "counter and random delays; ops/s = acquisitions/s (simulated only: a kernel module)",
          Pinning::Unpinned,
          {int_field("longdelay_ms", 0, 1000,
                     [](WorkloadSpec& s, std::int64_t v) { s.locktorture.longdelay_ms = v; }),
           int_field("shortdelay_us", 0, 1000,
                     [](WorkloadSpec& s, std::int64_t v) { s.locktorture.shortdelay_us = v; })},
          [](const WorkloadSpec& s) { return std::make_unique<const Locktorture>(s); }};
}

}  // namespace semsim::workloads
