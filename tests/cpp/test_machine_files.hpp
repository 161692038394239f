// Machine files for the tests of sim/config/machine_config.cpp: a preset's
// document, and the message parsing a document raises.
#pragma once

#include <string>

#include "config/json_fields.hpp"
#include "config/machine_config.hpp"
#include "core/errors.hpp"

namespace semsim::config::testing {

inline const std::string kModels = std::string(SEMSIM_SOURCE_DIR) + "/cpu_models/";

inline Json model(const std::string& name) { return load_json_file(kModels + name + ".json"); }

// The message of the InputError parsing `doc` raises ("" when it parses).
inline std::string error_of(const Json& doc) {
  try {
    parse_machine(doc, "m");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace semsim::config::testing
