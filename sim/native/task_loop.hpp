// The native executor of a task program (sim/workloads/*_def.hpp): the real system
// calls, the user-space work, the counters, the latency samples. One template for
// every workload, run by a thread of the runner or by a forked task process.
//
// Per task: pin (if asked), announce ready, wait for the start barrier (a futex in
// shared memory), then loop: read the phase word (one relaxed load per step; it changes
// twice a run), take the program's next step, perform it, do the step's user-space
// work, count. On first seeing the window phase the task takes getrusage(RUSAGE_THREAD)
// and restarts its sample index; on seeing the stop phase (or EIDRM once the runner
// has removed the arrays to wake sleepers) it takes it again and reports the
// differences.
//
// Latency samples: the duration of every k-th semop() call of the window (CLOCK_MONOTONIC
// read before and after), k = 61 at first. 61 is odd so that programs that alternate
// two kinds of call (ping-pong's -1 and +1, semop-multi's +1 and -1) get both sampled.
// When a task's buffer (kSampleCapacity) is full it keeps every other sample and doubles
// k, so the kept samples stay evenly spread over the window; each sample then stands
// for k calls (the weight used for the percentiles).
//
// Nothing here allocates or throws: forked children run it right after fork().
#pragma once

#include <sys/ipc.h>
#include <sys/resource.h>
#include <sys/sem.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "ipc/sembuf.hpp"
#include "native/ownership.hpp"
#include "native/run_support.hpp"
#include "native/sysv_array.hpp"
#include "workloads/aim9_shm_def.hpp"
#include "workloads/step_def.hpp"

namespace semsim::native::detail {

// glibc leaves the fourth semctl argument for the caller to declare (semctl(2)).
union SemctlArg {
  int val;
  struct semid_ds* buf;
  unsigned short* array;
  struct seminfo* info;
};

struct TaskEnv {
  RunControl* ctl = nullptr;
  TaskSlot* slot = nullptr;
  std::uint64_t* samples = nullptr;
  ReadyEntry* ready = nullptr;  // sembench workers: this task's ready flag
  int task = 0;
  int cpu = -1;  // OS CPU number to pin to, -1: not pinned
  int semids[kMaxArraysPerProcess] = {-1, -1, -1, -1};
};

inline void wait_for_start(RunControl& ctl) {
  while (ctl.go.load(std::memory_order_acquire) == 0) futex_wait(ctl.go, 0);
}

// Asleep until the runner ends the run (the stop phase).
inline void wait_for_stop(RunControl& ctl) {
  for (int phase = ctl.phase.load(std::memory_order_acquire); phase < kStop;
       phase = ctl.phase.load(std::memory_order_acquire))
    futex_wait(ctl.phase, phase);
}

// Creates a private array for a task process (aim9-shm), keyed by its own pid (or
// without a key when another array holds that key: never removed, it is not ours), and
// records it (ownership.hpp) so that cleanup_leftovers() finds it if the process is
// killed. Async-signal-safe. Returns the id or -errno.
inline int create_task_array(int nsems) {
  int id = semget(runner_key(getpid(), 0), nsems, IPC_CREAT | IPC_EXCL | 0600);
  key_t key = runner_key(getpid(), 0);
  if (id < 0 && errno == EEXIST) {
    key = IPC_PRIVATE;
    id = semget(IPC_PRIVATE, nsems, IPC_CREAT | 0600);
  }
  if (id < 0) return -errno;
  if (!record_array(id, key)) {
    semctl(id, 0, IPC_RMID);
    return -ENOSPC;
  }
  return id;
}

// Removes a task process's own array and its record.
inline int remove_task_array(int id) {
  const int r = semctl(id, 0, IPC_RMID);
  const int err = errno;
  forget_array(id);
  errno = err;
  return r;
}

class Sampler {
 public:
  explicit Sampler(std::uint64_t* buf) : buf_(buf) {}
  void restart() {
    n_ = 0;
    stride_ = kSamplePeriod;
    next_ = 0;
  }
  // Is call `index` of the window one to time (index % stride == 0)? A comparison
  // with the next such index, not a division: a 64-bit DIV on every call (tens of
  // cycles before each semop()) would be the runner's own cost in every figure.
  bool want(std::uint64_t index) const { return buf_ != nullptr && index == next_; }
  void add(std::uint64_t index, std::int64_t ns) {
    next_ = index + stride_;
    if (n_ == kSampleCapacity) {
      for (std::uint32_t i = 0; i < kSampleCapacity / 2; ++i) buf_[i] = buf_[2 * i];
      n_ = kSampleCapacity / 2;
      stride_ *= 2;
      // index is an odd multiple of the old stride: the next multiple of the new one
      // is the next_ set above; an even one is kept.
      if (index % stride_ != 0) return;
      next_ = index + stride_;
    }
    buf_[n_++] = static_cast<std::uint64_t>(ns < 0 ? 0 : ns);
  }
  // A wanted call that cannot be timed (it failed): the next one is stride on.
  void skip(std::uint64_t index) { next_ = index + stride_; }
  std::uint32_t count() const { return n_; }
  std::uint32_t stride() const { return static_cast<std::uint32_t>(stride_); }

