// Read-ahead (machine/task.hpp): a kernel load that hits a quiet line goes
// before its owed turn; a write the strict order would have served first is
// caught (ReadAheadConflict) and the run done again, so results are the
// strict order's. Tested at the line (a conflict is caught, a late write is
// not one, an observer's turn stops it) and end to end against the reference
// mode with every line quiet (read-ahead wherever it is allowed).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "config/machine_config.hpp"
#include "config/scenario.hpp"
#include "core/errors.hpp"
#include "core/simulation.hpp"
#include "driver/run_point.hpp"
#include "driver/simulate.hpp"
#include "ipc/kernel_policy.hpp"
#include "machine/cache_line.hpp"
#include "machine/ipi_queue.hpp"
#include "machine/store_buffer.hpp"
#include "machine/task.hpp"
#include "test_machine_files.hpp"
#include "test_reference_order.hpp"

namespace semsim {
namespace {

using core::Actor;
using core::Simulation;

// Every line quiet after one read (restored on scope exit: tests share a process).
struct EveryLineQuiet {
  EveryLineQuiet() { machine::set_quiet_reads(1); }
  ~EveryLineQuiet() { machine::set_quiet_reads(machine::kQuietReads); }
};

using test_reference::simulate_bytes;

// Task 0 owes 2 us of private work, then loads a line it shares (a hit);
// task 1 writes the line at `write_at`. Returns task 0's load completion.
struct TwoTasks {
  config::MachineParams params = config::load_machine("uniform-64");
  machine::Topology topo{params};
  machine::CacheLine line{"quiet"};
  Simulation sim;
  std::deque<machine::Task> tasks{2};
  Tick read_done = -1;

