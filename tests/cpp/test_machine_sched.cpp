// Oracles 4 and 5 of issue 3 (CPU scheduling), and placement:
//  4. N non-blocking tasks on C < N CPUs give the throughput of C tasks
//     minus the context-switch overhead of the time-slice arithmetic;
//  5. ping-pong wakeups cost two wakeup latencies per round trip on two
//     CPUs, two context switches on one;
// plus pinned/unpinned placement, newidle pulls and the CPU-time breakdowns.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <vector>

#include "machine/scheduler.hpp"
#include "test_machine_harness.hpp"

namespace semsim {
namespace {

using machine::CpuCategory;
using machine::Func;
using machine::InFunc;
using machine::Scheduler;
using machine::Task;

// ------------------------------------------------------------ oracle 4

constexpr double kWorkNs = 1000;     // one loop iteration of pure user work
constexpr double kSliceNs = 100000;  // time slice (a multiple of the work item)
constexpr double kSwitchNs = 2000;   // context switch

config::MachineParams sched_machine(int cpus) {
  auto m = machine_test::uniform_machine(cpus, 100);
  m.time_slice = ns_to_ticks(kSliceNs);
  m.context_switch = ns_to_ticks(kSwitchNs);
  return m;
}

struct LoopRun {
  double iterations_per_s = 0;
  std::vector<machine::CpuBreakdown> cpus;
  std::vector<machine::CpuBreakdown> tasks;
  std::vector<std::uint64_t> per_task;
  std::vector<int> cpu_of_task;
};

// n never-blocking tasks on `cpus` CPUs; task i has home CPU home(i).
template <typename Home>
LoopRun run_loops(int cpus, int n, bool pinned, Home home) {
  const auto params = sched_machine(cpus);
  machine::Topology topo(params);
  Scheduler sched(topo);
  const Tick warmup = ns_to_ticks(1e6), end = warmup + ns_to_ticks(20e6);
  LoopRun out;
  out.per_task.assign(static_cast<std::size_t>(n), 0);
  machine_test::TaskSet set;
  for (int i = 0; i < n; ++i) {
    auto& task = set.add(
        home(i),
        [&, i](Task& t) {
          sched.start(t);
          for (;;) {
            {
              InFunc in(t, Func::User);
              t.charge(ns_to_ticks(kWorkNs));
            }
            if (t.cursor > warmup && t.cursor <= end) ++out.per_task[static_cast<std::size_t>(i)];
            sched.maybe_preempt(t);
            t.sync();  // let simulated time pass (a task that never syncs never yields to the
                       // others)
          }
        },
        pinned);
    (void)task;
  }
  std::vector<machine::FuncTimes> cpu_at_start, task_at_start;
  set.sim.spawn("window", [&](core::Actor& self) {
    self.sleep_until(warmup);
    for (int c = 0; c < cpus; ++c) cpu_at_start.push_back(sched.cpu(c).time);
    for (const auto& t : set.tasks) task_at_start.push_back(t.time);
    self.sleep_until(end);
    // Charges made ahead of the window's end (a cursor past it) are cut
    // off by measuring over the work counted, below; the breakdowns are of
    // what was charged during the window's simulated time.
    for (int c = 0; c < cpus; ++c) {
      machine::FuncTimes d{};
      for (std::size_t f = 0; f < d.size(); ++f)
        d[f] = sched.cpu(c).time[f] - cpu_at_start[static_cast<std::size_t>(c)][f];
      out.cpus.push_back(machine::breakdown_of(d, end - warmup));
    }
    for (std::size_t i = 0; i < set.tasks.size(); ++i) {
      machine::FuncTimes d{};
      for (std::size_t f = 0; f < d.size(); ++f) d[f] = set.tasks[i].time[f] - task_at_start[i][f];
      out.tasks.push_back(machine::breakdown_of(d, end - warmup));
      out.cpu_of_task.push_back(set.tasks[i].cpu);
    }
    set.sim.stop_all();
  });
  set.sim.run();
  std::uint64_t total = 0;
  for (auto c : out.per_task) total += c;
  out.iterations_per_s = static_cast<double>(total) / ticks_to_seconds(end - warmup);
  return out;
}

// The time-slice arithmetic: on every CPU, each slice of T of work is
// followed by one context switch (cs, half charged out, half in) and the
// atomic on the CPU's own runqueue lock taken by schedule(). The work item
// divides the slice, so a slice is exactly T.
double switch_overhead_fraction(const config::MachineParams& m) {
  const double t = ticks_to_ns(m.time_slice), cs = ticks_to_ns(m.context_switch),
               rq = ticks_to_ns(m.atomic_rmw);
  return (cs + rq) / (t + cs + rq);
}

TEST(MachineSchedOracle, OversubscriptionCostsExactlyTheSwitchesOfTheTimeSlices) {
  constexpr int kCpus = 4;
  const auto params = sched_machine(kCpus);
  const double overhead = switch_overhead_fraction(params);
  auto own_cpu = [](int i) { return i % kCpus; };
  const auto base = run_loops(kCpus, kCpus, true, own_cpu);
  EXPECT_NEAR(base.iterations_per_s, kCpus * 1e9 / kWorkNs, 1e-4 * base.iterations_per_s);
  for (int per_cpu : {2, 3, 8}) {
    for (bool pinned : {true, false}) {
      SCOPED_TRACE(std::to_string(per_cpu) + " tasks per CPU, " + (pinned ? "pinned" : "unpinned"));
      const auto run = run_loops(kCpus, per_cpu * kCpus, pinned, own_cpu);
      // Same total throughput as C tasks, less exactly the switch overhead
      // (to the granularity of counting whole work items: 1e-3).
      EXPECT_NEAR(run.iterations_per_s / base.iterations_per_s, 1 - overhead, 1e-3);
      for (const auto& cpu : run.cpus) {
        EXPECT_NEAR(cpu.share(CpuCategory::ContextSwitch), overhead, 2e-3);
        EXPECT_NEAR(cpu.share(CpuCategory::User), 1 - overhead, 2e-3);
        EXPECT_NEAR(cpu.idle_share(), 0.0, 2e-3);
      }
      // Fair: every task gets 1/per_cpu of a CPU, to within one slice.
      for (const auto& t : run.tasks)
        EXPECT_NEAR(t.share(CpuCategory::User), (1 - overhead) / per_cpu, 0.01);
    }
  }
}

TEST(MachineSched, PinnedStaysUnpinnedSpreadsOverIdleCpus) {
  // Eight tasks that all name CPU 0 as home, on four CPUs.
  auto cpu0 = [](int) { return 0; };
  const auto pinned = run_loops(4, 8, true, cpu0);
  const auto unpinned = run_loops(4, 8, false, cpu0);
  for (int c : pinned.cpu_of_task) EXPECT_EQ(c, 0);
  EXPECT_NEAR(pinned.cpus[1].idle_share(), 1.0, 1e-9);
  std::vector<int> per_cpu(4, 0);
  for (int c : unpinned.cpu_of_task) ++per_cpu[static_cast<std::size_t>(c)];
  EXPECT_EQ(per_cpu, (std::vector<int>{2, 2, 2, 2}));
  EXPECT_NEAR(unpinned.iterations_per_s / pinned.iterations_per_s, 4.0, 0.01);
}

TEST(MachineSched, AnIdleCpuPullsAnUnpinnedTaskFromALongQueue) {
  // Two CPUs, four loopers placed two per CPU (tasks 1 and 3 on CPU 1).
  // Tasks 1 and 3 stop after 0.5 ms: CPU 1 goes idle while CPU 0 still has
  // a task waiting. Unpinned, CPU 1 pulls it (newidle balance); pinned, it
  // stays idle.
  for (bool pinned : {false, true}) {
    SCOPED_TRACE(pinned ? "pinned" : "unpinned");
    const auto params = sched_machine(2);
    machine::Topology topo(params);
    Scheduler sched(topo);
    machine_test::TaskSet set;
    const Tick stop_early = ns_to_ticks(500000), end = ns_to_ticks(5e6);
    for (int i = 0; i < 4; ++i)
      set.add(
          i % 2,
          [&, i](Task& t) {
            sched.start(t);
            while (i % 2 == 0 || t.cursor < stop_early) {
              t.charge(ns_to_ticks(kWorkNs));
              sched.maybe_preempt(t);
              t.sync();
            }
            sched.exit(t);
          },
          pinned);
    set.stop_at(end);
    set.sim.run();
    std::uint64_t migrations = 0;
    for (const auto& t : set.tasks) migrations += t.migrations;
    const auto cpu1 = sched.cpu_breakdown(1, end);
    if (pinned) {
      EXPECT_EQ(migrations, 0U);
      EXPECT_NEAR(cpu1.idle_share(), 0.9, 0.01);
    } else {
      EXPECT_EQ(migrations, 1U);
      EXPECT_LT(cpu1.idle_share(), 0.01);
    }
  }
}

// ------------------------------------------------------------ oracle 5

struct PingPong {
  Tick round_trip = 0;
  machine::CpuBreakdown cpu0;
  std::uint64_t switches = 0;
  std::uint64_t wakes_same_cpu = 0, wakes_remote_busy = 0, wakes_remote_idle = 0;
};

// A wakes B and blocks; B, woken, wakes A and blocks; `rounds` times. Returns the
// dates of A's wake-ups of B; `out`, when given, gets the CPU 0 breakdown over them
// and the voluntary switches.
std::vector<Tick> ping_pong_dates(const config::MachineParams& params, int cpu_a, int cpu_b,
                                  int rounds, std::uint64_t seed, PingPong* out) {
  machine::Topology topo(params);
  Scheduler sched(topo, seed);
  machine_test::TaskSet set;
  std::vector<Tick> a_wakes;
  Task* a = nullptr;
  Task* b = nullptr;
  b = &set.add(cpu_b, [&](Task& t) {
    sched.start(t);
    sched.block(t);  // wait for the first ping
    for (int r = 0; r < rounds; ++r) {
      sched.wake(t, *a);
      if (r + 1 < rounds) sched.block(t);
    }
    sched.exit(t);
  });
  a = &set.add(cpu_a, [&](Task& t) {
    sched.start(t);
    t.idle_until(ns_to_ticks(20000));
    t.sync();  // B has blocked by now
    for (int r = 0; r < rounds; ++r) {
      a_wakes.push_back(t.cursor);
      sched.wake(t, *b);
      sched.block(t);
    }
    sched.exit(t);
  });
  set.sim.run();
  if (out != nullptr) {
    out->cpu0 = sched.cpu_breakdown(0, a_wakes.back() - a_wakes.front());
    out->switches = a->voluntary_switches + b->voluntary_switches;
    out->wakes_same_cpu = a->wakes_same_cpu + b->wakes_same_cpu;
    out->wakes_remote_busy = a->wakes_remote_busy + b->wakes_remote_busy;
    out->wakes_remote_idle = a->wakes_remote_idle + b->wakes_remote_idle;
  }
  return a_wakes;
}

// The round trip is measured between A's successive wake-ups of B in steady state.
PingPong ping_pong(int cpu_a, int cpu_b, int cpus) {
  PingPong out;
  const auto a_wakes = ping_pong_dates(sched_machine(cpus), cpu_a, cpu_b, 50, 1, &out);
  // Steady state: skip the first rounds (cold runqueue lines).
  out.round_trip = (a_wakes.back() - a_wakes[10]) / static_cast<Tick>(a_wakes.size() - 11);
  EXPECT_EQ((a_wakes.back() - a_wakes[10]) % static_cast<Tick>(a_wakes.size() - 11), 0)
      << "not periodic";
  return out;
}

TEST(MachineSchedOracle, PingPongOnTwoCpusCostsTwoWakeupLatencies) {
  const auto m = sched_machine(2);
  const auto r = ping_pong(0, 1, 2);
  // One wakeup, waker to wakee running: try_to_wake_up takes the remote
  // runqueue's lock (a transfer of its line from the wakee's CPU, and the
  // atomic), costs the waker wakeup_waker, then IPI + idle exit + switch in
  // (wakeup_latency). Nothing else is on the critical path: each side's own
  // schedule() happens while the other is being woken.
  const Tick wakeup = m.lat_same_die + m.atomic_rmw + m.wakeup_waker + m.wakeup_latency;
  EXPECT_EQ(r.round_trip, 2 * wakeup);
  EXPECT_EQ(r.switches, 100U);  // B's first wait, then 49 + 50
  // Every wake-up kicked the other, idle CPU: 50 pings, 50 pongs.
  EXPECT_EQ(r.wakes_remote_idle, 100U);
  EXPECT_EQ(r.wakes_same_cpu + r.wakes_remote_busy, 0U);
}

// wakeup_jitter: each wake-up that kicks an idle CPU draws the waker's cost and the
// wakee's latency from the tables (multiples of the mean). The round trips then vary,
// take only the values the tables allow, keep the mean, and repeat with the seed.
TEST(MachineSched, WakeupJitterDrawsFromTheTablesAndKeepsTheMean) {
  auto m = sched_machine(2);
  const Tick fixed = m.lat_same_die + m.atomic_rmw;  // the rq->lock line, never jittered
  m.wakeup_jitter_waker = {0.5, 1.5};
  m.wakeup_jitter_wakee = {0.8, 1.0, 1.2};
  constexpr int kRounds = 4000;
  const auto dates = ping_pong_dates(m, 0, 1, kRounds, 3, nullptr);
  std::set<Tick> round_trips;
  for (std::size_t i = 11; i < dates.size(); ++i) {
    // One round trip is two wake-ups, each waker x {0.5, 1.5} + wakee x {0.8, 1, 1.2}.
    round_trips.insert(dates[i] - dates[i - 1]);
  }
  std::set<Tick> allowed;
  std::vector<Tick> one;
  for (double fw : m.wakeup_jitter_waker)
    for (double fl : m.wakeup_jitter_wakee)
      one.push_back(fixed +
                    static_cast<Tick>(std::llround(static_cast<double>(m.wakeup_waker) * fw)) +
                    static_cast<Tick>(std::llround(static_cast<double>(m.wakeup_latency) * fl)));
  for (Tick x : one)
    for (Tick y : one) allowed.insert(x + y);
  for (Tick rt : round_trips) EXPECT_TRUE(allowed.count(rt)) << rt;
  EXPECT_GT(round_trips.size(), 10U);  // it varies (21 sums are possible)
  const double mean =
      static_cast<double>(dates.back() - dates[10]) / static_cast<double>(dates.size() - 11);
  const double expected = 2.0 * static_cast<double>(fixed + m.wakeup_waker + m.wakeup_latency);
  EXPECT_NEAR(mean / expected, 1.0, 0.02);
  EXPECT_EQ(ping_pong_dates(m, 0, 1, 200, 3, nullptr), ping_pong_dates(m, 0, 1, 200, 3, nullptr));
  EXPECT_NE(ping_pong_dates(m, 0, 1, 200, 3, nullptr), ping_pong_dates(m, 0, 1, 200, 4, nullptr));
}

TEST(MachineSchedOracle, PingPongOnOneCpuCostsTwoContextSwitches) {
  const auto m = sched_machine(1);
  const auto r = ping_pong(0, 0, 1);
  // One CPU: each half is the waker's try_to_wake_up (its own runqueue's
  // lock, already in its cache: one atomic, plus wakeup_waker less the idle
  // CPU kick `ipi`: there is no idle CPU to kick), then its schedule() (the
  // lock again, and the switch: context_switch in all). No wakeup latency:
  // the wakee runs as soon as the waker switches out.
  const Tick no_kick = m.ipi < m.wakeup_waker ? m.wakeup_waker - m.ipi : m.wakeup_waker;
  const Tick half = m.atomic_rmw + no_kick + m.atomic_rmw + m.context_switch;
  EXPECT_EQ(r.round_trip, 2 * half);
  EXPECT_EQ(r.wakes_same_cpu, 100U);  // one CPU: every wake-up stays on it
  EXPECT_EQ(r.wakes_remote_busy + r.wakes_remote_idle, 0U);
  // The CPU is never idle, and two context switches per round trip show in its breakdown.
  EXPECT_NEAR(r.cpu0.idle_share(), 0.0, 0.01);
  const double cs_share =
      static_cast<double>(2 * (m.context_switch + m.atomic_rmw)) / static_cast<double>(2 * half);
  EXPECT_NEAR(r.cpu0.share(CpuCategory::ContextSwitch), cs_share, 0.02);
}

// A CPU-bound loop of work items, preemptible between items, until done().
template <class Done>
void work_until(Scheduler& sched, Task& t, Done done) {
  while (!done()) {
    t.charge(ns_to_ticks(kWorkNs));
    sched.maybe_preempt(t);
    t.sync();
  }
}

// Wakeup preemption: a sleeper pinned to CPU 0, where a CPU-bound loop runs, is
// woken from CPU 1 at 20 us. Without it the wakee waits for the loop's slice to end;
// with it the loop yields at its next preemption point (one work item later). Either
// way the loop's one involuntary switch is the one that lets the wakee run.
// `loop_was_woken`: the loop slept first and CPU 1 woke it at 10 us, so that its run
// began with a wake-up (wakeup_protection applies to it).
Tick wakee_delay(bool preemption, Tick protection = 0, bool loop_was_woken = false) {
  auto params = sched_machine(2);
  params.wakeup_preemption = preemption;
  params.wakeup_protection = protection;
  machine::Topology topo(params);
  Scheduler sched(topo);
  machine_test::TaskSet set;
  Task* sleeper = nullptr;
  Task* loop = nullptr;
  Tick woken_at = 0, ran_at = 0;
  sleeper = &set.add(0, [&](Task& t) {
    sched.start(t);
    sched.block(t);  // the loop below is queued behind us, then runs
    ran_at = t.cursor;
    sched.exit(t);
  });
  loop = &set.add(0, [&](Task& t) {
    sched.start(t);
    if (loop_was_woken) sched.block(t);
    work_until(sched, t, [&] { return ran_at != 0; });
    sched.exit(t);
  });
  set.add(1, [&](Task& t) {
    sched.start(t);
    t.idle_until(ns_to_ticks(10000));
    t.sync();
    if (loop_was_woken) sched.wake(t, *loop);
    t.idle_until(ns_to_ticks(20000));  // mid-slice of the loop
    t.sync();
    sched.wake(t, *sleeper);
    woken_at = t.cursor;
    sched.exit(t);
  });
  set.sim.run();
  EXPECT_GT(ran_at, 0);
  EXPECT_EQ(set.tasks[1].involuntary_switches, 1U);  // at the slice's end, or preempted
  return ran_at - woken_at;
}

TEST(MachineSched, AWakeeWaitsForTheSliceWithoutWakeupPreemptionAndOneWorkItemWithIt) {
  const auto m = sched_machine(2);
  const Tick without = wakee_delay(false);
  const Tick with = wakee_delay(true);
  // Without: the loop started at 0 and keeps the CPU to the end of its slice.
  EXPECT_GE(without, m.time_slice - ns_to_ticks(20000) - ns_to_ticks(kWorkNs));
  // With: at most one work item, then the switch (out and in) and the runqueue lock.
  EXPECT_LE(with, ns_to_ticks(kWorkNs) + m.context_switch + 2 * m.atomic_rmw + m.lat_same_die);
}

// wakeup_protection (run to parity), with wakee_delay's loop: a loop that was woken
// keeps the CPU while protected (here to the end of its slice, the next point at which
// the model switches); a started one yields at once, as without protection.
TEST(MachineSched, AWokenTaskIsNotPreemptedWithinItsProtectionAStartedOneIs) {
  const auto m = sched_machine(2);
  const Tick one_item =
      ns_to_ticks(kWorkNs) + m.context_switch + 2 * m.atomic_rmw + 2 * m.lat_same_die;
  const Tick protection = ns_to_ticks(1e6);
  // Protected: the sleeper waits for the loop's slice (which began near 10 us).
  EXPECT_GE(wakee_delay(true, protection, true), m.time_slice - ns_to_ticks(30000));
  // The same loop without protection, and a loop that never slept: one work item.
  EXPECT_LE(wakee_delay(true, 0, true), one_item);
  EXPECT_LE(wakee_delay(true, protection, false), one_item);
}

// resched_ipi: waking a sleeper onto a busy remote CPU costs the waker the IPI
// exactly when the wake-up preempts that CPU's task, and only the first time
// while that CPU is already marked to reschedule.
std::vector<Tick> remote_wake_costs(Tick resched_ipi, bool preemption) {
  auto params = sched_machine(2);
  params.wakeup_preemption = preemption;
  params.resched_ipi = resched_ipi;
  machine::Topology topo(params);
  Scheduler sched(topo);
  machine_test::TaskSet set;
  std::vector<Task*> sleepers;
  std::vector<Tick> costs;
  int ran = 0;
  for (int i = 0; i < 2; ++i) {
    sleepers.push_back(&set.add(0, [&](Task& t) {
      sched.start(t);
      sched.block(t);
      ++ran;
      sched.exit(t);
    }));
  }
  set.add(0, [&](Task& t) {  // started, never woken: not protected
    sched.start(t);
    work_until(sched, t, [&] { return ran >= 2; });
    sched.exit(t);
  });
  set.add(1, [&](Task& t) {
    sched.start(t);
    t.idle_until(ns_to_ticks(20000));
    t.sync();
    for (Task* s : sleepers) {  // back to back: the second finds need_resched set
      const Tick before = t.cursor;
      sched.wake(t, *s);
      costs.push_back(t.cursor - before);
    }
    sched.exit(t);
  });
  set.sim.run();
  return costs;
}

TEST(MachineSched, PreemptingABusyRemoteCpuCostsTheWakerTheReschedIpiOnce) {
  const Tick ipi = ns_to_ticks(9000);
  const auto free_ipi = remote_wake_costs(0, true);
  const auto paid = remote_wake_costs(ipi, true);
  const auto no_preemption = remote_wake_costs(ipi, false);
  ASSERT_EQ(paid.size(), 2U);
  EXPECT_EQ(paid[0] - free_ipi[0], ipi);     // the first wake-up sends the IPI
  EXPECT_EQ(paid[1] - free_ipi[1], 0);       // the CPU is already marked: no second IPI
  EXPECT_EQ(no_preemption[0], free_ipi[0]);  // nothing to preempt, no IPI
}

// switch_refill_ns: a token ring of K tasks on one CPU switches each task in at
// reuse distance K - 1, so the table's value at K - 1 is added to every hand-off;
// between probed distances the value is interpolated on log2(distance).
Tick ring_handoff(int k, bool refill, bool processes = false) {
  auto params = sched_machine(2);
  if (refill) params.switch_refill = {{1, 0}, {3, ns_to_ticks(120)}, {7, ns_to_ticks(200)}};
  // Between processes (every task its own): a dearer table.
  params.switch_refill_process = {{1, ns_to_ticks(50)}, {3, ns_to_ticks(400)}};
  machine::Topology topo(params);
  Scheduler sched(topo);
  machine_test::TaskSet set;
  std::vector<Task*> ring;
  std::vector<Tick> starts;  // task 0's switch-ins
  for (int i = 0; i < k; ++i) {
    ring.push_back(&set.add(
        0,
        [&, i](Task& t) {
          if (processes) t.process = i;
          sched.start(t);
          sched.block(t);  // wait for the token
          for (;;) {
            if (i == 0) starts.push_back(t.cursor);
            sched.wake(t, *ring[static_cast<std::size_t>((i + 1) % k)]);
            sched.block(t);
          }
        },
        true));
  }
  set.add(
      1,
      [&](Task& t) {  // on the other CPU: hands the token in once all have blocked
        sched.start(t);
        t.idle_until(ns_to_ticks(100000));
        t.sync();
        sched.wake(t, *ring[0]);
        sched.exit(t);
      },
      true);
  set.stop_at(ns_to_ticks(2e6));
  set.sim.run();
  const std::size_t a = 10, b = starts.size() - 1;  // steady state
  return (starts[b] - starts[a]) / static_cast<Tick>((b - a) * static_cast<std::size_t>(k));
}

TEST(MachineSched, ASwitchToAnotherProcessPaysTheProcessRefillTable) {
  // Threads of one process: the thread table, whatever the process table says.
  EXPECT_EQ(ring_handoff(4, true) - ring_handoff(4, false), ns_to_ticks(120));
  // Every task its own process: the process table at the same distances.
  EXPECT_EQ(ring_handoff(2, false, true) - ring_handoff(2, false), ns_to_ticks(50));
  EXPECT_EQ(ring_handoff(4, false, true) - ring_handoff(4, false), ns_to_ticks(400));
}

TEST(MachineSched, ASwitchInPaysTheRefillOfItsReuseDistance) {
  EXPECT_EQ(ring_handoff(2, true) - ring_handoff(2, false), 0);  // distance 1: cached
  EXPECT_EQ(ring_handoff(4, true) - ring_handoff(4, false), ns_to_ticks(120));
  EXPECT_EQ(ring_handoff(8, true) - ring_handoff(8, false), ns_to_ticks(200));
  // Distance 5: 120 + (log2 5 - log2 3) / (log2 7 - log2 3) * 80 ns.
  const double f = (std::log2(5.0) - std::log2(3.0)) / (std::log2(7.0) - std::log2(3.0));
  EXPECT_NEAR(ticks_to_ns(ring_handoff(6, true) - ring_handoff(6, false)), 120 + f * 80, 0.01);
  // Beyond the table: its last value.
  EXPECT_EQ(ring_handoff(12, true) - ring_handoff(12, false), ns_to_ticks(200));
}

// A task on `cpu` that blocks at once; once woken it notes where it runs in `ran_on`
// and sets `stop`.
Task& add_sleeper(machine_test::TaskSet& set, Scheduler& sched, int cpu, bool pinned, int& ran_on,
                  bool& stop) {
  return set.add(
      cpu,
      [&sched, &ran_on, &stop](Task& t) {
        sched.start(t);
        sched.block(t);
        ran_on = t.cpu;
        stop = true;
        sched.exit(t);
      },
      pinned);
}

// idle_search_share: a sleeper whose previous CPU (0) is busy with a loop is woken
// while CPU 1 is idle. Share 1: the search finds CPU 1. Share 0: it queues on CPU 0.
int cpu_woken_on(double share) {
  auto params = sched_machine(2);
  params.idle_search_share = share;
  params.wakeup_preemption = true;
  machine::Topology topo(params);
  Scheduler sched(topo, 7);
  machine_test::TaskSet set;
  Task* sleeper = nullptr;
  int ran_on = -1;
  bool stop = false;
  sleeper = &add_sleeper(set, sched, 0, false, ran_on, stop);  // unpinned: free to move
  set.add(
      0,
      [&](Task& t) {  // pinned to CPU 0: starts after the sleeper blocked, loops there
        sched.start(t);
        while (!stop) {
          t.charge(ns_to_ticks(kWorkNs));
          if (t.cursor > ns_to_ticks(30000) && sleeper->state == machine::TaskState::Blocked) {
            sched.wake(t, *sleeper);  // from CPU 0 itself: its previous CPU is busy (us)
          }
          sched.maybe_preempt(t);
          t.sync();
        }
        sched.exit(t);
      },
      true);
  set.sim.run();
  return ran_on;
}

TEST(MachineSched, TheIdleSearchShareDecidesWhetherAWakeeLeavesItsBusyCpu) {
  EXPECT_EQ(cpu_woken_on(1.0), 1);
  EXPECT_EQ(cpu_woken_on(0.0), 0);
}

// Work items on the task's CPU, preemptible between them, until `stop`.
void loop_until(Scheduler& sched, Task& t, const bool& stop) {
  while (!stop) {
    t.charge(ns_to_ticks(kWorkNs));
    sched.maybe_preempt(t);
    t.sync();
  }
}

// A task pinned to `cpu` that loops until `stop`.
void add_loop(machine_test::TaskSet& set, Scheduler& sched, int cpu, const bool& stop) {
  set.add(cpu, [&sched, &stop](Task& t) {
    sched.start(t);
    loop_until(sched, t, stop);
    sched.exit(t);
  });
}

// A task pinned to `cpu` that wakes `sleeper` at 50 us, then loops there until `stop`.
Task& add_waker(machine_test::TaskSet& set, Scheduler& sched, int cpu, Task& sleeper,
                const bool& stop) {
  return set.add(cpu, [&sched, &sleeper, &stop](Task& t) {
    sched.start(t);
    t.idle_until(ns_to_ticks(50000));
    t.sync();
    sched.wake(t, sleeper);
    loop_until(sched, t, stop);
    sched.exit(t);
  });
}

// A sleeper that last ran on CPU 1, where a loop runs, is woken at 50 us by a task on
// CPU 0 that keeps CPU 0 busy afterwards: no CPU is idle at the wake-up.
struct BusyWake {
  int ran_on = -1;  // where the sleeper ran after the wake-up
  std::uint64_t same_cpu = 0, remote_busy = 0, remote_idle = 0;  // the waker's counts
};
BusyWake wake_with_both_cpus_busy(const config::MachineParams& params, bool sleeper_pinned) {
  machine::Topology topo(params);
  Scheduler sched(topo, 5);
  machine_test::TaskSet set;
  BusyWake out;
  bool stop = false;
  Task& sleeper = add_sleeper(set, sched, 1, sleeper_pinned, out.ran_on, stop);
  add_loop(set, sched, 1, stop);  // runs on CPU 1 once the sleeper blocked
  Task& waker = add_waker(set, sched, 0, sleeper, stop);
  set.sim.run();
  out.same_cpu = waker.wakes_same_cpu;
  out.remote_busy = waker.wakes_remote_busy;
  out.remote_idle = waker.wakes_remote_idle;
  return out;
}

// The sleeper queues behind the loop on CPU 1: a wake-up of a busy remote CPU (no kick).
TEST(MachineSched, AWakeupOfASleeperOnABusyRemoteCpuCountsAsRemoteBusy) {
  const auto r = wake_with_both_cpus_busy(sched_machine(2), true);
  EXPECT_EQ(r.ran_on, 1);
  EXPECT_EQ(r.remote_busy, 1U);
  EXPECT_EQ(r.same_cpu + r.remote_idle, 0U);
}

// busy_pull_share. Share 0: the sleeper queues on CPU 1 behind the loop. Share 1: it
// goes to the waker's CPU 0. A pinned sleeper never moves.
int cpu_pulled_to(double share, bool pinned) {
  auto params = sched_machine(2);
  params.busy_pull_share = share;
  return wake_with_both_cpus_busy(params, pinned).ran_on;
}

TEST(MachineSched, TheBusyPullShareDecidesWhetherAWakeeJoinsTheWakersCpu) {
  EXPECT_EQ(cpu_pulled_to(0.0, false), 1);
  EXPECT_EQ(cpu_pulled_to(1.0, false), 0);
  EXPECT_EQ(cpu_pulled_to(1.0, true), 1);
}

// select_idle_sibling() on SMT: three cores of two threads (CPUs 0-1, 2-3, 4-5). A
// sleeper that ran on CPU 0 is woken by a task on CPU 2 while a loop keeps CPU 0 busy,
// and a loop on each CPU of `busy_cpus` as well. Where does the sleeper run?
int smt_wakee_cpu(const std::vector<int>& busy_cpus) {
  machine::Topology topo(machine_test::smt_pairs_machine(6));
  Scheduler sched(topo, 5);
  machine_test::TaskSet set;
  int ran_on = -1;
  bool stop = false;
  Task& sleeper = add_sleeper(set, sched, 0, false, ran_on, stop);
  for (int c : busy_cpus) add_loop(set, sched, c, stop);
  add_waker(set, sched, 2, sleeper, stop);
  set.sim.run();
  return ran_on;
}

// A wholly idle core before the idle sibling of a busy one (select_idle_core()), even
// though the sibling is the nearest CPU; with every core busy, the nearest idle CPU.
TEST(MachineSched, AWakeeTakesAnIdleCoreBeforeAnIdleSmtSibling) {
  EXPECT_EQ(smt_wakee_cpu({0}), 4);        // idle: 1 (sibling), 3 (waker's sibling), 4, 5
  EXPECT_EQ(smt_wakee_cpu({0, 5}), 1);     // no idle core: its own core's sibling
  EXPECT_EQ(smt_wakee_cpu({0, 1, 4}), 3);  // only 3 and 5 idle, both beside busy CPUs
}

TEST(MachineSched, WakingATaskThatHasNotBlockedYetIsNotLost) {
  const auto params = sched_machine(2);
  machine::Topology topo(params);
  Scheduler sched(topo);
  machine_test::TaskSet set;
  Task* sleeper = nullptr;
  bool returned = false;
  sleeper = &set.add(0, [&](Task& t) {
    sched.start(t);
    t.idle_until(ns_to_ticks(10000));
    t.sync();  // the waker has already called wake() on us
    sched.block(t);
    returned = true;
    sched.exit(t);
  });
  set.add(1, [&](Task& t) {
    sched.start(t);
    sched.wake(t, *sleeper);  // we are still running: try_to_wake_up finds TASK_RUNNING
    sched.exit(t);
  });
  set.sim.run();
  EXPECT_TRUE(returned);
  EXPECT_EQ(sleeper->voluntary_switches, 0U);
}

// __schedule() dequeues the sleeper right after it takes rq->lock; the rest of the
// switch-out runs after that. A wake-up in that rest is a real one: it kicks the
// (about to be) idle CPU and the sleeper runs again a wake-up latency later, not
// at the end of its own switch-out as if it had never slept.
TEST(MachineSched, AWakeupWhileTheSleepersCpuStillSwitchesOutIsARealWakeup) {
  const auto params = sched_machine(2);
  machine::Topology topo(params);
  Scheduler sched(topo);
  machine_test::TaskSet set;
  Task* sleeper = nullptr;
  const Tick block_at = ns_to_ticks(10000);
  const Tick wake_at = block_at + params.context_switch / 4;  // within the switch-out
  Tick resumed = 0;
  sleeper = &set.add(0, [&](Task& t) {
    sched.start(t);
    t.idle_until(block_at);
    sched.block(t);
    resumed = t.cursor;
    sched.exit(t);
  });
  Task& waker = set.add(1, [&](Task& t) {
    sched.start(t);
    t.idle_until(wake_at);
    sched.wake(t, *sleeper);
    sched.exit(t);
  });
  set.sim.run();
  EXPECT_EQ(sleeper->voluntary_switches, 1U);
  EXPECT_EQ(waker.wakes_remote_idle, 1U);
  EXPECT_GE(resumed, wake_at + params.wakeup_waker + params.wakeup_latency);
  EXPECT_GE(resumed, sleeper->switched_out_at);
  // The whole switch-out is the sleeper's CPU time all the same.
  EXPECT_GE(sleeper->time[static_cast<std::size_t>(Func::Schedule)], params.context_switch / 2);
}

}  // namespace
}  // namespace semsim
