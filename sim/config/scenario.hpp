// The scenario: one JSON document that feeds the simulator and the native
// runner alike, so a prediction and a measurement are always of the same
// workload. All JSON parsing and validation of user input lives in
// sim/config; model code only ever sees the typed structs below.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/json_fields.hpp"
#include "core/json.hpp"
#include "ipc/kernel_policy.hpp"
#include "workloads/spec.hpp"

namespace semsim {

// The order in which the tasks first reach what they share. A saturated FIFO
// lock keeps the order of its first waiters for the whole run, so where tasks
// start together their tie decides it (validation/lock-rotation.md):
//   Spawn:    every task starts at date 0; ties go by task id (core/calendar.hpp),
//             the benchmark's own thread order;
//   Shuffled: task i starts pi(i) ticks (ps) late, pi a permutation drawn from
//             the run's seed: the same start with the ties broken at random.
enum class StartOrder { Spawn, Shuffled };

struct Scenario {
  std::string name;
  std::string machine;        // preset name (cpu_models/<name>.json) or a path to a machine file
  ipc::KernelPolicy kernel;   // the generation, with the scenario's policy overrides
  WorkloadSpec workload;      // the workload's typed parameters (workloads/spec.hpp)
  std::vector<int> threads;   // one point per value
  double duration_ms = 20.0;  // measured (simulated or real) window
  double warmup_ms = 2.0;     // discarded window before it
  // Adaptive run length: stop once the point's throughput 95 % interval, pooled
  // over its repeats, is within +-precision (relative); duration_ms is each
  // run's ceiling, warmup_ms the minimum warm-up. 0: off, run the full duration
  // (report/run_length.hpp). A run to completion's seeds stop once their
  // interval is within it, repeats the ceiling (driver/simulate.cpp).
  double precision = 0.01;
  std::uint64_t seed = 1;
  int repeats = 1;                             // seeds (simulator) or runs (native) per point
  StartOrder start_order = StartOrder::Spawn;  // simulator only
  Json raw;                                    // the scenario after overrides, echoed into results
  // Set by the driver, never read from JSON: a point's second round of runs, made
  // when its first round's seeds disagreed (driver/simulate.cpp), stops each run
  // at half the first round's interval (report/run_length.hpp).
  int round = 1;
};

// Applies one "--set a.b.c=VALUE" override in place. VALUE is parsed as JSON; text that is
// not valid JSON is taken as a string. Creates intermediate objects as needed.
void apply_override(Json& doc, const std::string& assignment);

// Validates and converts a scenario document (after overrides). Every problem is an
// InputError whose message names the field and what is allowed.
Scenario parse_scenario(const Json& doc);

// "type\tdescription" of every workload type, for `semsim list`.
const std::vector<std::string>& known_workloads();

}  // namespace semsim
