#include "config/scenario.hpp"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "config/json_fields.hpp"
#include "config/kernel_config.hpp"
#include "core/errors.hpp"

namespace semsim {

using config::as_choice;
using config::as_int;
using config::as_number;
using config::as_string;
using config::fail;

namespace {

constexpr int kMaxThreads = 4096;
constexpr int kMaxSemaphores = 32000;  // SEMMSL default

const std::vector<std::string> kScenarioFields = {"name",        "machine",   "kernel",
                                                  "workload",    "threads",   "duration_ms",
                                                  "warmup_ms",   "seed",      "repeats",
                                                  "description"};

struct WorkloadInfo {
  std::string type;
  std::string description;
  std::vector<std::string> fields;
};

const std::vector<WorkloadInfo>& workload_table() {
  static const std::vector<WorkloadInfo> table = {
      {"semop-multi",
       "N threads, M semaphores in one array, +1 then -1 on one semaphore per iteration, never "
       "sleeps (Rik van Riel, 2013)",
       {"type", "semaphores", "pattern", "pin"}},
  };
  return table;
}

WorkloadSpec parse_workload(const Json& w) {
  const std::string path = "workload";
  if (!w.is_object()) fail(path, "must be an object such as {\"type\": \"semop-multi\", ...}");
  std::vector<std::string> types;
  for (const auto& info : workload_table()) types.push_back(info.type);
  WorkloadSpec spec;
  spec.type = as_choice(config::require(w, path, "type"), "workload.type", types);
  for (const auto& info : workload_table())
    if (info.type == spec.type) config::reject_unknown_keys(w, path, info.fields);
  if (w.contains("semaphores"))
    spec.semaphores = static_cast<int>(as_int(w["semaphores"], "workload.semaphores", 1, kMaxSemaphores));
  if (w.contains("pattern"))
    spec.pattern = as_choice(w["pattern"], "workload.pattern", {"stride", "own", "random"});
  if (w.contains("pin"))
    spec.pin = as_choice(w["pin"], "workload.pin", {"pinned", "unpinned"}) == "pinned"
                   ? Pinning::Pinned
                   : Pinning::Unpinned;
  spec.raw = w;
  return spec;
}

std::vector<int> parse_threads(const Json& v) {
  std::vector<int> out;
  if (v.is_array()) {
    if (v.empty()) fail("threads", "must be a positive integer or a non-empty list of them");
    for (std::size_t i = 0; i < v.size(); ++i)
      out.push_back(static_cast<int>(as_int(v[i], fmt::format("threads[{}]", i), 1, kMaxThreads)));
  } else {
    out.push_back(static_cast<int>(as_int(v, "threads", 1, kMaxThreads)));
  }
  return out;
}

}  // namespace

const std::vector<std::string>& known_workloads() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& info : workload_table()) n.push_back(info.type + "\t" + info.description);
    return n;
  }();
  return names;
}

Json load_json_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(fmt::format("{}: cannot open file (missing or unreadable)", path));
  std::stringstream buffer;
  buffer << in.rdbuf();
  try {
    return Json::parse(buffer.str());
  } catch (const Json::parse_error& e) {
    throw InputError(fmt::format("{}: malformed JSON at byte {}: {}", path, e.byte,
                                 std::string(e.what()).substr(std::string(e.what()).rfind(':') + 2)));
  }
}

void apply_override(Json& doc, const std::string& assignment) {
  auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError(fmt::format("--set {}: expected KEY=VALUE with KEY a dotted field path, e.g. "
                                 "workload.semaphores=64",
                                 assignment));
  std::string key = assignment.substr(0, eq);
  std::string text = assignment.substr(eq + 1);
  Json value;
  try {
    value = Json::parse(text);
  } catch (const Json::parse_error&) {
    value = text;  // not JSON: a plain string such as a kernel id
  }
  if (!doc.is_object()) throw InputError("scenario: must be a JSON object");
  Json* node = &doc;
  std::size_t start = 0;
  while (true) {
    auto dot = key.find('.', start);
    std::string part = key.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (part.empty()) throw InputError(fmt::format("--set {}: empty field name in the key", assignment));
    if (dot == std::string::npos) {
      (*node)[part] = value;
      return;
    }
    Json& child = (*node)[part];
    if (child.is_null()) child = Json::object();
    if (!child.is_object())
      throw InputError(fmt::format("--set {}: {} is not an object, cannot set a field inside it",
                                   assignment, key.substr(0, dot)));
    node = &child;
    start = dot + 1;
  }
}

Scenario parse_scenario(const Json& doc) {
  if (!doc.is_object()) throw InputError("scenario: must be a JSON object");
  config::reject_unknown_keys(doc, "", kScenarioFields);
  Scenario s;
  s.name = doc.contains("name") ? as_string(doc["name"], "name") : "scenario";
  s.machine = as_string(config::require(doc, "", "machine"), "machine");
  if (s.machine.empty()) fail("machine", "must name a preset (see `semsim list`) or a machine file");
  s.kernel = config::require(doc, "", "kernel");
  config::parse_kernel(s.kernel);  // validates the id and any policy overrides
  s.workload = parse_workload(config::require(doc, "", "workload"));
  s.threads = parse_threads(config::require(doc, "", "threads"));
  if (doc.contains("duration_ms")) s.duration_ms = as_number(doc["duration_ms"], "duration_ms", 0, true);
  if (doc.contains("warmup_ms")) s.warmup_ms = as_number(doc["warmup_ms"], "warmup_ms", 0, false);
  if (doc.contains("seed"))
    s.seed = static_cast<std::uint64_t>(as_int(doc["seed"], "seed", 0, (1LL << 53)));
  if (doc.contains("repeats")) s.repeats = static_cast<int>(as_int(doc["repeats"], "repeats", 1, 1000));
  if (doc.contains("description")) as_string(doc["description"], "description");
  if (s.duration_ms + s.warmup_ms > 3.6e6) fail("duration_ms", "warmup_ms + duration_ms must be at most one hour");
  s.raw = doc;
  return s;
}

}  // namespace semsim
