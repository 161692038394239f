// One simulated run: a fresh engine, machine, array and tasks; a warm-up; a
// measurement window; the statistics of that window.
#pragma once

#include <cstdint>

#include "config/machine_config.hpp"
#include "config/scenario.hpp"
#include "ipc/kernel_policy.hpp"
#include "report/trace_recorder.hpp"

namespace semsim::driver {

// Statistics of one run's measurement window, as JSON (see report/). With a
// recorder, the run's trace events also go there (the run itself is the same).
Json run_point(const Scenario& scenario, const config::MachineParams& machine,
               const ipc::KernelPolicy& policy, int threads, std::uint64_t seed,
               report::TraceRecorder* trace = nullptr);

}  // namespace semsim::driver
