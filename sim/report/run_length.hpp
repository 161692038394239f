// Adaptive run length: how long to simulate a point so that its throughput's
// 95 % confidence interval is as narrow as the scenario asks (`precision`).
//
// The statistics (pure functions, tested against analytic cases):
//   mser5()       warm-up truncation: MSER-5 (White 1997, "An effective truncation
//                 heuristic for bias reduction in simulation output", Simulation
//                 69(6); White, Cobb & Spratt, WSC 2000): batch the series by 5,
//                 pick the truncation d minimising the tail's variance over
//                 (n-d)^2, searched over the first half of the data; a minimum at
//                 that bound means the transient may go on (not accepted).
//   batch_ci()    batch means, Student-t 95 % half-width, and the von Neumann
//                 test of the batch means' independence (one-sided, alpha 0.1; the
//                 test of Fishman's LBATCH, "Grouping observations in digital
//                 simulation", Management Science 24(5), 1978).
//
// The procedure (RunLength, driven by the driver's timekeeper, see run_point.cpp):
//   1. Observe the counter of the point's figure (semops, or the workload's own
//      rounds) every `interval` of simulated time, on a grid through warmup_ms.
//   2. Warm-up: from warmup_ms (the minimum warm-up) on, every 5 observations,
//      run MSER-5 over all observations so far; the first time it accepts, the
//      window begins there (at that date: the stretch between the MSER
//      truncation point and it is steady state by the same test, so dropping it
//      costs simulated time, not bias; beginning at the earlier point would need
//      every lock and line statistic of that date, which WindowStats resets at
//      begin). If it never accepts, the window begins at half the budget
//      anyway and precision is not declared reached.
//   3. Window: batch means with 20 to 40 batches, each at least the model's
//      slowest period long (the driver's min_batch, driver::slowest_period(): a
//      scheduler rotation when tasks outnumber CPUs; enough OS-noise interruptions
//      that the lost time of a batch is near-normal; a window shorter than that
//      misses them, and its interval is too narrow: measured, see the README),
//      doubling in length at 40 batches. At each completed batch
//      with >= 20 batches, stop when the relative half-width <= precision (a run of a point of R
//      seeds: precision * sqrt(R), see Repeats below) and the batch means pass
//      the independence test; else go on to warmup_ms + duration_ms (the ceiling).
//   4. A transient the warm-up test could not see: a level that holds for a
//      while and then moves (a start-up convoy on a lock: MSER-5 takes the
//      level for the steady state) leaves the window's batch means correlated.
//      At a completed batch whose means fail the independence test, MSER-5
//      runs over the window's own observations; if it truncates, the rest (at
//      least kMinBatches / 2 of the window's batches) passes the independence
//      test, and the level moved by more than 4 standard errors and by more
//      than half the later level (shifted()), the window begins again then: a restart
//      costs simulated time, never bias, and the lock and line statistics
//      begin with it ("window_restarts", with precision > 0).
//   precision 0 switches this off: the window is [warmup_ms, ceiling] as
//   always, and the interval is still reported.
//   A run (and a point) that did not reach its precision says why
//   ("not_reached", the first failed test in this order) and, when its window
//   held too few batches, which duration_ms would hold them ("needs_duration_ms"):
//   with batches of a scheduler rotation a ceiling can be too short for any
//   interval to count, however narrow.
//
// Repeats (R seeds of a point, independent replications): the precision is the
// POINT's, not each run's. The point's estimate is the mean of its runs' rates,
// and its interval pools theirs (pool_repeats(): the variance of the mean is
// sum se_i^2 / R^2, Student-t on the Welch-Satterthwaite degrees of freedom).
// Runs of equal width then meet `precision` together when each meets
// precision * sqrt(R), so each run stops at that (RunLength's `repeats`). Each
// run keeps its 20 batches at least: with 10 (tried on the demo's scenario,
// host model) a 1-thread run stopped after ten 0.39 ms batches at +4 % from its
// sister seeds, and its 8-thread runs spread twice as far as their intervals
// said (Cochran's Q 10.1 on 2 dof): ten batches pass the independence test too
// easily. Each run decides alone, from its own integer dates and counts: runs in
// parallel processes give the same bytes whichever ends first. The pooled
// interval is widened by the Birge ratio sqrt(Q / (R - 1)) when Cochran's Q says
// the runs disagree more than their own intervals allow (slow variation the
// batches do not see, or seeds settling in different steady states). The
// batches' independence is tested again on all runs together (the mean of
// their von Neumann statistics: a stronger test than each run's). When either
// test fails, the batch-means pool is not trusted and the point's interval is
// its runs' replication interval instead (replication_ci(): Student-t on R - 1
// dof over the runs' rates; "interval": "replications"), valid because the
// seeds are independent; the precision is reached if that is narrow enough.
// When it is not and every run had stopped at its own interval while Q says
// they disagree, the driver runs the point's seeds once more to half of it
// (driver/simulate.cpp, second_rounds()), and a second round that still misses
// reports it.
//
// Everything is integer simulated time and integer counts: the same scenario
// and seed give the same stop date and the same bytes.
#pragma once

