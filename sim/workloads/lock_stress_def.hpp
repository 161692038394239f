// lock-stress: every thread takes one shared user-space lock
// (TAS, TTAS, ticket or MCS), holds it `critical_cycles` cycles of work and
// stores into the protected data line(s) inside the critical section (so they
// move with the lock), releases it, then waits `delay_cycles` cycles. The
// figure is ops_per_s = acquisitions per second, all threads. It exercises the
// machine layer alone (no sem.c): the LPD-EPFL libslock stress tests
// (bmarks/stress_one.c) behind the published mctop lock curves.
// Threads of one process, pinned; placement "compact" / "spread" /
// "cores-first" (machine/placement.hpp) or the usual "pinned" (thread i on CPU i).
#pragma once

#include <cstdint>
#include <string>

namespace semsim::workloads {

struct LockStressParams {
  std::string lock = "ticket";  // tas | ttas | ticket | mcs
  std::int64_t critical_cycles = 1000;
  std::int64_t delay_cycles = 0;
  // Cache lines stored into in every critical section: libslock stress_one's
  // default (DEFAULT_CL_ACCESS 4, bmarks/stress_one.c, tudordavid/libslock).
  int data_lines = 4;
};

}  // namespace semsim::workloads
