// The machine model as the simulator sees it: plain typed values, every time in
// integer picoseconds (Tick). sim/config/machine_config.cpp fills it from a machine
// file (cpu_models/README.md) and checks every field there; nothing in sim/machine
// reads JSON. What each parameter means, its unit, default and range are declared
// once, in sim/config/machine_decl.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/time.hpp"

namespace semsim::machine {

struct MachineParams {
  std::string name;
  std::string description;
  int cpus = 1;
  int sockets = 1, dies_per_socket = 1, cores_per_die = 1, threads_per_core = 1;
  bool smt_adjacent =
      false;  // numbering: siblings consecutive (else Linux-style, siblings at +cores)
  std::vector<std::vector<int>> socket_hops;  // sockets x sockets

  // Cache-line transfer latency by distance class; -1 where the class does not occur.
  Tick lat_smt = -1, lat_same_die = -1, lat_same_socket = -1, lat_one_hop = -1, lat_two_hops = -1;
  // The measured transfer of every pair (row a, column b: from a's cache to b's),
  // cpus x cpus with the diagonal 0; empty: the classes alone.
  std::vector<std::vector<Tick>> latency_matrix;
  // SLIT-like NUMA distances, nodes x nodes (a node is a die, 10 = local); empty:
  // derived from the topology (machine/topology.hpp).
  std::vector<std::vector<int>> numa_distance;
  Tick memory_latency = 0;

