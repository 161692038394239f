#include "machine/topology.hpp"

namespace semsim::machine {

const char* distance_name(Distance d) {
  switch (d) {
    case Distance::Self: return "self";
    case Distance::Smt: return "smt";
    case Distance::SameDie: return "same_die";
    case Distance::SameSocket: return "same_socket";
    case Distance::OneHop: return "one_hop";
    case Distance::TwoHops: return "two_hops";
  }
  return "?";
}

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
  dist_.resize(static_cast<std::size_t>(cpus_ * cpus_));
  latency_.resize(dist_.size());
  // A class the model leaves out falls back to the next farther one that it gives.
  auto lat = [&](Distance d) -> Tick {
    const Tick table[] = {0, m.lat_smt, m.lat_same_die, m.lat_same_socket, m.lat_one_hop, m.lat_two_hops};
    for (int i = static_cast<int>(d); i < kDistanceClasses; ++i)
      if (table[i] >= 0) return table[i];
    for (int i = static_cast<int>(d); i > 0; --i)
      if (table[i] >= 0) return table[i];
    return m.memory_latency;
  };
  for (int a = 0; a < cpus_; ++a) {
    for (int b = 0; b < cpus_; ++b) {
      const auto& ca = coords(a);
      const auto& cb = coords(b);
      Distance d;
      if (a == b) d = Distance::Self;
      else if (ca.core == cb.core) d = Distance::Smt;
      else if (ca.die == cb.die) d = Distance::SameDie;
      else if (ca.socket == cb.socket) d = Distance::SameSocket;
      else {
        int hops = m.socket_hops[static_cast<std::size_t>(ca.socket)][static_cast<std::size_t>(cb.socket)];
        d = hops >= 2 ? Distance::TwoHops : Distance::OneHop;
      }
      dist_[index(a, b)] = d;
      latency_[index(a, b)] = d == Distance::Self ? 0 : lat(d);
    }
  }
}

}  // namespace semsim::machine
