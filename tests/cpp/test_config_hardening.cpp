// The one JSON reader and the typed field reads refuse what would crash, hang or be
// silently changed (issue 17): deep nesting, non-regular files, numbers beyond a double,
// integers that would be truncated or rounded, machine costs that round to 0 ticks.

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <string>

#include "config/json_fields.hpp"
#include "config/machine_config.hpp"
#include "config/scenario.hpp"
#include "core/errors.hpp"

namespace semsim::config {
namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(ConfigHardening, DeepNestingIsAnInputErrorNotACrash) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const std::string e = error_of([&] { parse_json_text(deep, "scenario"); });
  EXPECT_NE(e.find("nested deeper than 64"), std::string::npos) << e;
  EXPECT_LT(e.size(), 300u);
  // The formats' own nesting is far below the limit.
  EXPECT_NO_THROW(parse_json_text(std::string(60, '[') + std::string(60, ']'), "scenario"));
}

// A name means a listed preset: the format's schema beside the models is not one
// (it was read as a machine file and failed on a missing field).
TEST(ConfigHardening, OnlyListedPresetsResolveByName) {
  const std::string e = error_of([] { load_machine("machine.schema"); });
  EXPECT_NE(e.find("unknown machine \"machine.schema\""), std::string::npos) << e;
  for (const auto& entry : list_machines()) {
    if (entry.name == "host") continue;  // this machine's calibration, if any
    EXPECT_NO_THROW(load_machine(entry.name)) << entry.name;
  }
}

TEST(ConfigHardening, MalformedJsonGivesLineColumnAndField) {
  const std::string e =
      error_of([] { parse_json_text("{\"a\": 1,\n \"workload\": {\"type\": tru}}", "x.json"); });
  EXPECT_NE(e.find("x.json: malformed JSON at line 2, column"), std::string::npos) << e;
  EXPECT_NE(e.find("(in workload.type)"), std::string::npos) << e;
  const std::string big = error_of([] { parse_json_text("{\"seed\": 1e309}", "s"); });
  EXPECT_NE(big.find("s: seed: a number is out of range"), std::string::npos) << big;
}

TEST(ConfigHardening, OnlyRegularFilesAreRead) {
  char dir[] = "/tmp/semsim-config-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string fifo = std::string(dir) + "/fifo.json";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_NE(error_of([&] { load_json_file(fifo); }).find("not a regular file"), std::string::npos);
  EXPECT_NE(error_of([] { load_json_file("/dev/zero"); }).find("not a regular file"),
            std::string::npos);
  EXPECT_NE(error_of([&] { load_json_file(dir); }).find("not a regular file"), std::string::npos);
  unlink(fifo.c_str());
  rmdir(dir);
}

TEST(ConfigHardening, IntegersAreExactNeverTruncatedOrRounded) {
  EXPECT_EQ(as_int(Json::parse("9007199254740992"), "seed", 0, 1LL << 53), 1LL << 53);
  EXPECT_THROW(as_int(Json::parse("9007199254740993"), "seed", 0, 1LL << 53), InputError);
  EXPECT_THROW(as_int(Json::parse("18446744073709551615"), "seed", 0, 1LL << 53), InputError);
  EXPECT_THROW(as_int(Json::parse("0"), "threads", 1, 10), InputError);
  EXPECT_THROW(as_int(Json::parse("1e17"), "x", 0, INT64_MAX), InputError);  // above 2^53
  Json doc = Json::parse(R"({"machine": "host-default", "kernel": "hysteresis", "threads": 2,
      "workload": {"type": "sem-scalebench", "mode": 4294967297}})");
  EXPECT_NE(error_of([&] { parse_scenario(doc); }).find("workload.mode"), std::string::npos);
}

TEST(ConfigHardening, MachineCostsThatRoundToZeroTicksAreRefused) {
  MachineParams m = load_machine("host-default");
  Json doc = machine_document("host-default");
  doc["costs_ns"]["user_loop_iteration"]["value"] = 1e-4;
  const std::string e = error_of([&] { parse_machine(doc, "m.json"); });
  EXPECT_NE(e.find("costs_ns.user_loop_iteration.value"), std::string::npos) << e;
  EXPECT_NE(e.find("round"), std::string::npos) << e;
  doc = machine_document("host-default");
  doc["memory_latency_ns"]["value"] = 1e300;
  EXPECT_NE(error_of([&] { parse_machine(doc, "m.json"); }).find("memory_latency_ns"),
            std::string::npos);
}

// Every message is one line that names its field: a key or a value with a colon, a
// line break or a NUL in it is shown JSON-quoted and escaped (a NUL would otherwise cut
// the message short where it becomes a C string, in the Python exception).
TEST(ConfigHardening, OddNamesAndValuesAreQuotedAndEscapedInMessages) {
  const auto scenario = [](const std::string& tail) {
    return Json::parse(R"({"machine": "host-default", "kernel": "hysteresis", "threads": 2,
        "workload": {"type": "sem-scalebench", "mode": 2)" +
                       tail);
  };
  const auto one_line = [](const std::string& e) {
    return e.find_first_of(std::string("\n\r\0", 3)) == std::string::npos;
  };
  std::string e = error_of([&] { parse_scenario(scenario(R"(}, "descripti:on": "x"})")); });
  EXPECT_EQ(e.rfind("\"descripti:on\": unknown field; allowed fields here: name,", 0), 0u) << e;
  e = error_of([&] { parse_scenario(scenario(R"(, "p\u0000in": 1}})")); });
  EXPECT_EQ(e.rfind("workload.\"p\\u0000in\": unknown field; allowed fields here: type,", 0), 0u)
      << e;
  EXPECT_TRUE(one_line(e)) << e;
  e = error_of([&] { parse_scenario(scenario(R"(}, "a\nb: c": 1})")); });
  EXPECT_EQ(e.rfind("\"a\\nb: c\": unknown field", 0), 0u) << e;
  EXPECT_TRUE(one_line(e)) << e;
  // A long odd key is capped as values are.
  e = error_of([&] { parse_scenario(scenario("}, \"" + std::string(5000, '[') + "\": 1}")); });
  EXPECT_EQ(e.rfind("\"" + std::string(60, '[') + "...\": unknown field", 0), 0u) << e;
  EXPECT_LT(e.size(), 400u) << e;
  // Values: a choice, and the flags text.
  Json doc = scenario("}}");
  doc["kernel"] = std::string("hyst\0eresis\n", 12);
  e = error_of([&] { parse_scenario(doc); });
  EXPECT_NE(e.find(R"("hyst\u0000eresis\n")"), std::string::npos) << e;
  EXPECT_TRUE(one_line(e)) << e;
  EXPECT_EQ(echo_text(std::string("a\tb\x7f\x01", 5)), R"(a\tb\u007f\u0001)");
  // Plain names stay as written.
  EXPECT_EQ(child_path("workload", "semaphores"), "workload.semaphores");
  EXPECT_EQ(child_path("m.json:", "costs_ns"), "m.json: costs_ns");
  EXPECT_EQ(child_path("", "a.b"), "\"a.b\"");
}

}  // namespace
}  // namespace semsim::config
