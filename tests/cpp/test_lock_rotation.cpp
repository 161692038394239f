// A saturated FIFO lock keeps the order its first waiters took: every task is
// queued behind all the others when it releases, so it re-queues last and the
// hand-off sequence repeats for the whole run. On xeon-24 (linux numbering:
// CPU t and t + 1 on different sockets) with semop-multi's thread t pinned to
// CPU t, the start order (the tasks' ids at their tied first arrival) makes
// every hand-off of 3.9's array lock cross the socket: the mechanism behind
// the tie-order sensitivity core/calendar.hpp records (validation/lock-rotation.md).
#include <gtest/gtest.h>

#include <string>

#include "config/scenario.hpp"
#include "core/errors.hpp"
#include "core/json.hpp"
#include "driver/simulate.hpp"

namespace semsim {
namespace {

Json xeon24_global_lock(int threads, const char* start_order = "spawn") {
  Json doc = Json::parse(R"({
    "name": "rotation", "machine": "xeon-24", "kernel": "global_lock",
    "workload": {"type": "semop-multi", "pattern": "stride"},
    "duration_ms": 1, "warmup_ms": 0.5, "seed": 1, "repeats": 1, "precision": 0})");
  doc["threads"] = threads;
  doc["workload"]["semaphores"] = threads;
  doc["start_order"] = start_order;
  return driver::simulate(parse_scenario(doc))["points"][0];
}

const Json& lock_line(const Json& point) {
  for (const auto& line : point["hot_lines"])
    if (line["line"].get<std::string>().find("sem_perm.lock") != std::string::npos) return line;
  ADD_FAILURE() << "no hot line holds sem_perm.lock";
  static const Json none = Json::object();
  return none;
}

// Alternating sockets in id order: the lock's line only ever crosses the socket.
TEST(LockRotation, AlternatingStartOrderMakesEveryHandOffCrossTheSocket) {
  for (int n : {10, 20}) {
    const Json p = xeon24_global_lock(n);
    ASSERT_GT(p["locks"][0]["contended_share"].get<double>(), 0.99) << "the lock must be saturated";
    const Json& transfers = lock_line(p)["transfers"];
    ASSERT_TRUE(transfers.contains("one_hop")) << transfers.dump();
    EXPECT_GT(transfers["one_hop"].get<int>(), 100);
    EXPECT_EQ(transfers.size(), 1u) << "n=" << n << ": " << transfers.dump();
  }
}

// With 11 tasks the rotation 0, 1, ..., 10, 0 has one hand-off between two
// even CPUs (10 to 0, both on socket 0): one hand-off in 11 stays on the
// socket (a minority of the line's transfers, which also serve the next
// arrivals' reads of `seq`). So the first test is the rotation's, not every
// run's on this machine.
TEST(LockRotation, AnOddTaskOutBreaksThePerfectAlternation) {
  const Json p = xeon24_global_lock(11);
  const Json& transfers = lock_line(p)["transfers"];
  ASSERT_TRUE(transfers.contains("one_hop")) << transfers.dump();
  ASSERT_TRUE(transfers.contains("same_die")) << transfers.dump();
  const double same = transfers["same_die"].get<double>();
  const double all = same + transfers["one_hop"].get<double>();
  EXPECT_GT(same / all, 0.02) << transfers.dump();
  EXPECT_LT(same / all, 1.0 / 11 + 0.01) << transfers.dump();
}

// A shuffled start (Scenario::start_order) breaks the first tie at random: the
// rotation it fixes has hand-offs on one socket, the throughput is higher, and
// the same seed gives the same bytes.
TEST(LockRotation, AShuffledStartFixesAnotherRotation) {
  const Json spawn = xeon24_global_lock(20);
  const Json shuffled = xeon24_global_lock(20, "shuffled");
  const Json& transfers = lock_line(shuffled)["transfers"];
  ASSERT_TRUE(transfers.contains("same_die")) << transfers.dump();
  EXPECT_GT(transfers["same_die"].get<int>(), 100);
  EXPECT_GT(shuffled["ops_per_s"].get<double>(), 1.1 * spawn["ops_per_s"].get<double>());
  EXPECT_EQ(xeon24_global_lock(20, "shuffled").dump(), shuffled.dump());
}

TEST(LockRotation, StartOrderNamesItsValues) {
  Json doc = Json::parse(R"({"name": "s", "machine": "xeon-24", "kernel": "global_lock",
    "workload": {"type": "semop-multi", "semaphores": 2}, "threads": 2})");
  for (const Json& bad : {Json("random"), Json(1), Json(nullptr)}) {
    doc["start_order"] = bad;
    try {
      parse_scenario(doc);
      ADD_FAILURE() << bad.dump() << " accepted";
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("start_order: must be \"spawn\" or \"shuffled\"", 0), 0)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace semsim
