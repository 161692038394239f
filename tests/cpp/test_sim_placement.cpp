// A task pinned to a CPU the scenario's machine does not have is bad input for
// the simulator, as it is for the native runner on a host of that size: the
// benchmark could not make that placement. (The simulator used to wrap the
// CPU index onto the machine's CPUs, a placement nobody asked for.)
#include <gtest/gtest.h>

#include <string>

#include "config/scenario.hpp"
#include "core/errors.hpp"
#include "driver/simulate.hpp"

namespace semsim {
namespace {

std::string refusal(const Json& doc) {
  try {
    driver::simulate(parse_scenario(doc));
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

Json ping_pong(int threads) {
  Json doc = Json::parse(R"({"name": "p", "machine": "host-default", "kernel": "hysteresis",
    "workload": {"type": "sem-scalebench", "mode": 2}, "duration_ms": 0.2, "warmup_ms": 0.1,
    "precision": 0})");
  doc["threads"] = threads;
  return doc;
}

// get_cpunr() puts thread 3 of 4 on CPU 2 of a 2-CPU machine (its offsets wrap
// once, then run past the last CPU).
TEST(SimPlacement, ScalebenchBeyondTheMachinesCpusIsRefused) {
  EXPECT_EQ(refusal(ping_pong(2)), "");
  const std::string why = refusal(ping_pong(4));
  EXPECT_EQ(why.rfind("workload.pin: sem-scalebench places thread 3 of 4 on CPU 2", 0), 0) << why;
  EXPECT_NE(why.find("but machine host-default has 2 CPUs: at most 3 threads can be pinned"),
            std::string::npos)
      << why;
  // Unpinned, the same point runs.
  Json doc = ping_pong(4);
  doc["workload"]["pin"] = "unpinned";
  EXPECT_EQ(refusal(doc), "");
}

TEST(SimPlacement, ScalebenchMaxCpusAboveTheMachinesIsRefused) {
  Json doc = ping_pong(2);
  doc["workload"]["max_cpus"] = 8;
  const std::string why = refusal(doc);
  EXPECT_EQ(why, "workload.max_cpus: 8 CPUs, but machine host-default has 2 CPUs");
}

TEST(SimPlacement, CustomScriptPinnedPastTheLastCpuIsRefused) {
  Json doc = Json::parse(R"({"name": "c", "machine": "host-default", "kernel": "hysteresis",
    "workload": {"type": "custom", "semaphores": 1, "initial": 1,
                 "tasks": [{"cpu": 1, "ops": [{"sops": [[0, -1]]}, {"sops": [[0, 1]]}]},
                           {"cpu": 5, "ops": [{"sops": [[0, -1]]}, {"sops": [[0, 1]]}]}]},
    "threads": 2, "duration_ms": 0.2, "warmup_ms": 0.1, "precision": 0})");
  const std::string why = refusal(doc);
  EXPECT_EQ(
      why, "workload.tasks: task 1 is pinned to CPU 5, but machine host-default has 2 CPUs (0..1)");
  doc["workload"]["tasks"][1]["cpu"] = 0;
  EXPECT_EQ(refusal(doc), "");
}

}  // namespace
}  // namespace semsim
