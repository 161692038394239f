// Seed-free runs (core/rng.hpp, driver/simulate.cpp): a run that made no random
// draw gives the same bytes under every seed, so the driver copies it to the
// point's other seeds instead of simulating them. Checked here: the claim itself
// on runs covering the workloads, generations and oversubscription (each run
// without a draw against the same run under another seed), and that simulate()
// gives the bytes of really running every seed, with and without copies, in
// one process and in forked ones.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/machine_config.hpp"
#include "config/scenario.hpp"
#include "core/rng.hpp"
#include "driver/run_point.hpp"
#include "driver/simulate.hpp"

namespace semsim {
namespace {

Scenario scenario_of(const std::string& machine, const Json& kernel, const Json& workload,
                     int threads, int repeats = 1) {
  Json doc = {
      {"name", "seed-free"},  {"machine", machine}, {"kernel", kernel}, {"workload", workload},
      {"threads", {threads}}, {"duration_ms", 0.4}, {"warmup_ms", 0.1}, {"seed", 1},
      {"repeats", repeats},   {"precision", 0}};
  return parse_scenario(doc);
}

struct Case {
  std::string machine;
  Json kernel, workload;
  int threads;
};

std::vector<Case> cases() {
  const Json multi = {{"type", "semop-multi"}, {"semaphores", 8}, {"pattern", "stride"}};
  return {
      {"host-default", "hysteresis", multi, 1},
      {"host-default", "hysteresis", multi, 4},  // tasks outnumber CPUs
      {"host-default", "global_lock", multi, 2},
      {"laptop-4", "per_sem_lock_rc", {{"type", "semop-multi"}, {"semaphores", 16}}, 8},
      {"laptop-4", "complex_mode", {{"type", "aim9-shm"}}, 1},
      {"i3-ivybridge", "moved_otime", {{"type", "sem-scalebench"}, {"mode", 1}}, 2},
      {"laptop-4", "split_queues", {{"type", "sembench"}}, 4},
      {"laptop-4", "wait_array", {{"type", "lat-sem"}}, 2},
      {"box-64",
       "per_sem_lock",
       {{"type", "sem-lockunlock"},
        {"semaphores", 4},
        {"loops", 400},
        {"busy_in", 0},
        {"busy_out", 0}},
       16},
  };
}

Json one_run(const Scenario& s, std::uint64_t seed, bool& seed_free) {
  const auto machine = config::load_machine(s.machine);
  Rng::reset_draws();
  Json point = driver::run_point(s, machine, s.kernel, s.threads[0], seed);
  seed_free = Rng::draws() == 0;
  return point;
}

TEST(SeedFree, ARunWithoutADrawIsTheSameUnderEverySeed) {
  int free_runs = 0, drawing_runs = 0;
  for (const auto& c : cases()) {
    const Scenario s = scenario_of(c.machine, c.kernel, c.workload, c.threads);
    bool free1 = false, free2 = false;
    const Json a = one_run(s, 1, free1);
    const Json b = one_run(s, 7, free2);
    const std::string what = c.machine + " " + c.kernel.dump() + " " + c.workload.dump();
    EXPECT_EQ(free1, free2) << what;  // whether a run draws does not depend on its seed here
    if (free1) {
      ++free_runs;
      EXPECT_EQ(a.dump(), b.dump()) << what;
    } else {
      ++drawing_runs;
    }
  }
  // Both kinds are in the set, so neither half of the check is empty.
  EXPECT_GT(free_runs, 0);
  EXPECT_GT(drawing_runs, 0);
}

// simulate() against the document assembled from every seed really run.
void expect_as_if_every_seed_ran(const Scenario& s) {
  const auto machine = config::load_machine(s.machine);
  std::vector<Json> runs;
  for (const auto& spec : driver::runs_of(s))
    runs.push_back(driver::run_point(s, machine, s.kernel, spec.threads, spec.seed));
  const std::string expected = driver::assemble(s, machine, runs).dump();
  for (int jobs : {1, 2}) {
    driver::SimulateOptions o;
    o.jobs = jobs;
    EXPECT_EQ(driver::simulate(s, o).dump(), expected) << "jobs " << jobs;
    const auto batch = driver::simulate_batch({s, s}, o);
    ASSERT_EQ(batch.size(), 2u);
    for (const auto& out : batch) {
      ASSERT_TRUE(out.ok) << out.message;
      EXPECT_EQ(out.value.dump(), expected) << "batch, jobs " << jobs;
    }
  }
}

TEST(SeedFree, CopiedSeedsGiveTheBytesOfRunningThem) {
  const Json multi = {{"type", "semop-multi"}, {"semaphores", 8}, {"pattern", "stride"}};
  Scenario s = scenario_of("host-default", "hysteresis", multi, 4, 3);
  s.threads = {1, 4};
  bool free = false;
  one_run(s, 1, free);
  ASSERT_TRUE(free) << "the case must be seed-free for this test";
  expect_as_if_every_seed_ran(s);
}

TEST(SeedFree, SeedsThatDrawAreAllRun) {
  const Json lockunlock = {{"type", "sem-lockunlock"},
                           {"semaphores", 4},
                           {"loops", 400},
                           {"busy_in", 0},
                           {"busy_out", 0}};
  const Scenario s = scenario_of("box-64", "per_sem_lock", lockunlock, 16, 3);
  bool free = true;
  one_run(s, 1, free);
  ASSERT_FALSE(free) << "the case must draw for this test";
  expect_as_if_every_seed_ran(s);
}

}  // namespace
}  // namespace semsim
