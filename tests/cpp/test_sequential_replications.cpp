// Sequential replications (driver/simulate.cpp): a point whose workload runs to
// completion has no window to size, so its adaptive length is its number of
// seeds. From the second seed on, the point stops as soon as its replications'
// interval is within `precision`; `repeats` is the ceiling. Checked here: the
// rule's oracle, that the document is the one assembled from the first k seeds
// really run (k the first count whose interval is precise), in one process, in
// forked ones (where later seeds are begun ahead and dropped) and in a batch, and
// that an imprecise point or precision 0 runs every seed.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/machine_config.hpp"
#include "config/scenario.hpp"
#include "driver/run_point.hpp"
#include "driver/simulate.hpp"
#include "report/run_length.hpp"

namespace semsim {
namespace {

Scenario lockunlock(int threads, int semaphores, int loops, int repeats, double precision) {
  Json doc = {{"name", "sequential"},
              {"machine", "box-64"},
              {"kernel", "per_sem_lock"},
              {"workload",
               {{"type", "sem-lockunlock"},
                {"semaphores", semaphores},
                {"loops", loops},
                {"busy_in", 0},
                {"busy_out", 0}}},
              {"threads", {threads}},
              {"seed", 1},
              {"repeats", repeats},
              {"precision", precision}};
  return parse_scenario(doc);
}

// Every seed of the scenario's one point, really run.
std::vector<Json> every_seed(const Scenario& s) {
  const auto machine = config::load_machine(s.machine);
  std::vector<Json> runs;
  for (const auto& spec : driver::runs_of(s))
    runs.push_back(driver::run_point(s, machine, s.kernel, spec.threads, spec.seed));
  return runs;
}

// The point's verdict on these seeds' rates, as assemble() reports it.
bool reached(const std::vector<double>& rates, double precision) {
  return report::replication_run_length(rates, precision, false)["reached"].get<bool>();
}

// The first count of seeds (>= 2) whose interval is within the precision, or
// all of them (the runs here are distinct: they draw).
std::size_t first_precise(const std::vector<Json>& runs, double precision) {
  std::vector<double> rates;
  for (const auto& r : runs) {
    rates.push_back(r["ops_per_s"].get<double>());
    if (reached(rates, precision)) return rates.size();
  }
  return runs.size();
}

void expect_document(const Scenario& s, const std::string& expected) {
  for (int jobs : {1, 2, 3}) {
    driver::SimulateOptions o;
    o.jobs = jobs;
    EXPECT_EQ(driver::simulate(s, o).dump(), expected) << "jobs " << jobs;
  }
  // In a batch beside a windowed scenario, whose runs fill the other process.
  const Scenario windowed = parse_scenario(Json::parse(R"({
      "name": "w", "machine": "laptop-4", "kernel": "per_sem_lock",
      "workload": {"type": "semop-multi", "semaphores": 4}, "threads": [3],
      "duration_ms": 0.4, "warmup_ms": 0.1, "seed": 1, "repeats": 2})"));
  driver::SimulateOptions o;
  o.jobs = 2;
  const auto batch = driver::simulate_batch({windowed, s, s}, o);
  ASSERT_EQ(batch.size(), 3u);
  for (std::size_t i = 1; i < 3; ++i) {
    ASSERT_TRUE(batch[i].ok) << batch[i].message;
    EXPECT_EQ(batch[i].value.dump(), expected) << "batch";
  }
  EXPECT_EQ(batch[0].value.dump(), driver::simulate(windowed).dump());
}

TEST(SequentialReplications, TheIntervalRuleIsStudentTOnTheSeeds) {
  // Two seeds: 12.706 (t, 1 dof) x |a - b| / 2 against precision x mean.
  EXPECT_TRUE(reached({100.0, 101.0}, 0.07));   // 6.35 <= 7.05
  EXPECT_FALSE(reached({100.0, 101.0}, 0.06));  // 6.35 > 6.03
  EXPECT_FALSE(reached({100.0}, 0.5));          // one seed: no interval
  EXPECT_FALSE(reached({100.0, 100.0}, 0.0));   // precision 0: none asked
}

TEST(SequentialReplications, APrecisePointStopsAtItsFirstPreciseSeed) {
  const Scenario s = lockunlock(8, 2, 2000, 4, 0.01);
  const std::vector<Json> runs = every_seed(s);
  const std::size_t k = first_precise(runs, 0.01);
  ASSERT_LT(k, runs.size()) << "the case must be precise before its last seed";
  std::vector<Json> first_k = runs;
  for (std::size_t i = k; i < first_k.size(); ++i) first_k[i] = Json();  // not needed
  const auto machine = config::load_machine(s.machine);
  const Json expected = driver::assemble(s, machine, first_k);
  const Json& point = expected["points"][0];
  EXPECT_EQ(point["seeds"].size(), k);
  EXPECT_EQ(point["run_length"]["runs_not_needed"], runs.size() - k);
  EXPECT_TRUE(point["run_length"]["reached"].get<bool>());
  EXPECT_EQ(point["repeats"], 4);
  // The simulated time of the seeds simulated, each the run's end date.
  double simulated = 0;
  for (std::size_t i = 0; i < k; ++i) {
    const double ms = runs[i]["run_length"]["simulated_ms"].get<double>();
    EXPECT_GE(ms, runs[i]["window_s"].get<double>() * 1e3 - 1e-9);
    simulated += ms;
  }
  EXPECT_GT(simulated, 0);
  EXPECT_EQ(point["run_length"]["simulated_ms"].get<double>(), simulated);
  EXPECT_EQ(point["run_length"]["simulated_ms_runs"].size(), k);
  expect_document(s, expected.dump());
}

TEST(SequentialReplications, AnImprecisePointRunsEverySeed) {
  const Scenario s = lockunlock(16, 4, 400, 3, 0.01);
  const std::vector<Json> runs = every_seed(s);
  ASSERT_EQ(first_precise(runs, 0.01), runs.size()) << "the case must stay imprecise";
  const auto machine = config::load_machine(s.machine);
  const Json expected = driver::assemble(s, machine, runs);
  EXPECT_EQ(expected["points"][0]["run_length"]["runs_not_needed"], 0);
  expect_document(s, expected.dump());
}

TEST(SequentialReplications, PrecisionZeroRunsEverySeed) {
  const Scenario s = lockunlock(8, 2, 2000, 4, 0);
  const auto machine = config::load_machine(s.machine);
  const Json expected = driver::assemble(s, machine, every_seed(s));
  EXPECT_EQ(expected["points"][0]["seeds"].size(), 4u);
  expect_document(s, expected.dump());
}

}  // namespace
}  // namespace semsim
