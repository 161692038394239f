#include "core/floor.hpp"

#include <chrono>

#include "core/engine.hpp"

namespace sg4 = simgrid::s4u;

namespace semsim::core {

// Bare SimGrid on purpose: the yardstick must not move when our own engine
// gets faster (the tasks are fibers now, core/simulation.hpp), so it uses no
// part of Simulation, only an engine set up the same way (core/engine.hpp).
double measure_sleep_floor(int actors, int iterations) {
  SimGridEngine sg = make_engine();
  for (int a = 0; a < actors; ++a) {
    sg4::Actor::create("floor", sg.host, [iterations] {
      for (int i = 0; i < iterations; ++i) sg4::this_actor::sleep_for(1e-6);
    });
  }
  auto start = std::chrono::steady_clock::now();
  sg.engine->run();
  std::chrono::duration<double> wall = std::chrono::steady_clock::now() - start;
  return wall.count() / (static_cast<double>(actors) * iterations);
}

}  // namespace semsim::core
