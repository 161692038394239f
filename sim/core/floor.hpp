// The speed floor of the simulator: the wall time of one sleep_for() of a
// bare SimGrid actor loop, measured in the same process as the benchmark
// that compares against it (a simulated semop should cost at most a
// few of these).
#pragma once

namespace semsim::core {

// Runs `actors` actors doing `iterations` sleeps each on a fresh engine;
// returns wall-clock seconds per sleep.
double measure_sleep_floor(int actors, int iterations);

}  // namespace semsim::core
