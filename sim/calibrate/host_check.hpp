// The host check: has this host moved since it was calibrated? `semsim compare`
// (and `demo`) runs it before and after measuring against the calibrated model.
//
// It re-runs only the two probes a calibrated model is checked on, the quick way
// (calibrate/probes.hpp, Settings.quick): line_pingpong over every pair of CPUs,
// reduced as derive_special.cpp reduces it (per latency class, the median over
// its pairs), and semop_uncontended three times (the middle value, as derive.cpp
// takes it). A fraction of a second on a 2-CPU host, where
// a quick calibration, which the check used to run whole, took about 4 s.
#pragma once

#include "core/json.hpp"

namespace semsim::calibrate {

// {"latency_ns": {"same_die": x, ...}, "semop_ns": y}: latency_ns has the classes
// the host's CPU pairs fall in (as the calibrated model's latency_ns, before any
// class is raised to a nearer one), and is absent on a host of one CPU. Serialised with the native
// runner and the calibration (they would disturb each other).
Json host_check();

}  // namespace semsim::calibrate
