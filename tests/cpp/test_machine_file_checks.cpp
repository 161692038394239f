// What a machine file may say (sim/config/machine_config.cpp): every key is a
// declared parameter or part of the file's structure, a field is given once,
// and no transfer is faster than an L1 hit. Each refusal is one InputError
// naming the field; a file at the limit runs without a time-order fault.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "config/json_fields.hpp"
#include "config/machine_config.hpp"
#include "config/scenario.hpp"
#include "core/errors.hpp"
#include "driver/simulate.hpp"
#include "test_machine_files.hpp"

namespace semsim::config {
namespace {

using testing::error_of;
using testing::kModels;
using testing::MachineFile;
using testing::model;

void expect_refused(const Json& doc, const std::string& field, const std::string& what) {
  const std::string msg = error_of(doc);
  EXPECT_NE(msg.find(field), std::string::npos) << field << ": " << msg;
  EXPECT_NE(msg.find(what), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
}

TEST(MachineFileChecks, AMisspeltKeyIsAnErrorNotADefault) {
  const Json laptop = model("laptop-4");
  ASSERT_EQ(error_of(laptop), "");
  Json cost = laptop;
  cost["costs_ns"]["bubble_sort_rnd"] = cost["costs_ns"]["bubble_sort_round"];
  expect_refused(cost, "costs_ns.bubble_sort_rnd", "unknown field");
  Json top = laptop;
  top["clock_ghzz"] = top["clock_ghz"];
  expect_refused(top, "clock_ghzz", "unknown field");
  Json topo = laptop;
  topo["topology"]["sokets"] = 1;
  expect_refused(topo, "topology.sokets", "unknown field");
  for (const auto& entry : std::filesystem::directory_iterator(kModels)) {
    const std::string stem = entry.path().stem().string();
    if (entry.path().extension() != ".json" || stem.find("schema") != std::string::npos) continue;
    EXPECT_EQ(error_of(load_json_file(entry.path().string())), "") << stem;
  }
}

TEST(MachineFileChecks, ATransferFasterThanAnL1HitIsRefused) {
  Json doc = model("laptop-4");
  const double l1 = doc["costs_ns"]["l1_hit"]["value"].get<double>();
  Json fast = doc;
  fast["latency_ns"]["same_die"]["value"] = l1 / 2;
  expect_refused(fast, "latency_ns.same_die.value", "at least costs_ns.l1_hit");
  Json matrix = model("opteron-48");
  matrix["latency_matrix_ns"]["matrix"][0][1] = 0.1;
  expect_refused(matrix, "latency_matrix_ns.matrix[0][1]", "at least costs_ns.l1_hit");
  Json huge = model("opteron-48");
  huge["latency_matrix_ns"]["matrix"][0][1] = 1e30;
  expect_refused(huge, "latency_matrix_ns.matrix[0][1]", "<= 1000000000");
}

TEST(MachineFileChecks, MatricesAreWhatTheirNamesSay) {
  const Json opteron = model("opteron-48");
  Json diagonal = opteron;
  diagonal["latency_matrix_ns"]["matrix"][3][3] = "x";
  expect_refused(diagonal, "latency_matrix_ns.matrix[3][3]", "a CPU to itself must be 0");
  Json slit = opteron;
  slit["numa_distance"]["matrix"][0][0] = 255;
  expect_refused(slit, "numa_distance.matrix[0][0]", "10");
  Json local = opteron;
  local["numa_distance"]["matrix"][0][1] = 10;
  expect_refused(local, "numa_distance.matrix[0][1]", "11");
  Json hops = model("box-64");
  ASSERT_GE(hops["topology"]["socket_hops"].size(), 2u);
  hops["topology"]["socket_hops"][0][1] = hops["topology"]["socket_hops"][1][0].get<int>() + 1;
  expect_refused(hops, "topology.socket_hops[1][0]", "the same both ways");
  Json zero = model("box-64");
  zero["topology"]["socket_hops"][0][1] = 0;
  zero["topology"]["socket_hops"][1][0] = 0;
  expect_refused(zero, "topology.socket_hops[0][1]", "from 1 to 16");
}

TEST(MachineFileChecks, MessagesNameTheFileThenTheField) {
  Json no_cpus = model("laptop-4");
  no_cpus.erase("cpus");
  EXPECT_EQ(error_of(no_cpus), "m: cpus: is required");
  Json null_cpus = model("laptop-4");
  null_cpus["cpus"] = nullptr;
  EXPECT_EQ(error_of(null_cpus), "m: cpus: must be an integer from 1 to 256, got null");
  Json slowdown = model("laptop-4");
  slowdown["smt_compute_slowdown"]["value"] = "x";
  expect_refused(slowdown, "m: smt_compute_slowdown.value", "got a string \"x\"");
  const Json scenario = Json::parse(R"({"name": "s", "workload": {"type": "lat-sem"}})");
  expect_refused(scenario, "m: is a scenario", "not a machine model");
}

TEST(MachineFileChecks, AFieldGivenTwiceIsRefusedWithItsPath) {
  try {
    parse_json_text(R"({"workload": {"type": "semop-multi", "type": "lat-sem"}})", "s.json");
    FAIL() << "a repeated field parsed";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("s.json: workload.type: the field appears twice"),
              std::string::npos)
        << e.what();
  }
  EXPECT_NO_THROW(parse_json_text(R"({"a": {"type": 1}, "b": {"type": 2}})", "s.json"));
}

TEST(MachineFileChecks, APathWithANulByteIsRefusedWhole) {
  try {
    load_json_file(std::string("cpu_models/laptop-4\0.json", 25));
    FAIL() << "a path with a NUL byte was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("NUL byte"), std::string::npos) << e.what();
  }
}

// The fuzzed case: same_die at the l1_hit floor, two tasks on a lock and a
// wake-up path. Below the floor it was a time-order fault (a release visible
// before its store issued); at it, the runs end.
TEST(MachineFileChecks, TransfersAtTheL1FloorRunInTimeOrder) {
  Json doc = model("laptop-4");
  const Json l1 = doc["costs_ns"]["l1_hit"]["value"];
  doc["latency_ns"]["same_die"]["value"] = l1;
  doc["latency_ns"]["smt"]["value"] = l1;
  const MachineFile file(doc, "l1-floor");
  for (const char* workload :
       {R"({"type": "semop-multi", "semaphores": 2})", R"({"type": "sem-scalebench", "mode": 2})",
        R"({"type": "locktorture"})"}) {
    Json s = Json::parse(R"({"name": "floor", "kernel": "hysteresis", "threads": [2, 4],
        "duration_ms": 0.5, "warmup_ms": 0.1, "seed": 1, "repeats": 1})");
    s["machine"] = file.path();
    s["workload"] = Json::parse(workload);
    EXPECT_NO_THROW(driver::simulate(parse_scenario(s))) << workload;
  }
}

}  // namespace
}  // namespace semsim::config
