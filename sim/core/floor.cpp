#include "core/floor.hpp"

#include <chrono>

#include "core/simulation.hpp"

namespace semsim::core {

double measure_sleep_floor(int actors, int iterations) {
  Simulation sim;
  for (int a = 0; a < actors; ++a) {
    sim.spawn("floor", [iterations](Actor& self) {
      Tick t = self.now();
      for (int i = 0; i < iterations; ++i) self.sleep_until(t += 1000);
    });
  }
  auto start = std::chrono::steady_clock::now();
  sim.run();
  std::chrono::duration<double> wall = std::chrono::steady_clock::now() - start;
  return wall.count() / (static_cast<double>(actors) * iterations);
}

}  // namespace semsim::core
