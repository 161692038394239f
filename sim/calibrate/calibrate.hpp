// Host calibration (`semsim calibrate`): measures this host with probes that are
// NOT the validated workloads (calibrate/probes.hpp) and writes a complete machine
// model in the cpu_models format (cpu_models/README.md), naming for every parameter
// the probe (or the derivation from several probes) and the spread over the repeats;
// parameters no probe measures independently say so ("assumption: ...").
//
// What comes from where:
//   cpus, topology        sysfs: /sys/devices/system/cpu/cpu*/topology/
//                         {physical_package_id, die_id, core_id, thread_siblings_list},
//                         over the CPUs this process may run on
//   latency classes       line_pingpong for every pair of CPUs, grouped by the pair's
//                         relation in sysfs; the full matrix as latency_matrix_ns; each
//                         one-way time over 1 + write_after_read, the transfers the model
//                         charges for one way of that ping-pong (derive_special.cpp)
//   memory_latency_ns     memory_load (dependent loads, random lines, 128-512 MiB)
//   l1_hit                l1_load; atomic_rmw: lock xadd; full_fence: lock addl
//                         (smp_mb() since Linux 4.15; mfence in provenance)
//   syscall               getppid
//   semop_kernel_path     derived WITHOUT any successful semop(): semop failing with
//                         EFBIG (entry, copy, scan, id lookup) minus the bare syscall,
//                         plus semctl(GETVAL) minus semctl(GETVAL) of a removed id
//                         (permission and security checks), minus the two atomic
//                         RMWs GETVAL's locking takes
//   context_switch        futex ping-pong on one CPU: hand-off minus the wake call
//                         minus a bare syscall (the wait's entry and the wakee's exit)
//   wakeup_waker          futex ping-pong across CPUs: the FUTEX_WAKE that wakes a
//                         sleeper minus one that finds nobody
//   wakeup_latency        futex ping-pong across CPUs: hand-off minus the wake call
//   user_loop_iteration   the runner's own task loop around successful semop() calls,
//                         minus the same calls in a bare loop
//   bubble_sort_round     workloads::bubble_sort_delay; memcpy_byte: AIM9's sizes in L1
//   clock_ghz             TSC against CLOCK_MONOTONIC
//   time_slice            two CPU-bound threads on one CPU: their uninterrupted run lengths
//   ipi                   assumption (no probe separates it)
// The uncontended simple semop is measured as a CHECK of the model (provenance.checks),
// never used to set a parameter.
//
// Layout: probes.cpp (the probes), measure.cpp (runs them: Measurements), derive.cpp
// (Measurements to a model), close_kernel_path.cpp (the one step that simulates),
// host_topology.cpp (sysfs to a model topology).
#pragma once

#include <string>

#include "core/json.hpp"

namespace semsim::calibrate {

// Runs the probes (quick: fewer and shorter repeats, a few seconds on a 2-CPU host)
// and returns the model. `name` is the model's name (the file stem it will be saved
// under; "host" for cpu_models/host.json). Serialised with measure().
Json run(bool quick, const std::string& name = "host");

// run(), then writes the model to `path` (when not empty; the name is the file's
// stem) and returns it as JSON text.
std::string run_to_file(const std::string& path, bool quick);

}  // namespace semsim::calibrate
