// The one declaration of every machine parameter: where it sits in a machine file,
// its unit, whether it is required and its default, its valid range and what it
// means. The loader (machine_config.cpp) reads the file through it; the tests check
// cpu_models/machine.schema.json and the parameter tables of cpu_models/README.md
// against it (tests/cpp/test_machine_decl.cpp renders the tables); the calibration
// (sim/calibrate/) writes each parameter where its declaration puts it.
//
// Every parameter is {"value": ..., "source": "..."} in the file (a matrix is
// {"matrix": ..., "source": ...}): the source is required and must not be empty.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "machine/params.hpp"

namespace semsim::config {

enum class ParamKind {
  Ticks,        // a time in ns, kept as integer picoseconds
  FineNs,       // a per-unit cost in ns kept as a double (below a tick is allowed)
  Number,       // a plain number (clock_ghz)
  Share,        // a number from 0 to 1
  Flag,         // true or false
  RefillTable,  // [[reuse distance, ns], ...]
  Jitter,       // {"waker": [...], "wakee": [...]}
  Noise,        // {"per_s": ..., "durations_ns": [...]}
  Matrix,       // {"matrix": [[...], ...], "source": ...}
};

// The largest time a machine parameter may give: one second (time slices are ms, the
// rest ns to us), far inside the int64 picoseconds of a Tick.
constexpr double kMaxParamNs = 1e9;

struct ParamDecl {
  std::string_view group;  // "latency_ns", "costs_ns", or "" for the top level
  std::string_view key;
  ParamKind kind;
  std::string_view unit;
  bool required;
  double fallback;                // the value when absent, in `unit` (Ticks: -1 means "absent")
  std::string_view default_text;  // the default as the README says it
  double min;                     // valid range of numbers: min (exclusive if min_exclusive) ..
  bool min_exclusive;
  double max;
  std::string_view description;
  // Where the value goes (the member matching `kind`; none for Jitter, Noise, Matrix).
  Tick machine::MachineParams::*ticks = nullptr;
  double machine::MachineParams::*number = nullptr;
  bool machine::MachineParams::*flag = nullptr;
  std::vector<std::pair<std::int64_t, Tick>> machine::MachineParams::*table = nullptr;

  // "costs_ns.l1_hit", "clock_ghz": how the parameter is named in docs and rules.
  std::string name() const;
};

// In file order: latency classes, memory latency, costs, clock, then the optional
// top-level parameters.
const std::vector<ParamDecl>& machine_params();
// The declaration of "group.key" (or "key" at the top level); nullptr when none.
const ParamDecl* find_param(std::string_view name);

// The README's table of the parameters of `group` ("costs_ns", or "" for the optional
// top-level ones), as Markdown.
std::string readme_param_table(std::string_view group);

}  // namespace semsim::config
