// Runs a scenario in the simulator: one point per thread count, each
// repeated over `repeats` seeds, and returns the result document.
//
// A scenario's runs (one per thread count and seed) are independent, so they
// may run at once in forked processes (driver/run_pool.hpp); the document is
// assembled from the runs in their fixed order (point by point, seed by seed),
// so it is the same bytes whatever `jobs` is and whichever run ends first.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "config/machine_config.hpp"
#include "config/scenario.hpp"
#include "driver/run_pool.hpp"

namespace semsim::driver {

// One run of a scenario: the point `point` (its index in scenario.threads),
// seeded `seed`.
struct RunSpec {
  std::size_t point = 0;
  int threads = 0;
  std::uint64_t seed = 0;
};
// Every run of the scenario, in the document's order: point by point, seed by seed.
std::vector<RunSpec> runs_of(const Scenario& scenario);

// Throws InputError when a point pins a task to a CPU the machine does not
// have (the placement the native runner refuses on a host of that size, and
// the benchmark could not make): never a silent wrap onto another CPU.
void check_placement(const Scenario& scenario, const config::MachineParams& machine);

// The result document from the runs' results, in runs_of() order.
Json assemble(const Scenario& scenario, const config::MachineParams& machine,
              const std::vector<Json>& runs);

struct SimulateOptions {
  int jobs = 1;  // runs at once; 1: every run in this process, one after the other
  // While runs go on in other processes, called about every 100 ms; an
  // exception it throws (an interrupt) ends them and is rethrown.
  std::function<void()> poll;
};

// The full result document: {"side": "simulated", "scenario", "provenance", "points"}.
// Byte-identical for the same scenario, whatever the options: no wall-clock
// times, dates or host names.
Json simulate(const Scenario& scenario, const SimulateOptions& options = {});

// Several scenarios at once: every run of every scenario shares the `jobs`
// processes, the longest (by estimate) first. One outcome per scenario, by
// index: its document, or the first error of its runs (in runs_of() order).
// `done(i)` is told when scenario i's outcome is known.
std::vector<TaskOutcome> simulate_batch(const std::vector<Scenario>& scenarios,
                                        const SimulateOptions& options,
                                        const std::function<void(std::size_t)>& done = {});

}  // namespace semsim::driver
