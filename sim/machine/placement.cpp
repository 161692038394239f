#include "machine/placement.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "core/errors.hpp"

namespace semsim::machine {

std::vector<int> placement_order(const Topology& topo, Placement p) {
  std::vector<int> order(static_cast<std::size_t>(topo.cpus()));
  for (int c = 0; c < topo.cpus(); ++c) order[static_cast<std::size_t>(c)] = c;
  auto key = [&](int c) {
    const auto& k = topo.coords(c);
    return std::make_tuple(k.socket, k.die, k.core, k.smt, c);
  };
  std::sort(order.begin(), order.end(), [&](int a, int b) { return key(a) < key(b); });
  if (p == Placement::Compact) return order;
  // Spread: deal the compact order of each socket out round-robin over the sockets.
  std::vector<std::vector<int>> per_socket;
  for (int c : order) {
    const auto s = static_cast<std::size_t>(topo.coords(c).socket);
    if (per_socket.size() <= s) per_socket.resize(s + 1);
    per_socket[s].push_back(c);
  }
  std::vector<int> out;
  for (std::size_t round = 0; out.size() < order.size(); ++round)
    for (auto& cpus : per_socket)
      if (round < cpus.size()) out.push_back(cpus[round]);
  return out;
}

Tick cycles_to_ticks(const Topology& topo, double cycles) {
  const double ghz = topo.params().clock_ghz;
  if (!(ghz > 0)) throw InputError("machine clock_ghz: needed to convert cycles to time, got none");
  return static_cast<Tick>(std::llround(cycles * static_cast<double>(kTicksPerNs) / ghz));
}

}  // namespace semsim::machine
