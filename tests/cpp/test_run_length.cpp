// Adaptive run length (report/run_length.hpp): the statistics against analytic
// cases, the controller's decisions, and end-to-end runs that stop early, run
// to the ceiling when the precision is out of reach, and repeat byte for byte.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "config/machine_config.hpp"
#include "config/scenario.hpp"
#include "core/errors.hpp"
#include "driver/simulate.hpp"
#include "report/run_length.hpp"

namespace semsim {
namespace {

using report::RunLength;

// Box-Muller on mt19937_64: the same numbers on every standard library.
struct Normal {
  std::mt19937_64 gen;
  explicit Normal(std::uint64_t seed) : gen(seed) {}
  double operator()() {
    const double u1 = (static_cast<double>(gen() >> 11) + 1.0) / 9007199254740993.0;
    const double u2 = static_cast<double>(gen() >> 11) / 9007199254740992.0;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
};

TEST(RunLength, StudentQuantilesMatchTheTables) {
  EXPECT_NEAR(report::student_t975(1), 12.7062, 1e-4);
  EXPECT_NEAR(report::student_t975(19), 2.0930, 1e-4);
  EXPECT_NEAR(report::student_t975(30), 2.0423, 1e-4);
  EXPECT_NEAR(report::student_t975(31), 2.0395, 2e-4);  // the expansion takes over
  EXPECT_NEAR(report::student_t975(40), 2.0211, 2e-4);
  EXPECT_NEAR(report::student_t975(120), 1.9799, 2e-4);
  for (int df = 1; df < 200; ++df)
    EXPECT_GT(report::student_t975(df), report::student_t975(df + 1)) << df;
}

// i.i.d. normal batch means: the 95 % interval covers the true mean in about
// 95 % of samples, and the independence test passes in about 90 % (alpha 0.1).
TEST(RunLength, IidNormalIntervalCoversTheMeanAbout95PercentOfSeeds) {
  constexpr int kSeeds = 1000;
  int covered = 0, independent = 0;
  for (int seed = 0; seed < kSeeds; ++seed) {
    Normal normal(static_cast<std::uint64_t>(seed));
    std::vector<double> means;
    for (int b = 0; b < 20; ++b) means.push_back(10.0 + normal());
    const auto ci = report::batch_ci(means);
    ASSERT_EQ(ci.batches, 20);
    if (std::abs(ci.mean - 10.0) <= ci.half_width) ++covered;
    if (ci.independent) ++independent;
  }
  // Binomial(1000, 0.95): sd 0.7 %; +-3 sd.
  EXPECT_GT(covered, 929);
  EXPECT_LT(covered, 971);
  EXPECT_GT(independent, 860);
  EXPECT_LT(independent, 940);
}

TEST(RunLength, CorrelatedBatchMeansFailTheIndependenceTest) {
  Normal normal(7);
  std::vector<double> ar;  // AR(1), phi 0.9: neighbours nearly equal
  double x = 0;
  for (int i = 0; i < 30; ++i) ar.push_back(x = 0.9 * x + normal());
  EXPECT_FALSE(report::batch_ci(ar).independent);
}

TEST(RunLength, MserTruncatesARampBeforeAPlateau) {
  Normal normal(3);
  std::vector<double> x;
  for (int i = 0; i < 200; ++i) x.push_back(100.0 * i / 200.0);
  for (int i = 0; i < 800; ++i) x.push_back(100.0 + normal());
  const auto m = report::mser5(x);
  EXPECT_TRUE(m.accepted);
  EXPECT_GE(m.truncation, 180u);
  EXPECT_LE(m.truncation, 220u);
  EXPECT_EQ(m.truncation % 5, 0u);
}

TEST(RunLength, MserKeepsAStationarySeriesAndRejectsAnEndlessRamp) {
  Normal normal(5);
  std::vector<double> flat;
  for (int i = 0; i < 1000; ++i) flat.push_back(50.0 + normal());
  const auto m = report::mser5(flat);
  EXPECT_TRUE(m.accepted);
  EXPECT_LT(m.truncation, 500u);
  std::vector<double> ramp;  // still rising at the end: no steady state yet
  for (int i = 0; i < 1000; ++i) ramp.push_back(i + 0.1 * normal());
  EXPECT_FALSE(report::mser5(ramp).accepted);
  EXPECT_FALSE(report::mser5({1, 2, 3, 4, 5, 6}).accepted);  // one batch
}

TEST(RunLength, ConstantSeriesHasZeroWidth) {
  const auto ci = report::batch_ci(std::vector<double>(25, 7.0));
  EXPECT_EQ(ci.half_width, 0.0);
  EXPECT_EQ(ci.mean, 7.0);
  EXPECT_TRUE(ci.independent);
}

TEST(RunLength, BatchesDoubleAndKeepTheirSums) {
  report::DoublingBatches b(20);
  for (int i = 0; i < 40; ++i) EXPECT_TRUE(b.add(i));
  ASSERT_EQ(b.sums().size(), 20u);
  EXPECT_EQ(b.per_batch(), 2);
  EXPECT_EQ(b.sums()[3], 6 + 7);
  EXPECT_FALSE(b.add(1));  // half a batch of 2
  EXPECT_TRUE(b.add(1));
  EXPECT_EQ(b.sums().size(), 21u);
}

TEST(RunLength, ChiSquareQuantilesMatchTheTables) {
  EXPECT_NEAR(report::chi2_95(1), 3.8415, 1e-4);
  EXPECT_NEAR(report::chi2_95(2), 5.9915, 1e-4);
  EXPECT_NEAR(report::chi2_95(31), 44.985, 0.05);  // Wilson-Hilferty takes over
  EXPECT_NEAR(report::chi2_95(100), 124.342, 0.1);
  for (int df = 1; df < 200; ++df) EXPECT_LT(report::chi2_95(df), report::chi2_95(df + 1)) << df;
}

report::RunEstimate estimate(double rate, double se, int batches) {
  report::RunEstimate e;
  e.rate = rate;
  e.std_error = se;
  e.batches = batches;
  e.valid = true;
  return e;
}

// The oracle: three runs of 20 batches, standard errors 1, 2, 2. Mean 100;
// se of the mean sqrt(1 + 4 + 4) / 3 = 1; Welch-Satterthwaite
// dof = 9^2 / ((1 + 16 + 16) / 19) = 46.6 -> 46; Cochran's Q around the
// weighted mean (100: weights 1, 1/4, 1/4) = 0 + 4/4 + 4/4 = 2, over 2 dof.
TEST(RunLength, PooledIntervalOfThreeRunsMatchesTheOracle) {
  const auto ci =
      report::pool_repeats({estimate(100, 1, 20), estimate(102, 2, 20), estimate(98, 2, 20)});
  ASSERT_TRUE(ci.valid);
  EXPECT_EQ(ci.runs, 3);
  EXPECT_DOUBLE_EQ(ci.mean, 100.0);
  EXPECT_DOUBLE_EQ(ci.std_error, 1.0);
  EXPECT_EQ(ci.dof, 46.0);
  EXPECT_NEAR(ci.half_width, report::student_t975(46), 1e-12);
  EXPECT_NEAR(ci.dispersion, 1.0, 1e-12);
  EXPECT_TRUE(ci.consistent);
}

TEST(RunLength, OnePooledRunIsItsOwnInterval) {
  const auto ci = report::pool_repeats({estimate(50, 0.5, 25)});
  EXPECT_DOUBLE_EQ(ci.mean, 50.0);
  EXPECT_DOUBLE_EQ(ci.half_width, 0.5 * report::student_t975(24));
  EXPECT_EQ(ci.dof, 24.0);
  EXPECT_TRUE(ci.consistent);
}

// Runs further apart than their intervals allow (Q = 200 on 2 dof): the
// interval widens by the Birge ratio sqrt(Q / 2) = 10.
TEST(RunLength, DisagreeingRunsWidenThePooledInterval) {
  const auto ci =
      report::pool_repeats({estimate(100, 1, 20), estimate(110, 1, 20), estimate(90, 1, 20)});
  EXPECT_FALSE(ci.consistent);
  EXPECT_NEAR(ci.dispersion, 100.0, 1e-9);
  EXPECT_NEAR(ci.half_width, 10.0 * report::student_t975(57) / std::sqrt(3.0), 1e-9);
  report::RunEstimate bad = estimate(100, 1, 20);
  bad.valid = false;  // e.g. fewer than two batches: no interval of its own
  EXPECT_FALSE(report::pool_repeats({estimate(100, 1, 20), bad}).valid);
}

// A run's "run_length" object as pooled_run_length() reads it: 20 batches,
// warm-up detected, its own target reached.
Json run_object(double rate, double se, double precision = 0.01) {
  return {{"applicable", true},
          {"precision", precision},
          {"run_precision", precision * std::sqrt(3.0)},
          {"reached", true},
          {"not_reached", nullptr},
          {"needs_duration_ms", nullptr},
          {"counter", "semops"},
          {"rate_per_s", rate},
          {"std_error_per_s", se},
          {"ci95_per_s", {rate - 2 * se, rate + 2 * se}},
          {"batches", 20},
          {"von_neumann", 0.0},
          {"batches_independent", true},
          {"warmup_detected", true},
          {"simulated_ms", 10.0},
          {"ceiling_ms", 100.0}};
}

// Runs of 100, 101 and 99 with standard errors of 0.1 disagree (Q / 2 = 100):
// their batches missed something, so the point's interval is theirs as
// replications, t(0.975, 2) * 1 / sqrt(3) = 2.484 (the Birge-widened pool would
// say 1.15). Within a precision of 3 %: reached; of 1 %: not, saying both.
TEST(RunLength, DisagreeingRunsStandOnTheirReplicationInterval) {
  const double half = report::student_t975(2) / std::sqrt(3.0);
  std::vector<Json> runs = {run_object(100, 0.1, 0.03), run_object(101, 0.1, 0.03),
                            run_object(99, 0.1, 0.03)};
  const Json wide = report::pooled_run_length(runs);
  EXPECT_EQ(wide["interval"], "replications");
  EXPECT_FALSE(wide["runs_consistent"].get<bool>());
  EXPECT_NEAR(wide["half_width_rel"].get<double>(), half / 100, 1e-12);
  EXPECT_EQ(wide["dof"], 2);
  EXPECT_TRUE(wide["reached"].get<bool>()) << wide.dump();
  EXPECT_TRUE(wide["not_reached"].is_null());
  for (auto& r : runs) r["precision"] = 0.01;
  const Json narrow = report::pooled_run_length(runs);
  EXPECT_FALSE(narrow["reached"].get<bool>());
  const std::string why = narrow["not_reached"].get<std::string>();
  EXPECT_NE(why.find("Cochran's Q / (R - 1) = 100.00"), std::string::npos) << why;
  EXPECT_NE(why.find("the interval of the 3 runs' rates +-2.48 % is wider than +-1.00 %"),
            std::string::npos)
      << why;
  // Runs that agree keep the pooled batch-means interval.
  const Json agree = report::pooled_run_length(
      {run_object(100, 1, 0.03), run_object(101, 1, 0.03), run_object(99, 1, 0.03)});
  EXPECT_EQ(agree["interval"], "batch_means");
  EXPECT_TRUE(agree["runs_consistent"].get<bool>());
  EXPECT_NEAR(agree["half_width_rel"].get<double>(),
              report::student_t975(57) * std::sqrt(3.0) / 3 / 100, 1e-12);
}

// Batch means correlated across the runs (the mean of their von Neumann
// statistics over its bound): the same fallback.
TEST(RunLength, CorrelatedRunsStandOnTheirReplicationInterval) {
  std::vector<Json> runs = {run_object(100, 1, 0.03), run_object(101, 1, 0.03),
                            run_object(99, 1, 0.03)};
  for (auto& r : runs) r["von_neumann"] = 0.6;
  const Json j = report::pooled_run_length(runs);
  EXPECT_FALSE(j["batches_independent"].get<bool>());
  EXPECT_EQ(j["interval"], "replications");
  EXPECT_TRUE(j["reached"].get<bool>()) << j.dump();
}

// i.i.d. normal batch means in three runs of 20 batches each: the pooled 95 %
// interval of the mean covers the true mean in about 95 % of samples.
TEST(RunLength, PooledIntervalOfIidRunsCoversAbout95Percent) {
  constexpr int kSeeds = 1000;
  int covered = 0, consistent = 0;
  for (int seed = 0; seed < kSeeds; ++seed) {
    Normal normal(static_cast<std::uint64_t>(seed) + 5000);
    std::vector<report::RunEstimate> runs;
    for (int r = 0; r < 3; ++r) {
      std::vector<double> means;
      for (int b = 0; b < 20; ++b) means.push_back(10.0 + normal());
      const auto ci = report::batch_ci(means);
      runs.push_back(estimate(ci.mean, ci.half_width / report::student_t975(19), 20));
    }
    const auto pooled = report::pool_repeats(runs);
    if (std::abs(pooled.mean - 10.0) <= pooled.half_width) ++covered;
    if (pooled.consistent) ++consistent;
  }
  EXPECT_GT(covered, 929);  // Binomial(1000, 0.95) +-3 sd
  EXPECT_LT(covered, 985);  // the Birge widening makes it a little conservative
  EXPECT_GT(consistent, 900);
}

// Drives the controller to its stop; per_obs(from, to) is the count of an observation.
struct Drive {
  Tick begin = -1, stop = -1;
  Json json;
};
template <class F>
Drive drive(RunLength& rl, F per_obs) {
  Drive d;
  std::int64_t count = 0;
  Tick last = 0;
  for (int guard = 0; guard < 10'000'000; ++guard) {
    const Tick now = rl.next_date();
    count += per_obs(last, now);
    last = now;
    const auto step = rl.observe(now, count);
    if (step == RunLength::Step::Begin) d.begin = now;
    if (step == RunLength::Step::Stop) {
      d.stop = now;
      break;
    }
  }
  d.json = rl.to_json("semops");
  return d;
}

TEST(RunLength, ConstantRateStopsAtTheFirstChanceWithZeroWidth) {
  const Tick w = 1 * kTicksPerMs, ceiling = 100 * kTicksPerMs;  // 100 observations by w
  RunLength rl(w, ceiling, 0.01);
  EXPECT_EQ(rl.interval(), 10 * kTicksPerUs);
  const auto d = drive(rl, [](Tick a, Tick b) { return (b - a) / kTicksPerNs; });  // 1e9/s
  EXPECT_EQ(d.begin, w);
  EXPECT_EQ(d.stop, w + 20 * rl.interval());  // 20 batches of one observation
  EXPECT_TRUE(d.json["reached"].get<bool>());
  EXPECT_EQ(d.json["half_width_rel"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(d.json["rate_per_s"].get<double>(), 1e9);
  EXPECT_DOUBLE_EQ(d.json["ci95_per_s"][0].get<double>(), 1e9);
}

// The model's slowest period bounds the batches from below: 20 of them at least.
TEST(RunLength, BatchesSpanTheSlowestPeriod) {
  const Tick w = 1 * kTicksPerMs, ceiling = 100 * kTicksPerMs;
  RunLength rl(w, ceiling, 0.01, kTicksPerMs);
  const auto d = drive(rl, [](Tick a, Tick b) { return (b - a) / kTicksPerNs; });
  EXPECT_EQ(d.stop, w + 20 * kTicksPerMs);
  EXPECT_DOUBLE_EQ(d.json["batch_ms"].get<double>(), 1.0);
  EXPECT_TRUE(d.json["reached"].get<bool>());
  EXPECT_TRUE(d.json["not_reached"].is_null());
  EXPECT_TRUE(d.json["needs_duration_ms"].is_null());
}

// A second round's batches are twice the slowest period: a first round that
// stopped at its 20 batches with room to spare would stop there again.
TEST(RunLength, ASecondRoundsBatchesAreTwiceAsLong) {
  const Tick w = 1 * kTicksPerMs, ceiling = 100 * kTicksPerMs;
  RunLength rl(w, ceiling, 0.01, kTicksPerMs, 3, 2);
  const auto d = drive(rl, [](Tick a, Tick b) { return (b - a) / kTicksPerNs; });
  EXPECT_EQ(d.stop, w + 40 * kTicksPerMs);
  EXPECT_DOUBLE_EQ(d.json["batch_ms"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(d.json["run_precision"].get<double>(), 0.01 * std::sqrt(3.0) / 2);
}

// The window held 15 of the 20 batches of the slowest period (1 ms): the run
// says so, and which duration_ms would hold them from where its window began.
TEST(RunLength, TooFewSlowBatchesSayWhichDurationHoldsThem) {
  const Tick w = 1 * kTicksPerMs, ceiling = w + 15 * kTicksPerMs;
  RunLength rl(w, ceiling, 0.01, kTicksPerMs);
  const auto d = drive(rl, [](Tick a, Tick b) { return (b - a) / kTicksPerNs; });
  ASSERT_FALSE(d.json["reached"].get<bool>());
  EXPECT_EQ(d.begin, w);
  // A batch is a whole number of observations, at least 1 ms: 14 fit in 15 ms.
  const double batch = d.json["batch_ms"].get<double>();
  EXPECT_GE(batch, 1.0);
  EXPECT_LT(batch, 1.01);
  EXPECT_EQ(d.json["batches"].get<int>(), 14);
  EXPECT_NEAR(d.json["needs_duration_ms"].get<double>(), 20 * batch, 1e-9);
  const auto why = d.json["not_reached"].get<std::string>();
  EXPECT_NE(why.find("14 batches of 1.00 ms"), std::string::npos) << why;
  EXPECT_NE(why.find("fewer than 20: duration_ms >= 20.10"), std::string::npos) << why;
}

TEST(RunLength, TooFewBatchesIsNotReached) {
  const Tick w = 100 * kTicksPerUs, ceiling = w + 15 * kTicksPerUs;  // 15 observations of 1 us
  RunLength rl(w, ceiling, 0.01);
  EXPECT_EQ(rl.interval(), kTicksPerUs);
  const auto d = drive(rl, [](Tick a, Tick b) { return (b - a) / kTicksPerNs; });
  EXPECT_EQ(d.begin, w);
  EXPECT_EQ(d.stop, ceiling);
  EXPECT_FALSE(d.json["reached"].get<bool>());
  EXPECT_EQ(d.json["batches"].get<int>(), 15);
  EXPECT_DOUBLE_EQ(d.json["needs_duration_ms"].get<double>(), 0.02);
}

TEST(RunLength, PrecisionOffRunsTheFullWindow) {
  const Tick w = 2 * kTicksPerMs, ceiling = 22 * kTicksPerMs;
  RunLength rl(w, ceiling, 0.0);
  const auto d = drive(rl, [](Tick a, Tick b) { return (b - a) / kTicksPerNs; });
  EXPECT_EQ(d.begin, w);
  EXPECT_EQ(d.stop, ceiling);
  EXPECT_FALSE(d.json["reached"].get<bool>());
  EXPECT_EQ(d.json["half_width_rel"].get<double>(), 0.0);  // still reported
  EXPECT_DOUBLE_EQ(d.json["simulated_ms"].get<double>(), 22.0);
  EXPECT_EQ(d.json["not_reached"].get<std::string>().rfind("precision is 0", 0), 0);
}

// A throughput that ramps up for 3 ms: the window cannot begin at warmup_ms
// (1 ms); it begins once MSER-5 puts the ramp in the first half of the data.
TEST(RunLength, TheWindowBeginsAfterADetectedRamp) {
  const Tick w = 1 * kTicksPerMs, ceiling = 200 * kTicksPerMs;
  RunLength rl(w, ceiling, 0.01);
  const Tick ramp = 3 * kTicksPerMs;
  std::mt19937_64 gen(11);
  const auto d = drive(rl, [&](Tick, Tick b) {
    const double level = b < ramp ? static_cast<double>(b) / static_cast<double>(ramp) : 1.0;
    return static_cast<std::int64_t>(1000.0 * level) + static_cast<std::int64_t>(gen() % 21) - 10;
  });
  EXPECT_GE(d.begin, ramp);
  EXPECT_LT(d.begin, ceiling / 4);
  EXPECT_TRUE(d.json["warmup_detected"].get<bool>());
  EXPECT_GE(d.json["mser_truncation_ms"].get<double>(), 2.5);
  EXPECT_TRUE(d.json["reached"].get<bool>());
  EXPECT_LT(d.stop, ceiling);
  const auto ci = d.json["ci95_per_s"];
  EXPECT_LE(ci[0].get<double>(), 1000.0 / 10e-6);
  EXPECT_GE(ci[1].get<double>(), 1000.0 / 10e-6);
}

// Counts of 10 per observation up to `jump`, then 1000, each +- noise (seeded).
Drive drive_jump(RunLength& rl, Tick jump, int noise, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  return drive(rl, [&](Tick, Tick b) {
    const std::int64_t level = b <= jump ? 10 : 1000;
    return level + static_cast<std::int64_t>(gen() % static_cast<std::uint64_t>(2 * noise + 1)) -
           noise;
  });
}

// A level that holds past warmup_ms and then jumps (a start-up convoy): MSER-5
// takes the first level for the steady state and the window begins on it; the
// jump leaves the batch means correlated, the window begins again after it,
// and the interval is the second level's.
TEST(RunLength, AWindowBeganOnATransientLevelBeginsAgainAfterTheJump) {
  const Tick w = 1 * kTicksPerMs, ceiling = 50 * kTicksPerMs, jump = 3 * kTicksPerMs;
  RunLength rl(w, ceiling, 0.01);
  const auto d = drive_jump(rl, jump, 10, 5);
  EXPECT_EQ(d.json["window_restarts"].get<int>(), 1);
  EXPECT_GT(d.begin, jump);
  EXPECT_TRUE(d.json["reached"].get<bool>());
  EXPECT_NEAR(d.json["rate_per_s"].get<double>(), 1000.0 / 10e-6, 0.01 * 1000.0 / 10e-6);
  // Without the restart rule's shift the same window would have stayed put: the
  // first level alone (no jump) is a steady state that stops at once.
  RunLength flat(w, ceiling, 0.01);
  std::mt19937_64 gen2(5);
  const auto f =
      drive(flat, [&](Tick, Tick) { return 1000 + static_cast<std::int64_t>(gen2() % 21) - 10; });
  EXPECT_EQ(f.json["window_restarts"].get<int>(), 0);
  EXPECT_EQ(f.begin, w);
}

// The same late in a long window: 11,900 observations before the jump, past the
// point where the window's series merges pairs to stay bounded (8,192 entries).
// (MSER-5 looks for the truncation in the first half of the series: the restart
// comes once the jump lies there.)
TEST(RunLength, AJumpLateInALongWindowStillBeginsItAgain) {
  const Tick w = 1 * kTicksPerMs, ceiling = 400 * kTicksPerMs, jump = 120 * kTicksPerMs;
  RunLength rl(w, ceiling, 1e-9);  // never precise enough to stop
  const auto d = drive_jump(rl, jump, 2, 9);
  EXPECT_GE(d.json["window_restarts"].get<int>(), 1);
  EXPECT_GT(d.begin, jump);
  EXPECT_NEAR(d.json["rate_per_s"].get<double>(), 1000.0 / 10e-6, 0.01 * 1000.0 / 10e-6);
}

// Stationary but autocorrelated counts (an AR(1) process, correlation 0.97 from
// one observation to the next): the early batch means fail the independence
// test until the batches double, but no level moved, so the window never begins
// again (a restart would cost simulated time for nothing).
TEST(RunLength, CorrelatedStationaryCountsDoNotRestartTheWindow) {
  int restarts = 0;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const Tick w = 1 * kTicksPerMs, ceiling = 400 * kTicksPerMs;
    RunLength rl(w, ceiling, 0.01);
    std::mt19937_64 gen(seed);
    std::normal_distribution<double> n(0.0, 30.0);
    double x = 0;
    const auto d = drive(rl, [&](Tick, Tick) {
      x = 0.97 * x + n(gen);
      return static_cast<std::int64_t>(std::llround(1000.0 + x));
    });
    restarts += d.json["window_restarts"].get<int>();
  }
  EXPECT_EQ(restarts, 0);
}

// A ramp of 150 ms and a warm-up of at least 100 ms, at 10 us observations: MSER-5
// first looks at 10,000 of them, past the point where the warm-up series merges
// pairs (8,192). The ramp is still detected, and the truncation is reported in
// simulated time, not in merged entries.
TEST(RunLength, ALongRampIsDetectedInTheMergedSeries) {
  const Tick w = 100 * kTicksPerMs, ceiling = 2000 * kTicksPerMs, ramp = 150 * kTicksPerMs;
  RunLength rl(w, ceiling, 0.01);
  ASSERT_EQ(rl.interval(), 10 * kTicksPerUs);
  std::mt19937_64 gen(3);
  const auto d = drive(rl, [&](Tick, Tick b) {
    const double level = b < ramp ? static_cast<double>(b) / static_cast<double>(ramp) : 1.0;
    return static_cast<std::int64_t>(1000.0 * level) + static_cast<std::int64_t>(gen() % 21) - 10;
  });
  EXPECT_TRUE(d.json["warmup_detected"].get<bool>());
  EXPECT_GE(d.begin, ramp);
  EXPECT_GE(d.json["mser_truncation_ms"].get<double>(), 100.0);
  EXPECT_LE(d.json["mser_truncation_ms"].get<double>(), ticks_to_seconds(d.begin) * 1e3);
  EXPECT_TRUE(d.json["reached"].get<bool>());
}

// The same noisy counter: a run of a point of three stops earlier than the
// point's only run, at its looser target (precision * sqrt(3)), and not before
// its 20 batches.
TEST(RunLength, ARunOfThreeStopsEarlierThanARunAlone) {
  const Tick w = 1 * kTicksPerMs, ceiling = 400 * kTicksPerMs;
  auto noisy = [](std::uint64_t seed) {
    return [gen = std::mt19937_64(seed)](Tick, Tick) mutable {
      return 1000 + static_cast<std::int64_t>(gen() % 401) - 200;  // +-20 % per observation
    };
  };
  RunLength alone(w, ceiling, 0.002), of3(w, ceiling, 0.002, 0, 3);
  const auto a = drive(alone, noisy(1));
  const auto b = drive(of3, noisy(1));
  EXPECT_TRUE(a.json["reached"].get<bool>());
  EXPECT_TRUE(b.json["reached"].get<bool>());
  EXPECT_LT(b.stop - b.begin, (a.stop - a.begin) / 2) << a.stop << " " << b.stop;
  EXPECT_NEAR(b.json["run_precision"].get<double>(), 0.002 * std::sqrt(3.0), 1e-15);
  EXPECT_LE(b.json["half_width_rel"].get<double>(), 0.002 * std::sqrt(3.0));
  EXPECT_GE(b.json["batches"].get<int>(), 20);
}

// --- end to end ---------------------------------------------------------

Json scenario() {
  return Json::parse(R"({
    "name": "rl", "machine": "i3-ivybridge", "kernel": "hysteresis",
    "workload": {"type": "semop-multi", "semaphores": 4, "pattern": "stride"},
    "threads": [4], "duration_ms": 100, "warmup_ms": 0.5, "seed": 3, "repeats": 1})");
}
Json run(const Json& doc) { return driver::simulate(parse_scenario(doc)); }

void expect_inside(const Json& p) {
  const auto& rl = p["run_length"];
  const double ops = p["ops_per_s"].get<double>();
  EXPECT_LE(rl["ci95_per_s"][0].get<double>(), ops);
  EXPECT_GE(rl["ci95_per_s"][1].get<double>(), ops);
  EXPECT_NEAR(rl["rate_per_s"].get<double>(), ops, 1e-9 * ops);
  EXPECT_NEAR(rl["runs"][0]["window_ms"].get<double>(), p["window_s"].get<double>() * 1e3, 1e-9);
}

// Today's kernel on 64 CPUs: the first op of every thread queues on the array
// lock (the use_global_lock phase after semget), a convoy of about 1 ms at a
// few M ops/s, then 219 M. With a 0.5 ms warm-up MSER-5 takes the convoy for
// the steady state; the window begins again after it, and the point agrees with
// a run whose warm-up (4 ms) is past it. (Before the restart rule: 206.6 M, the
// batch means correlated, the precision not reached.)
TEST(RunLength, AStartUpConvoyPastTheWarmUpRestartsTheWindow) {
  auto doc = Json::parse(R"({
    "name": "convoy", "machine": "box-64", "kernel": "hysteresis",
    "workload": {"type": "sem-scalebench", "mode": 1},
    "threads": 64, "duration_ms": 5, "warmup_ms": 0.5, "seed": 1})");
  const auto early = run(doc)["points"][0];
  doc["warmup_ms"] = 4;
  const auto late = run(doc)["points"][0];
  const auto& rl = early["run_length"]["runs"][0];
  EXPECT_EQ(rl["window_restarts"].get<int>(), 1);
  EXPECT_TRUE(rl["reached"].get<bool>());
  EXPECT_GT(rl["warmup_ms"].get<double>(), 0.5);
  EXPECT_EQ(late["run_length"]["runs"][0]["window_restarts"].get<int>(), 0);
  const double a = early["ops_per_s"].get<double>(), b = late["ops_per_s"].get<double>();
  EXPECT_NEAR(a, b, 0.005 * b);
}

TEST(RunLength, DefaultPrecisionStopsALongCeilingEarly) {
  const auto doc = scenario();
  const auto a = run(doc);
  const auto& p = a["points"][0];
  const auto& rl = p["run_length"];
  EXPECT_TRUE(rl["reached"].get<bool>()) << rl.dump();
  EXPECT_DOUBLE_EQ(rl["precision"].get<double>(), 0.01);
  EXPECT_LT(rl["simulated_ms"].get<double>(), 100.5 / 4) << rl.dump();
  EXPECT_LE(rl["half_width_rel"].get<double>(), 0.01);
  EXPECT_GE(rl["runs"][0]["batches"].get<int>(), 20);
  EXPECT_EQ(rl["pooled_runs"].get<int>(), 1);
  EXPECT_EQ(rl["runs"][0]["half_width_rel"], rl["half_width_rel"]);  // one run: its own interval
  EXPECT_DOUBLE_EQ(rl["ceiling_ms"].get<double>(), 100.5);
  expect_inside(p);
  EXPECT_EQ(run(doc).dump(), a.dump());  // same scenario and seed, same bytes
}

TEST(RunLength, UnreachablePrecisionRunsToTheCeiling) {
  auto doc = scenario();
  doc["duration_ms"] = 1;
  doc["precision"] = 1e-7;
  const auto a = run(doc);
  const auto& p = a["points"][0];
  const auto& rl = p["run_length"];
  EXPECT_FALSE(rl["reached"].get<bool>());
  EXPECT_DOUBLE_EQ(rl["simulated_ms"].get<double>(), 1.5);
  EXPECT_NEAR(p["window_s"].get<double>(), 1e-3, 1e-12);
  EXPECT_GT(rl["half_width_rel"].get<double>(), 1e-7);
  // The reason names the pooled test that failed, after every run's own ones passed.
  const auto why = rl["not_reached"].get<std::string>();
  EXPECT_TRUE(why.find("wider than") != std::string::npos ||
              why.find("correlated") != std::string::npos)
      << why;
  EXPECT_TRUE(rl["needs_duration_ms"].is_null());
  expect_inside(p);
  EXPECT_EQ(run(doc).dump(), a.dump());
}

TEST(RunLength, PrecisionZeroKeepsTheFixedWindow) {
  auto doc = scenario();
  doc["duration_ms"] = 1;
  doc["precision"] = 0;
  const Json p = run(doc)["points"][0];
  EXPECT_NEAR(p["window_s"].get<double>(), 1e-3, 1e-12);
  EXPECT_DOUBLE_EQ(p["run_length"]["runs"][0]["warmup_ms"].get<double>(), 0.5);
  EXPECT_FALSE(p["run_length"]["reached"].get<bool>());
  expect_inside(p);
}

// Tasks outnumbering CPUs: a batch spans a whole scheduler rotation, so a short
// ceiling cannot claim the precision from a window between two context switches.
TEST(RunLength, OversubscribedBatchesSpanASchedulerRotation) {
  auto doc = scenario();
  const auto machine = config::load_machine("i3-ivybridge");
  ASSERT_GT(machine.time_slice, 0);
  doc["threads"] = 2 * machine.cpus;
  doc["duration_ms"] = 1;
  const Json p = run(doc)["points"][0];
  const auto& rl = p["run_length"];
  EXPECT_GE(rl["runs"][0]["batch_ms"].get<double>(),
            2.0 * static_cast<double>(machine.time_slice) / kTicksPerMs);
  EXPECT_FALSE(rl["reached"].get<bool>());
  EXPECT_DOUBLE_EQ(rl["simulated_ms"].get<double>(), 1.5);
  // The point says why: too few batches of a rotation, and the duration that holds 20.
  const double batch = rl["runs"][0]["batch_ms"].get<double>();
  const double began = rl["runs"][0]["warmup_ms"].get<double>();
  EXPECT_NEAR(rl["needs_duration_ms"].get<double>(), began + 20 * batch - 0.5, 1e-9);
  EXPECT_NE(rl["not_reached"].get<std::string>().find("fewer than 20"), std::string::npos);
}

// Three seeds at precision 0.1 %: each run stops at 0.173 %, the point's
// pooled interval reaches 0.1 %, with less simulated time per run than the same
// point run once; the same bytes twice, and in one process or two.
TEST(RunLength, ThreeRepeatsPoolToThePointsPrecision) {
  auto doc = scenario();
  doc["workload"]["pattern"] = "random";  // seeded draws: three distinct runs
  doc["threads"] = 2;
  doc["duration_ms"] = 60;
  doc["precision"] = 0.001;  // one run alone needs more than its first 20 batches
  // 2 ms of warm-up: after 0.5 ms seed 3's run still carries its start-up
  // transient (0.5 % below its sisters), which Cochran's Q rightly flags.
  doc["warmup_ms"] = 2;
  const Json one = run(doc)["points"][0];
  doc["repeats"] = 3;
  const Json a = run(doc);
  const Json& p = a["points"][0];
  const auto& rl = p["run_length"];
  ASSERT_EQ(rl["pooled_runs"].get<int>(), 3) << rl.dump();
  EXPECT_TRUE(rl["reached"].get<bool>()) << rl.dump();
  EXPECT_LE(rl["half_width_rel"].get<double>(), 0.001);
  EXPECT_GE(rl["dof"].get<double>(), 19.0);
  double mean = 0, total = 0, se2 = 0;
  for (const auto& r : rl["runs"]) {
    EXPECT_LT(r["simulated_ms"].get<double>(), one["run_length"]["simulated_ms"].get<double>());
    EXPECT_LE(r["half_width_rel"].get<double>(), 0.001 * std::sqrt(3.0) * (1 + 1e-12));
    mean += r["rate_per_s"].get<double>() / 3;
    total += r["simulated_ms"].get<double>();
    se2 += std::pow(r["std_error_per_s"].get<double>(), 2);
  }
  EXPECT_DOUBLE_EQ(p["ops_per_s"].get<double>(), mean);  // the mean of the runs
  EXPECT_DOUBLE_EQ(rl["rate_per_s"].get<double>(), mean);
  EXPECT_DOUBLE_EQ(rl["simulated_ms"].get<double>(), total);
  EXPECT_NEAR(rl["std_error_per_s"].get<double>(), std::sqrt(se2) / 3, 1e-9 * mean);
  EXPECT_EQ(rl["simulated_ms_runs"].size(), 3u);
  EXPECT_EQ(run(doc).dump(), a.dump());
  driver::SimulateOptions two;
  two.jobs = 2;
  EXPECT_EQ(driver::simulate(parse_scenario(doc), two).dump(), a.dump());
}

// Seeds that each reach their interval but disagree (Cochran's Q / 2 = 3.69
// here, first round): the point's seeds run once more to half the interval, and
// the second round's runs stand, with the first round's time counted; the same
// bytes in one process or two, and through the batch entry point.
TEST(RunLength, SeedsThatDisagreeRunASecondRound) {
  auto doc = scenario();
  doc["workload"]["pattern"] = "random";
  doc["seed"] = 1;
  doc["duration_ms"] = 60;
  doc["precision"] = 0.002;
  doc["repeats"] = 3;
  const Json a = run(doc);
  const auto& rl = a["points"][0]["run_length"];
  ASSERT_EQ(rl.value("rounds", 1), 2) << rl.dump();
  EXPECT_GT(rl["first_round_dispersion"].get<double>(), report::chi2_95(2) / 2) << rl.dump();
  EXPECT_TRUE(rl["runs_consistent"].get<bool>()) << rl.dump();
  EXPECT_TRUE(rl["reached"].get<bool>()) << rl.dump();
  double first = 0, total = 0;
  for (const auto& r : rl["runs"]) {
    EXPECT_EQ(r["round"].get<int>(), 2);
    // Each second-round run stopped at half the first round's interval.
    EXPECT_DOUBLE_EQ(r["run_precision"].get<double>(), 0.002 * std::sqrt(3.0) / 2);
    first += r["rerun_after_ms"].get<double>();
    total += r["simulated_ms"].get<double>() + r["rerun_after_ms"].get<double>();
  }
  EXPECT_GT(first, 0);
  EXPECT_DOUBLE_EQ(rl["simulated_ms"].get<double>(), total);
  driver::SimulateOptions two;
  two.jobs = 2;
  EXPECT_EQ(driver::simulate(parse_scenario(doc), two).dump(), a.dump());
  // The batch entry point (forked runs) decides the same.
  const auto batch = driver::simulate_batch({parse_scenario(doc)}, two);
  ASSERT_TRUE(batch[0].ok) << batch[0].message;
  EXPECT_EQ(batch[0].value.dump(), a.dump());
}

// Precision 0 (fixed windows): the point's interval is still pooled over its
// seeds, and never declared reached.
TEST(RunLength, FixedWindowsStillPoolTheirIntervals) {
  auto doc = scenario();
  doc["workload"]["pattern"] = "random";
  doc["threads"] = 2;
  doc["duration_ms"] = 2;
  doc["precision"] = 0;
  doc["repeats"] = 3;
  const Json p = run(doc)["points"][0];
  const auto& rl = p["run_length"];
  ASSERT_EQ(rl["pooled_runs"].get<int>(), 3) << rl.dump();
  ASSERT_FALSE(rl["ci95_per_s"].is_null()) << rl.dump();
  EXPECT_FALSE(rl["reached"].get<bool>());
  EXPECT_DOUBLE_EQ(rl["simulated_ms"].get<double>(), 3 * 2.5);
  expect_inside(p);
}

// A point whose seeds change nothing (no random draw): its copies are not
// independent runs, so it pools as one, run again alone at the full precision.
TEST(RunLength, ASeedFreePointIsRunAgainAlone) {
  auto doc = scenario();
  doc["repeats"] = 3;
  const Json a = run(doc);
  const Json& p = a["points"][0];
  const auto& rl = p["run_length"];
  ASSERT_EQ(rl["pooled_runs"].get<int>(), 1) << rl.dump();
  EXPECT_DOUBLE_EQ(rl["runs"][0]["run_precision"].get<double>(), 0.01);
  EXPECT_TRUE(rl["runs"][0].contains("rerun_after_ms"));
  EXPECT_TRUE(rl["reached"].get<bool>());
  EXPECT_LE(rl["half_width_rel"].get<double>(), 0.01);
  // The point as if it had one seed, with the first, discarded run's time added.
  auto single = scenario();
  const Json q = run(single)["points"][0];
  EXPECT_EQ(p["ops_per_s"], q["ops_per_s"]);
  EXPECT_EQ(rl["ci95_per_s"], q["run_length"]["ci95_per_s"]);
  EXPECT_GT(rl["simulated_ms"].get<double>(), q["run_length"]["simulated_ms"].get<double>());
  driver::SimulateOptions two;
  two.jobs = 2;
  EXPECT_EQ(driver::simulate(parse_scenario(doc), two).dump(), a.dump());
}

TEST(RunLength, RunToCompletionWorkloadsSayNotApplicable) {
  auto doc = scenario();
  doc["workload"] = {{"type", "sem-lockunlock"}, {"loops", 200}};
  doc["threads"] = 2;
  const Json p = run(doc)["points"][0];
  EXPECT_FALSE(p["run_length"]["applicable"].get<bool>());
  EXPECT_EQ(p["run_length"]["interval"], "replications");
}

// A run to completion's interval is its replications' t-interval: three rates
// 1, 2, 3 have the mean 2, s = 1 and the half-width t(0.975, 2) / sqrt(3).
TEST(RunLength, ReplicationIntervalIsStudentOnTheRuns) {
  const Json wide = report::replication_run_length({1.0, 2.0, 3.0}, 0.01, false);
  EXPECT_EQ(wide["counter"], "ops_per_s");
  EXPECT_DOUBLE_EQ(wide["rate_per_s"].get<double>(), 2.0);
  const double half = 4.302653 / std::sqrt(3.0);
  EXPECT_NEAR(wide["ci95_per_s"][0].get<double>(), 2.0 - half, 1e-4);  // t from a 4-digit table
  EXPECT_NEAR(wide["ci95_per_s"][1].get<double>(), 2.0 + half, 1e-4);
  EXPECT_NEAR(wide["std_error_per_s"].get<double>(), 1.0 / std::sqrt(3.0), 1e-12);
  EXPECT_EQ(wide["dof"], 2);
  EXPECT_FALSE(wide["reached"].get<bool>());
  // 0.1 % spread: half-width 0.25 % of the mean, within 1 %.
  const Json narrow = report::replication_run_length({99.9, 100.0, 100.1}, 0.01, false);
  EXPECT_NEAR(narrow["half_width_rel"].get<double>(), 4.302653 * 0.1 / std::sqrt(3.0) / 100, 1e-7);
  EXPECT_TRUE(narrow["reached"].get<bool>());
  EXPECT_FALSE(report::replication_run_length({99.9, 100.0, 100.1}, 0.0, false)["reached"]
                   .get<bool>());  // precision 0: nothing to reach
  // One seeded run: no interval. A seed-free point: exact.
  const Json one = report::replication_run_length({5.0}, 0.01, false);
  EXPECT_TRUE(one["ci95_per_s"].is_null());
  EXPECT_FALSE(one["reached"].get<bool>());
  EXPECT_NE(one["not_reached"].get<std::string>().find("repeats >= 2"), std::string::npos);
  EXPECT_NE(wide["not_reached"].get<std::string>().find("more repeats"), std::string::npos);
  EXPECT_TRUE(narrow["not_reached"].is_null());
  const Json exact = report::replication_run_length({5.0}, 0.01, true);
  EXPECT_EQ(exact["ci95_per_s"], Json::array({5.0, 5.0}));
  EXPECT_TRUE(exact["reached"].get<bool>());
}

// End to end: a run to completion over three seeds that draw reports the
// interval of its three rates, around the point's ops_per_s.
TEST(RunLength, RunToCompletionPointsGetTheirReplicationsInterval) {
  auto doc = scenario();
  doc["machine"] = "box-64";
  doc["kernel"] = "per_sem_lock";
  doc["workload"] = {{"type", "sem-lockunlock"}, {"semaphores", 4}, {"loops", 400}};
  doc["threads"] = 16;
  doc["repeats"] = 3;
  const Json p = run(doc)["points"][0];
  const Json& rl = p["run_length"];
  ASSERT_EQ(rl["pooled_runs"], 3);
  EXPECT_FALSE(rl["seed_free"].get<bool>());
  EXPECT_DOUBLE_EQ(rl["rate_per_s"].get<double>(), p["ops_per_s"].get<double>());
  const auto& runs = p["ops_per_s_runs"];
  double lo = runs[0].get<double>(), hi = lo;
  for (const auto& r : runs) lo = std::min(lo, r.get<double>()), hi = std::max(hi, r.get<double>());
  ASSERT_LT(lo, hi) << "the seeds must differ for this test";
  EXPECT_LT(rl["ci95_per_s"][0].get<double>(), lo);
  EXPECT_GT(rl["ci95_per_s"][1].get<double>(), hi);
}

TEST(RunLength, BadPrecisionNamesTheFieldAndTheRange) {
  for (const Json& bad : {Json(-0.1), Json(1.0), Json(2), Json("1%"), Json(true), Json(nullptr)}) {
    auto doc = scenario();
    doc["precision"] = bad;
    try {
      parse_scenario(doc);
      ADD_FAILURE() << "accepted " << bad.dump();
    } catch (const InputError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("precision"), std::string::npos) << what;
      EXPECT_NE(what.find("< 1"), std::string::npos) << what;
    }
  }
}

}  // namespace
}  // namespace semsim