#include <cstdint>
#include <vector>

#include "core/json.hpp"
#include "core/time.hpp"

namespace semsim::report {

// Student-t 0.975 quantile with df degrees of freedom (table to 30, then the
// Cornish-Fisher expansion, error < 1e-4).
double student_t975(int df);

struct Mser {
  std::size_t truncation = 0;  // observations to drop (a multiple of 5)
  bool accepted = false;       // truncation within the first half of the batches
};
// MSER-5 over a series of equally spaced observations (the trailing partial
// batch of 5 is ignored). Fewer than two batches: nothing accepted.
Mser mser5(const std::vector<double>& x);

// Chi-square 0.95 quantile with df degrees of freedom (table to 30, then
// Wilson-Hilferty, error < 0.1 %).
double chi2_95(int df);

struct BatchCi {
  int batches = 0;
  double mean = 0;           // mean of the batch means
  double half_width = 0;     // t(0.975, k-1) * s / sqrt(k)
  double von_neumann = 0;    // C = 1 - sum of squared successive differences / (2 SS)
  bool independent = false;  // the von Neumann test does not reject independence
};
// The one-sided (alpha 0.1) bound of C for k independent batch means.
double von_neumann_bound(int batches);
// Batch means of equal batches: the interval for their mean. Fewer than two
// batches: batches < 2 and nothing else set.
BatchCi batch_ci(const std::vector<double>& batch_means);

// Consecutive observations in batches of m, m doubling (pairs merged) when
// there are 2 * min_batches batches: always min_batches..2*min_batches-1
// complete batches once there are min_batches.
class DoublingBatches {
 public:
  explicit DoublingBatches(int min_batches, std::int64_t first_size = 1)
      : min_(min_batches), m_(first_size) {}
  // Adds one observation; true when it completed a batch.
  bool add(std::int64_t count);
  const std::vector<std::int64_t>& sums() const { return sums_; }
  std::int64_t per_batch() const { return m_; }  // observations per batch

 private:
  int min_;
  std::int64_t m_, partial_ = 0, partial_n_ = 0;
  std::vector<std::int64_t> sums_;
};

// A series of counts that stays bounded: entry i is the sum of agg() consecutive
// observations; at 2 * kMaxEntries entries pairs merge and agg() doubles (as
// DoublingBatches does for the batches). Below kMaxEntries observations it is the
// observations themselves.
class BoundedSeries {
 public:
  static constexpr std::size_t kMaxEntries = 4096;
  // Adds one observation; true when it completed an entry.
  bool add(std::int64_t count);
  const std::vector<double>& entries() const { return entries_; }
  std::int64_t agg() const { return agg_; }
  void clear();

