// Machine models (cpu_models/*.json): loading, validation, and the preset
// catalogue. The format is documented in cpu_models/README.md; every numeric
// parameter is {"value": x, "source": "..."} and is converted to integer
// picoseconds here, once.
#pragma once

#include <string>
#include <vector>

#include "core/json.hpp"
#include "machine/params.hpp"

namespace semsim::config {

// MachineParams (sim/machine/params.hpp): this loader is the only code that fills it
// from JSON.

// Directory holding cpu_models/ and scenarios/ (package data when installed).
void set_data_dir(const std::string& dir);
std::string data_dir();

// Where `semsim calibrate` keeps this host's model, which machine "host" means:
// $XDG_DATA_HOME/semsim/host.json (default ~/.local/share/semsim/host.json).
std::string host_model_path();

// A machine by name or path: a path (with a '/' or ending in .json) is that file;
// "host" is host_model_path() (an InputError saying how to make it when missing); any
// other name is a preset of the package (cpu_models/<name>.json of the data
// directories, never of the current directory).
MachineParams load_machine(const std::string& name_or_path);
// Every field is checked here, matrices included; an error names the field's path.
MachineParams parse_machine(const Json& doc, const std::string& where);
// The JSON document load_machine() would read for `name_or_path`, unchecked beyond
// being JSON (for tools and tests that edit a model and load the result).
Json machine_document(const std::string& name_or_path);

struct MachineEntry {
  std::string name, description;
  int cpus;
};
std::vector<MachineEntry> list_machines();

}  // namespace semsim::config
