// The one step of the calibration that simulates: what the simulator charges per call,
// outside user space, for one task running `workload` alone on model `m` under kernel
// `generation`, without OS noise (the probes' batches are the uninterrupted ones): the
// model's own figure for what a single-call probe measured. semop_kernel_path is closed
// on it (derive.cpp). The only part of sim/calibrate that uses the driver.
#pragma once

#include <string>

#include "core/json.hpp"

namespace semsim::calibrate {

double simulated_call_ns(Json m, const std::string& generation, const Json& workload);

}  // namespace semsim::calibrate
