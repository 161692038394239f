// The workload registry against the scenario schema: every registered type has
// a schema entry with exactly its fields, the same integer ranges and choices,
// and the loader reads the fields the table declares.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <string>

#include "config/scenario.hpp"
#include "core/errors.hpp"
#include "workloads/registry.hpp"

namespace semsim {
namespace {

Json schema() {
  std::ifstream in(std::string(SEMSIM_SOURCE_DIR) + "/scenarios/scenario.schema.json");
  return Json::parse(in);
}

// The `then` properties of the schema's entry for `type`, or null.
Json schema_entry(const Json& s, const std::string& type) {
  for (const auto& branch : s.at("properties").at("workload").at("allOf"))
    if (branch.at("if").at("properties").at("type").at("const") == type)
      return branch.at("then").at("properties");
  return nullptr;
}

TEST(WorkloadRegistry, EveryTypeHasASchemaEntryWithItsFields) {
  const Json s = schema();
  std::set<std::string> schema_types;
  for (const auto& t : s.at("properties").at("workload").at("properties").at("type").at("enum"))
    schema_types.insert(t.get<std::string>());
  std::set<std::string> registry_types;
  for (const auto& type : workloads::workload_types()) {
    registry_types.insert(type.type);
    const Json props = schema_entry(s, type.type);
    ASSERT_FALSE(props.is_null()) << type.type << " has no schema entry";
    std::set<std::string> keys = {"type", "pin"};
    for (const auto& f : type.fields) {
      keys.insert(f.key);
      ASSERT_TRUE(props.contains(f.key)) << type.type << "." << f.key;
      const Json& p = props.at(f.key);
      using Kind = workloads::ParamField::Kind;
      if (f.kind == Kind::Int) {
        EXPECT_EQ(p.at("minimum").get<std::int64_t>(), f.lo) << type.type << "." << f.key;
        EXPECT_EQ(p.at("maximum").get<std::int64_t>(), f.hi) << type.type << "." << f.key;
      } else if (f.kind == Kind::IntChoice) {
        EXPECT_EQ(p.at("enum").get<std::vector<std::int64_t>>(), f.int_choices) << f.key;
      } else if (f.kind == Kind::Choice) {
        EXPECT_EQ(p.at("enum").get<std::vector<std::string>>(), f.choices) << f.key;
      }
    }
    std::set<std::string> schema_keys;
    for (const auto& [key, value] : props.items()) schema_keys.insert(key);
    EXPECT_EQ(schema_keys, keys) << type.type;
  }
  EXPECT_EQ(schema_types, registry_types);
}

TEST(WorkloadRegistry, AnUnknownTypeIsAnInputErrorNamingTheField) {
  WorkloadSpec spec;
  spec.type = "aim9";
  try {
    (void)workloads::make_workload(spec);
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("workload.type"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("aim9-shm"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace semsim