 private:
  std::vector<double> entries_;
  std::int64_t agg_ = 1, pending_n_ = 0;
  double pending_sum_ = 0;
};

// One run of a point, as pool_repeats() needs it.
struct RunEstimate {
  double rate = 0;         // the counter's rate over the run's window
  double std_error = 0;    // of that rate (the batch-means half-width over its t quantile)
  int batches = 0;         // k: the interval has k - 1 degrees of freedom
  double von_neumann = 0;  // the batch means' C statistic
  bool valid = false;      // the run has an interval (>= 2 batches)
};
struct PooledCi {
  int runs = 0;
  double mean = 0;           // of the runs' rates (equal weight: replications of one length rule)
  double std_error = 0;      // sqrt(sum se_i^2) / R
  double dof = 0;            // Welch-Satterthwaite, floored to an integer for the t quantile
  double half_width = 0;     // t(0.975, dof) * std_error, times the Birge ratio if inconsistent
  double dispersion = 0;     // Cochran's Q / (R - 1) (0 for one run)
  bool consistent = true;    // Q <= chi2_95(R - 1)
  bool independent = false;  // mean of the C statistics within its one-sided alpha 0.1 bound
  bool valid = false;        // every run has an interval
};
// The interval of the mean of independent runs (see the header comment). One
// run: its own interval exactly.
PooledCi pool_repeats(const std::vector<RunEstimate>& runs);

// The interval of R independent replications' rates (R >= 2): Student-t on
// R - 1 degrees of freedom of their mean. Valid whatever each run's batches
// missed (slow variation, seeds in different steady states): the runs are
// independent by construction, their rates the observations.
struct ReplicationCi {
  double mean = 0;
  double std_error = 0;   // s / sqrt(R)
  double half_width = 0;  // t(0.975, R - 1) * std_error
  int dof = 0;            // R - 1
};
ReplicationCi replication_ci(const std::vector<double>& rates);

// The point's "run_length" object from its distinct runs' own ones (in seed
// order; a copy of another run, made by a seed that changed nothing, is not an
// independent run and is left out by the caller): the pooled interval, the
// simulated time per run and in total, whether the point's precision was
// reached, and every run's own object under "runs".
Json pooled_run_length(const std::vector<Json>& runs);

// The "run_length" object of a point whose workload runs to completion (a
// fixed amount of work: no window to size, so "applicable" is false). Its
// interval comes from its replications alone: the distinct runs' rates (in
// seed order, copies left out by the caller), Student-t on R - 1 degrees of
// freedom of their mean. A point whose seeds all gave the same bytes made no
// random draw (seed_free): its figure is exact, an interval of zero width. One
// run of a seeded point (repeats 1) has no interval. The rates are the runs'
// ops_per_s ("counter": "ops_per_s"). Made after each seed from the second on,
// its "reached" ends the point's replications early (driver/simulate.cpp).
Json replication_run_length(const std::vector<double>& rates, double precision, bool seed_free);

class RunLength {
 public:
  static constexpr int kMinBatches = 20;
  static constexpr std::size_t kMinMserObservations = 50;  // 10 MSER batches
  // warmup_end: warmup_ms (the minimum warm-up); ceiling: warmup_ms +
  // duration_ms; precision 0: off. min_batch: the shortest batch, the model's
  // slowest period (batches shorter than it cannot see its variation).
  // repeats: the point's runs (this one stops at precision * sqrt(repeats)).
  // round: the point's round of runs (a second one stops at half the first's
  // interval: driver/simulate.cpp).
  RunLength(Tick warmup_end, Tick ceiling, double precision, Tick min_batch = 0, int repeats = 1,
            int round = 1);

  enum class Step { Continue, Begin, Stop };
  // The date the timekeeper must call observe() next.
  Tick next_date() const { return next_; }
  // The counter's cumulative value at next_date(): whether the window begins
  // or ends now. The caller begins or ends its WindowStats accordingly.
  Step observe(Tick now, std::int64_t count);
  // The "run_length" object of the run: precision, reached, interval of the
  // counter's rate, detected warm-up, simulated time used. `counter` names
  // what was counted ("semops" or "rounds").
  Json to_json(const char* counter) const;
  Tick interval() const { return interval_; }

 private:
  void begin(Tick now, std::int64_t count, bool detected);
  // Step 4 of the header: a transient at the window's start explains its
  // correlated batch means (called with the current batches' interval in ci_).
  bool shifted() const;
  void not_reached(Json& j) const;
  bool evaluate(Tick now, std::int64_t count);  // updates the interval; reached?
  Tick warmup_end_, ceiling_, interval_, next_;
  double precision_, target_;  // the point's precision; this run's (precision * sqrt(repeats))
  enum class Phase { Start, Warmup, Window, Done } phase_ = Phase::Start;
  std::int64_t last_ = 0, begin_count_ = 0;
  BoundedSeries warmup_obs_;
  std::int64_t mser_agg_ = 1;  // observations per entry when MSER-5 last ran
  Mser mser_;
  bool detected_ = false, reached_ = false;
  Tick begin_ = 0, stop_ = 0, prev_ = 0, mser_date_ = 0;
  Tick first_batch_ = 1;  // observations per batch at a window's start
  DoublingBatches batches_;
  BoundedSeries window_obs_;  // the window's observations (step 4)
  int restarts_ = 0;
  BatchCi ci_;
  double rate_ = 0, half_width_ = 0;
};

}  // namespace semsim::report
