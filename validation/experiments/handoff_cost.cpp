// What does one hand-off of the time core cost, with no model code around it?
// (issue 15, speed: the bench's hysteresis case takes about 31 hand-offs per
// simulated semop.) N fibers each loop STEPS times on wait_turn(cursor += a
// step of 1,000-1,063 ticks), so every turn crosses the horizon and is a
// hand-off; TOUCH bytes of the task's own data are written per turn (0: none),
// to see what the resumed task's working set adds. Prints ns per turn (wall);
// read the user CPU time too (`time`), the host is shared.
//
//   cmake --build build/dev --target semsim_model
//   g++ -O2 -std=c++20 -Isim validation/experiments/handoff_cost.cpp -o /tmp/x \
//     build/dev/libsemsim_model.a $(pkg-config --libs simgrid) -lfmt -lboost_context -lpthread
//   time /tmp/x N STEPS [TOUCH]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "core/simulation.hpp"

using semsim::Tick;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s TASKS STEPS [TOUCH_BYTES]\n", argv[0]);
    return 2;
  }
  const int n = std::atoi(argv[1]);
  const long steps = std::atol(argv[2]);
  const int touch = argc > 3 ? std::atoi(argv[3]) : 0;
  semsim::core::Simulation sim;
  std::vector<std::vector<char>> data(static_cast<std::size_t>(n),
                                      std::vector<char>(static_cast<std::size_t>(touch) + 1));
  for (int i = 0; i < n; ++i)
    sim.spawn("t", [&data, i, steps, touch](semsim::core::Actor& a) {
      auto& mine = data[static_cast<std::size_t>(i)];
      Tick cursor = i;
      unsigned x = static_cast<unsigned>(i);
      for (long s = 0; s < steps; ++s) {
        for (int b = 0; b < touch; b += 64) ++mine[static_cast<std::size_t>(b)];
        x = x * 1103515245u + 12345u;
        cursor += 1000 + (x >> 20) % 64;
        a.wait_turn(cursor);
      }
    });
  const auto t0 = std::chrono::steady_clock::now();
  sim.run();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double turns = static_cast<double>(n) * static_cast<double>(steps);
  std::printf("tasks %d: %.1f ns per turn (wall), %.3f hand-offs per turn\n", n, wall / turns * 1e9,
              static_cast<double>(sim.handoffs()) / turns);
}
