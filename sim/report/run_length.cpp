#include "report/run_length.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

namespace semsim::report {

namespace {
// The standard normal 0.9 quantile: the von Neumann test's one-sided alpha 0.1.
constexpr double kZ90 = 1.2815515655446004;
// The smallest level shift that begins a window again (RunLength::shifted()).
constexpr double kShiftShare = 0.5;
}  // namespace

double student_t975(int df) {
  static constexpr std::array<double, 30> kTable = {
      12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281,
      2.2010,  2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860,
      2.0796,  2.0739, 2.0687, 2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423};
  if (df < 1) return 0.0;
  if (df <= 30) return kTable[static_cast<std::size_t>(df - 1)];
  const double z = 1.959963984540054, v = df;
  const double z3 = z * z * z, z5 = z3 * z * z, z7 = z5 * z * z;
  return z + (z3 + z) / (4 * v) + (5 * z5 + 16 * z3 + 3 * z) / (96 * v * v) +
         (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * v * v * v);
}

double chi2_95(int df) {
  static constexpr std::array<double, 30> kTable = {
      3.8415,  5.9915,  7.8147,  9.4877,  11.0705, 12.5916, 14.0671, 15.5073, 16.9190, 18.3070,
      19.6751, 21.0261, 22.3620, 23.6848, 24.9958, 26.2962, 27.5871, 28.8693, 30.1435, 31.4104,
      32.6706, 33.9244, 35.1725, 36.4150, 37.6525, 38.8851, 40.1133, 41.3371, 42.5570, 43.7730};
  if (df < 1) return 0.0;
  if (df <= 30) return kTable[static_cast<std::size_t>(df - 1)];
  constexpr double z = 1.6448536269514722;
  const double a = 2.0 / (9.0 * df), c = 1.0 - a + z * std::sqrt(a);
  return df * c * c * c;
}

double von_neumann_bound(int batches) {
  const double k = batches;
  return batches > 2 ? kZ90 * std::sqrt((k - 2) / (k * k - 1)) : 0.0;
}

Mser mser5(const std::vector<double>& x) {
  constexpr std::size_t kBatch = 5;
  const std::size_t b = x.size() / kBatch;
  Mser out;
  if (b < 2) return out;
  std::vector<double> z(b);
  double grand = 0;
  for (std::size_t j = 0; j < b; ++j) {
    double s = 0;
    for (std::size_t i = 0; i < kBatch; ++i) s += x[j * kBatch + i];
    z[j] = s / kBatch;
    grand += z[j];
  }
  grand /= static_cast<double>(b);
  // Suffix sums of the centred batch means: the tail variance of every d in one pass.
  double s1 = 0, s2 = 0, best = 0;
  std::size_t best_d = 0;
  bool first = true;
  std::vector<double> stat(b, 0.0);
  for (std::size_t d = b; d-- > 0;) {
    const double c = z[d] - grand;
    s1 += c;
    s2 += c * c;
    const double n = static_cast<double>(b - d);
    stat[d] = std::max(0.0, s2 - s1 * s1 / n) / (n * n);
  }
  // The search covers the first half: a short tail's small spread (a last level
  // of a piecewise-steady series, or chance) would otherwise win. A minimum on
  // the bound means the transient may go on: not accepted.
  const std::size_t bound = b / 2;
  for (std::size_t d = 0; d <= bound; ++d)
    if (first || stat[d] < best) {
      best = stat[d];
      best_d = d;
      first = false;
    }
  out.truncation = best_d * kBatch;
  out.accepted = best_d < bound;
  return out;
}

BatchCi batch_ci(const std::vector<double>& m) {
  BatchCi out;
  out.batches = static_cast<int>(m.size());
  if (m.size() < 2) return out;
  const double k = static_cast<double>(m.size());
  double mean = 0;
  for (double v : m) mean += v;
  mean /= k;
  double ss = 0, succ = 0;
  for (std::size_t i = 0; i < m.size(); ++i) {
    ss += (m[i] - mean) * (m[i] - mean);
    if (i > 0) succ += (m[i] - m[i - 1]) * (m[i] - m[i - 1]);
  }
  out.mean = mean;
  // All equal (the rounding of their sum aside): no spread, nothing to correlate.
  const auto [lo, hi] = std::minmax_element(m.begin(), m.end());
  if (*lo == *hi) {
    out.mean = *lo;
    out.independent = true;
    return out;
  }
  out.half_width = student_t975(out.batches - 1) * std::sqrt(ss / (k - 1)) / std::sqrt(k);
  // von Neumann: C = 1 - sum of squared successive differences / (2 * sum of squares),
  // about N(0, (k-2)/(k^2-1)) for independent means; positive C means positive
  // correlation (batches too short).
  if (ss <= 0) {
    out.independent = true;
  } else {
    out.von_neumann = 1.0 - succ / (2.0 * ss);
    out.independent = out.von_neumann <= von_neumann_bound(out.batches);
  }
  return out;
}

PooledCi pool_repeats(const std::vector<RunEstimate>& runs) {
  PooledCi out;
  out.runs = static_cast<int>(runs.size());
  if (runs.empty()) return out;
  const double r = static_cast<double>(runs.size());
  out.valid = true;
  double var = 0, var2_over_df = 0, df_sum = 0, c_sum = 0, c_var = 0;
  for (const auto& run : runs) {
    out.valid = out.valid && run.valid && run.batches >= 2;
    out.mean += run.rate / r;
    const double v = run.std_error * run.std_error;
    var += v;
    const double df = std::max(1, run.batches - 1);
    var2_over_df += v * v / df;
    df_sum += df;
    c_sum += run.von_neumann;
    const double k = run.batches;
    if (run.batches > 2) c_var += (k - 2) / (k * k - 1);
  }
  if (!out.valid) return out;
  out.std_error = std::sqrt(var) / r;
  // Welch-Satterthwaite; no spread at all: every batch's degrees of freedom.
  out.dof = var2_over_df > 0 ? std::floor(var * var / var2_over_df) : df_sum;
  // One run: its own interval, exactly (dof = k - 1).
  out.half_width = runs.size() == 1 ? runs[0].std_error * student_t975(runs[0].batches - 1)
                                    : student_t975(static_cast<int>(out.dof)) * out.std_error;
  out.independent = c_sum / r <= kZ90 * std::sqrt(c_var) / r;
  if (runs.size() < 2) return out;
  // Cochran's Q around the precision-weighted mean; a run of zero spread has
  // an exact rate: the others must then equal it.
  double wsum = 0, wmean = 0;
  bool exact = false;
  for (const auto& run : runs) {
    if (run.std_error <= 0)
      exact = true;
    else {
      wsum += 1.0 / (run.std_error * run.std_error);
      wmean += run.rate / (run.std_error * run.std_error);
    }
  }
  double q = 0;
  if (exact) {
    const auto [lo, hi] = std::minmax_element(
        runs.begin(), runs.end(), [](const auto& a, const auto& b) { return a.rate < b.rate; });
    out.consistent = lo->rate == hi->rate;
    out.dispersion = out.consistent ? 0.0 : INFINITY;
    if (!out.consistent) out.half_width = INFINITY;
    return out;
  }
  wmean /= wsum;
  for (const auto& run : runs)
    q += (run.rate - wmean) * (run.rate - wmean) / (run.std_error * run.std_error);
  out.dispersion = q / (r - 1);
  out.consistent = q <= chi2_95(out.runs - 1);
  if (!out.consistent) out.half_width *= std::sqrt(out.dispersion);
  return out;
}

bool DoublingBatches::add(std::int64_t count) {
  partial_ += count;
  if (++partial_n_ < m_) return false;
  sums_.push_back(partial_);
  partial_ = partial_n_ = 0;
  if (sums_.size() == static_cast<std::size_t>(2 * min_)) {
    for (std::size_t i = 0; i < sums_.size() / 2; ++i) sums_[i] = sums_[2 * i] + sums_[2 * i + 1];
    sums_.resize(sums_.size() / 2);
    m_ *= 2;
  }
  return true;
}

namespace {
// One observation every (ceiling - warmup_ms) / 2000, within [1 us, 10 us]: a
// window that runs to the ceiling then has >= 2000 observations when it is at
// most 20 ms, so its 20-40 batches hold 50-100 each; a stop date falls within
// 10 us of where the precision was met; a look costs the timekeeper about two
// actor hand-offs (~1 us of wall time) while the tasks take ~20 us or more of
// wall time per simulated microsecond of a contended machine, so sampling adds
// under ~1 % (wall-time figures: `semsim bench`).
Tick observation_interval(Tick warmup_end, Tick ceiling) {
  return std::clamp<Tick>((ceiling - warmup_end) / 2000, kTicksPerUs, 10 * kTicksPerUs);
}
double ms(Tick t) { return static_cast<double>(t) / kTicksPerMs; }
// A "run_length" object without an interval: its interval fields are null.
void no_interval(Json& j) {
  j["ci95_per_s"] = nullptr;
  j["half_width_rel"] = nullptr;
  j["std_error_per_s"] = nullptr;
}
}  // namespace

RunLength::RunLength(Tick warmup_end, Tick ceiling, double precision, Tick min_batch, int repeats,
                     int round)
    : warmup_end_(warmup_end),
      ceiling_(ceiling),
      interval_(observation_interval(warmup_end, ceiling)),
      next_(warmup_end % interval_),  // the grid runs through warmup_end
      precision_(precision),
      target_((repeats <= 1 ? precision : precision * std::sqrt(static_cast<double>(repeats))) /
              (round > 1 ? 2.0 : 1.0)),
      // A second round's batches are twice as long as well: a first round whose
      // runs stopped at their 20 batches with room to spare would otherwise
      // stop there again, at the same date, with the same bytes.
      first_batch_(
          std::max<Tick>(1, ((round > 1 ? 2 : 1) * min_batch + interval_ - 1) / interval_)),
      batches_(kMinBatches, first_batch_) {}

void RunLength::begin(Tick now, std::int64_t count, bool detected) {
  phase_ = Phase::Window;
  begin_ = now;
  begin_count_ = count;
  detected_ = detected;
  warmup_obs_.clear();
  window_obs_.clear();
  batches_ = DoublingBatches(kMinBatches, first_batch_);
}

bool BoundedSeries::add(std::int64_t count) {
  pending_sum_ += static_cast<double>(count);
  if (++pending_n_ < agg_) return false;
  entries_.push_back(pending_sum_);
  pending_sum_ = 0;
  pending_n_ = 0;
  if (entries_.size() == 2 * kMaxEntries) {
    for (std::size_t i = 0; i < kMaxEntries; ++i)
      entries_[i] = entries_[2 * i] + entries_[2 * i + 1];
    entries_.resize(kMaxEntries);
    agg_ *= 2;
  }
  return true;
}

void BoundedSeries::clear() {
  entries_.clear();
  entries_.shrink_to_fit();
  agg_ = 1;
  pending_n_ = 0;
  pending_sum_ = 0;
}

bool RunLength::shifted() const {
  const auto& obs = window_obs_.entries();
  const Mser m = mser5(obs);
  if (!m.accepted || m.truncation == 0) return false;
  // In observations: the truncation, and the observations the series holds.
  const auto agg = static_cast<std::size_t>(window_obs_.agg());
  const std::size_t d = m.truncation * agg, n = obs.size() * agg;
  // The rest's batch means, per observation: the window's own batches that
  // begin at or after the truncation.
  const auto per = static_cast<std::size_t>(batches_.per_batch());
  const auto& sums = batches_.sums();
  std::vector<double> means;
  for (std::size_t k = (d + per - 1) / per; k < sums.size(); ++k)
    means.push_back(static_cast<double>(sums[k]) / static_cast<double>(per));
  if (means.size() < static_cast<std::size_t>(kMinBatches / 2)) return false;
  const BatchCi c = batch_ci(means);
  if (!c.independent) return false;
  double before = 0, rest = 0;
  for (std::size_t i = 0; i < obs.size(); ++i) (i < m.truncation ? before : rest) += obs[i];
  before /= static_cast<double>(d);
  rest /= static_cast<double>(n - d);
  // The long-run variance of one observation from the rest's batch means; the
  // two levels' difference in its standard errors (equal under no shift).
  double ss = 0;
  for (double v : means) ss += (v - c.mean) * (v - c.mean);
  const double var = static_cast<double>(per) * ss / static_cast<double>(means.size() - 1);
  const double se =
      std::sqrt(var * (1.0 / static_cast<double>(d) + 1.0 / static_cast<double>(n - d)));
  // A level, not noise: beyond 4 of those standard errors, and by more than
  // half the later level (assumption: the batch means of a short rest can
  // understate a correlated series' variance, so the errors alone let an AR(1)
  // series restart; the transients this is for -- a start-up convoy -- move the
  // level several-fold).
  const double gap = std::abs(before - rest);
  return gap > 4 * se && gap > kShiftShare * std::abs(rest);
}

bool RunLength::evaluate(Tick now, std::int64_t count) {
  const Tick window = now - begin_;
  rate_ = window > 0 ? static_cast<double>(count - begin_count_) / ticks_to_seconds(window) : 0.0;
  const double batch_s = ticks_to_seconds(interval_ * batches_.per_batch());
  std::vector<double> means;
  for (auto s : batches_.sums()) means.push_back(static_cast<double>(s) / batch_s);
  ci_ = batch_ci(means);
  if (ci_.batches < 2) return false;
  // The interval is centred on the whole window's rate (what the point reports);
  // its half-width scales the batches' to the window's length (equal when the
  // window is exactly the complete batches, as at an early stop).
  const double covered = static_cast<double>(interval_ * batches_.per_batch() * ci_.batches);
  half_width_ = ci_.half_width * std::sqrt(covered / static_cast<double>(window));
  return target_ > 0 && detected_ && ci_.batches >= kMinBatches && ci_.independent && rate_ > 0 &&
         half_width_ <= target_ * rate_;
}

RunLength::Step RunLength::observe(Tick now, std::int64_t count) {
  bool new_entry = false;  // the warm-up series completed an entry
  const std::int64_t inc = count - last_;
  last_ = count;
  Step step = Step::Continue;
  if (phase_ == Phase::Start) {
    phase_ = Phase::Warmup;
  } else if (phase_ == Phase::Warmup) {
    new_entry = warmup_obs_.add(inc);
  } else if (phase_ == Phase::Window) {
    const bool regular = now - prev_ == interval_;
    if (regular && precision_ > 0) window_obs_.add(inc);
    const bool completed = regular && batches_.add(inc);
    if (now >= ceiling_) {
      reached_ = evaluate(now, count);
      stop_ = now;
      phase_ = Phase::Done;
      return Step::Stop;
    }
    if (completed && precision_ > 0 && detected_ &&
        batches_.sums().size() >= static_cast<std::size_t>(kMinBatches)) {
      if (evaluate(now, count)) {
        reached_ = true;
        stop_ = now;
        phase_ = Phase::Done;
        return Step::Stop;
      }
      if (!ci_.independent && shifted()) {
        ++restarts_;
        begin(now, count, true);
        step = Step::Begin;
      }
    }
  }
  if (phase_ == Phase::Warmup && now >= warmup_end_) {
    if (precision_ <= 0) {
      begin(now, count, false);
      step = Step::Begin;
    } else {
      // Every 5 entries (observations, until the series merges: then its
      // cost stays bounded however long the warm-up).
      const std::size_t n = warmup_obs_.entries().size();
      if ((now == warmup_end_ || (new_entry && n % 5 == 0)) && n >= kMinMserObservations) {
        mser_ = mser5(warmup_obs_.entries());
        mser_agg_ = warmup_obs_.agg();
        mser_date_ = now;
        if (mser_.accepted) {
          begin(now, count, true);
          step = Step::Begin;
        }
      }
      // Never accepted: keep at least half the budget for the window.
      if (phase_ == Phase::Warmup && now + interval_ > warmup_end_ + (ceiling_ - warmup_end_) / 2) {
        begin(now, count, false);
        step = Step::Begin;
      }
    }
  }
  prev_ = now;
  next_ = std::min(now + interval_, ceiling_);
  return step;
}

Json RunLength::to_json(const char* counter) const {
  Json j;
  j["applicable"] = true;
  j["precision"] = precision_;
  j["run_precision"] = target_;  // what this run stopped at: precision * sqrt(repeats)
  j["reached"] = reached_;       // this run's own target
  j["counter"] = counter;
  j["rate_per_s"] = rate_;
  if (ci_.batches >= 2) {
    j["ci95_per_s"] = {rate_ - half_width_, rate_ + half_width_};
    j["half_width_rel"] = rate_ > 0 ? half_width_ / rate_ : 0.0;
    j["std_error_per_s"] = half_width_ > 0 ? half_width_ / student_t975(ci_.batches - 1) : 0.0;
  } else {
    no_interval(j);
  }
  j["batches"] = ci_.batches;
  j["von_neumann"] = ci_.von_neumann;
  j["batch_ms"] = ms(interval_ * batches_.per_batch());
  j["batches_independent"] = ci_.independent;
  j["observation_us"] = static_cast<double>(interval_) / kTicksPerUs;
  j["warmup_ms"] = ms(begin_);
  j["warmup_detected"] = detected_;
  if (precision_ > 0) j["window_restarts"] = restarts_;
  // Where MSER-5 put the end of the transient, at the date it was last run.
  if (precision_ > 0 && mser_date_ > 0)
    j["mser_truncation_ms"] =
        ms((warmup_end_ % interval_) + interval_ * mser_agg_ * static_cast<Tick>(mser_.truncation));
  j["window_ms"] = ms(stop_ - begin_);
  j["simulated_ms"] = ms(stop_);
  j["ceiling_ms"] = ms(ceiling_);
  not_reached(j);
  return j;
}

// Why the run's precision was not reached (null when it was), checked in the
// order evaluate() does, and the duration_ms whose window would hold the
// minimum batches when that is what was missing.
void RunLength::not_reached(Json& j) const {
  j["not_reached"] = nullptr;
  j["needs_duration_ms"] = nullptr;
  if (reached_) return;
  const Tick batch = interval_ * batches_.per_batch();
  if (precision_ <= 0) {
    j["not_reached"] = "precision is 0: the whole window was simulated, no precision asked";
  } else if (!detected_) {
    j["not_reached"] = fmt::format(
        "warm-up not detected: MSER-5 did not settle before half the ceiling ({:.2f} ms)",
        ms(ceiling_));
  } else if (ci_.batches < kMinBatches) {
    // The window from where it began must hold kMinBatches batches of the
    // shortest length (the model's slowest period: the interval of fewer
    // passes the independence test too easily, see the header).
    const Tick needed = begin_ + batch * kMinBatches - warmup_end_;
    j["not_reached"] = fmt::format(
        "the window held {} batches of {:.2f} ms (the model's slowest period), fewer than {}: "
        "duration_ms >= {:.2f} holds them",
        ci_.batches, ms(batch), kMinBatches, ms(needed));
    j["needs_duration_ms"] = ms(needed);
  } else if (!ci_.independent) {
    j["not_reached"] = fmt::format(
        "the batch means are correlated (von Neumann C = {:.3f} above its bound {:.3f}): a "
        "longer window doubles the batches",
        ci_.von_neumann, von_neumann_bound(ci_.batches));
  } else {
    j["not_reached"] = fmt::format(
        "the interval +-{:.2f} % is wider than this run's target +-{:.2f} % at the ceiling",
        rate_ > 0 ? 100 * half_width_ / rate_ : 0.0, 100 * target_);
  }
}

namespace {
// Why a point of several runs did not reach its precision (null when it did),
// in the order of pooled_run_length()'s test: a run's own missing warm-up or
// batches first (with the longest duration_ms any run needs), then the pooled tests.
void pooled_not_reached(Json& j, const std::vector<Json>& runs, const PooledCi& ci,
                        double precision) {
  j["not_reached"] = nullptr;
  j["needs_duration_ms"] = nullptr;
  if (j["reached"].get<bool>()) return;
  // One run, or no precision asked (every run says so): the first run's own reason.
  if (runs.size() == 1 || precision <= 0) {
    j["not_reached"] = runs.front()["not_reached"];
    j["needs_duration_ms"] = runs.front()["needs_duration_ms"];
    return;
  }
  double needs = -1;
  for (std::size_t r = 0; r < runs.size(); ++r) {
    const Json& rl = runs[r];
    if (!rl["needs_duration_ms"].is_null())
      needs = std::max(needs, rl["needs_duration_ms"].get<double>());
    if (j["not_reached"].is_null() &&
        (rl["batches"].get<int>() < RunLength::kMinBatches || !rl["warmup_detected"].get<bool>()))
      j["not_reached"] =
          fmt::format("run {} of {}: {}", r + 1, runs.size(), rl["not_reached"].get<std::string>());
  }
  if (needs >= 0) j["needs_duration_ms"] = needs;
  if (!j["not_reached"].is_null()) return;
  // The batch-means pool's assumption that failed, then the interval that
  // stood in for it: the runs' own (pooled_run_length()).
  const auto replications = [&] {
    return fmt::format("; the interval of the {} runs' rates +-{:.2f} % is wider than +-{:.2f} %",
                       runs.size(), 100 * j["half_width_rel"].get<double>(), 100 * precision);
  };
  if (!ci.valid) {
    j["not_reached"] = "a run has no interval";
  } else if (!ci.independent) {
    j["not_reached"] =
        "the runs' batch means together are correlated (the von Neumann test)" + replications();
  } else if (!ci.consistent) {
    j["not_reached"] =
        fmt::format(
            "the runs disagree more than their intervals allow (Cochran's Q / (R - 1) = {:.2f}): "
            "slow variation the batches do not see, or seeds in different steady states",
            ci.dispersion) +
        replications();
  } else {
    j["not_reached"] =
        fmt::format("the pooled interval +-{:.2f} % is wider than +-{:.2f} %",
                    ci.mean > 0 ? 100 * ci.half_width / ci.mean : 0.0, 100 * precision);
  }
}
}  // namespace

ReplicationCi replication_ci(const std::vector<double>& rates) {
  ReplicationCi out;
  const auto r = static_cast<int>(rates.size());
  if (r == 0) return out;
  for (double x : rates) out.mean += x / r;
  if (r < 2) return out;
  double ss = 0;
  for (double x : rates) ss += (x - out.mean) * (x - out.mean);
  out.std_error = std::sqrt(ss / (r - 1)) / std::sqrt(static_cast<double>(r));
  out.dof = r - 1;
  out.half_width = student_t975(out.dof) * out.std_error;
  return out;
}

Json pooled_run_length(const std::vector<Json>& runs) {
  const Json& first = runs.front();
  std::vector<RunEstimate> estimates;
  std::vector<double> rates;
  double simulated = 0;
  Json simulated_runs = Json::array();
  bool enough = true;
  for (const auto& rl : runs) {
    RunEstimate e;
    e.rate = rl["rate_per_s"].get<double>();
    e.batches = rl["batches"].get<int>();
    e.von_neumann = rl.value("von_neumann", 0.0);
    e.std_error = rl["std_error_per_s"].is_null() ? 0.0 : rl["std_error_per_s"].get<double>();
    e.valid = !rl["ci95_per_s"].is_null();  // an interval (precision 0 has one too)
    enough = enough && e.batches >= RunLength::kMinBatches && rl["warmup_detected"].get<bool>();
    estimates.push_back(e);
    rates.push_back(e.rate);
    // A seed-free point's first run, made at the looser per-run precision, is
    // simulated time too (rerun_after_ms): the point then ran once more alone.
    const double used = rl["simulated_ms"].get<double>() + rl.value("rerun_after_ms", 0.0);
    simulated += used;
    simulated_runs.push_back(used);
  }
  const PooledCi ci = pool_repeats(estimates);
  const double precision = first["precision"].get<double>();
  Json j;
  j["applicable"] = true;
  j["precision"] = precision;
  // Several runs: the pooled batch-means interval, while its two assumptions
  // hold (the runs' batch means independent together, the runs agreeing within
  // their intervals). When either fails, the batches missed something (a slow
  // variation, seeds settling differently) and their interval is not to be
  // trusted; the runs are still independent replications, so the point's
  // interval is theirs (replication_ci(): Student-t on R - 1 dof, wide with few
  // runs, but valid).
  const bool pooled = runs.size() == 1 || !ci.valid || (ci.independent && ci.consistent);
  const ReplicationCi rep = pooled ? ReplicationCi{} : replication_ci(rates);
  j["interval"] = pooled ? "batch_means" : "replications";
  // One run: exactly its own verdict. Several: the interval is narrow enough,
  // from runs that each detected their warm-up and have their batches.
  j["reached"] =
      runs.size() == 1 ? first["reached"].get<bool>()
      : pooled ? precision > 0 && ci.valid && enough && ci.mean > 0 &&
                     ci.half_width <= precision * ci.mean
               : precision > 0 && enough && rep.mean > 0 && rep.half_width <= precision * rep.mean;
  j["counter"] = first["counter"];
  j["pooled_runs"] = ci.runs;
  j["rate_per_s"] = ci.mean;
  if (runs.size() == 1) {  // its own interval, to the bit
    for (const char* key : {"ci95_per_s", "half_width_rel", "std_error_per_s"}) j[key] = first[key];
    j["dof"] = first["ci95_per_s"].is_null() ? Json() : Json(first["batches"].get<int>() - 1);
  } else if (!pooled) {
    j["ci95_per_s"] = {ci.mean - rep.half_width, ci.mean + rep.half_width};
    j["half_width_rel"] = ci.mean > 0 ? rep.half_width / ci.mean : 0.0;
    j["std_error_per_s"] = rep.std_error;
    j["dof"] = rep.dof;
  } else if (ci.valid && std::isfinite(ci.half_width)) {
    j["ci95_per_s"] = {ci.mean - ci.half_width, ci.mean + ci.half_width};
    j["half_width_rel"] = ci.mean > 0 ? ci.half_width / ci.mean : 0.0;
    j["std_error_per_s"] = ci.std_error;
    j["dof"] = static_cast<int>(ci.dof);
  } else {
    no_interval(j);
    j["dof"] = nullptr;
  }
  j["batches_independent"] =
      runs.size() == 1 ? first["batches_independent"] : Json(ci.valid && ci.independent);
  j["runs_consistent"] = ci.valid ? Json(ci.consistent) : Json();
  if (ci.valid && std::isfinite(ci.dispersion))
    j["dispersion"] = ci.dispersion;
  else
    j["dispersion"] = nullptr;
  j["run_precision"] = first["run_precision"];
  j["simulated_ms"] = simulated;
  j["simulated_ms_runs"] = simulated_runs;
  j["ceiling_ms"] = first["ceiling_ms"];
  pooled_not_reached(j, runs, ci, precision);
  j["runs"] = runs;
  return j;
}

Json replication_run_length(const std::vector<double>& rates, double precision, bool seed_free) {
  const auto r = static_cast<int>(rates.size());
  const ReplicationCi rep = replication_ci(rates);
  const double mean = rep.mean;
  Json j;
  j["applicable"] = false;
  j["precision"] = precision;
  j["interval"] = "replications";
  j["counter"] = "ops_per_s";
  j["pooled_runs"] = r;
  j["seed_free"] = seed_free;
  j["rate_per_s"] = mean;
  if (seed_free || r >= 2) {
    const double se = rep.std_error, half = rep.half_width;
    j["ci95_per_s"] = {mean - half, mean + half};
    j["half_width_rel"] = mean > 0 ? half / mean : 0.0;
    j["std_error_per_s"] = se;
    j["dof"] = r >= 2 ? Json(r - 1) : Json();
    j["reached"] = precision > 0 && mean > 0 && half <= precision * mean;
    if (j["reached"].get<bool>())
      j["not_reached"] = nullptr;
    else if (precision <= 0)
      j["not_reached"] = "precision is 0: no precision asked";
    else
      j["not_reached"] = fmt::format(
          "the interval of the {} runs +-{:.2f} % is wider than +-{:.2f} %: more repeats narrow it",
          r, mean > 0 ? 100 * half / mean : 0.0, 100 * precision);
  } else {
    no_interval(j);
    j["dof"] = nullptr;
    j["reached"] = false;
    j["not_reached"] = "one run of a run to completion has no interval: repeats >= 2 give one";
  }
  return j;
}

}  // namespace semsim::report
