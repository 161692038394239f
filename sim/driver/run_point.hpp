// One simulated run: a fresh engine, machine, array and tasks; a warm-up; a
// measurement window; the statistics of that window.
#pragma once

#include <cstdint>
#include <functional>

#include "config/machine_config.hpp"
#include "config/scenario.hpp"
#include "core/time.hpp"
#include "ipc/kernel_policy.hpp"
#include "report/trace_recorder.hpp"

namespace semsim::driver {

// Progress of the runs, for a caller that shows it (the Python layer's terminal
// line). Reported by a run's timekeeper at its start, on the run-length grid and
// at its end (by the watchdog, every simulated ms, for a run to completion). The
// hook only reads the clock, so a run gives the same bytes with or without it.
struct RunProgress {
  std::uint64_t run = 0;  // runs begun since the hook was set: 1 is the first
  Tick done = 0;          // simulated time so far
  Tick target = 0;        // the ceiling: warmup_ms + duration_ms (0: a run to completion)
  bool adaptive = false;  // the run may stop before target (precision > 0)
  bool finished = false;  // the run's last report
};
using ProgressHook = std::function<void(const RunProgress&)>;
// One hook for the process (one simulation runs at a time); an empty hook
// clears it. Returns the previous one. Resets the run count.
ProgressHook set_progress_hook(ProgressHook hook);
// Whether a hook is set, and a report to it (for runs made in other processes,
// whose reports come back through the caller: driver/simulate.cpp).
bool has_progress_hook();
void report_progress(const RunProgress& progress);
// Reports a run that is not simulated because it is a copy of another (its seed
// made no difference): a start and an end, as `of`, the other's last report,
// under run number `run`.
void report_copied_run(const RunProgress& of, std::uint64_t run);
// The same for a copy of the latest run of this process, numbered as the next run.
void report_copied_run();
// Reports a run that is not simulated because its point was precise enough
// without it (driver/simulate.cpp): a start and an end under run number `run`;
// without a number, as the next run of this process.
void report_skipped_run(std::uint64_t run);
void report_skipped_run();
// The next run of this process takes the latest run's number (it is that run again).
void renumber_next_run();
// The next run reports progress as run `run` (a second round's run: the number
// of the first-round run it replaces).
void number_next_run(std::uint64_t run);

// The shortest batch of the adaptive run length (report/run_length.hpp) for a run
// of `ntasks` tasks on `machine`: its slowest period (run_point.cpp says which).
Tick slowest_period(const config::MachineParams& machine, int ntasks);
// How many OS-noise interruptions such a batch holds on average (1 without noise).
double noise_arrivals_per_batch(const config::MachineParams& machine);

// Statistics of one run's measurement window, as JSON (see report/). With a
// recorder, the run's trace events also go there (the run itself is the same).
// Runs read ahead (machine/task.hpp) when not traced; one whose read-ahead
// conflicted is run again in strict order (same bytes, twice the work).
Json run_point(const Scenario& scenario, const config::MachineParams& machine,
               const ipc::KernelPolicy& policy, int threads, std::uint64_t seed,
               report::TraceRecorder* trace = nullptr);
// Runs of this process done again because their read-ahead conflicted (for
// benchmarks and tests).
std::uint64_t read_ahead_reruns();

}  // namespace semsim::driver
