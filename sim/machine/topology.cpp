#include "machine/topology.hpp"

namespace semsim::machine {

const char* distance_name(Distance d) {
  switch (d) {
    case Distance::Self:
      return "self";
    case Distance::Smt:
      return "smt";
    case Distance::SameDie:
      return "same_die";
    case Distance::SameSocket:
      return "same_socket";
    case Distance::OneHop:
      return "one_hop";
    case Distance::TwoHops:
      return "two_hops";
  }
  return "?";
}

namespace {

// Assumption (used only when the machine file gives no "numa_distance"):
// SLIT-like distances, 10 local as ACPI defines it; another die of the same
// package 16 (a typical Magny-Cours SLIT value); 10 more per socket hop,
// Linux's REMOTE_DISTANCE (20) for one hop.
constexpr int kLocalDistance = 10;
constexpr int kSamePackageDistance = 16;
constexpr int kDistancePerHop = 10;

}  // namespace

CpuPlace cpu_place(int cpu, int sockets, int dies_per_socket, int cores_per_die,
                   int threads_per_core, bool smt_adjacent) {
  const int T = threads_per_core, C = cores_per_die, D = dies_per_socket, S = sockets;
  if (smt_adjacent) return {cpu / (T * C * D), (cpu / (T * C)) % D, (cpu / T) % C, cpu % T};
  const int N = S * D * C;  // physical cores
  const int k = cpu % N;
  const int j = k / S;
  return {k % S, j / C, j % C, cpu / N};
}

Topology::Topology(const MachineParams& m) : m_(m), cpus_(m.cpus) {
  // Global die and core indices make "same core" / "same die" a plain comparison.
  const int C = m.cores_per_die, D = m.dies_per_socket, S = m.sockets;
  for (int id = 0; id < cpus_; ++id) {
    const CpuPlace p = cpu_place(id, S, D, C, m.threads_per_core, m.smt_adjacent);
    const int global_die = p.socket * D + p.die;
    coords_.push_back({p.socket, global_die, global_die * C + p.core, p.thread});
  }
  // A class the model leaves out falls back to the next farther one that it
  // gives, else the nearest nearer one.
  const Tick table[] = {
      0, m.lat_smt, m.lat_same_die, m.lat_same_socket, m.lat_one_hop, m.lat_two_hops};
  class_latency_.assign(kDistanceClasses, 0);
  for (int d = 1; d < kDistanceClasses; ++d) {
    Tick v = -1;
    for (int i = d; i < kDistanceClasses && v < 0; ++i) v = table[i];
    for (int i = d; i > 0 && v < 0; --i) v = table[i];
    class_latency_[static_cast<std::size_t>(d)] = v >= 0 ? v : m.memory_latency;
  }
  auto hops_between = [&](int sa, int sb) {
    if (static_cast<std::size_t>(sa) < m.socket_hops.size() &&
        static_cast<std::size_t>(sb) < m.socket_hops[static_cast<std::size_t>(sa)].size())
      return m.socket_hops[static_cast<std::size_t>(sa)][static_cast<std::size_t>(sb)];
    return sa == sb ? 0 : 1;
  };
  dist_.resize(static_cast<std::size_t>(cpus_) * static_cast<std::size_t>(cpus_));
  latency_.resize(dist_.size());
  for (int a = 0; a < cpus_; ++a) {
    for (int b = 0; b < cpus_; ++b) {
      const auto& ca = coords(a);
      const auto& cb = coords(b);
      Distance d;
      if (a == b)
        d = Distance::Self;
      else if (ca.core == cb.core)
        d = Distance::Smt;
      else if (ca.die == cb.die)
        d = Distance::SameDie;
      else if (ca.socket == cb.socket)
        d = Distance::SameSocket;
      else
        d = hops_between(ca.socket, cb.socket) >= 2 ? Distance::TwoHops : Distance::OneHop;
      dist_[index(a, b)] = d;
      latency_[index(a, b)] = class_latency_[static_cast<std::size_t>(d)];
    }
  }
  // The measured matrix, when the model has one (checked cpus x cpus by the loader),
  // overrides the classes pair by pair; the diagonal stays 0.
  has_matrix_ = !m.latency_matrix.empty();
  if (has_matrix_)
    for (int a = 0; a < cpus_; ++a)
      for (int b = 0; b < cpus_; ++b)
        if (a != b)
          latency_[index(a, b)] =
              m.latency_matrix[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)];
  nodes_ = S * D;
  numa_.assign(static_cast<std::size_t>(nodes_) * static_cast<std::size_t>(nodes_), kLocalDistance);
  for (int a = 0; a < nodes_; ++a)
    for (int b = 0; b < nodes_; ++b) {
      int v = kLocalDistance;
      if (!m.numa_distance.empty())
        v = m.numa_distance[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)];
      else if (a / D == b / D && a != b)
        v = kSamePackageDistance;
      else if (a / D != b / D)
        v = kLocalDistance + kDistancePerHop * hops_between(a / D, b / D);
      numa_[static_cast<std::size_t>(a * nodes_ + b)] = v;
    }
}

Tick Topology::memory_latency(int cpu, int node) const {
  if (node < 0) return m_.memory_latency;
  const int d = numa_distance(numa_node(cpu), node);
  return m_.memory_latency * d / kLocalDistance;
}

}  // namespace semsim::machine
