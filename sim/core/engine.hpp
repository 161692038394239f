// One SimGrid engine set up the way semsim needs it (used by the Simulation
// and by the speed floor; internal to sim/core: SimGrid stays here).
#pragma once

#include <memory>
#include <simgrid/s4u.hpp>

namespace semsim::core {

struct SimGridEngine {
  std::unique_ptr<simgrid::s4u::Engine> engine;
  simgrid::s4u::Host* host = nullptr;  // the one host every actor runs on
};

// A fresh engine with SimGrid's logging silenced, raw contexts, the caller's
// SIGINT disposition kept, and one host of speed 1 flop/s.
SimGridEngine make_engine();

}  // namespace semsim::core
