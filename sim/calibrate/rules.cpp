#include "calibrate/rules.hpp"

namespace semsim::calibrate {

const std::vector<Rule>& cost_rules() {
  // clang-format off
  static const std::vector<Rule> rules = {
    {.param = "memory_latency_ns", .hosts = Hosts::Any,
     .formula = {{1, "memory_load"}},
     .text = "dependent loads along a random cycle over a buffer far larger than the caches: "
             "pages in random order, one line of each 128-byte pair in random order within a "
             "page (huge pages requested; a TLB miss per 32 loads at most is included)"},
    {.param = "costs_ns.l1_hit", .hosts = Hosts::Any,
     .formula = {{1, "l1_load"}},
     .text = "dependent loads along a random cycle within 16 KiB"},
    {.param = "costs_ns.atomic_rmw", .hosts = Hosts::Any,
     .formula = {{1, "atomic_rmw"}},
     .text = "lock xadd on a private cached line"},
    {.param = "costs_ns.full_fence", .hosts = Hosts::Any,
     .formula = {{1, "locked_add_fence"}},
     .text = "lock addl $0,-4(%rsp), which is smp_mb() on x86-64 since Linux 4.15 (mfence: "
             "{mfence})"},
    {.param = "costs_ns.locked_drain", .hosts = Hosts::Any,
     .formula = {{1, "rmw_lockadd_loads"}, {-1, "rmw_loads"}, {-1, "locked_add_fence"}},
     .floor_ns = 0.0,
     .probes = "rmw_lockadd_loads, rmw_loads, locked_add_fence",
     .text = "smp_mb() in context: lock xadd, lock addl $0,-4(%rsp), four dependent L1 loads, "
             "minus the same without the fence, minus the fence alone: what the fence waits "
             "for of the RMW before it (mfence there costs {mfence_in_context} ns more than "
             "no fence, the in-context figure for a kernel whose smp_mb() is mfence)"},
    {.param = "costs_ns.syscall", .hosts = Hosts::Any,
     .formula = {{1, "getppid"}},
     .text = "syscall(SYS_getppid), entry and exit with the least work inside"},
    {.param = "costs_ns.semop_kernel_path", .hosts = Hosts::Any,
     .formula = {{1, "semop_efbig"}, {-1, "getppid"}, {1, "semctl_getval"},
                 {-1, "semctl_getval_removed"}, {-2, "atomic_rmw"}},
     .floor_ns = 1.0,
     .probes = "semop_efbig, semctl_getval, semctl_getval_removed, getppid, atomic_rmw",
     .text = "derived without any successful semop(): a semop failing with EFBIG runs the "
             "entry, the copy_from_user of the sops, their scan and the id lookup (minus the "
             "bare syscall); semctl(GETVAL) minus GETVAL of a removed id adds the permission "
             "and security checks; GETVAL's own locking (two atomic RMWs: the array lock and "
             "the per-semaphore lock of complexmode_enter) is taken off, since the simulator "
             "charges a semop's locks itself"},
    // Wake-ups. Same CPU: the sender's FUTEX_WAKE queues the receiver on the sender's
    // CPU, then the sender blocks in FUTEX_WAIT and the CPU switches to the receiver (or
    // the receiver preempts the sender as the wake returns).
    {.param = "costs_ns.context_switch", .hosts = Hosts::Any,
     .formula = {{1, "futex_same_cpu_handoff"}, {-1, "futex_same_cpu_wake_call"},
                 {-1, "getppid"}},
     .floor_ns = 1.0,
     .probes = "futex_same_cpu_handoff, futex_same_cpu_wake_call, getppid",
     .text = "two SCHED_BATCH threads pinned to one CPU hand a futex back and forth (batch: no "
             "wake-up preemption, so the sender wakes, then blocks, then the CPU switches); the "
             "hand-off (sender's clock before FUTEX_WAKE to receiver's clock after FUTEX_WAIT "
             "returns) minus the sender's wake call minus one bare syscall (the wait's entry "
             "and the receiver's exit) leaves schedule() out of one task and into the other. "
             "With SCHED_NORMAL the receiver preempted the sender inside its wake call in "
             "{same_normal_preempted_pct:.0f}% of hand-offs (hand-off {same_normal_handoff} "
             "ns): wake-up preemption is the host's dynamics, for the scheduler model, not a "
             "cost"},
    {.param = "costs_ns.wakeup_waker", .hosts = Hosts::SeveralCpus,
     .formula = {{1, "futex_cross_cpu_wake_call"}, {-1, "futex_wake_nobody"}},
     .floor_ns = 1.0,
     .probes = "futex_cross_cpu_wake_call, futex_wake_nobody",
     .text = "try_to_wake_up() on the waker: a FUTEX_WAKE that wakes a sleeper on another "
             "(idle) CPU, IPI included, minus a FUTEX_WAKE that finds nobody"},
    {.param = "costs_ns.wakeup_latency", .hosts = Hosts::SeveralCpus,
     .formula = {{1, "futex_cross_cpu_handoff"}, {-1, "futex_cross_cpu_wake_call"}},
     .floor_ns = 1.0,
     .probes = "futex_cross_cpu_handoff, futex_cross_cpu_wake_call",
     .text = "a sleeper on another, idle CPU: from the end of the waker's wake call to the "
             "wakee back in user space (hand-off minus the wake call; on a VM this includes "
             "the idle vCPU's exit from halt); receiver before the wake returned in "
             "{cross_preempted_pct:.0f}% of hand-offs"},
    {.param = "costs_ns.wakeup_waker", .hosts = Hosts::OneCpu,
     .formula = {{1, "futex_same_cpu_wake_call"}, {-1, "futex_wake_nobody"}},
     .floor_ns = 1.0,
     .probes = "futex_same_cpu_wake_call, futex_wake_nobody",
     .text = "one CPU only, so no cross-CPU wake-up: a FUTEX_WAKE that queues a sleeper on the "
             "same CPU minus one that finds nobody"},
    {.param = "costs_ns.wakeup_latency", .hosts = Hosts::OneCpu,
     .text = "assumption: this host has one CPU, so no wake-up of an idle CPU can be probed; "
             "set to context_switch (a wakee can only run after a switch)",
     .copy_of = "costs_ns.context_switch"},
    {.param = "costs_ns.ipi", .hosts = Hosts::SeveralCpus,
     .formula = {{1, "futex_cross_cpu_wake_call"}, {-1, "futex_same_cpu_wake_call"}},
     .floor_ns = 1.0,
     .probes = "futex_cross_cpu_wake_call, futex_same_cpu_wake_call",
     .text = "what kicking an idle CPU adds to the waker's try_to_wake_up(): a FUTEX_WAKE of a "
             "sleeper on another, idle CPU minus one that queues the sleeper on the waker's own "
             "CPU (no kick); on a VM this is the exit that wakes the halted vCPU. The simulator "
             "charges wakeup_waker for a wake-up that kicks an idle CPU and wakeup_waker - ipi "
             "for one that does not"},
    {.param = "costs_ns.ipi", .hosts = Hosts::OneCpu,
     .text = "assumption: one CPU, so no idle CPU to kick can be probed; every wake-up costs "
             "wakeup_waker",
     .assumed = 0.0},
    {.param = "costs_ns.user_loop_iteration", .hosts = Hosts::Any,
     .formula = {{1, "runner_loop_semop"}, {-1, "semop_loop_bare"}},
     .floor_ns = 0.5,
     .probes = "runner_loop_semop, semop_loop_bare",
     .text = "the native runner's own user-space work per semop() call (task program, phase "
             "word, sembuf conversion, sampling, counter store): its task loop running "
             "semop-multi on a private array of 8 semaphores, minus the same successful "
             "semop() calls in a bare loop, each the slope between batches of n and 2n calls; "
             "timed around whole semop() calls, since a call the kernel rejects at entry "
             "hides the loop's work behind it; one iteration of sem-lockunlock's empty busy "
             "loop is a different figure: busy_loop_iteration"},
    {.param = "costs_ns.busy_loop_iteration", .hosts = Hosts::Any,
     .formula = {{1, "busy_loop_iteration"}},
     .text = "one iteration of sem-lockunlock's empty volatile loop (workloads::busy_loop)"},
    {.param = "costs_ns.bubble_sort_round", .hosts = Hosts::Any,
     .formula = {{1, "bubble_sort_round"}},
     .text = "one round of sem-scalebench's delay (workloads::bubble_sort_delay)"},
    {.param = "costs_ns.memcpy_byte", .hosts = Hosts::Any,
     .formula = {{1, "memcpy_byte"}},
     .text = "memcpy in ns per byte over AIM9's 31 sizes (1..2048 bytes, mean 328), both "
             "buffers in L1"},
  };
  // clang-format on
  return rules;
}

const std::vector<SpecialRule>& special_rules() {
  static const std::vector<SpecialRule> rules = {
      {"latency_ns.smt", "line_pingpong"},
      {"latency_ns.same_die", "line_pingpong"},
      {"latency_ns.same_socket", "line_pingpong"},
      {"latency_ns.one_hop", "line_pingpong"},
      {"latency_matrix_ns", "line_pingpong"},
      {"costs_ns.semop_kernel_path", "semop_uncontended"},  // closed on a simulated call
      {"costs_ns.time_slice", "time_slice"},
      {"costs_ns.wakeup_protection", "wakeup_protection"},
      {"costs_ns.resched_ipi", "futex_wake_busy_remote"},
      {"idle_search_share", "futex_ring_idle_search"},
      {"busy_pull_share", "futex_pairs_busy_pull"},
      {"os_noise", "os_noise"},
      {"wakeup_jitter", "futex_cross_cpu_handoff"},
      {"switch_refill_ns", "futex_ring_K"},
      {"switch_refill_process_ns", "futex_ring_processes_K"},
      {"wakeup_preemption", "futex_same_cpu_normal"},
      {"pv_spinlock", "host_facts"},
      {"clock_ghz", "tsc_ghz"},
  };
  return rules;
}

}  // namespace semsim::calibrate
