// Calibration probes: small programs that measure this host's cost parameters and
// are NOT the validated workloads (design.md section 5). Each probe is repeated; a
// repeat's value is the lower quartile over 15 (quick) or 31 timed batches of about
// 250 us each (a batch during which another task took the CPU only gets slower, so
// the lower quartile ignores up to three in four such batches), and a probe reports
// the median of its repeats and their spread (min..max). Probes that pin threads do so on threads
// of their own, never the caller's. Internal to sim/calibrate; derive.cpp turns them into a model.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace semsim::calibrate::probes {

struct Stat {
  double median = 0;
  double min = 0;
  double max = 0;
  int repeats = 0;
};

// Median and range of per-repeat values.
Stat summarize(std::vector<double> values);
// Mean of the values without the largest 1 % (events another task interrupted).
double trimmed_mean(std::vector<double> values);
// The shape of a spread: the values without the largest 1 %, sorted, cut into `bins`
// runs of (nearly) equal count, each run's mean divided by the mean of the runs'
// means (so the result's mean is 1). Empty when there are fewer values than bins, or
// when a run's mean is not positive (single timings of a split hand-off can come out
// at or below 0, and a draw must be a positive multiple of the mean).
std::vector<double> shape_of(std::vector<double> values, int bins);

struct Settings {
  bool quick = false;
  int repeats = 7;
  int cpu = 0;  // the CPU single-CPU probes run on
};

// One-way cache-line transfer between two CPUs: two threads pinned to them bounce one
// line (each waits for the other's store, then stores); half a round trip.
Stat line_pingpong(int cpu_a, int cpu_b, const Settings& s);

// lock xadd on a private, cached line (x86; elsewhere the atomic fetch_add).
Stat atomic_rmw(const Settings& s);
// smp_mb() as x86-64 has done it since Linux 4.15: lock addl $0 to the stack.
Stat locked_add_fence(const Settings& s);
// mfence (x86; elsewhere a seq_cst fence).
Stat mfence(const Settings& s);
// smp_mb() in context: lock xadd on a private line, then four dependent L1 loads that
// do not depend on it, with nothing, mfence or lock addl $0,-4(%rsp) between them
// (the difference is what the fence costs right after a locked RMW).
Stat rmw_loads(const Settings& s);
Stat rmw_mfence_loads(const Settings& s);
Stat rmw_lockadd_loads(const Settings& s);
// syscall(SYS_getppid): system call entry and exit with the least work inside.
Stat syscall_getppid(const Settings& s);

// The semaphore paths the derivation of semop_kernel_path uses (none of them a
// successful semop): semtimedop that fails with EFBIG (entry, copy_from_user of the
// sops, their scan, the ipc id lookup), semctl(GETVAL) (dispatch, lookup, permission
// and security checks, the array's global lock), semctl(GETVAL) of a removed id
// (dispatch and a failed lookup).
Stat semop_efbig(const Settings& s);
Stat semctl_getval(const Settings& s);
Stat semctl_getval_removed(const Settings& s);

// The check, not a parameter: one uncontended simple semop (-1 then +1 on a private
// 1-semaphore array), per call; and a wait-for-zero on a 0 value.
Stat semop_uncontended(const Settings& s);
Stat semop_wait_for_zero(const Settings& s);

