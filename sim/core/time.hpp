// Simulated time: an integer count of picoseconds.
//
// SimGrid's clock is a double; we only ever hand it whole ticks, so every date
// is an exactly representable integer (2^53 ps is about 2.5 hours) and runs
// are bit-identical. Model parameters are given in nanoseconds in the JSON
// files and converted once, at load time.
#pragma once

#include <cmath>
#include <cstdint>

namespace semsim {

using Tick = std::int64_t;

constexpr Tick kTicksPerNs = 1000;
constexpr Tick kTicksPerUs = 1000 * kTicksPerNs;
constexpr Tick kTicksPerMs = 1000 * kTicksPerUs;
constexpr Tick kTicksPerSecond = 1000 * kTicksPerMs;

inline Tick ns_to_ticks(double ns) { return static_cast<Tick>(std::llround(ns * kTicksPerNs)); }
inline double ticks_to_ns(Tick t) { return static_cast<double>(t) / kTicksPerNs; }
inline double ticks_to_seconds(Tick t) { return static_cast<double>(t) / kTicksPerSecond; }

}  // namespace semsim
