// From measurements to a machine model (the cpu_models format): every parameter's
// value and its source text, the probes' statistics and the checks as provenance.
// Pure given its inputs: the same measurements give the same model, byte for byte.
#pragma once

#include <functional>
#include <string>

#include "calibrate/measurements.hpp"
#include "core/json.hpp"

namespace semsim::calibrate {

// What the simulator charges per call, outside user space, for one task running
// `workload` alone on `model` under kernel `generation` (close_kernel_path.hpp).
using SimulatedCall =
    std::function<double(const Json& model, const std::string& generation, const Json& workload)>;

// The model, without provenance.wall_s (the caller knows how long the run took).
Json derive_model(const Measurements& x, const SimulatedCall& simulated_call_ns);

}  // namespace semsim::calibrate
