// One simulated run: a fresh engine, machine, array and tasks; a warm-up; a
// measurement window; the statistics of that window.
#pragma once

#include <cstdint>

#include "config/machine_config.hpp"
#include "config/scenario.hpp"
#include "ipc/kernel_policy.hpp"

namespace semsim::driver {

// Statistics of one run's measurement window, as JSON (see report/).
Json run_point(const Scenario& scenario, const config::MachineParams& machine,
               const ipc::KernelPolicy& policy, int threads, std::uint64_t seed);

}  // namespace semsim::driver