  Tick l1_hit = 0, atomic_rmw = 0, full_fence = 0;
  // The store buffer (machine/store_buffer.hpp): how long a locked RMW's store
  // drains after the core goes on (-1: atomic_rmw), and how many stores it holds
  // (0: no buffer, every store stalls until its line is here).
  Tick locked_drain = -1;
  double store_buffer_entries = 36;
  // Line fill buffers per core (machine/mlp.hpp): how many load misses of one
  // core may be outstanding together.
  double fill_buffers = 10;
  // A write's request for ownership right after the same CPU's read miss of the
  // line costs this share of its transfer (machine/cache_line.hpp): the two overlap.
  double write_after_read = 0.45;
  Tick syscall = 0, semop_kernel_path = 0;
  Tick context_switch = 0, wakeup_waker = 0, wakeup_latency = 0, ipi = 0;
  Tick user_loop_iteration = 0, bubble_sort_round = 0, time_slice = 0;
  double busy_loop_iteration_ns = 0;  // one iteration of an empty volatile counting loop
  double memcpy_byte_ns = 0;
  double clock_ghz = 0;
  // A task woken onto a CPU that runs another task preempts it at that task's next
  // preemption point (CFS/EEVDF wakeup preemption) instead of waiting for its slice.
  bool wakeup_preemption = false;
  // The kernel's spinlocks are paravirt qspinlocks (a KVM guest): spin_unlock of a
  // queued lock is a locked cmpxchg of the locked byte, not a plain store.
  bool pv_spinlock = false;
  // EEVDF's run-to-parity: a task that got its CPU because it was woken cannot be
  // preempted by a wake-up until it has run this long; one that got it back after a
  // preemption (or never slept) can be at once. 0: no protection.
  Tick wakeup_protection = 0;
  // What a wake-up that preempts the task on another, busy CPU adds to the waker's
  // try_to_wake_up(): the reschedule IPI (on a VM, an exit). 0: free.
  Tick resched_ipi = 0;
  // What a wake-up from another LLC costs the target CPU when it is busy: the IPI's
  // handler (TTWU_QUEUE: the target takes its own rq->lock and enqueues the wakee;
  // the waker does neither). 0: the target pays nothing.
  Tick ipi_target = 0;
  // The parts of wakeup_waker and of the switch-out half of context_switch spent
  // holding a run queue's rq->lock (the enqueue of a wake-up; the dequeue and pick of
  // schedule()): rq->lock is then a spinlock with that hold. 0: rq->lock is one atomic
  // on its line, never held.
  Tick rq_hold_wake = 0, rq_hold_schedule = 0;
  // CFS newidle balancing's gates: a CPU going idle pulls a queued task only when its
  // average idle time is at least sysctl_sched_migration_cost and the balance pass's
  // cost, and never a task that left a CPU less than migration_cost ago (cache hot).
  // migration_cost 0: no gate, a CPU going idle pulls at once.
  Tick migration_cost = 0, newidle_balance_cost = 0;
  // select_idle_sibling(): the share of wake-ups whose previous CPU is busy in which
  // the search for an idle CPU finds one that is idle (else the wakee queues on its
  // previous CPU). 1: it always does. Linux 6.0+ limits the search by the LLC's load
  // (SIS_UTIL), which the calibration measures rather than models.
  double idle_search_share = 1.0;
  // Of the wake-ups whose wakee last ran on another CPU that is busy, with no idle CPU
  // taken, the share in which the wakee goes to the waker's CPU instead. 0: never.
  double busy_pull_share = 0.0;
  // Extra cost of a switch-in by reuse distance (how many other switch-ins the CPU
  // did since this task last ran there): {distance, extra}, increasing distance.
  // Empty: none (a task's state is assumed to stay cached).
  std::vector<std::pair<std::int64_t, Tick>> switch_refill;
  // The same for a switch-in that changes the address space (the CPU last ran a task
  // of another process): page tables and TLB refill too. Empty: switch_refill.
  std::vector<std::pair<std::int64_t, Tick>> switch_refill_process;
  // How a wake-up that kicks an idle CPU varies from one to the next: equal-mass
  // quantiles of the waker's cost and of the wakee's latency, each as a multiple of its
  // mean (the tables' means are 1). Each such wake-up draws one entry of each. Empty:
  // every wake-up costs the mean.
  std::vector<double> wakeup_jitter_waker, wakeup_jitter_wakee;
  // OS noise: what interrupts a running CPU (timer ticks, device interrupts and, on a
  // VM, the hypervisor taking the vCPU away). Interruptions arrive at random at
  // `noise_per_s` per second of a CPU's running time, and each takes one of
  // `noise_durations` (equal-count bins of the probed lengths). 0 / empty: none.
  double noise_per_s = 0;
  // The kernel's ticket spinlocks, rwlock and array lines spin on their lines as
  // lock-stress's locks do (machine/line_spin.hpp) instead of the hand-off formula.
  bool kernel_line_spinning = false;
  // The semaphore array's lines take the line mechanisms calibrated on the lock
  // curves (machine/cache_line.hpp: nearest sharer, pipelined reads).
  bool kernel_line_contention = false;
  std::vector<Tick> noise_durations;

  std::string hash;  // "fnv1a64:<hex>" of the canonical JSON, for provenance
  std::string file;  // the file it was read from (absolute), "" when not from a file
  // How many times longer a hardware thread's compute-bound work takes while every
  // other hardware thread of its core is busy (machine/smt.hpp). 1: no sharing.
  double smt_compute_slowdown = 1.0;
  // The same while the other hardware thread spins on a lock (machine/smt.hpp);
  // below 1 (0): as smt_compute_slowdown.
  double smt_spin_slowdown = 0.0;
};

// (socket, die, core, thread) of CPU `cpu` under the numbering of cpu_models/README.md
// ("linux": siblings at +physical cores, consecutive cores on alternating sockets;
// "smt-adjacent": siblings consecutive). die and core are indices within their socket
// and die. The one definition of the numbering: the topology and the calibration's
// choice of numbering both use it.
struct CpuPlace {
  int socket, die, core, thread;
};
CpuPlace cpu_place(int cpu, int sockets, int dies_per_socket, int cores_per_die,
                   int threads_per_core, bool smt_adjacent);

}  // namespace semsim::machine

namespace semsim::config {
// The name the loader and older model code use for the same struct.
using MachineParams = machine::MachineParams;
}  // namespace semsim::config
