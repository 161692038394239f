// Where thread i of a lock-stress run goes:
//   compact: the i-th CPU in topology order -- SMT siblings of a core, then
//     the cores of the die, then the dies of the socket, then the sockets;
//   spread: one per socket in turn (thread i on socket i mod sockets), each
//     socket filled in compact order.
#pragma once

#include <string>
#include <vector>

#include "machine/topology.hpp"

namespace semsim::machine {

enum class Placement { Compact, Spread };

// The CPUs of the machine in placement order (all of them; thread i takes
// element i mod cpus).
std::vector<int> placement_order(const Topology& topo, Placement p);

// Cycles of the machine's clock as ticks (clock_ghz from the machine file).
Tick cycles_to_ticks(const Topology& topo, double cycles);

}  // namespace semsim::machine
