#include "machine/placement.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "core/errors.hpp"

namespace semsim::machine {

namespace {

// `compact` is the machine's CPUs in compact order.
std::vector<int> cores_first(const Topology& topo, const std::vector<int>& compact) {
  // The sockets by latency from the first one: its first CPU to theirs.
  std::vector<int> first_cpu;  // per socket, its first CPU in compact order
  for (int c : compact) {
    const auto s = static_cast<std::size_t>(topo.coords(c).socket);
    if (first_cpu.size() <= s) first_cpu.resize(s + 1, -1);
    if (first_cpu[s] < 0) first_cpu[s] = c;
  }
  const int origin = compact.front();
  const int origin_socket = topo.coords(origin).socket;
  std::vector<int> sockets;
  for (std::size_t s = 0; s < first_cpu.size(); ++s)
    if (first_cpu[s] >= 0) sockets.push_back(static_cast<int>(s));
  auto rank = [&](int s) {
    const int c = first_cpu[static_cast<std::size_t>(s)];
    return std::make_tuple(s == origin_socket ? 0 : 1, topo.transfer(origin, c), s);
  };
  std::stable_sort(sockets.begin(), sockets.end(), [&](int a, int b) { return rank(a) < rank(b); });
  // Hardware thread k of every core, socket by socket, before thread k + 1 of any.
  int threads = 1;
  for (int c : compact) threads = std::max(threads, topo.coords(c).smt + 1);
  std::vector<int> out;
  out.reserve(compact.size());
  for (int k = 0; k < threads; ++k)
    for (int s : sockets)
      for (int c : compact)
        if (topo.coords(c).socket == s && topo.coords(c).smt == k) out.push_back(c);
  return out;
}

}  // namespace

std::vector<int> placement_order(const Topology& topo, Placement p) {
  std::vector<int> order(static_cast<std::size_t>(topo.cpus()));
  for (int c = 0; c < topo.cpus(); ++c) order[static_cast<std::size_t>(c)] = c;
  auto key = [&](int c) {
    const auto& k = topo.coords(c);
    return std::make_tuple(k.socket, k.die, k.core, k.smt, c);
  };
  std::sort(order.begin(), order.end(), [&](int a, int b) { return key(a) < key(b); });
  if (p == Placement::Compact) return order;
  if (p == Placement::CoresFirst) return cores_first(topo, order);
  // Fork-balanced: each socket's CPUs by hardware thread first (every core's
  // first thread, then every core's second), then dealt out as spread is.
  if (p == Placement::ForkBalanced)
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      const auto& x = topo.coords(a);
      const auto& y = topo.coords(b);
      return std::make_tuple(x.socket, x.smt) < std::make_tuple(y.socket, y.smt);
    });
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
