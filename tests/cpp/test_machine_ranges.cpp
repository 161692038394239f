// Ranges on assumed parameters and topology alternatives (sim/config/machine_ranges.cpp):
// the nominal model (and its hash) is the file without them, each bad annotation is a
// one-line InputError naming its field, and each variant is the nominal model with one
// setting changed.
#include <gtest/gtest.h>

#include <string>

#include "config/json_fields.hpp"
#include "config/machine_config.hpp"
#include "config/machine_ranges.hpp"
#include "core/errors.hpp"
#include "test_machine_files.hpp"

namespace semsim::config {
namespace {

using testing::error_of;
using testing::kModels;
using testing::model;

Json with_range(Json doc, const std::string& group, const std::string& key, double lo, double hi) {
  doc[group][key]["range"] = {{"low", lo}, {"high", hi}, {"source", "why"}};
  return doc;
}

TEST(MachineRanges, TheNominalModelAndItsHashIgnoreTheAnnotations) {
  for (const char* name : {"xeon-24", "box-64"}) {
    SCOPED_TRACE(name);
    const Json doc = model(name);
    ASSERT_TRUE(has_uncertainty(doc));
    const Json bare = without_uncertainty(doc);
    EXPECT_FALSE(has_uncertainty(bare));
    const MachineParams a = parse_machine(doc, name), b = parse_machine(bare, name);
    EXPECT_EQ(a.hash, b.hash);
    EXPECT_EQ(a.lat_one_hop, b.lat_one_hop);
    EXPECT_EQ(a.sockets, b.sockets);
  }
  // The hash the recorded golden results of xeon-24 name (tests/golden/outputs/): the
  // annotations never change what a result says it was simulated on.
  const Json golden = load_json_file(std::string(SEMSIM_SOURCE_DIR) +
                                     "/tests/golden/outputs/reproduce-xeon24-000.json");
  EXPECT_EQ(parse_machine(model("xeon-24"), "xeon-24").hash,
            golden.at("provenance").at("machine_model_hash").get<std::string>());
}

TEST(MachineRanges, VariantsChangeOneSettingEach) {
  const Json doc = model("xeon-24");
  const MachineUncertainty u = machine_uncertainty(doc, "xeon-24");
  int ranged = 0, alternatives = 0;
  for (const auto& p : u.parameters) {
    if (p.parameter == "topology")
      alternatives = static_cast<int>(p.alternatives.size());
    else
      ++ranged;
  }
  EXPECT_GE(ranged, 3);
  EXPECT_EQ(alternatives, 2);
  EXPECT_EQ(static_cast<int>(u.variants.size()), 2 * ranged + alternatives);
  const MachineParams nominal = parse_machine(doc, "xeon-24");
  bool saw_hop = false, saw_topology = false;
  for (const auto& v : u.variants) {
    SCOPED_TRACE(v.id);
    EXPECT_FALSE(has_uncertainty(v.document));
    const MachineParams m = parse_machine(v.document, v.id);
    EXPECT_EQ(m.name, "xeon-24");
    EXPECT_EQ(m.cpus, 24);
    if (v.id == "latency_ns.one_hop=high") {
      saw_hop = true;
      EXPECT_EQ(m.lat_one_hop, ns_to_ticks(132.0));
      EXPECT_EQ(m.lat_same_die, nominal.lat_same_die);
      EXPECT_NE(m.hash, nominal.hash);
    }
    if (v.parameter == "topology" && m.sockets == 4) {
      saw_topology = true;
      EXPECT_EQ(m.threads_per_core, 1);
      EXPECT_EQ(m.lat_one_hop, nominal.lat_one_hop);
    }
  }
  EXPECT_TRUE(saw_hop);
  EXPECT_TRUE(saw_topology);
  // Corners: every range low, then every one high, after the one-at-a-time variants.
  const MachineUncertainty c = machine_uncertainty(doc, "xeon-24", true);
  ASSERT_EQ(c.variants.size(), u.variants.size() + 2);
  EXPECT_EQ(c.variants[c.variants.size() - 2].id, "all=low");
  const MachineParams low = parse_machine(c.variants[c.variants.size() - 2].document, "low");
  const MachineParams high = parse_machine(c.variants.back().document, "high");
  EXPECT_EQ(low.lat_one_hop, ns_to_ticks(73.74));
  EXPECT_EQ(high.lat_one_hop, ns_to_ticks(132.0));
  EXPECT_LT(low.lat_smt, high.lat_smt);
}

TEST(MachineRanges, BadAnnotationsAreOneLineErrorsNamingTheField) {
  const Json x = model("xeon-24");
  auto expect = [](const Json& doc, const std::string& field, const std::string& what) {
    const std::string msg = error_of(doc);
    EXPECT_NE(msg.find(field), std::string::npos) << msg;
    EXPECT_NE(msg.find(what), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  };
  expect(with_range(x, "latency_ns", "one_hop", 120, 100), "latency_ns.one_hop.range",
         "low (120) is above high (100)");
  expect(with_range(x, "latency_ns", "one_hop", 10, 100), "latency_ns.one_hop.range",
         "must lie between");
  // l1_hit's source is a published table, not an assumption.
  expect(with_range(x, "costs_ns", "l1_hit", 1, 2), "costs_ns.l1_hit.range",
         "marked as an assumption");
  Json unknown = x;
  unknown["costs_ns"]["bogus"] = {{"value", 1}, {"source", "assumption: x"}};
  // Read as the nominal model first, whose keys must all be parameters.
  expect(with_range(unknown, "costs_ns", "bogus", 0, 2), "costs_ns.bogus", "unknown field");
  Json shape = x;
  shape["costs_ns"]["ipi"]["range"] = Json::array({1, 2});
  expect(shape, "costs_ns.ipi.range", "must be {\"low\"");
  Json extra = with_range(x, "costs_ns", "ipi", 500, 2000);
  extra["costs_ns"]["ipi"]["range"]["step"] = 1;
  expect(extra, "costs_ns.ipi.range", "step");
  Json nosrc = with_range(x, "costs_ns", "ipi", 500, 2000);
  nosrc["costs_ns"]["ipi"]["range"]["source"] = "";
  expect(nosrc, "costs_ns.ipi.range.source", "must not be empty");
  // A range end the parameter cannot take is reported as that end's error.
  expect(with_range(x, "costs_ns", "ipi", -5, 2000), "costs_ns.ipi.range.low", "costs_ns.ipi");
  Json cpus = x;
  cpus["topology"]["alternatives"][0]["topology"]["sockets"] = 3;
  expect(cpus, "topology.alternatives[0]", "cpus");
  Json measured = x;
  measured["topology"]["source"] = "seed 001 says so";
  expect(measured, "topology.alternatives", "marked as an assumption");
  Json twice = x;
  twice["topology"]["alternatives"][1]["name"] = twice["topology"]["alternatives"][0]["name"];
  expect(twice, "topology.alternatives[1].name", "names another alternative");
  Json topo = x;
  topo["topology"]["range"] = {{"low", 1}, {"high", 2}, {"source", "why"}};
  expect(topo, "topology.range", "a topology has no range");
  Json empty = x;
  empty["topology"]["alternatives"] = Json::array();
  expect(empty, "topology.alternatives", "must be a list of 1 to 16");
  EXPECT_EQ(error_of(with_range(x, "costs_ns", "ipi", 500, 2000)), "");
}

}  // namespace
}  // namespace semsim::config
