#include "report/run_length.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace semsim::report {

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
    const double c = 1.0 - succ / (2.0 * ss);
    constexpr double kZ90 = 1.2815515655446004;
    out.independent = c <= kZ90 * std::sqrt((k - 2) / (k * k - 1));
  }
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
}  // namespace

RunLength::RunLength(Tick warmup_end, Tick ceiling, double precision, Tick min_batch)
    : warmup_end_(warmup_end),
      ceiling_(ceiling),
      interval_(observation_interval(warmup_end, ceiling)),
      next_(warmup_end % interval_),  // the grid runs through warmup_end
      precision_(precision),
      batches_(kMinBatches, std::max<Tick>(1, (min_batch + interval_ - 1) / interval_)) {}

void RunLength::begin(Tick now, std::int64_t count, bool detected) {
  phase_ = Phase::Window;
  begin_ = now;
  begin_count_ = count;
  detected_ = detected;
  warmup_obs_.clear();
  warmup_obs_.shrink_to_fit();
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
  return precision_ > 0 && detected_ && ci_.batches >= kMinBatches && ci_.independent &&
         rate_ > 0 && half_width_ <= precision_ * rate_;
}

RunLength::Step RunLength::observe(Tick now, std::int64_t count) {
  const std::int64_t inc = count - last_;
  last_ = count;
  Step step = Step::Continue;
  if (phase_ == Phase::Start) {
    phase_ = Phase::Warmup;
  } else if (phase_ == Phase::Warmup) {
    warmup_obs_.push_back(static_cast<double>(inc));
  } else if (phase_ == Phase::Window) {
    const bool completed = now - prev_ == interval_ && batches_.add(inc);
    if (now >= ceiling_) {
      reached_ = evaluate(now, count);
      stop_ = now;
      phase_ = Phase::Done;
      return Step::Stop;
    }
    if (completed && precision_ > 0 && detected_ &&
        batches_.sums().size() >= static_cast<std::size_t>(kMinBatches) && evaluate(now, count)) {
      reached_ = true;
      stop_ = now;
      phase_ = Phase::Done;
      return Step::Stop;
    }
  }
  if (phase_ == Phase::Warmup && now >= warmup_end_) {
    if (precision_ <= 0) {
      begin(now, count, false);
      step = Step::Begin;
    } else {
      const std::size_t n = warmup_obs_.size();
      if ((now == warmup_end_ || n % 5 == 0) && n >= kMinMserObservations) {
        mser_ = mser5(warmup_obs_);
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
  j["reached"] = reached_;
  j["counter"] = counter;
  j["rate_per_s"] = rate_;
  if (ci_.batches >= 2) {
    j["ci95_per_s"] = {rate_ - half_width_, rate_ + half_width_};
    j["half_width_rel"] = rate_ > 0 ? half_width_ / rate_ : 0.0;
  } else {
    j["ci95_per_s"] = nullptr;
    j["half_width_rel"] = nullptr;
  }
  j["batches"] = ci_.batches;
  j["batch_ms"] = ms(interval_ * batches_.per_batch());
  j["batches_independent"] = ci_.independent;
  j["observation_us"] = static_cast<double>(interval_) / kTicksPerUs;
  j["warmup_ms"] = ms(begin_);
  j["warmup_detected"] = detected_;
  // Where MSER-5 put the end of the transient, at the date it was last run.
  if (precision_ > 0 && mser_date_ > 0)
    j["mser_truncation_ms"] =
        ms((warmup_end_ % interval_) + interval_ * static_cast<Tick>(mser_.truncation));
  j["window_ms"] = ms(stop_ - begin_);
  j["simulated_ms"] = ms(stop_);
  j["ceiling_ms"] = ms(ceiling_);
  return j;
}

}  // namespace semsim::report
