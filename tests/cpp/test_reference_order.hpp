// What the fast-path-against-reference tests share (test_time_order.cpp,
// test_read_ahead.cpp): the process-wide reference mode as a scope, a
// scenario's result bytes in either mode, and the shipped scenarios made
// short for one machine under every generation.
#pragma once

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "config/scenario.hpp"
#include "core/simulation.hpp"
#include "driver/simulate.hpp"
#include "ipc/kernel_policy.hpp"

namespace semsim::test_reference {

// Restores the process-wide default on scope exit (tests share a process).
struct ReferenceOrder {
  explicit ReferenceOrder(bool on) { core::Simulation::set_default_reference_order(on); }
  ~ReferenceOrder() { core::Simulation::set_default_reference_order(false); }
};

inline Json load_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  return Json::parse(in);
}

inline std::string simulate_bytes(const Json& doc, bool reference) {
  ReferenceOrder mode(reference);
  return driver::simulate(parse_scenario(doc)).dump();
}

struct Case {
  std::string label;  // generation and file
  Json doc;
};

// Every shipped scenario (they cover every workload) under every generation,
// short (0.15 ms after 0.05 ms), on `machine`, with the file's own thread
// counts up to `max_threads` (oversubscribed when that exceeds its CPUs).
inline std::vector<Case> shipped_cases(const std::string& machine, int max_threads) {
  const std::filesystem::path dir = std::filesystem::path(SEMSIM_SOURCE_DIR) / "scenarios/host";
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::vector<Case> cases;
  for (const auto& policy : ipc::generations()) {
    for (const auto& file : files) {
      Json doc = load_file(file);
      doc["machine"] = machine;
      doc["kernel"] = policy.id;
      doc["duration_ms"] = 0.15;
      doc["warmup_ms"] = 0.05;
      doc["repeats"] = 1;
      auto& w = doc["workload"];
      if (w["type"] == "sem-lockunlock") w["loops"] = 200;
      Json threads = Json::array();
      for (const auto& n : doc["threads"])
        if (n.get<int>() <= max_threads) threads.push_back(n);
      doc["threads"] = threads;
      cases.push_back({policy.id + " " + file.filename().string(), std::move(doc)});
    }
  }
  return cases;
}

}  // namespace semsim::test_reference
