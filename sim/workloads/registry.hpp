// The workload registry: every workload type the scenario format knows, keyed on
// workload.type, with the fields its scenario object may have and a factory for
// its Workload (workload.hpp).
//
// Adding a workload:
//   1. sim/workloads/<type>_def.hpp: its parameters and task programs (Step by Step);
//   2. sim/workloads/<type>.cpp: its Workload subclass and `WorkloadType <name>_type()`
//      (type, description, pinning default, fields, factory);
//   3. one line in kTypes (registry.cpp) and its parameters in WorkloadSpec (spec.hpp);
//   4. its entry in scenarios/scenario.schema.json.
// config reads the fields from the table, so no JSON code is written per workload.
//
// Field reading (config/scenario.cpp), in table order, each field optional unless
// `required`: an Int must be an integer in [lo, hi]; an IntChoice one of `int_choices`
// (the message lists `choices_text`); a Choice one of `choices`; InitialValues and
// TaskScripts are custom's formats (one value or a list of `semaphores` values; op
// scripts), sized by spec.semaphores, which an earlier field sets.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "workloads/workload.hpp"

namespace semsim::workloads {

struct ParamField {
  enum class Kind { Int, IntChoice, Choice, InitialValues, TaskScripts };
  std::string key;
  Kind kind = Kind::Int;
  std::int64_t lo = 0;
  std::int64_t hi = 0;
  bool required = false;
  std::vector<std::int64_t> int_choices;  // IntChoice
  std::string choices_text;               // IntChoice: the allowed values, described
  std::vector<std::string> choices;       // Choice
  std::function<void(WorkloadSpec&, std::int64_t)> set_int;                   // Int, IntChoice
  std::function<void(WorkloadSpec&, const std::string&)> set_text;            // Choice
  std::function<void(WorkloadSpec&, std::vector<int>)> set_values;            // InitialValues
  std::function<void(WorkloadSpec&, std::vector<CustomScript>)> set_scripts;  // TaskScripts
};

struct WorkloadType {
  std::string type;
  std::string description;  // one line for `semsim list`
  Pinning default_pin = Pinning::Pinned;
  std::vector<ParamField> fields;  // besides "type" and "pin"
  std::function<std::unique_ptr<const Workload>(const WorkloadSpec&)> make;
};

// Every workload type, in `semsim list` order.
const std::vector<WorkloadType>& workload_types();
// The entry of `type`, or nullptr.
const WorkloadType* find_workload_type(const std::string& type);
// The Workload of a spec. An unknown type is an InputError naming workload.type.
std::unique_ptr<const Workload> make_workload(const WorkloadSpec& spec);

// Field constructors for the tables.
ParamField int_field(std::string key, std::int64_t lo, std::int64_t hi,
                     std::function<void(WorkloadSpec&, std::int64_t)> set);

}  // namespace semsim::workloads
