// Uncertainty as data: a machine file may give a parameter that is an assumption a
// range, and a guessed topology alternatives, so that a prediction can be reported over
// them (`semsim run --uncertainty`, python/semsim/uncertainty.py). The syntax (documented
// in cpu_models/README.md, "Ranges and alternatives"):
//
//   "costs_ns": {"full_fence": {"value": 12.41, "source": "assumption: ...",
//                               "range": {"low": 12.41, "high": 19.92, "source": "why"}}}
//   "topology": {..., "source": "... assumption ...",
//                "alternatives": [{"name": "4 sockets x 6 cores", "source": "why",
//                                  "topology": {...a whole topology...},
//                                  "latency_ns": {...classes it adds or changes...}}]}
//
// Only a number parameter whose source says "assumption" may have a range (a published
// or probed figure has none here), and its value must lie within it. The nominal model
// is the file without these annotations: they never change a nominal result or the
// model's hash.
#pragma once

#include <string>
#include <vector>

#include "core/json.hpp"

namespace semsim::config {

// A parameter with a range, or the topology with its alternatives.
struct UncertainParameter {
  std::string parameter;                  // "costs_ns.full_fence", "latency_ns.one_hop", "topology"
  std::string unit;                       // "ns", "GHz", "" for the topology
  std::string source;                     // why the range (or the alternatives) are what they are
  Json nominal;                           // the file's value (the topology: its shape as text)
  Json low, high;                         // the range's ends (null for the topology)
  std::vector<std::string> alternatives;  // the topology's alternatives' names
};

// One machine to simulate instead of the nominal one.
struct MachineVariant {
  std::string id;         // "costs_ns.full_fence=high", "topology=4 sockets x 6 cores", "all=low"
  std::string parameter;  // as in UncertainParameter, or "all" for a corner
  std::string setting;    // "low", "high", or the alternative's name
  Json value;             // the number simulated, or the alternative's name
  Json document;          // the machine file for it, without annotations
};

struct MachineUncertainty {
  std::vector<UncertainParameter> parameters;
  // One parameter at a time: each range's low and high end (in parameter order), each
  // alternative; with `corners`, then every range at its low end, and every one at high.
  std::vector<MachineVariant> variants;
};

// True when `doc` has a range or a topology alternative anywhere.
bool has_uncertainty(const Json& doc);
// `doc` without its ranges and alternatives: the nominal model.
Json without_uncertainty(const Json& doc);
// Checks every annotation (one-line InputErrors naming the field) and that each variant
// is a valid machine; `where` names the file as parse_machine's errors do.
MachineUncertainty machine_uncertainty(const Json& doc, const std::string& where,
                                       bool corners = false);

// The machine `name_or_path` names (load_machine's lookup), its uncertain parameters
// and its variants as JSON, for the Python package: {"machine", "model_hash",
// "parameters": [{"parameter", "unit", "source", "nominal", "range" | "alternatives"}],
// "variants": [{"id", "parameter", "setting", "value", "model_hash", "document"}]}.
Json machine_uncertainty_json(const std::string& name_or_path, bool corners);

}  // namespace semsim::config
