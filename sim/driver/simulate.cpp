#include "driver/simulate.hpp"

#include <algorithm>
#include <filesystem>

#include "config/machine_config.hpp"
#include "driver/run_point.hpp"

namespace semsim::driver {

Json simulate(const Scenario& scenario) {
  const auto machine = config::load_machine(scenario.machine);
  const auto& policy = scenario.kernel;
  Json points = Json::array();
  for (int threads : scenario.threads) {
    std::vector<Json> runs;
    Json seeds = Json::array();
    for (int r = 0; r < scenario.repeats; ++r) {
      const std::uint64_t seed = scenario.seed + static_cast<std::uint64_t>(r);
      seeds.push_back(seed);
      runs.push_back(run_point(scenario, machine, policy, threads, seed));
    }
    // Report the median run (the lower one for an even count), so every
    // figure of a point comes from one real run; the spread goes beside it.
    std::vector<std::size_t> order(runs.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return runs[a]["ops_per_s"].get<double>() < runs[b]["ops_per_s"].get<double>();
    });
    Json point = runs[order[(order.size() - 1) / 2]];
    Json all = Json::array();
    for (const auto& run : runs) all.push_back(run["ops_per_s"]);
    point["threads"] = threads;
    point["kernel"] = policy.id;
    point["machine"] = machine.name;
    point["repeats"] = scenario.repeats;
    point["seeds"] = seeds;
    point["ops_per_s_runs"] = all;
    point["ops_per_s_min"] = runs[order.front()]["ops_per_s"];
    point["ops_per_s_max"] = runs[order.back()]["ops_per_s"];
    points.push_back(point);
  }
  Json doc;
  doc["side"] = "simulated";
  doc["scenario"] = scenario.raw;
  doc["provenance"] = {
      {"semsim_version", SEMSIM_VERSION},
      {"machine", machine.name},
      {"machine_model_hash", machine.hash},
      // The file's name (not its directory, which depends on where
      // semsim is installed); the hash identifies its content.
      {"machine_model_file", std::filesystem::path(machine.file).filename().string()},
      {"kernel", policy.id},
      {"kernel_releases", policy.kernels}};
  doc["points"] = points;
  return doc;
}

}  // namespace semsim::driver
