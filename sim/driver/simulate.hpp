// Runs a scenario in the simulator: one point per thread count, each
// repeated over `repeats` seeds, and returns the result document.
#pragma once

#include "config/scenario.hpp"

namespace semsim::driver {

// The full result document: {"side": "simulated", "scenario", "provenance", "points"}.
// Byte-identical for the same scenario: no wall-clock times, dates or host names.
Json simulate(const Scenario& scenario);

}  // namespace semsim::driver
