// lock-stress as a Workload (registry entry) and its simulated tasks.
#include "workloads/lock_stress.hpp"

#include <deque>
#include <memory>
#include <string>

#include "core/rng.hpp"
#include "machine/placement.hpp"
#include "machine/user_lock.hpp"
#include "workloads/registry.hpp"

namespace semsim::workloads {

namespace {

class LockStress final : public Workload {
 public:
  using Workload::Workload;
  bool takes_user_lock() const override { return true; }
  std::vector<int> array_sizes(int /*threads*/) const override { return {}; }
  // Every counted task is pinned; compact / spread re-place it by topology.
  int task_cpu(int task, int /*threads*/, int cpus) const override {
    if (spec_.pin == Pinning::Unpinned || cpus < 1) return -1;
    return task % cpus;
  }
  std::vector<PointLabel> point_labels(int /*threads*/) const override {
    const auto& p = spec_.lockstress;
    return {{"lock", p.lock},
            {"critical_cycles", p.critical_cycles},
            {"delay_cycles", p.delay_cycles},
            {"data_lines", p.data_lines}};
  }
  std::unique_ptr<Program> program(int /*task*/, int /*threads*/, std::uint64_t /*seed*/,
                                   ReadyFlags* /*ready*/) const override {
    // lock-stress has its own executors (lock_stress_task_body here,
    // native/lock_stress_native.* on the host): a semaphore program would be wrong.
    return std::make_unique<NoProgram>();
  }
};

struct State {
  State(const LockStressParams& p, const machine::Topology& t, std::uint64_t seed)
      : lock(machine::user_lock_kind(p.lock, "workload.lock"), t.cpus(),
             machine::lock_stress_contention(), seed),
        critical(machine::cycles_to_ticks(t, static_cast<double>(p.critical_cycles))),
        delay(machine::cycles_to_ticks(t, static_cast<double>(p.delay_cycles))) {
    for (int i = 0; i < p.data_lines; ++i)
      data.emplace_back("lock_stress_data" + std::to_string(i))
          .set_contention(machine::lock_stress_contention());
  }
  machine::UserLock lock;
  std::deque<machine::CacheLine> data;
  Tick critical, delay;
  std::vector<int> order;  // compact / spread placement
};

}  // namespace

TaskBody lock_stress_task_body(SimContext& ctx, int index) {
  const auto& spec = ctx.workload.spec();
  if (!ctx.workload_state)
    ctx.workload_state = std::make_shared<State>(spec.lockstress, ctx.topo, ctx.seed);
  auto state = std::static_pointer_cast<State>(ctx.workload_state);
  if (state->order.empty()) state->order = lock_task_order(ctx.topo, spec.pin);
  return [&ctx, state, index](machine::Task& t) {
    auto& s = *state;
    start_lock_task(ctx, t, s.order, index);
    for (;;) {
      s.lock.lock(ctx.topo, t);
      {
        machine::InFunc in(t, machine::Func::User);
        t.charge(s.critical);
        for (auto& line : s.data) machine::store(ctx.topo, t, line);  // through the store buffer
      }
      s.lock.unlock(ctx.topo, t);
      ++t.semops;
      machine::InFunc in(t, machine::Func::User);
      t.charge(s.delay);
    }
  };
}

std::vector<int> lock_task_order(const machine::Topology& topo, Pinning pin,
                                 std::optional<machine::Placement> unpinned) {
  switch (pin) {
    case Pinning::Compact:
      return machine::placement_order(topo, machine::Placement::Compact);
    case Pinning::Spread:
      return machine::placement_order(topo, machine::Placement::Spread);
    case Pinning::CoresFirst:
      return machine::placement_order(topo, machine::Placement::CoresFirst);
    case Pinning::Unpinned:
      return unpinned ? machine::placement_order(topo, *unpinned) : std::vector<int>{};
    default:
      return {};
  }
}

void start_lock_task(SimContext& ctx, machine::Task& t, const std::vector<int>& order, int index) {
  if (!order.empty()) t.cpu = t.home_cpu = order[static_cast<std::size_t>(index) % order.size()];
  ctx.sched.start(t);
  // The threads reach the lock first in a random order, not in thread order.
  t.advance_to(t.cursor + lock_stress_first_arrival(ctx.seed, index));
}

// When thread `index` first reaches the lock, after the start: a draw in
// [0, 1 us), so the threads' first requests reach the lock in a random order.
// Why: in the benchmark the threads leave a barrier together (libslock
// bmarks/stress_one.c: barrier_cross, then the loop), so the order of their
// first requests is set by wake-up and interconnect timing, not by thread
// number; and with no delay between a release and the next acquire the order
// of the queue then repeats itself (a ticket or MCS releaser queues again at
// the tail at once; a TAS spinner re-issues its xchg as soon as its last one
// is served), so the first order is the order of the whole run. In thread
// order (cores-first placement) that cycle hands over to the next core of the
// same socket 9 times out of 10 on westmere-ex-80 (the model's own statistics:
// validation/lock-curves.md), which no real run keeps for 5 s: interrupts and
// timing noise reorder it. Assumption: a random cycle is the state the real
// queue mixes to. The spread (1 us) only has to exceed the first requests'
// issue spacing; it ends long before the measurement window starts.
Tick lock_stress_first_arrival(std::uint64_t seed, int index) {
  Rng rng(seed ^ (0x9e3779b97f4a7c15ULL * (static_cast<std::uint64_t>(index) + 1)));
  return static_cast<Tick>(rng.below(static_cast<std::uint64_t>(kTicksPerUs)));
}

WorkloadType lock_stress_type() {
  ParamField lock;
  lock.key = "lock";
  lock.kind = ParamField::Kind::Choice;
  lock.choices = {"ticket", "mcs", "tas", "ttas"};
  lock.set_text = [](WorkloadSpec& s, const std::string& v) { s.lockstress.lock = v; };
  return {
      "lock-stress",
      "one user-space lock (ticket, mcs, tas, ttas) hammered by N threads: critical_cycles of "
      "work and data_lines stores under it, delay_cycles after; ops/s = acquisitions/s "
      "(LPD libslock stress tests; pin compact, spread or cores-first places threads in topology "
      "order)",
      Pinning::Pinned,
      {lock,
       int_field("critical_cycles", 0, 1'000'000'000LL,
                 [](WorkloadSpec& s, std::int64_t v) { s.lockstress.critical_cycles = v; }),
       int_field("delay_cycles", 0, 1'000'000'000LL,
                 [](WorkloadSpec& s, std::int64_t v) { s.lockstress.delay_cycles = v; }),
       int_field(
           "data_lines", 0, 64,
           [](WorkloadSpec& s, std::int64_t v) { s.lockstress.data_lines = static_cast<int>(v); })},
      [](const WorkloadSpec& s) { return std::make_unique<const LockStress>(s); }};
}

}  // namespace semsim::workloads
