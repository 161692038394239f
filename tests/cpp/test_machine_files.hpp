// Machine files for the tests: a preset's document, the message parsing a
// document raises, and a changed preset written to a file of its own.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
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

// A machine document written to a temporary file named after `tag` and this
// process (CTest runs tests in parallel), removed with the object: for a
// scenario's "machine" field.
class MachineFile {
 public:
  MachineFile(const Json& doc, const std::string& tag)
      : path_(std::filesystem::temp_directory_path() /
              ("semsim-" + tag + "-" + std::to_string(::getpid()) + ".json")) {
    std::ofstream(path_) << doc.dump();
  }
  ~MachineFile() { std::filesystem::remove(path_); }
  MachineFile(const MachineFile&) = delete;
  MachineFile& operator=(const MachineFile&) = delete;
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace semsim::config::testing
