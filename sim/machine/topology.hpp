// CPUs and the distance between them (SMT sibling, same die, same socket,
// one or two socket hops), with the cache-line transfer latency of each
// distance class from the machine model. Precomputed as a matrix: the hot
// path is one array lookup.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/machine_config.hpp"

namespace semsim::machine {

enum class Distance : std::uint8_t { Self, Smt, SameDie, SameSocket, OneHop, TwoHops };
constexpr int kDistanceClasses = 6;
const char* distance_name(Distance d);

struct CpuCoords {
  int socket, die, core, smt;  // die and core are global indices
};

class Topology {
 public:
  explicit Topology(const config::MachineParams& m);
  int cpus() const { return cpus_; }
  const CpuCoords& coords(int cpu) const { return coords_[static_cast<std::size_t>(cpu)]; }
  Distance distance(int a, int b) const { return dist_[index(a, b)]; }
  // One cache-line transfer from a's cache to b's.
  Tick transfer(int a, int b) const { return latency_[index(a, b)]; }
  const config::MachineParams& params() const { return m_; }

 private:
  std::size_t index(int a, int b) const {
    return static_cast<std::size_t>(a) * static_cast<std::size_t>(cpus_) + static_cast<std::size_t>(b);
  }
  config::MachineParams m_;
  int cpus_;
  std::vector<CpuCoords> coords_;
  std::vector<Distance> dist_;
  std::vector<Tick> latency_;
};

}  // namespace semsim::machine
