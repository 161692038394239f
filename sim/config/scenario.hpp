// The scenario: one JSON document that feeds the simulator and the native
// runner alike, so a prediction and a measurement are always of the same
// workload. All JSON parsing and validation of user input lives in
// sim/config; model code only ever sees the typed structs below.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/json.hpp"
#include "workloads/aim9_shm_def.hpp"
#include "workloads/custom_def.hpp"
#include "workloads/sem_lockunlock_def.hpp"
#include "workloads/sem_scalebench_def.hpp"
#include "workloads/sembench_def.hpp"

namespace semsim {

// How tasks are placed on CPUs.
enum class Pinning { Pinned, Unpinned };

// The workload of a scenario. `type` says which of the per-workload parameter sets
// below applies; the others keep their defaults. The definitions (what each task does,
// placement, array layout) are in sim/workloads/<workload>_def.hpp, shared by the
// simulator and the native runner; workloads/workload_defs.hpp answers the questions
// both sides ask of any workload (array sizes, sops per call, threads or processes).
struct WorkloadSpec {
  std::string type;                // "semop-multi", "sem-scalebench", ... (known_workloads())
  int semaphores = 1;              // semop-multi, sem-lockunlock, custom: semaphores used
  std::string pattern = "stride";  // semop-multi: stride | own | random
  Pinning pin = Pinning::Pinned;   // the benchmark's own default unless workload.pin says
  workloads::ScalebenchParams scalebench;  // sem-scalebench
  workloads::LockunlockParams lockunlock;  // sem-lockunlock (semaphores mirrored above)
  workloads::Aim9Params aim9;              // aim9-shm
  workloads::SembenchParams sembench;      // sembench
  workloads::CustomParams custom;          // custom (semaphores mirrored above)
  Json raw;                                // the validated workload object, as given
};

struct Scenario {
  std::string name;
  std::string machine;  // preset name (cpu_models/<name>.json) or a path to a machine file
  Json kernel;          // a generation id string, or {"base": id, <policy>: value, ...}
  WorkloadSpec workload;
  std::vector<int> threads;   // one point per value
  double duration_ms = 20.0;  // measured (simulated or real) window
  double warmup_ms = 2.0;     // discarded window before it
  // Adaptive run length: stop once the throughput's 95 % interval is within
  // +-precision (relative); duration_ms is the ceiling, warmup_ms the minimum
  // warm-up. 0: off, run the full duration (report/run_length.hpp).
  double precision = 0.01;
  std::uint64_t seed = 1;
  int repeats = 1;  // seeds (simulator) or runs (native) per point
  Json raw;         // the scenario after overrides, echoed into results
};

// Reads a JSON file; a missing file or malformed JSON is an InputError naming the path.
Json load_json_file(const std::string& path);

// Applies one "--set a.b.c=VALUE" override in place. VALUE is parsed as JSON; text that is
// not valid JSON is taken as a string. Creates intermediate objects as needed.
void apply_override(Json& doc, const std::string& assignment);

// Validates and converts a scenario document (after overrides). Every problem is an
// InputError whose message names the field and what is allowed.
Scenario parse_scenario(const Json& doc);

// The field names and allowed values, for `semsim list` and error messages.
const std::vector<std::string>& known_workloads();

}  // namespace semsim
