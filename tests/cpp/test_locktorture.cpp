// locktorture (workloads/locktorture_def.hpp): the module's short hold adds its
// mean to every acquisition; writers spread over sockets hand the lock over
// across them and so run slower than writers packed on one socket; the fast
// path is the reference order's bytes; the run reports the torture lock and its
// lines under the kthread's stacks; the native runner refuses it.
#include <gtest/gtest.h>

#include <string>

#include "config/scenario.hpp"
#include "core/errors.hpp"
#include "driver/simulate.hpp"
#include "native/native_runner.hpp"
#include "test_reference_order.hpp"

namespace semsim {
namespace {

Json scenario(const std::string& machine, int writers, const Json& workload,
              double duration_ms = 4) {
  Json doc = {{"name", "lt"},         {"machine", machine},   {"kernel", "hysteresis"},
              {"threads", {writers}}, {"workload", workload}, {"duration_ms", duration_ms},
              {"warmup_ms", 0.5},     {"repeats", 1},         {"precision", 0}};
  doc["workload"]["type"] = "locktorture";
  return doc;
}

Json first_point(const Json& doc) { return driver::simulate(parse_scenario(doc))["points"][0]; }

double ops(const Json& doc) { return first_point(doc)["ops_per_s"].get<double>(); }

// One writer never waits: its period is its own path plus, on average, the
// short hold (2 us once in 1 * 2 * 2 acquisitions: 0.5 us). The draws make the
// count binomial: over ~20,000 acquisitions its standard deviation is 0.3 % of
// the count, 6 ns of the mean; 30 ns is five of them.
TEST(Locktorture, TheShortHoldAddsItsMeanToOneWritersPeriod) {
  const Json off = scenario("haswell-ex-144", 1, {{"longdelay_ms", 0}, {"shortdelay_us", 0}}, 20);
  const Json on = scenario("haswell-ex-144", 1, {{"longdelay_ms", 0}, {"shortdelay_us", 2}}, 20);
  const double period_off = 1e9 / ops(off), period_on = 1e9 / ops(on);
  EXPECT_LT(period_off, 200.0);  // the uncontended path: no line leaves the writer's CPU
  EXPECT_NEAR(period_on - period_off, 500.0, 30.0) << period_off << " ns, " << period_on << " ns";
}

// Eight writers on the four sockets (fork-balanced: one per socket in turn)
// hand the lock and its lines over across sockets; packed on one socket
// (compact: four cores' two threads) every hand-over stays in it.
TEST(Locktorture, WritersSpreadOverSocketsAreSlowerThanPackedOnOne) {
  const Json spread = scenario("haswell-ex-144", 8, {{"longdelay_ms", 0}});
  Json packed = spread;
  packed["workload"]["pin"] = "compact";
  const Json a = first_point(spread), b = first_point(packed);
  EXPECT_LT(a["ops_per_s"].get<double>() * 1.3, b["ops_per_s"].get<double>());
  // The torture lock is in the lock table, contended, and its line is the hottest.
  bool found = false;
  for (const auto& row : a["lockstat"])
    if (row["name"] == "torture_spinlock") {
      found = true;
      EXPECT_GT(row["contended_share"].get<double>(), 0.5);
    }
  EXPECT_TRUE(found);
  EXPECT_EQ(a["hot_lines"][0]["line"].get<std::string>().rfind("torture_spinlock", 0), 0u)
      << a["hot_lines"].dump();
  // Kernel threads: the spinlock's row is under lock_torture_writer, no syscall.
  bool spin_row = false;
  for (const auto& row : a["profile"]) {
    const auto stack = row["stack"].get<std::string>();
    EXPECT_EQ(stack.find("semtimedop"), std::string::npos) << stack;
    if (row["function"] == "_raw_spin_lock") {
      spin_row = true;
      EXPECT_EQ(stack, "kthread;lock_torture_writer;_raw_spin_lock");
    }
  }
  EXPECT_TRUE(spin_row);
}

// A ticket-lock kernel (3.x) runs it on a ticket spinlock: another lock, other bytes.
TEST(Locktorture, TheKernelsSpinlockKindIsTheLocks) {
  Json queued = scenario("haswell-ex-144", 8, {{"longdelay_ms", 0}}, 2);
  Json ticket = queued;
  ticket["kernel"] = "global_lock";
  EXPECT_NE(ops(queued), ops(ticket));
}

// The CNA slow path (machine/spinlock.hpp) hands the lock to a waiter on the
// holder's node: with one writer per socket there is none and it is the stock
// lock; with four per socket the lock's line moves within a socket far more
// often than across, where the stock FIFO queue crosses sockets 3 times in 4.
TEST(Locktorture, CnaKeepsTheLockOnItsNodeWhereItCan) {
  Json stock4 = scenario("haswell-ex-144", 4, {{"longdelay_ms", 0}}, 3);
  Json cna4 = stock4;
  cna4["kernel"] = {{"base", "hysteresis"}, {"spinlock", "cna"}};
  EXPECT_EQ(ops(stock4), ops(cna4));

  Json stock16 = scenario("haswell-ex-144", 16, {{"longdelay_ms", 0}}, 3);
  Json cna16 = stock16;
  cna16["kernel"] = cna4["kernel"];
  const Json s = first_point(stock16), c = first_point(cna16);
  EXPECT_GT(c["ops_per_s"].get<double>(), 1.5 * s["ops_per_s"].get<double>());
  auto transfers = [](const Json& point, const char* distance) {
    for (const auto& line : point["hot_lines"])
      if (line["line"] == "torture_spinlock")
        return line["transfers"].value(distance, std::uint64_t{0});
    return std::uint64_t{0};
  };
  EXPECT_GT(transfers(c, "same_die"), 10 * transfers(c, "one_hop"));
  EXPECT_GT(transfers(s, "one_hop"), 2 * transfers(s, "same_die"));
}

TEST(Locktorture, FastPathMatchesReferenceOrder) {
  for (const auto& machine : {"haswell-ex-144", "laptop-4", "uniform-64"}) {
    for (int writers : {1, 3, 16}) {
      Json doc = scenario(machine, writers, {{"longdelay_ms", 0}}, 0.6);
      EXPECT_EQ(test_reference::simulate_bytes(doc, false),
                test_reference::simulate_bytes(doc, true))
          << machine << ", " << writers << " writers";
      doc["kernel"] = {{"base", "hysteresis"}, {"spinlock", "cna"}};
      EXPECT_EQ(test_reference::simulate_bytes(doc, false),
                test_reference::simulate_bytes(doc, true))
          << machine << ", " << writers << " writers, CNA";
    }
  }
}

TEST(Locktorture, TheNativeRunnerRefusesAKernelModule) {
  const Scenario s = parse_scenario(scenario("host-default", 2, Json::object()));
  try {
    native::check_host(s);
    FAIL() << "check_host accepted locktorture";
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("workload.type"), std::string::npos) << m;
    EXPECT_NE(m.find("kernel module"), std::string::npos) << m;
  }
}

TEST(Locktorture, BadFieldsNameTheField) {
  Json doc = scenario("haswell-ex-144", 2, {{"longdelay_ms", -1}});
  try {
    (void)parse_scenario(doc);
    FAIL() << "a negative longdelay_ms parsed";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("workload.longdelay_ms"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace semsim
