// Where thread i of a lock-stress or locktorture run goes:
//   compact: the i-th CPU in topology order -- SMT siblings of a core, then
//     the cores of the die, then the dies of the socket, then the sockets;
//   spread: one per socket in turn (thread i on socket i mod sockets), each
//     socket filled in compact order;
//   cores-first: the mctop allocator's MCTOP_ALLOC_MIN_LAT_CORES (LPD-EPFL/mctop
//     include/mctop_alloc.h: "Use physical cores first and once all of them
//     have been used start using HWCs"; src/mctop_alloc.c
//     mctop_alloc_prep_min_lat with smt_first < 0): one hardware thread of
//     every core of the first socket, then of the other sockets in increasing
//     latency from the first (ties: socket id), and once every core has one,
//     the next hardware thread of each core in the same order. It is the
//     placement of the published mctop lock curves (reproduce_locks.py says
//     why). mctop starts at the socket with the most memory bandwidth and
//     orders the others by bandwidth to it when the .mct has bandwidths; here
//     the first socket and the latency order stand for both (the machine file
//     has no bandwidths);
//   fork-balanced: where Linux puts new tasks on an idle machine, the
//     unpinned start of locktorture's kthreads: one per socket in turn
//     (wake_up_new_task() balances a fork across the NUMA nodes,
//     find_idlest_group(): the group with the most idle CPUs), within a socket
//     one hardware thread of every core before any second one
//     (select_idle_core() prefers a wholly idle core), cores in compact order.
//     An assumption about the scheduler of the measured kernels, not a probe.
#pragma once

#include <string>
#include <vector>

#include "machine/topology.hpp"

namespace semsim::machine {

enum class Placement { Compact, Spread, CoresFirst, ForkBalanced };

// The CPUs of the machine in placement order (all of them; thread i takes
// element i mod cpus).
std::vector<int> placement_order(const Topology& topo, Placement p);

// Cycles of the machine's clock as ticks (clock_ghz from the machine file).
Tick cycles_to_ticks(const Topology& topo, double cycles);

}  // namespace semsim::machine
