// Small harnesses that drive sim/machine objects with core::Simulation
// directly (no ipc, no workloads), for the machine-model oracle tests.
#pragma once

#include <deque>
#include <functional>
#include <string>

#include "config/machine_config.hpp"
#include "core/simulation.hpp"
#include "machine/scheduler.hpp"
#include "machine/task.hpp"
#include "machine/topology.hpp"

namespace semsim::machine_test {

// One socket, one die, `cpus` cores without SMT: every pair of CPUs is at
// the same distance (`transfer_ns`). Costs are round numbers chosen for the
// tests, not a real machine.
inline config::MachineParams uniform_machine(int cpus, double transfer_ns = 100) {
  config::MachineParams m;
  m.name = "test-uniform";
  m.cpus = cpus;
  m.sockets = 1;
  m.dies_per_socket = 1;
  m.cores_per_die = cpus;
  m.threads_per_core = 1;
  m.socket_hops = {{0}};
  m.lat_same_die = ns_to_ticks(transfer_ns);
  m.memory_latency = ns_to_ticks(80);
  m.l1_hit = ns_to_ticks(1);
  m.atomic_rmw = ns_to_ticks(10);
  m.full_fence = ns_to_ticks(20);
  m.syscall = ns_to_ticks(100);
  m.semop_kernel_path = ns_to_ticks(200);
  m.context_switch = ns_to_ticks(2000);
  m.wakeup_waker = ns_to_ticks(500);
  m.wakeup_latency = ns_to_ticks(5000);
  m.ipi = ns_to_ticks(1000);
  m.user_loop_iteration = ns_to_ticks(1);
  m.time_slice = ns_to_ticks(1e6);
  return m;
}

// uniform_machine reshaped as cores of 2 hardware threads, siblings numbered
// adjacently (CPUs 0-1 core 0, 2-3 core 1, ...), sibling transfer 10 ns.
inline config::MachineParams smt_pairs_machine(int cpus, double transfer_ns = 100) {
  auto m = uniform_machine(cpus, transfer_ns);
  m.cores_per_die = cpus / 2;
  m.threads_per_core = 2;
  m.smt_adjacent = true;
  m.lat_smt = ns_to_ticks(10);
  return m;
}

// Tasks with stable addresses, each bound to its own actor.
struct TaskSet {
  core::Simulation sim;
  std::deque<machine::Task> tasks;

  machine::Task& add(int cpu, std::function<void(machine::Task&)> body, bool pinned = true) {
    auto& t = tasks.emplace_back();
    t.id = static_cast<int>(tasks.size()) - 1;
    t.cpu = t.home_cpu = cpu;
    t.pinned = pinned;
    t.actor = &sim.spawn("task" + std::to_string(t.id),
                         [&t, body = std::move(body)](core::Actor&) { body(t); });
    return t;
  }
  // A task that stops the whole simulation at `end` (for closed loops that never return).
  void stop_at(Tick end) {
    sim.spawn("timekeeper", [this, end](core::Actor& self) {
      self.sleep_until(end);
      sim.stop_all();
    });
  }
};

}  // namespace semsim::machine_test
