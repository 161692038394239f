// Oracle 6 (issue 3): a cache-line transfer between SMT siblings, within a
// socket and across sockets costs what the preset file says, and the per-line
// counters record the distance class. Plus: every preset loads and
// validates, and its CPU numbering is the one cpu_models/README.md documents;
// the optional full latency matrix and NUMA distances.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "config/machine_config.hpp"
#include "core/errors.hpp"
#include "machine/cache_line.hpp"
#include "machine/topology.hpp"
#include "test_machine_harness.hpp"

namespace semsim {
namespace {

using machine::Access;
using machine::CacheLine;
using machine::Distance;
using machine::Topology;

// The preset's file as JSON (read once per file: the pair loops below ask per pair).
const Json& preset_document(const config::MachineParams& m) {
  static std::map<std::string, Json> docs;
  auto it = docs.find(m.file);
  if (it == docs.end()) it = docs.emplace(m.file, config::machine_document(m.file)).first;
  return it->second;
}

// The value the preset file gives for a latency class, read from its JSON
// text (not from the loader's struct), in ticks.
Tick preset_latency(const config::MachineParams& m, const std::string& cls) {
  return ns_to_ticks(preset_document(m).at("latency_ns").at(cls).at("value").get<double>());
}

// What the preset file says one transfer from CPU a to CPU b costs: its measured
// matrix entry if it carries one (imported models), else its class latency.
Tick preset_transfer(const config::MachineParams& m, int a, int b, const std::string& cls) {
  const Json& doc = preset_document(m);
  if (doc.contains("latency_matrix_ns"))
    return ns_to_ticks(doc.at("latency_matrix_ns")
                           .at("matrix")
                           .at(static_cast<std::size_t>(a))
                           .at(static_cast<std::size_t>(b))
                           .get<double>());
  return preset_latency(m, cls);
}

struct Transfer {
  Tick cost;
  machine::LineStats stats;
};

// CPU `from` writes a line (it becomes the owner, Modified), then CPU `to`
// accesses it once the first write is long done: the cost of that second
// access, measured in simulated time by two tasks of a core::Simulation.
Transfer measure(const Topology& topo, int from, int to, Access kind) {
  CacheLine line("probe");
  machine_test::TaskSet set;
  Transfer out{};
  set.add(from, [&](machine::Task& t) {
    t.sync();
    t.advance_to(line.access(topo, t.cpu, Access::Write, t.cursor));
  });
  set.add(to, [&](machine::Task& t) {
    t.idle_until(ns_to_ticks(10000));
    t.sync();
    line.reset_stats();
    const Tick issued = t.cursor;
    t.advance_to(line.access(topo, t.cpu, kind, t.cursor));
    out.cost = t.cursor - issued;
  });
  set.sim.run();
  out.stats = line.stats();
  return out;
}

void expect_transfer(const config::MachineParams& m, int from, int to, Distance cls,
                     const std::string& key) {
  SCOPED_TRACE(m.name + ": CPU " + std::to_string(from) + " -> " + std::to_string(to) + " (" + key +
               ")");
  Topology topo(m);
  ASSERT_EQ(topo.distance(from, to), cls);
  const Tick expected = preset_transfer(m, from, to, key);
  // A load of a line Modified elsewhere: one transfer.
  auto read = measure(topo, from, to, Access::Read);
  EXPECT_EQ(read.cost, expected);
  // A store: the same transfer (read-for-ownership); an atomic adds its own cost.
  EXPECT_EQ(measure(topo, from, to, Access::Write).cost, expected);
  EXPECT_EQ(measure(topo, from, to, Access::Rmw).cost, expected + topo.params().atomic_rmw);
  // The line's counters put that one miss in that class and nowhere else.
  for (int d = 0; d < machine::kDistanceClasses; ++d)
    EXPECT_EQ(read.stats.transfers[static_cast<std::size_t>(d)],
              d == static_cast<int>(cls) ? 1U : 0U)
        << machine::distance_name(static_cast<Distance>(d));
  EXPECT_EQ(read.stats.misses(), 1U);
  EXPECT_EQ(read.stats.from_memory, 0U);
}

TEST(MachineTopology, TransfersCostWhatThePresetSays) {
  // i3-ivybridge, smt-adjacent: CPUs 0-1 are core 0's threads, 2-3 core 1's.
  const auto i3 = config::load_machine("i3-ivybridge");
  expect_transfer(i3, 0, 1, Distance::Smt, "smt");
  expect_transfer(i3, 3, 2, Distance::Smt, "smt");
  expect_transfer(i3, 1, 2, Distance::SameDie, "same_die");
  // xeon-24, linux numbering: CPU c and c+12 are siblings, sockets alternate.
  const auto xeon = config::load_machine("xeon-24");
  expect_transfer(xeon, 0, 12, Distance::Smt, "smt");
  expect_transfer(xeon, 0, 2, Distance::SameDie, "same_die");
  expect_transfer(xeon, 0, 1, Distance::OneHop, "one_hop");
  expect_transfer(xeon, 13, 0, Distance::OneHop, "one_hop");
  // opteron-48: six CPUs per die; die 0 is one hop from dies 1, 2, 4, 6 and two from 3, 5, 7.
  const auto opteron = config::load_machine("opteron-48");
  expect_transfer(opteron, 0, 5, Distance::SameDie, "same_die");
  expect_transfer(opteron, 0, 6, Distance::OneHop, "one_hop");
  expect_transfer(opteron, 0, 12, Distance::OneHop, "one_hop");
  expect_transfer(opteron, 0, 18, Distance::TwoHops, "two_hops");
  expect_transfer(opteron, 47, 0, Distance::TwoHops, "two_hops");
  // opteron-48 carries mctop's matrix: the package mate (die 1) costs its measured
  // 197 cycles, not the one_hop class's 217, while the counters still say one_hop.
  Topology topo(opteron);
  EXPECT_TRUE(topo.has_latency_matrix());
  EXPECT_EQ(topo.transfer(0, 6), ns_to_ticks(93.81));    // 197 cycles / 2.1 GHz
  EXPECT_EQ(topo.transfer(0, 12), ns_to_ticks(103.33));  // 217 cycles / 2.1 GHz
  EXPECT_EQ(topo.class_latency(Distance::OneHop), ns_to_ticks(103.33));
}

TEST(MachineTopology, UncachedLineComesFromMemoryAtItsNumaDistance) {
  // box-64 gives no numa_distance: the default, 10 + 10 per socket hop (westmere's hop graph).
  const auto box = config::load_machine("box-64");
  Topology topo(box);
  CacheLine local("local"), remote("remote");
  remote.set_home_node(1);  // two hops from CPU 0's socket
  EXPECT_EQ(local.access(topo, 0, Access::Read, 0), box.memory_latency);
  EXPECT_EQ(remote.access(topo, 0, Access::Read, 0), box.memory_latency * 30 / 10);
  EXPECT_EQ(local.stats().from_memory, 1U);
  EXPECT_EQ(topo.numa_nodes(), 8);
  EXPECT_EQ(topo.numa_distance(0, 0), 10);
  EXPECT_EQ(topo.numa_distance(0, 4), 20);
  EXPECT_EQ(topo.numa_distance(0, 1), 30);
  EXPECT_EQ(topo.numa_node(13), 5);  // linux numbering: CPU 13 is on socket 13 % 8
  // opteron-48 carries mctop's measured distances (memory latency to each node over
  // the local one, x 10): die 3, two hops from die 0, is 24, not the default 30.
  const auto opteron = config::load_machine("opteron-48");
  Topology otopo(opteron);
  CacheLine far("far");
  far.set_home_node(3);
  EXPECT_EQ(otopo.numa_distance(0, 0), 10);
  EXPECT_EQ(otopo.numa_distance(0, 1), 17);
  EXPECT_EQ(otopo.numa_distance(0, 3), 24);
  EXPECT_EQ(far.access(otopo, 0, Access::Read, 0), opteron.memory_latency * 24 / 10);
  EXPECT_EQ(otopo.numa_node(13), 2);
}

// The README's numbering formulas, written out independently of Topology.
struct Loc {
  int socket, die, core, thread;
};
Loc readme_location(int cpu, const config::MachineParams& m) {
  const int S = m.sockets, D = m.dies_per_socket, C = m.cores_per_die, T = m.threads_per_core;
  if (m.smt_adjacent) return {cpu / (T * C * D), (cpu / (T * C)) % D, (cpu / T) % C, cpu % T};
  const int N = S * D * C;
  const int k = cpu % N;
  const int j = k / S;
  return {k % S, j / C, j % C, cpu / N};
}

TEST(MachineTopology, EveryPresetLoadsValidatesAndIsNumberedAsTheReadmeSays) {
  const auto presets = config::list_machines();
  ASSERT_GE(presets.size(), 9U);
  for (const char* required :
       {"i3-ivybridge", "laptop-4", "xeon-24", "opteron-48", "westmere-ex-80", "box-64",
        "haswell-48", "uniform-64", "host-default"}) {
    EXPECT_TRUE(std::any_of(presets.begin(), presets.end(), [&](const auto& e) {
      return e.name == required;
    })) << required;
  }
  for (const auto& entry : presets) {
    SCOPED_TRACE(entry.name);
    EXPECT_EQ(entry.description.rfind("INVALID", 0), std::string::npos) << entry.description;
    config::MachineParams m;
    ASSERT_NO_THROW(m = config::load_machine(entry.name));
    Topology topo(m);
    ASSERT_EQ(topo.cpus(), m.cpus);
    for (int cpu = 0; cpu < m.cpus; ++cpu) {
      const Loc want = readme_location(cpu, m);
      const auto& got = topo.coords(cpu);
      const int die_in_socket = got.die - got.socket * m.dies_per_socket;
      const int core_in_die = got.core - got.die * m.cores_per_die;
      ASSERT_EQ(got.socket, want.socket) << "cpu " << cpu;
      ASSERT_EQ(die_in_socket, want.die) << "cpu " << cpu;
      ASSERT_EQ(core_in_die, want.core) << "cpu " << cpu;
      ASSERT_EQ(got.smt, want.thread) << "cpu " << cpu;
    }
    // Every pair's transfer is what the file gives (its matrix entry, else the class
    // latency), and classes do not get cheaper with distance.
    for (int a = 0; a < m.cpus; ++a)
      for (int b = 0; b < m.cpus; ++b) {
        if (a == b) continue;
        const Distance d = topo.distance(a, b);
        ASSERT_GT(topo.transfer(a, b), 0);
        if (topo.has_latency_matrix())
          ASSERT_EQ(topo.transfer(a, b), preset_transfer(m, a, b, machine::distance_name(d)));
        else
          ASSERT_EQ(topo.transfer(a, b), topo.class_latency(d));
      }
    for (int d = 2; d < machine::kDistanceClasses; ++d)
      EXPECT_LE(topo.class_latency(static_cast<Distance>(d - 1)),
                topo.class_latency(static_cast<Distance>(d)));
  }
}

class MachineLatencyMatrix : public ::testing::Test {
 protected:
  // One file per test process: CTest runs the tests of this suite in parallel.
  std::filesystem::path path_ = std::filesystem::temp_directory_path() /
                                ("semsim_matrix_test_" + std::to_string(::getpid()) + ".json");
  void TearDown() override { std::filesystem::remove(path_); }
  config::MachineParams load(const Json& matrix) {
    Json doc = config::machine_document("i3-ivybridge");
    doc["name"] = "matrix-test";
    doc["latency_matrix_ns"] = matrix;
    std::ofstream(path_) << doc.dump(2);
    return config::load_machine(path_.string());
  }
};

TEST_F(MachineLatencyMatrix, OverridesTheClassesPairByPair) {
  const Json matrix = {
      {"matrix", {{0, 7, 30, 31}, {7.5, 0, 32, 33}, {30, 32, 0, 9}, {31, 33, 9, 0}}},
      {"source", "test: a measured-looking matrix"}};
  Topology topo(load(matrix));
  EXPECT_TRUE(topo.has_latency_matrix());
  EXPECT_EQ(topo.transfer(0, 1), ns_to_ticks(7));
  EXPECT_EQ(topo.transfer(1, 0), ns_to_ticks(7.5));  // directional
  EXPECT_EQ(topo.transfer(1, 3), ns_to_ticks(33));
  EXPECT_EQ(topo.transfer(2, 2), 0);
  // The distance class of a pair still comes from the topology, for the counters.
  EXPECT_EQ(topo.distance(0, 1), Distance::Smt);
  EXPECT_EQ(topo.distance(1, 3), Distance::SameDie);
  auto cost = measure(topo, 1, 3, Access::Read);
  EXPECT_EQ(cost.cost, ns_to_ticks(33));
  EXPECT_EQ(cost.stats.transfers[static_cast<std::size_t>(Distance::SameDie)], 1U);
}

TEST_F(MachineLatencyMatrix, BadMatrixIsAnInputErrorNamingTheField) {
  auto error_of = [&](const Json& matrix) -> std::string {
    try {
      Topology topo(load(matrix));
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(
      error_of({{"matrix", {{0, 1}, {1, 0}}}, {"source", "x"}}).find("latency_matrix_ns.matrix"),
      std::string::npos);
  EXPECT_NE(error_of({{"matrix", {{0, 7, 30, 31}, {7, 0, 32, 33}, {30, 32, 0, 9}, {31, 33, -9, 0}}},
                      {"source", "x"}})
                .find("latency_matrix_ns.matrix[3][2]"),
            std::string::npos);
  EXPECT_NE(error_of({{"value", 3}, {"source", "x"}}).find("latency_matrix_ns"), std::string::npos);
  EXPECT_NE(error_of({{"matrix", {{0, 7, 30, 31}, {7, 0, 32, 33}, {30, 32, 0, 9}, {31, 33, 9, 0}}},
                      {"source", ""}})
                .find("source"),
            std::string::npos);
}

TEST_F(MachineLatencyMatrix, BadMatricesAreRefusedWhenTheFileIsLoaded) {
  // The loader checks the matrices itself: no Topology needs to be built to see the error.
  auto error_of = [&](const char* key, const Json& matrix) -> std::string {
    Json doc = config::machine_document("i3-ivybridge");
    doc[key] = matrix;
    try {
      config::parse_machine(doc, "m.json");
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  // i3-ivybridge: one die, one NUMA node.
  EXPECT_EQ(error_of("numa_distance", {{"matrix", {{10}}}, {"source", "t"}}), "");
  EXPECT_NE(error_of("numa_distance", {{"matrix", {{10, 20}, {20, 10}}}, {"source", "t"}})
                .find("m.json: numa_distance.matrix"),
            std::string::npos);
  EXPECT_NE(error_of("numa_distance", {{"matrix", {{9}}}, {"source", "t"}})
                .find("numa_distance.matrix[0][0]"),
            std::string::npos);  // below local
  EXPECT_NE(error_of("numa_distance", {{"matrix", {{10}}}}).find("numa_distance"),
            std::string::npos);  // no source
  EXPECT_NE(error_of("latency_matrix_ns", {{"matrix", {{0, 1}, {1, 0}}}, {"source", "t"}})
                .find("m.json: latency_matrix_ns.matrix"),
            std::string::npos);
  const auto m = config::parse_machine(
      [] {
        Json doc = config::machine_document("i3-ivybridge");
        doc["numa_distance"] = {{"matrix", {{10}}}, {"source", "t"}};
        return doc;
      }(),
      "m.json");
  EXPECT_EQ(m.numa_distance, (std::vector<std::vector<int>>{{10}}));
}

TEST_F(MachineLatencyMatrix, BadSwitchRefillTableIsAnInputErrorNamingTheField) {
  auto error_of = [&](const Json& table) -> std::string {
    Json doc = config::machine_document("i3-ivybridge");
    doc["switch_refill_ns"] = table;
    std::ofstream(path_) << doc.dump(2);
    try {
      config::load_machine(path_.string());
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(error_of({{"value", {{1, 0}, {3, 120.5}}}, {"source", "test"}}), "");
  EXPECT_NE(error_of({{"value", {{3, 0}, {1, 5}}}, {"source", "x"}}).find("switch_refill_ns.value"),
            std::string::npos);  // distances must increase
  EXPECT_NE(error_of({{"value", {{1, -5}}}, {"source", "x"}}).find("switch_refill_ns"),
            std::string::npos);
  EXPECT_NE(error_of({{"value", {{1, 0}}}, {"source", ""}}).find("source"), std::string::npos);
}

TEST_F(MachineLatencyMatrix, BusyPullShareIsAShareOrAnInputErrorNamingTheField) {
  auto load_with = [&](const Json& share) {
    Json doc = config::machine_document("i3-ivybridge");
    doc["busy_pull_share"] = share;
    std::ofstream(path_) << doc.dump(2);
    return config::load_machine(path_.string());
  };
  EXPECT_EQ(load_with({{"value", 0.25}, {"source", "t"}}).busy_pull_share, 0.25);
  EXPECT_EQ(config::load_machine("i3-ivybridge").busy_pull_share, 0.0);
  try {
    load_with({{"value", 1.5}, {"source", "t"}});
    ADD_FAILURE() << "1.5 accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("busy_pull_share.value"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("between 0 and 1"), std::string::npos) << e.what();
  }
}

TEST_F(MachineLatencyMatrix, WakeupJitterLoadsAsMultiplesOfTheMeanOrIsAnInputError) {
  auto load_with = [&](const Json& jitter) {
    Json doc = config::machine_document("i3-ivybridge");
    doc["wakeup_jitter"] = jitter;
    std::ofstream(path_) << doc.dump(2);
    return config::load_machine(path_.string());
  };
  auto error_of = [&](const Json& jitter) -> std::string {
    try {
      load_with(jitter);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  // Rescaled to a mean of exactly 1: {1, 3} -> {0.5, 1.5}.
  const auto m =
      load_with({{"value", {{"waker", {1, 3}}, {"wakee", {0.9, 1.1}}}}, {"source", "t"}});
  EXPECT_EQ(m.wakeup_jitter_waker, (std::vector<double>{0.5, 1.5}));
  EXPECT_NEAR(m.wakeup_jitter_wakee[0] + m.wakeup_jitter_wakee[1], 2.0, 1e-12);
  EXPECT_TRUE(config::load_machine("i3-ivybridge").wakeup_jitter_waker.empty());
  EXPECT_NE(error_of({{"value", {{"waker", {1, 0}}, {"wakee", {1, 1}}}}, {"source", "x"}})
                .find("wakeup_jitter.value.waker"),
            std::string::npos);  // not positive
  EXPECT_NE(
      error_of({{"value", {{"waker", {1, 1}}}}, {"source", "x"}}).find("wakeup_jitter.value.wakee"),
      std::string::npos);  // missing
  EXPECT_NE(
      error_of({{"value", {{"waker", {1}}, {"wakee", {1, 1}}}}, {"source", "x"}}).find("2 to 1000"),
      std::string::npos);  // one entry is no spread
  EXPECT_NE(error_of({{"value", {1, 2}}, {"source", "x"}}).find("wakeup_jitter"),
            std::string::npos);
  EXPECT_NE(
      error_of({{"value", {{"waker", {1, 1}}, {"wakee", {1, 1}}}}, {"source", ""}}).find("source"),
      std::string::npos);
}

}  // namespace
}  // namespace semsim