// Futex wake-up ping-pong between two threads pinned to cpu_a and cpu_b (equal: the
// same CPU). Each hand-off: the sender reads the clock, sets the word, FUTEX_WAKEs;
// the receiver, asleep in FUTEX_WAIT, reads the clock on return. Only hand-offs where
// the receiver really slept and the wake really woke it count. `median` is the mean
// over all counted hand-offs of all repeats (slowest 1 % dropped: a throughput model
// needs the mean, and cross-CPU hand-offs on a VM are bimodal), min..max the range of
// the repeats' means. batch_policy: both threads SCHED_BATCH, which turns off wake-up
// preemption, so on one CPU the hand-off is wake, block, switch (measurable), not a
// preemption inside the wake call.
struct FutexStats {
  Stat handoff;          // sender's clock before FUTEX_WAKE -> receiver's clock after FUTEX_WAIT
  Stat wake_call;        // duration of the sender's FUTEX_WAKE that woke the receiver
  double preempted = 0;  // share of hand-offs where the receiver ran before the wake returned
  // How single hand-offs vary around their repeat's mean (shape_of, 20 bins): the
  // sender's wake call, and the rest of the hand-off (the receiver's latency).
  std::vector<double> wake_call_shape, latency_shape;
};
FutexStats futex_pingpong(int cpu_a, int cpu_b, bool batch_policy, const Settings& s);
// A futex token ring of k SCHED_BATCH threads pinned to s.cpu: each waits for its
// turn, passes it to the next and waits again, so every hand-off switches in the
// thread that last ran k - 1 switches ago on this CPU. Nanoseconds per hand-off; how it
// grows with k is the cost of refilling the caches with a task's kernel state
// (task_struct, kernel stack, futex queue) after k - 1 others ran.
Stat futex_ring_one_cpu(int k, const Settings& s);
// The same ring of k forked processes (each its own address space) pinned to s.cpu:
// every hand-off also switches page tables (and what the TLB held).
Stat futex_ring_processes(int k, const Settings& s);
// Wake-ups of one kind a placement probe saw (`samples`), and how many of them did
// what it looks for (`hits`).
struct CountedShare {
  long samples = 0;
  long hits = 0;
  double share() const {
    return samples > 0 ? static_cast<double>(hits) / static_cast<double>(samples) : 0;
  }
};
// A futex token ring of k unpinned threads (the scheduler places them; one runs at a
// time). Of the wake-ups whose wakee last ran on the waker's CPU (busy: the waker
// runs there), those after which the wakee ran on another CPU: how often the
// wake-up's search for an idle CPU found one.
CountedShare futex_ring_idle_search(int k, const Settings& s);
// `pairs` futex ping-pong pairs of unpinned threads (more threads than CPUs, so the
// CPUs are busy). Of the wake-ups whose wakee had gone to sleep on another CPU than
// the waker's, those after which the wakee ran on the waker's CPU: how often a
// wake-up pulls a task away from its busy previous CPU.
CountedShare futex_pairs_busy_pull(int pairs, const Settings& s);
// Run to parity: a thread pinned to s.cpu sleeps on a timer (so its run begins with a
// wake-up), runs `run` ns, then FUTEX_WAKEs a sleeper pinned to the same CPU. For each
// run length of protection_run_lengths(), the share of rounds in which the sleeper ran
// before FUTEX_WAKE returned (preempted the waker). A woken task is protected from
// wake-up preemption while the share stays low.
struct ProtectionCurve {
  std::vector<std::pair<std::int64_t, double>> preempted_share;  // {run ns, share}
};
std::vector<std::int64_t> protection_run_lengths();
ProtectionCurve wakeup_protection(const Settings& s);
// FUTEX_WAKE of a sleeper pinned to cpu_b, busy with a spinning thread, from cpu_a.
// `preempting`: the sleeper SCHED_NORMAL, so the wake-up preempts the spinner (sets
// need_resched and, cpu_b being remote, sends the reschedule IPI); `queueing`: the
// sleeper SCHED_BATCH, which never preempts on wake-up. Mean wake call per repeat
// (slowest 1 % dropped), median and range over the repeats.
struct RemoteWake {
  Stat preempting;
  Stat queueing;
};
RemoteWake futex_wake_busy_remote(int cpu_a, int cpu_b, const Settings& s);
// FUTEX_WAKE of a word nobody waits on.
Stat futex_wake_nobody(const Settings& s);

// Dependent loads: within L1 (a 16 KiB random cycle) and from memory (a random cycle of
// cache lines over a buffer far larger than the caches: pages in random order, lines in
// random order within each page, huge pages requested).
Stat l1_load(const Settings& s);
Stat memory_load(const Settings& s);

// User-space work. The runner's own task loop (native/task_loop.hpp) running
// semop-multi on a private array of 8 semaphores, and the same successful semop()
// calls in a bare loop, run right after each other: their difference is the runner's
// own work per call in context (after a whole semop(), which a call the kernel
// rejects at entry hides: it measured 0.5 ns where the runner costs 10). Each is the
// slope between batches of n and 2n calls, so the loop's start and end cost nothing.
// Then one iteration of sem-lockunlock's busy loop (workloads::busy_loop); one round of
// sem-scalebench's delay (workloads::bubble_sort_delay); memcpy per byte over AIM9's
// size table within L1.
Stat runner_loop_semop(const Settings& s);
Stat semop_loop_bare(const Settings& s);
Stat busy_loop_iteration(const Settings& s);
Stat bubble_sort_round(const Settings& s);
Stat memcpy_byte(const Settings& s);

// The scheduler's time slice as this host applies it: two CPU-bound threads pinned to
// one CPU, each reading the clock in a tight loop; a gap of more than 50 us in a
// thread's readings ends one of its runs. The median run length (the first and last
// run of each thread dropped). On a kernel with a coarse tick this is the tick-rounded
// slice, not sysctl_sched_base_slice.
Stat time_slice(const Settings& s);

// The TSC rate in GHz against CLOCK_MONOTONIC (x86); 0 elsewhere.
Stat tsc_ghz(const Settings& s);

// OS noise: a thread pinned to each CPU in turn reads the clock in a tight loop (about
// 30 ns a read) for a while and records every gap between two reads of more than
// kNoiseGapNs: the CPU was taken by something else (a tick, an interrupt, the
// hypervisor). Nothing else of ours runs meanwhile.
constexpr double kNoiseGapNs = 1000;
struct NoiseCpu {
  int cpu = 0;
  double busy_s = 0;            // how long the loop ran
  std::vector<double> gaps_ns;  // every gap above kNoiseGapNs
};
std::vector<NoiseCpu> os_noise(const std::vector<int>& cpus, const Settings& s);

// The values sorted and cut into `bins` runs of (nearly) equal count, each run's mean;
// fewer bins when there are fewer values.
std::vector<double> bin_means(std::vector<double> values, int bins);

}  // namespace semsim::calibrate::probes
