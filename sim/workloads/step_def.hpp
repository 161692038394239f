// The common vocabulary of the workload definitions (sim/workloads/*_def.hpp):
// what one task does next, as a Step, and the user-space work the benchmarks
// do between their semaphore calls.
//
// Each workload is defined once, as a small deterministic "program" per task
// (a class with `bool next(Step&)`), and both sides execute the same program:
// the native runner (sim/native) issues the real system call and runs the
// user-space work here; the simulator replays the call in its kernel model
// and charges the work from the machine model (bubble_sort_round,
// user_loop_iteration, memcpy_byte). Pure C++: no SimGrid, no JSON.
#pragma once

#include <cstdint>

#include "ipc/sembuf.hpp"

namespace semsim::workloads {

enum class StepKind : std::uint8_t {
  Semop,        // semop(array, sops, nsops)
  SetVal,       // semctl(array, sem, SETVAL, value)
  CreateArray,  // semget() of a private array of `value` semaphores (aim9-shm, per call)
  RemoveArray,  // semctl(array, 0, IPC_RMID) of the array made by CreateArray
  UserOnly,     // no system call: only the user-space work below (sembench's empty scan)
};

struct Step {
  StepKind kind = StepKind::Semop;
  int array = 0;                      // which of the workload's arrays (sembench has several)
  const ipc::Sembuf* sops = nullptr;  // Semop: the operations (owned by the program)
  int nsops = 0;
  int sem = 0;    // SetVal: the semaphore
  int value = 0;  // SetVal: the value; CreateArray: the number of semaphores

  // Before the call: publish "I am about to wait" (sembench's worklist_add: a full
  // fence, then the task's ready flag set to 1).
  bool announce_ready = false;

  // User-space work after the call, before the next step.
  int delay_rounds = 0;         // bubble-sort rounds of sem-scalebench's do_delay (-m)
  std::int64_t busy_loops = 0;  // iterations of an empty counting loop (sem-lockunlock)
  int memcpy_bytes = 0;         // bytes copied (aim9-shm; direction alternates)
  std::int64_t think_ns = 0;    // busy time (custom)

  // Accounting. counts_op: this semop() call counts in ops_per_s (setup calls such as
  // ping-pong's first token do not). rounds: increments of the benchmark's own counter.
  bool counts_op = true;
  int rounds = 0;

  // Resets everything to a plain counted semop.
  void clear() { *this = Step{}; }
};

// sem-scalebench's do_delay(): `rounds` times, fill 12 ints in descending order and
// bubble-sort them (ipcscale, DELAY_BUBBLESORT, BUF_SIZE 12). Our own implementation
// of the same algorithm: the size is read through a volatile so the compiler cannot
// fold the sort away, and the compare loop's last probe (index 12, uninitialised in
// the original) reads a sentinel that never swaps. Returns a checksum so the work is
// observable. The calibration probe `bubble_sort_round` times this very function.
inline int bubble_sort_delay(int rounds) {
  static volatile int buf_size = 12;
  int sum = 0;
  int data[13];
  for (int r = 0; r < rounds; ++r) {
    const int n = buf_size;
    for (int j = 0; j < n; ++j) data[j] = n - j;
    data[n] = 0x7fffffff;  // the probe at k + 1 == n: never smaller, never swapped
    for (int j = n; j > 1; --j) {
      for (int k = 0; k < j; ++k) {
        if (data[k] > data[k + 1]) {
          const int tmp = data[k];
          data[k] = data[k + 1];
          data[k + 1] = tmp;
        }
      }
    }
    sum += data[0];
  }
  return sum;
}

// sem-lockunlock's busy loop: `for (j = 0; j < n; j++);` over a volatile j. The
// calibration probe `user_loop_iteration` times this very function.
inline void busy_loop(std::int64_t iterations) {
  volatile std::int64_t j = 0;
  while (j < iterations) {
    j = j + 1;
  }
}

}  // namespace semsim::workloads
