// One traced run for `semsim run --trace`: the scenario's single thread count
// at its first seed, with a recorder over a window of simulated time.
#pragma once

#include <cstdint>

#include "config/scenario.hpp"

namespace semsim::driver {

// {"point": the run's point JSON (as simulate() reports a run), "trace": the
// recorder's events (report/trace_recorder.hpp), "overflowed": bool}. Throws
// InputError when the scenario has several thread counts or the window is empty.
Json trace_point(const Scenario& scenario, double from_ms, double to_ms, std::uint64_t limit);

}  // namespace semsim::driver