  TwoTasks(Tick write_at, bool observer_at_1us) {
    line.access(topo, 1, machine::Access::Write, 0);
    line.access(topo, 0, machine::Access::Read, 0);  // both CPUs share it, one read since
    sim.set_read_ahead(true);
    for (int i = 0; i < 2; ++i) {
      auto& t = tasks[static_cast<std::size_t>(i)];
      t.id = i;
      t.cpu = i;
      t.actor = &sim.spawn(fmt::format("t{}", i), [this, i, write_at](Actor&) {
        auto& me = tasks[static_cast<std::size_t>(i)];
        if (i == 0) {
          me.charge(1);  // its turn, so that task 1 has queued its own
          me.charge_private(2 * kTicksPerUs);
          machine::load(topo, me, line, machine::Turn::Owe);
          read_done = me.cursor;
        } else {
          // Its turn at 0.5 us is pending when task 0 loads: the load would queue.
          me.charge(std::min<Tick>(write_at, 500 * kTicksPerNs));
          if (write_at > me.cursor) me.charge(write_at - me.cursor);
          machine::store(topo, me, line);
        }
        me.sync();
      });
    }
    if (observer_at_1us)
      sim.spawn_observer("observer", [](Actor& self) { self.sleep_until(kTicksPerUs); });
  }
};

TEST(ReadAhead, AWriteDatedBeforeTheReadIsAConflict) {
  EveryLineQuiet quiet;
  const auto before = machine::read_aheads();
  TwoTasks run(500 * kTicksPerNs, false);
  EXPECT_THROW(run.sim.run(), ReadAheadConflict);
  EXPECT_EQ(machine::read_aheads(), before + 1);
}

TEST(ReadAhead, AWriteDatedAfterTheReadIsNone) {
  EveryLineQuiet quiet;
  const auto before = machine::read_aheads();
  TwoTasks run(3 * kTicksPerUs, false);
  run.sim.run();
  EXPECT_EQ(machine::read_aheads(), before + 1);
  EXPECT_EQ(run.read_done, 1 + 2 * kTicksPerUs + run.params.l1_hit);  // a hit
}

// The observer's pending turn (at 1 us) bounds read-ahead: the load at 2 us
// takes its turn, after task 1's write at 0.5 us, and misses.
TEST(ReadAhead, NoReadGoesAheadOfTheObserversTurn) {
  EveryLineQuiet quiet;
  const auto before = machine::read_aheads();
  TwoTasks run(500 * kTicksPerNs, true);
  run.sim.run();
  EXPECT_EQ(machine::read_aheads(), before);
  EXPECT_GT(run.read_done, 1 + 2 * kTicksPerUs + run.params.l1_hit);  // a transfer
}

// A line read fewer times than kQuietReads since its last write is not quiet.
TEST(ReadAhead, OnlyAQuietLineIsReadAhead) {
  const auto before = machine::read_aheads();
  TwoTasks run(3 * kTicksPerUs, false);
  run.sim.run();
  EXPECT_EQ(machine::read_aheads(), before);
}

// An IPI posted to the reader's CPU (at 0.5 us) before a quiet read (at 2 us):
// its handler (10 us) is paid after the reader's next shared step, not in the
// read's wait or the private work after it, whether the read takes its turn
// (reference) or goes ahead of it (machine/ipi_queue.hpp); before, the read
// ahead was a conflict and the strict run paid the handler in the read's wait.
TEST(ReadAhead, AnIpiPostedBeforeAQuietReadIsPaidAfterTheNextSharedStep) {
  EveryLineQuiet quiet;
  for (bool reference : {false, true}) {
    SCOPED_TRACE("reference " + std::to_string(reference));
    const auto params = config::load_machine("uniform-64");
    const machine::Topology topo{params};
    machine::CacheLine line{"quiet"}, other{"other"};
    machine::IpiQueue ipis;
    line.access(topo, 1, machine::Access::Write, 0);
    line.access(topo, 0, machine::Access::Read, 0);
    Simulation sim;
    sim.set_reference_order(reference);
    sim.set_read_ahead(!reference);
    std::deque<machine::Task> tasks(2);
    const Tick irq = 10 * kTicksPerUs;
    Tick before_store = -1, after_store = -1;
    const auto reads_before = machine::read_aheads();
    for (int i = 0; i < 2; ++i) {
      auto& t = tasks[static_cast<std::size_t>(i)];
      t.id = i;
      t.cpu = i;
      if (i == 0) t.ipis = &ipis;
      t.actor = &sim.spawn(fmt::format("t{}", i), [&, i](Actor&) {
        auto& me = tasks[static_cast<std::size_t>(i)];
        if (i == 0) {
          me.charge(1);
          me.charge_private(2 * kTicksPerUs);
          machine::load(topo, me, line, machine::Turn::Owe);
          me.charge_private(kTicksPerUs);
          before_store = me.cursor;
          machine::store(topo, me, other);
          me.charge(1);
          after_store = me.cursor;
        } else {
          me.charge(500 * kTicksPerNs);
          ipis.post(me.cursor, irq);
        }
        me.sync();
      });
    }
    sim.run();
    EXPECT_EQ(machine::read_aheads(), reads_before + (reference ? 0 : 1));
    EXPECT_EQ(before_store, 1 + 3 * kTicksPerUs + params.l1_hit) << "paid before its shared step";
    EXPECT_GE(after_store, before_store + irq) << "not paid after it";
    EXPECT_EQ(ipis.pending(), 0u);
  }
}

// The queue itself: a posted IPI is paid only once the running task took it.
TEST(IpiQueue, APostIsPaidOnlyOnceTaken) {
  machine::IpiQueue q;
  q.post(100, 50);
  EXPECT_EQ(q.during_work(0, 1000), 0);
  EXPECT_EQ(q.pending(), 1u);
  q.take();
  q.post(200, 70);  // posted after the take: not yet payable
  EXPECT_EQ(q.during_work(0, 1000), 50);
  EXPECT_EQ(q.pending(), 1u);
  EXPECT_EQ(q.payable(), 0u);
  q.take();
  EXPECT_EQ(q.past_wait(0, 210), 60);  // handler from 200 to 270, past the wait's end
  q.post(300, 5);
  q.drop();
  q.take();
  EXPECT_EQ(q.during_work(0, 1000), 0);
}

// --- End to end, against the reference mode ----------------------------------

// semop-multi, 16 semaphores in stride, on `machine` under `kernel`.
Json semop_multi(const std::string& machine, const char* kernel, std::vector<int> threads,
                 double duration_ms, int seed) {
  Json doc = Json::parse(R"({
    "name": "many", "workload": {"type": "semop-multi", "semaphores": 16, "pattern": "stride"},
    "warmup_ms": 0.02, "repeats": 1})");
  doc["machine"] = machine;
  doc["kernel"] = kernel;
  doc["threads"] = threads;
  doc["duration_ms"] = duration_ms;
  doc["seed"] = seed;
  return doc;
}

// The fast path (read-ahead on) gives the reference mode's bytes.
void expect_reference_bytes(const Json& doc, bool every_line) {
  EXPECT_EQ(simulate_bytes(doc, false), simulate_bytes(doc, true))
      << doc["kernel"] << " " << doc["machine"] << " every line quiet: " << every_line;
}

// Every shipped scenario on host-default (2 CPUs, no SMT) with up to twice the
// CPUs, under every generation: with every line quiet, the runs read ahead
// wherever they may, conflict (and are run again) often, and must still give the
// reference's bytes.
TEST(ReadAhead, MatchesReferenceModeOnEveryGenerationAndWorkload) {
  EveryLineQuiet quiet;
  const auto cases = test_reference::shipped_cases("host-default", 4);
  ASSERT_GE(cases.size(), 10 * ipc::generations().size());
  const auto reads_before = machine::read_aheads();
  const auto reruns_before = driver::read_ahead_reruns();
  for (const auto& c : cases)
    EXPECT_EQ(simulate_bytes(c.doc, false), simulate_bytes(c.doc, true)) << c.label;
  // The test tests something: reads went ahead, and some runs were done again.
  EXPECT_GT(machine::read_aheads(), reads_before + 1000);
  EXPECT_GT(driver::read_ahead_reruns(), reruns_before);
}

// The same on SMT cores (laptop-4: 2 cores x 2 threads, up to 8 tasks), where
// reads also go ahead inside runs a sibling may still re-date (read-ahead in a
// run, machine/task.hpp), and on 24 and 160 hardware threads (xeon-24,
// westmere-ex-160), with the default threshold and every line quiet.
TEST(ReadAhead, MatchesReferenceModeOnSmtCores) {
  EveryLineQuiet quiet;
  const auto in_run_before = machine::run_read_aheads();
  const auto reruns_before = driver::read_ahead_reruns();
  for (const auto& c : test_reference::shipped_cases("laptop-4", 8))
    EXPECT_EQ(simulate_bytes(c.doc, false), simulate_bytes(c.doc, true)) << c.label;
  EXPECT_GT(machine::run_read_aheads(), in_run_before + 1000);
  EXPECT_GT(driver::read_ahead_reruns(), reruns_before);
}

TEST(ReadAhead, MatchesReferenceModeOnManySmtCores) {
  for (bool every_line : {false, true}) {
    std::optional<EveryLineQuiet> quiet;
    if (every_line) quiet.emplace();
    const auto in_run_before = machine::run_read_aheads();
    for (const char* machine : {"xeon-24", "westmere-ex-160"})
      for (const char* kernel : {"global_lock", "per_sem_lock", "hysteresis"})
        expect_reference_bytes(semop_multi(machine, kernel, {24, 160}, 0.2, 5), every_line);
    EXPECT_GT(machine::run_read_aheads(), in_run_before + (every_line ? 100 : 1000))
        << "every line quiet: " << every_line << ", before: " << in_run_before;
  }
}

// SMT cores with OS noise (laptop-4 with a noise as a calibrated host has, dense
// enough to land in reads' waits) and with cross-LLC IPIs (xeon-24's two sockets,
// sleepers woken across them). A run's pieces meet an interruption at the dates the
// siblings' history known when they ran gives, and a read ahead of its turn leaves
// that history older than the strict order's turn would: on an SMT core with OS
// noise nothing reads ahead (machine/task.hpp, may_read_ahead()). The 1 ms scenario
// is one that differed from the reference mode while reads went ahead there (a
// fuzz found it: rwlock, sem-scalebench mode 1, 4 threads, seed 181; 0.3 ms runs
// did not show it).
TEST(ReadAhead, MatchesReferenceModeOnSmtCoresWithNoiseAndIpis) {
  Json noisy = config::testing::model("laptop-4");
  noisy["os_noise"] = {{"value", {{"per_s", 200000.0}, {"durations_ns", {300.0, 2000.0}}}},
                       {"source", "test"}};
  const config::testing::MachineFile file(noisy, "read-ahead-noise");
  for (bool every_line : {false, true}) {
    std::optional<EveryLineQuiet> quiet;
    if (every_line) quiet.emplace();
    const auto reads_before = machine::read_aheads();
    for (const char* kernel : {"global_lock", "per_sem_lock", "hysteresis"})
      expect_reference_bytes(semop_multi(file.path(), kernel, {4, 8}, 0.3, 7), every_line);
    Json fuzzed = test_reference::load_file(std::filesystem::path(SEMSIM_SOURCE_DIR) /
                                            "scenarios/host/sem-scalebench-m1.json");
    fuzzed["machine"] = file.path();
    fuzzed["kernel"] = "rwlock";
    fuzzed["threads"] = Json::array({4});
    fuzzed["duration_ms"] = 1.0;
    fuzzed["warmup_ms"] = 0.05;
    fuzzed["precision"] = 0;
    fuzzed["repeats"] = 1;
    fuzzed["seed"] = 181;
    expect_reference_bytes(fuzzed, every_line);
    EXPECT_EQ(machine::read_aheads(), reads_before) << "every line quiet: " << every_line;
    const auto in_run_before = machine::run_read_aheads();
    const Json ipis = Json::parse(R"({"name": "ipi", "machine": "xeon-24",
        "kernel": "hysteresis",
        "workload": {"type": "sem-lockunlock", "loops": 2000, "semaphores": 24,
                     "busy_in": 0, "busy_out": 0},
        "threads": 48, "duration_ms": 1, "warmup_ms": 0.1, "precision": 0, "seed": 1,
        "repeats": 1})");
    expect_reference_bytes(ipis, every_line);
    EXPECT_GT(machine::run_read_aheads(), in_run_before) << "every line quiet: " << every_line;
  }
  // Every shipped scenario on the noisy laptop-4 under every generation, every line quiet.
  EveryLineQuiet quiet;
  for (const auto& c : test_reference::shipped_cases(file.path(), 8))
    EXPECT_EQ(simulate_bytes(c.doc, false), simulate_bytes(c.doc, true)) << c.label;
}

