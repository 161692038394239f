// CPUs and the distance between them (SMT sibling, same die, same socket,
// one or two socket hops), with the cache-line transfer latency of each
// pair: from the machine model's distance classes or, when the machine file
// has one, from its full measured matrix ("latency_matrix_ns"), which
// overrides the classes pair by pair (the class of a pair is still what the
// per-line counters record). Precomputed as matrices: the hot path is one
// array lookup.
//
// NUMA: a NUMA node is a die (last-level cache and memory controller), as on
// Magny-Cours (2 nodes per package) and on every one-die-per-socket Intel
// server. The node distance is the machine file's "numa_distance" matrix
// (ACPI SLIT-like: 10 = local) or, without one, derived from the topology
// (see numa_distance()). A fetch from memory homed on another node costs
// memory_latency * distance / 10, the SLIT reading of relative latency.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "machine/params.hpp"

namespace semsim::machine {

enum class Distance : std::uint8_t { Self, Smt, SameDie, SameSocket, OneHop, TwoHops };
constexpr int kDistanceClasses = 6;
const char* distance_name(Distance d);

struct CpuCoords {
  int socket, die, core, smt;  // die and core are global indices
};

class Topology {
 public:
  // `m` as the machine loader checked it (sim/config/machine_config.hpp).
  explicit Topology(const MachineParams& m);
  int cpus() const { return cpus_; }
  const CpuCoords& coords(int cpu) const { return coords_[static_cast<std::size_t>(cpu)]; }
  Distance distance(int a, int b) const { return dist_[index(a, b)]; }
  // One cache-line transfer from a's cache to b's.
  Tick transfer(int a, int b) const { return latency_[index(a, b)]; }
  // The transfer latency of a distance class (the classes of the machine
  // file, a missing one falling back to the nearest given one), whatever the matrix says.
  Tick class_latency(Distance d) const { return class_latency_[static_cast<std::size_t>(d)]; }
  bool has_latency_matrix() const { return has_matrix_; }

  int numa_nodes() const { return nodes_; }
  int numa_node(int cpu) const { return coords(cpu).die; }
  int numa_distance(int node_a, int node_b) const {
    return numa_[static_cast<std::size_t>(node_a) * static_cast<std::size_t>(nodes_) +
                 static_cast<std::size_t>(node_b)];
  }
  // A line fetched from DRAM homed on `node` by `cpu`; node < 0: the CPU's own node.
  Tick memory_latency(int cpu, int node) const;

  const MachineParams& params() const { return m_; }

 private:
  std::size_t index(int a, int b) const {
    return static_cast<std::size_t>(a) * static_cast<std::size_t>(cpus_) +
           static_cast<std::size_t>(b);
  }
  MachineParams m_;
  int cpus_;
  int nodes_ = 1;
  bool has_matrix_ = false;
  std::vector<CpuCoords> coords_;
  std::vector<Distance> dist_;
  std::vector<Tick> latency_;
  std::vector<Tick> class_latency_;
  std::vector<int> numa_;
};

}  // namespace semsim::machine
