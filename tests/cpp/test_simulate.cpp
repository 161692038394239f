// End-to-end simulator checks: determinism of the result bytes, bad-input
// errors that name the field, and the walking skeleton's two generations.
#include <gtest/gtest.h>

#include <algorithm>

#include "config/machine_config.hpp"
#include "config/scenario.hpp"
#include "core/errors.hpp"
#include "driver/simulate.hpp"

using semsim::Json;

namespace {

Json base_scenario() {
  return Json::parse(R"({
    "name": "t", "machine": "i3-ivybridge", "kernel": "hysteresis",
    "workload": {"type": "semop-multi", "semaphores": 4, "pattern": "stride"},
    "threads": [1, 4], "duration_ms": 0.5, "warmup_ms": 0.1, "seed": 7, "repeats": 1})");
}

Json run(Json doc) { return semsim::driver::simulate(semsim::parse_scenario(doc)); }

std::string error_of(Json doc) {
  try {
    auto s = semsim::parse_scenario(doc);
    semsim::config::load_machine(s.machine);
  } catch (const semsim::InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Simulate, SameScenarioSameBytes) {
  auto a = run(base_scenario()).dump();
  auto b = run(base_scenario()).dump();
  EXPECT_EQ(a, b);
  auto other_seed = base_scenario();
  other_seed["seed"] = 8;
  other_seed["workload"]["pattern"] = "random";
  auto c = run(other_seed).dump();
  auto d = run(other_seed).dump();
  EXPECT_EQ(c, d);
}

TEST(Simulate, ResultCarriesThePointFieldsAndProvenance) {
  auto r = run(base_scenario());
  EXPECT_EQ(r["side"], "simulated");
  ASSERT_EQ(r["points"].size(), 2u);
  for (const auto& p : r["points"]) {
    EXPECT_GT(p["ops_per_s"].get<double>(), 0);
    EXPECT_EQ(p["kernel"], "hysteresis");
    EXPECT_EQ(p["machine"], "i3-ivybridge");
    // ops_per_s is completed semops over the window.
    EXPECT_NEAR(p["ops_per_s"].get<double>() * p["window_s"].get<double>(),
                p["ops_total"].get<double>(), 1.0);
  }
  EXPECT_EQ(r["points"][0]["threads"], 1);
  EXPECT_TRUE(r["provenance"]["machine_model_hash"].get<std::string>().rfind("fnv1a64:", 0) == 0);
  EXPECT_EQ(r["provenance"]["machine_model_file"], "i3-ivybridge.json");
  EXPECT_EQ(r["scenario"]["seed"], 7);
}

// The wake-up counts: semop-multi never sleeps, so it wakes nobody; a ping-pong
// pinned to two CPUs wakes the partner on the other, idle CPU at every hand-off.
TEST(Simulate, WakeupsSayWhereTheWakeesWent) {
  const auto plain = run(base_scenario());  // a range-for over a temporary's member dangles
  for (const auto& p : plain["points"]) {
    EXPECT_EQ(p["wakeups"]["same_cpu"], 0);
    EXPECT_EQ(p["wakeups"]["remote_busy"], 0);
    EXPECT_EQ(p["wakeups"]["remote_idle"], 0);
  }
  auto doc = base_scenario();
  doc["workload"] = {{"type", "sem-scalebench"}, {"mode", 2}, {"threads_per_core", 1}};
  doc["threads"] = 2;
  doc["duration_ms"] = 2;
  const auto p = run(doc)["points"][0];
  const auto kicks = p["wakeups"]["remote_idle"].get<long>();
  EXPECT_GT(kicks, 10);
  EXPECT_EQ(p["wakeups"]["same_cpu"], 0);
  EXPECT_EQ(p["wakeups"]["remote_busy"], 0);
  // Every sleep in the window ended with such a wake-up (one more or less at its edges).
  EXPECT_NEAR(static_cast<double>(kicks), p["context_switches"]["voluntary"].get<double>(), 2);
}

TEST(Simulate, GlobalLockTakesTheArrayLockOnEveryOpAndHysteresisNever) {
  auto doc = base_scenario();
  doc["threads"] = 4;
  doc["kernel"] = "global_lock";
  auto g = run(doc)["points"][0];
  // Equal but for the ops whose lock release and return to user space fall on
  // either side of a window edge (at most one per thread and edge).
  EXPECT_NEAR(g["locks"][0]["acquisitions"].get<double>(), g["ops_total"].get<double>(), 8);
  doc["kernel"] = "hysteresis";
  auto h = run(doc)["points"][0];
  EXPECT_EQ(h["locks"][0]["acquisitions"].get<double>(), 0);  // past newary()'s 9 global ops
  EXPECT_NEAR(h["locks"][1]["acquisitions"].get<double>(), h["ops_total"].get<double>(), 8);
  // Four threads on four CPUs: the one array lock serialises global_lock.
  EXPECT_GT(h["ops_per_s"].get<double>(), 1.5 * g["ops_per_s"].get<double>());
}

TEST(Simulate, OneThreadPerCpuNeverSpinsWithOwnSemaphores) {
  auto doc = base_scenario();
  doc["threads"] = 4;
  doc["workload"]["pattern"] = "own";
  auto p = run(doc)["points"][0];
  EXPECT_EQ(p["locks"][1]["contended_share"].get<double>(), 0.0);
  // Identical tasks on identical CPUs: equal shares up to the cold misses at the
  // start and the one op a task may finish on either side of a window edge
  // (ties at one date go by task id: core/calendar.hpp).
  const double lo = p["per_task_ops"]["min"].get<double>(),
               hi = p["per_task_ops"]["max"].get<double>();
  EXPECT_LE(hi - lo, std::max(1.0, 0.01 * hi));
}

TEST(ScenarioErrors, NameTheFieldAndTheAllowedValues) {
  auto with = [](const std::string& key, Json value) {
    auto doc = base_scenario();
    semsim::apply_override(doc, key + "=" + value.dump());
    return error_of(doc);
  };
  auto has = [](const std::string& msg, const std::string& part) {
    return msg.find(part) != std::string::npos;
  };
  auto e = with("kernel", "linux-2.4");
  EXPECT_TRUE(has(e, "kernel") && has(e, "global_lock") && has(e, "hysteresis")) << e;
  e = with("threads", 0);
  EXPECT_TRUE(has(e, "threads") && has(e, "from 1")) << e;
  e = with("threads", "x");
  EXPECT_TRUE(has(e, "threads") && has(e, "integer")) << e;
  e = with("workload.semaphores", -1);
  EXPECT_TRUE(has(e, "workload.semaphores")) << e;
  e = with("workload.pattern", "zigzag");
  EXPECT_TRUE(has(e, "workload.pattern") && has(e, "stride")) << e;
  e = with("bogus", 1);
  EXPECT_TRUE(has(e, "bogus") && has(e, "allowed fields")) << e;
  e = with("machine", "cray-1");
  EXPECT_TRUE(has(e, "machine") && has(e, "xeon-24")) << e;
  e = with("duration_ms", -5);
  EXPECT_TRUE(has(e, "duration_ms")) << e;
  e = with("kernel", Json::parse(R"({"base": "hysteresis", "spinlock": "mutex"})"));
  EXPECT_TRUE(has(e, "kernel.spinlock") && has(e, "ticket")) << e;
  EXPECT_THROW(semsim::load_json_file("/nonexistent/x.json"), semsim::InputError);
  Json doc = base_scenario();
  EXPECT_THROW(semsim::apply_override(doc, "noequals"), semsim::InputError);
  EXPECT_THROW(semsim::apply_override(doc, "machine.x=1"), semsim::InputError);
  semsim::apply_override(doc, "workload.semaphores=64");
  EXPECT_EQ(doc["workload"]["semaphores"], 64);
  semsim::apply_override(doc, "kernel=global_lock");
  EXPECT_EQ(doc["kernel"], "global_lock");
}

TEST(Simulate, TheRwlockGenerationReportsItsArrayRwlock) {
  auto doc = base_scenario();
  doc["threads"] = 4;
  doc["kernel"] = "rwlock";
  auto p = run(doc)["points"][0];
  const Json* read = nullptr;
  for (const auto& l : p["locks"])
    if (l["lock"] == "array rwlock (read)") read = &l;
  ASSERT_NE(read, nullptr);
  // Every simple op takes the read side once; none takes the array spinlock.
  EXPECT_NEAR((*read)["acquisitions"].get<double>(), p["ops_total"].get<double>(), 4.0);
  EXPECT_EQ(p["locks"][0]["acquisitions"].get<double>(), 0);
}

// A spin that spans an edge of the window counts only its part inside: a parked
// spinner's wait is accounted in one piece when it ends, and the window's snapshots
// add the part of a wait in progress up to their date (Task::time_at()). Here the
// hysteresis start-up convoy on the array lock straddles the window's start; counted
// whole, the CPU breakdown summed to 1.085.
TEST(Simulate, ASpinAcrossTheWindowEdgeCountsOnlyItsPartInside) {
  const Json doc = Json::parse(R"({
    "name": "t", "machine": "westmere-ex-80", "kernel": "hysteresis",
    "workload": {"type": "sem-scalebench", "mode": 1, "pin": "unpinned"},
    "threads": 80, "duration_ms": 2, "warmup_ms": 0.5, "seed": 1, "precision": 0})");
  const Json b = run(doc)["points"][0]["cpu_breakdown"];
  double sum = 0;
  for (const auto& [category, share] : b.items()) sum += share.get<double>();
  EXPECT_NEAR(sum, 1.0, 1e-9) << b.dump();
  EXPECT_GT(b["spin"].get<double>(), 0.05) << b.dump();  // the convoy is in the window
}