// Many cores, with the default threshold and every line quiet: the hot array
// lines of 64 CPUs, OS noise and wake-up jitter (box-64), with and without the
// kernel's line spinning.
TEST(ReadAhead, MatchesReferenceModeOnManyCores) {
  Json spinning = config::testing::model("box-64");
  spinning["kernel_line_spinning"] = {{"value", true}, {"source", "test"}};
  const config::testing::MachineFile file(spinning, "read-ahead");
  for (bool every_line : {false, true}) {
    std::optional<EveryLineQuiet> quiet;
    if (every_line) quiet.emplace();
    const auto reads_before = machine::read_aheads();
    for (const std::string& machine : {std::string("box-64"), file.path()})
      for (const char* kernel : {"global_lock", "per_sem_lock_rc", "hysteresis"})
        expect_reference_bytes(semop_multi(machine, kernel, {64, 96}, 0.3, 3), every_line);
    if (every_line) {
      EXPECT_GT(machine::read_aheads(), reads_before + 1000);
    }
  }
}

// Sleepers woken across LLCs on box-64: the wakers' IPIs land on CPUs whose
// tasks may have read ahead, with the default threshold and every line quiet.
// With the default threshold nothing conflicts (an IPI posted before a read
// that went ahead is paid where the strict order pays it: machine/ipi_queue.hpp),
// so the run is never done again.
TEST(ReadAhead, MatchesReferenceModeWithCrossLlcIpis) {
  const Json doc = Json::parse(R"({"name": "ipi", "machine": "box-64",
      "kernel": {"base": "per_sem_lock", "otime": "per_sem", "sem_layout": "unaligned56"},
      "workload": {"type": "sem-lockunlock", "loops": 2000, "semaphores": 64,
                   "busy_in": 0, "busy_out": 0},
      "threads": 128, "duration_ms": 1, "warmup_ms": 0.1, "precision": 0, "seed": 1,
      "repeats": 1})");
  for (bool every_line : {false, true}) {
    std::optional<EveryLineQuiet> quiet;
    if (every_line) quiet.emplace();
    const auto reads_before = machine::read_aheads();
    const auto reruns_before = driver::read_ahead_reruns();
    EXPECT_EQ(simulate_bytes(doc, false), simulate_bytes(doc, true))
        << "every line quiet: " << every_line;
    EXPECT_GT(machine::read_aheads(), reads_before);
    if (!every_line) {
      EXPECT_EQ(driver::read_ahead_reruns(), reruns_before);
    }
  }
}

}  // namespace
}  // namespace semsim
