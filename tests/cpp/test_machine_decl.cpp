// The one declaration of the machine parameters (sim/config/machine_decl.cpp) against
// what is written elsewhere about them: cpu_models/machine.schema.json (every declared
// parameter there, with the same description, required-ness and range, and nothing
// undeclared) and the parameter tables of cpu_models/README.md (rendered from the
// declaration; SEMSIM_RECORD_DOCS=1 rewrites them). And every calibration rule sets a
// declared parameter.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "calibrate/rules.hpp"
#include "config/machine_decl.hpp"
#include "config/scenario.hpp"

namespace semsim::config {
namespace {

const std::string kModels = std::string(SEMSIM_SOURCE_DIR) + "/cpu_models/";

Json schema() { return load_json_file(kModels + "machine.schema.json"); }

const Json& node_of(const Json& s, const ParamDecl& d) {
  return d.group.empty()
             ? s.at("properties").at(std::string(d.key))
             : s.at("properties").at(std::string(d.group)).at("properties").at(std::string(d.key));
}

bool listed(const Json& required, std::string_view key) {
  for (const Json& k : required)
    if (k == std::string(key)) return true;
  return false;
}

TEST(MachineDecl, SchemaDescribesEveryDeclaredParameterAsDeclared) {
  const Json s = schema();
  for (const ParamDecl& d : machine_params()) {
    SCOPED_TRACE(d.name());
    ASSERT_TRUE(d.group.empty() ? s["properties"].contains(std::string(d.key))
                                : s["properties"][std::string(d.group)]["properties"].contains(
                                      std::string(d.key)));
    const Json& n = node_of(s, d);
    EXPECT_EQ(n.value("description", ""), std::string(d.description));
    const Json& req = d.group.empty()
                          ? s.at("required")
                          : s["properties"][std::string(d.group)].value("required", Json::array());
    EXPECT_EQ(listed(req, d.key), d.required);
    if (d.kind == ParamKind::Ticks || d.kind == ParamKind::FineNs || d.kind == ParamKind::Number ||
        d.kind == ParamKind::Share) {
      Json value = Json::object();
      if (n.value("$ref", "") == "#/$defs/positive_param")
        value = {{"exclusiveMinimum", 0}};
      else
        value = n.at("properties").at("value");
      if (d.min_exclusive)
        EXPECT_EQ(value.value("exclusiveMinimum", -1.0), d.min);
      else
        EXPECT_EQ(value.value("minimum", -1.0), d.min);
      if (d.max < kMaxParamNs) {
        EXPECT_EQ(value.value("maximum", -1.0), d.max);
      }
    }
  }
}

TEST(MachineDecl, SchemaHasNoUndeclaredParameter) {
  const Json s = schema();
  const std::set<std::string> structural = {"name",       "description", "cpus",      "topology",
                                            "latency_ns", "costs_ns",    "provenance"};
  for (const auto& [key, node] : s.at("properties").items())
    if (!structural.count(key)) {
      EXPECT_NE(find_param(key), nullptr) << key;
    }
  for (const char* group : {"latency_ns", "costs_ns"})
    for (const auto& [key, node] : s["properties"][group]["properties"].items())
      EXPECT_NE(find_param(std::string(group) + "." + key), nullptr) << group << "." << key;
}

TEST(MachineDecl, ReadmeTablesAreTheDeclaration) {
  const std::string file = kModels + "README.md";
  std::stringstream buf;
  buf << std::ifstream(file).rdbuf();
  std::string text = buf.str();
  const bool record = std::getenv("SEMSIM_RECORD_DOCS") != nullptr;
  for (const char* group : {"costs_ns", ""}) {
    const std::string open = std::string("<!-- params:") + group + " ";
    const auto a = text.find(open);
    ASSERT_NE(a, std::string::npos) << "README has no " << open << "marker";
    const auto body = text.find("-->\n", a) + 4;
    const auto end = text.find("<!-- /params -->", body);
    ASSERT_NE(end, std::string::npos);
    const std::string want = readme_param_table(group);
    if (record)
      text.replace(body, end - body, want);
    else
      EXPECT_EQ(text.substr(body, end - body), want) << "group \"" << group << "\"";
  }
  if (record) std::ofstream(file) << text;
}

TEST(MachineDecl, EveryCalibrationRuleSetsADeclaredParameter) {
  for (const auto& r : calibrate::cost_rules()) EXPECT_NE(find_param(r.param), nullptr) << r.param;
  for (const auto& r : calibrate::special_rules())
    EXPECT_NE(find_param(r.param), nullptr) << r.param;
}

}  // namespace
}  // namespace semsim::config
