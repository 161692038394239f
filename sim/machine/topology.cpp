#include "machine/topology.hpp"

#include <fmt/format.h>

#include "config/json_fields.hpp"

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

Topology::Topology(const config::MachineParams& m) : m_(m), cpus_(m.cpus) {
  // Numbering as documented in cpu_models/README.md. Global die and core
  // indices make "same core" / "same die" a plain comparison.
  const int T = m.threads_per_core, C = m.cores_per_die, D = m.dies_per_socket, S = m.sockets;
  const int N = m.cpus / T;  // physical cores
  for (int id = 0; id < cpus_; ++id) {
    int thread, core, die, socket;
    if (m.smt_adjacent) {
      thread = id % T;
      core = (id / T) % C;
      die = (id / (T * C)) % D;
      socket = id / (T * C * D);
    } else {
      thread = id / N;
      const int k = id % N;
      socket = k % S;
      const int j = k / S;
      die = j / C;
      core = j % C;
    }
    const int global_die = socket * D + die;
    coords_.push_back({socket, global_die, global_die * C + core, thread});
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
  nodes_ = S * D;
  numa_.assign(static_cast<std::size_t>(nodes_) * static_cast<std::size_t>(nodes_), kLocalDistance);
  for (int a = 0; a < nodes_; ++a)
    for (int b = 0; b < nodes_; ++b) {
      int v = kLocalDistance;
      if (a / D == b / D && a != b)
        v = kSamePackageDistance;
      else if (a / D != b / D)
        v = kLocalDistance + kDistancePerHop * hops_between(a / D, b / D);
      numa_[static_cast<std::size_t>(a * nodes_ + b)] = v;
    }
  const std::string where = "machine " + m.name;
  if (m.raw.is_object()) {
    if (m.raw.contains("latency_matrix_ns"))
      load_latency_matrix(m.raw["latency_matrix_ns"], where + ": latency_matrix_ns");
    if (m.raw.contains("numa_distance"))
      load_numa_distance(m.raw["numa_distance"], where + ": numa_distance");
  }
}

void Topology::load_latency_matrix(const Json& spec, const std::string& path) {
  // {"matrix": [[ns, ...], ...], "source": "..."}: row a, column b is a
  // transfer from CPU a's cache to CPU b's. The diagonal is ignored (0).
  const std::string shape =
      fmt::format("must be {{\"matrix\": [[ns, ...] x {0}] x {0}, \"source\": \"...\"}}", cpus_);
  if (!spec.is_object() || !spec.contains("matrix") || !spec.contains("source"))
    config::fail(path, shape);
  config::reject_unknown_keys(spec, path, {"matrix", "source"});
  if (config::as_string(spec["source"], path + ".source").empty())
    config::fail(path + ".source", "must not be empty");
  const auto& rows = spec["matrix"];
  if (!rows.is_array() || rows.size() != static_cast<std::size_t>(cpus_))
    config::fail(path + ".matrix", shape);
  for (int a = 0; a < cpus_; ++a) {
    const auto& row = rows[static_cast<std::size_t>(a)];
    const std::string rp = fmt::format("{}.matrix[{}]", path, a);
    if (!row.is_array() || row.size() != static_cast<std::size_t>(cpus_))
      config::fail(rp, fmt::format("must have {} entries (one per CPU)", cpus_));
    for (int b = 0; b < cpus_; ++b) {
      if (a == b) continue;
      const double ns = config::as_number(row[static_cast<std::size_t>(b)],
                                          fmt::format("{}[{}]", rp, b), 0, true);
      latency_[index(a, b)] = ns_to_ticks(ns);
    }
  }
  has_matrix_ = true;
}

void Topology::load_numa_distance(const Json& spec, const std::string& path) {
  // {"matrix": [[10, 21, ...], ...], "source": "..."}: nodes x nodes, a node being a die.
  const std::string shape = fmt::format(
      "must be {{\"matrix\": [[distance, ...] x {0}] x {0}, \"source\": \"...\"}} (one node per "
      "die)",
      nodes_);
  if (!spec.is_object() || !spec.contains("matrix") || !spec.contains("source"))
    config::fail(path, shape);
  config::reject_unknown_keys(spec, path, {"matrix", "source"});
  if (config::as_string(spec["source"], path + ".source").empty())
    config::fail(path + ".source", "must not be empty");
  const auto& rows = spec["matrix"];
  if (!rows.is_array() || rows.size() != static_cast<std::size_t>(nodes_))
    config::fail(path + ".matrix", shape);
  for (int a = 0; a < nodes_; ++a) {
    const auto& row = rows[static_cast<std::size_t>(a)];
    const std::string rp = fmt::format("{}.matrix[{}]", path, a);
    if (!row.is_array() || row.size() != static_cast<std::size_t>(nodes_))
      config::fail(rp, fmt::format("must have {} entries (one per NUMA node)", nodes_));
    for (int b = 0; b < nodes_; ++b)
      numa_[static_cast<std::size_t>(a * nodes_ + b)] = static_cast<int>(config::as_int(
          row[static_cast<std::size_t>(b)], fmt::format("{}[{}]", rp, b), kLocalDistance, 255));
  }
}

Tick Topology::memory_latency(int cpu, int node) const {
  if (node < 0) return m_.memory_latency;
  const int d = numa_distance(numa_node(cpu), node);
  return m_.memory_latency * d / kLocalDistance;
}

}  // namespace semsim::machine