 private:
  std::uint64_t* buf_;
  std::uint32_t n_ = 0;
  std::uint64_t stride_ = kSamplePeriod;
  std::uint64_t next_ = 0;
};

template <class Program>
void run_task(Program& program, TaskEnv& env) {
  RunControl& ctl = *env.ctl;
  TaskSlot& slot = *env.slot;
  slot.cpu = env.cpu;
  if (env.cpu >= 0) {
    const int err = pin_current_thread(env.cpu);
    if (err != 0) {
      ctl.fail(kPinFailed, err, env.task);
      ctl.ready.fetch_add(1);
      ctl.finished.fetch_add(1);
      return;
    }
  }
  ctl.ready.fetch_add(1);
  wait_for_start(ctl);

  Sampler sampler(env.samples);
  struct rusage at_start{}, at_end{};
  std::int64_t cpu_start = 0;
  std::int64_t cpu_end = 0;
  bool have_start = false;
  bool have_end = false;
  bool in_window = false;
  int seen = -1;
  std::uint64_t ops = 0;
  std::uint64_t rounds = 0;
  std::uint64_t eagain = 0;
  std::uint64_t index = 0;  // semop() calls since the window started
  int own_array = -1;       // CreateArray's array, until RemoveArray
  bool copy_in = true;      // memcpy direction, alternating
  alignas(64) unsigned char mem_private[workloads::kAim9MaxBlock];
  alignas(64) unsigned char mem_shared[workloads::kAim9MaxBlock];
  std::memset(mem_private, 1, sizeof(mem_private));
  std::memset(mem_shared, 2, sizeof(mem_shared));
  volatile int sink = 0;
  struct sembuf buf[ipc::kSemopmDefault];
  workloads::Step s;

  for (;;) {
    const int phase = ctl.phase.load(std::memory_order_acquire);
    if (phase != seen) {  // rare: a few times a run
      if (phase >= kWindow && !have_start) {
        getrusage(RUSAGE_THREAD, &at_start);
        cpu_start = thread_cpu_ns();
        have_start = true;
        in_window = true;
        index = 0;
        sampler.restart();
      }
      if (phase >= kStop) break;
      seen = phase;
    }
    if (!program.next(s)) {
      getrusage(RUSAGE_THREAD, &at_end);
      cpu_end = thread_cpu_ns();
      have_end = true;
      slot.finish_ns = monotonic_ns();
      break;
    }
    int err = 0;
    switch (s.kind) {
      case workloads::StepKind::Semop: {
        if (s.announce_ready && env.ready != nullptr) {
          std::atomic_thread_fence(std::memory_order_seq_cst);  // smp_mb() of worklist_add
          env.ready->ready.store(1, std::memory_order_relaxed);
        }
        const int n = s.nsops;
        for (int i = 0; i < n; ++i) {
          buf[i].sem_num = static_cast<unsigned short>(s.sops[i].sem_num);
          buf[i].sem_op = static_cast<short>(s.sops[i].sem_op);
          buf[i].sem_flg = static_cast<short>(s.sops[i].sem_flg);
        }
        const bool sample = in_window && sampler.want(index);
        const std::int64_t t0 = sample ? monotonic_ns() : 0;
        int r;
        do {
          r = semop(env.semids[s.array], buf, static_cast<std::size_t>(n));
        } while (r < 0 && errno == EINTR);
        if (r < 0) err = errno;
        if (sample) {
          if (err == 0 || err == EAGAIN)
            sampler.add(index, monotonic_ns() - t0);
          else
            sampler.skip(index);
        }
        if (in_window) ++index;
        if (err == EAGAIN) {
          ++eagain;
          err = 0;
        }
        break;
      }
      case workloads::StepKind::SetVal: {
        SemctlArg arg{};
        arg.val = s.value;
        if (semctl(env.semids[s.array], s.sem, SETVAL, arg) < 0) err = errno;
        break;
      }
      case workloads::StepKind::CreateArray: {
        const int id = create_task_array(s.value);
        if (id < 0) {
          err = -id;
        } else {
          own_array = id;
          env.semids[s.array] = id;
        }
        break;
      }
      case workloads::StepKind::RemoveArray:
        if (own_array >= 0 && remove_task_array(own_array) < 0) err = errno;
        own_array = -1;
        break;
      case workloads::StepKind::UserOnly:
        break;
    }
    if (err != 0) {
      // The runner removes the arrays at the end of the window to wake sleepers.
      if ((err == EIDRM || err == EINVAL) && ctl.phase.load(std::memory_order_acquire) >= kStop)
        break;
      ctl.fail(err == EIDRM || err == EINVAL ? kArrayGone : kSemopFailed, err, env.task);
      break;
    }
    if (s.delay_rounds > 0) sink = sink + workloads::bubble_sort_delay(s.delay_rounds);
    if (s.busy_loops > 0) workloads::busy_loop(s.busy_loops);
    if (s.memcpy_bytes > 0) {
      const auto bytes = static_cast<std::size_t>(s.memcpy_bytes);
      if (copy_in) {
        std::memcpy(mem_shared, mem_private, bytes);
      } else {
        std::memcpy(mem_private, mem_shared, bytes);
      }
      copy_in = !copy_in;
      __asm__ __volatile__("" : : "r"(mem_private), "r"(mem_shared) : "memory");
    }
    if (s.think_ns > 0) {
      const std::int64_t until = monotonic_ns() + s.think_ns;
      while (monotonic_ns() < until) {
      }
    }
    if (s.kind == workloads::StepKind::Semop && s.counts_op) {
      slot.ops.store(++ops, std::memory_order_relaxed);
    }
    if (s.rounds != 0) {
      rounds += static_cast<std::uint64_t>(s.rounds);
      slot.rounds.store(rounds, std::memory_order_relaxed);
    }
  }
  if (own_array >= 0) remove_task_array(own_array);
  if (!have_end) {
    getrusage(RUSAGE_THREAD, &at_end);
    cpu_end = thread_cpu_ns();
  }
  if (have_start) {
    slot.nvcsw = at_end.ru_nvcsw - at_start.ru_nvcsw;
    slot.nivcsw = at_end.ru_nivcsw - at_start.ru_nivcsw;
    // CLOCK_THREAD_CPUTIME_ID, not ru_utime + ru_stime: the kernel brings a running
    // task's runtime up to date for the clock but not for getrusage, which misses up to
    // a tick of it (most of the CPU time of a process that runs for a few ms).
    slot.cpu_ns = cpu_end - cpu_start;
  }
  slot.eagain = eagain;
  slot.nsamples = sampler.count();
  slot.sample_stride = sampler.stride();
  (void)sink;
  ctl.finished.fetch_add(1);
}

}  // namespace semsim::native::detail
