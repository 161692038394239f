#include "native/workload_runs.hpp"

#include <pthread.h>
#include <sys/sem.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <thread>

#include "core/errors.hpp"
#include "native/host_error.hpp"
#include "native/lock_stress_native.hpp"
#include "native/native_runner.hpp"
#include "native/run_support.hpp"
#include "native/task_loop.hpp"
#include "workloads/workload.hpp"

namespace semsim::native::detail {

namespace {

using namespace semsim::workloads;

// sembench's ready flags as the waker sees them: worklist_rm() tests (after a full
// fence) and clears.
class SharedReady final : public ReadyFlags {
 public:
  explicit SharedReady(ReadyEntry* base) : base_(base) {}
  bool take(int worker) override {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    auto& flag = base_[worker].ready;
    if (flag.load(std::memory_order_relaxed) == 0) return false;
    flag.store(0, std::memory_order_relaxed);
    return true;
  }

 private:
  ReadyEntry* base_;
};

// Every task's program, made before any task starts (a forked task process runs
// its copy without allocating).
using Programs = std::vector<std::unique_ptr<Program>>;

// What a forked task process runs: its tasks, the first on its main thread, the others
// (custom scripts sharing a process id) on threads of its own.
struct ChildJob {
  Programs* programs = nullptr;
  std::vector<int> tasks;
  std::vector<TaskEnv>* envs = nullptr;
};

struct ThreadArg {
  const ChildJob* job;
  int task;
};

extern "C" void* child_thread_main(void* p) {
  auto* arg = static_cast<ThreadArg*>(p);
  const auto k = static_cast<std::size_t>(arg->task);
  run_task(*(*arg->job->programs)[k], (*arg->job->envs)[k]);
  return nullptr;
}

int child_main(void* p) {
  const auto* job = static_cast<const ChildJob*>(p);
  std::vector<ThreadArg> args;
  std::vector<pthread_t> ids;
  args.reserve(job->tasks.size());
  ids.reserve(job->tasks.size());
  for (std::size_t i = 1; i < job->tasks.size(); ++i) {
    args.push_back(ThreadArg{job, job->tasks[i]});
    pthread_t id;
    if (pthread_create(&id, nullptr, child_thread_main, &args.back()) != 0) {
      // Account for the tasks that will never start, so the runner does not wait for them.
      RunControl& ctl = *(*job->envs)[0].ctl;
      ctl.fail(kTaskSetup, errno, job->tasks[i]);
      const int missing = static_cast<int>(job->tasks.size() - i);
      ctl.ready.fetch_add(missing);
      ctl.finished.fetch_add(missing);
      break;
    }
    ids.push_back(id);
  }
  const auto first = static_cast<std::size_t>(job->tasks[0]);
  run_task(*(*job->programs)[first], (*job->envs)[first]);
  for (pthread_t id : ids) pthread_join(id, nullptr);
  // Done: wait, asleep, for the end of the run before exiting. This process is a copy
  // of the runner's (a Python process of a few hundred MB); tearing that down takes
  // about a millisecond of CPU, which the benchmark's own small processes do not spend
  // and which would fall on the CPUs while the other tasks still run.
  wait_for_stop(*(*job->envs)[static_cast<std::size_t>(job->tasks[0])].ctl);
  return 0;
}

// Stops a run on every path: stop phase, start barrier released (so no task waits for
// it forever), arrays removed (wakes sleepers with EIDRM), threads joined, processes
// reaped (SIGKILLed after a grace period), arrays of dead task processes removed.
class Stopper {
 public:
  Stopper(RunControl& ctl, ActiveArrays& arrays, std::vector<std::thread>& threads,
          Children& children)
      : ctl_(ctl), arrays_(arrays), threads_(threads), children_(children) {}
  ~Stopper() { finish(0); }
  Stopper(const Stopper&) = delete;
  Stopper& operator=(const Stopper&) = delete;

  // Returns the first abnormal end of a task process ("" if none).
  std::string finish(int grace_ms) {
    if (done_) return "";
    done_ = true;
    ctl_.phase.store(kStop, std::memory_order_seq_cst);
    futex_wake_all(ctl_.phase);  // task processes that are done wait for it to exit
    ctl_.go.store(1, std::memory_order_release);
    futex_wake_all(ctl_.go);
    arrays_.remove_all();
    for (auto& th : threads_) {
      if (th.joinable()) th.join();
    }
    std::string died;
    if (children_.count() > 0) {
      died = children_.reap_all(grace_ms);
      cleanup_leftovers();  // arrays task processes made for themselves (aim9-shm)
    }
    return died;
  }

 private:
  RunControl& ctl_;
  ActiveArrays& arrays_;
  std::vector<std::thread>& threads_;
  Children& children_;
  bool done_ = false;
};

std::string failure_text(const RunControl& ctl) {
  const int kind = ctl.failure.load();
  const int err = ctl.failure_errno.load();
  const std::string task = " (task " + std::to_string(ctl.failure_task.load()) + ")";
  switch (kind) {
    case kPinFailed:
      return "pinning a task to its CPU failed: " + std::string(std::strerror(err)) + task +
             " (workload.pin = \"unpinned\" avoids pinning)";
    case kArrayGone:
      return "the semaphore array was removed during the run (ipcrm?)" + task;
    case kTaskSetup:
      return "a task process could not create its threads: " + std::string(std::strerror(err)) +
             task;
    case kSemopFailed:
      return "a semaphore call failed in a task: " + std::string(std::strerror(err)) + task;
    default:
      return "";
  }
}

// A failure a task reported: the host's doing (pinning refused, the array removed from
// outside, no memory or process slots, a kernel limit) is a HostError; anything else
// would be the runner's own bug.
[[noreturn]] void throw_failure(const RunControl& ctl) {
  const int kind = ctl.failure.load();
  const int err = ctl.failure_errno.load();
  const bool host = kind == kPinFailed || kind == kArrayGone || kind == kTaskSetup ||
                    err == ENOMEM || err == ENOSPC || err == EAGAIN;
  if (host) throw HostError(failure_text(ctl));
  throw SimulationError(failure_text(ctl));
}

}  // namespace

RunResult run_workload_once(const Scenario& sc, const Workload& w, int threads,
                            const std::vector<int>& cpus) {
  if (g_signal.load() != 0) throw Interrupted{};
  if (w.takes_user_lock()) return run_lock_stress_once(sc, threads, cpus);
  const int ntasks = threads + w.extra_tasks();
  const bool processes = w.uses_processes();
  const bool completion = w.runs_to_completion(threads);
  const std::optional<ParentRun> parent = w.parent(threads);
  const int ncpus = static_cast<int>(cpus.size());

  // Declaration order is destruction order in reverse: the Stopper (last) stops and
  // joins/reaps the tasks before the arrays and the shared memory they use go away.
  RunShared shared(ntasks);
  RunControl& ctl = shared.control();
  ActiveArrays arrays(w.array_sizes(threads), w.initial_values());
  SharedReady ready(shared.ready(0));
  Programs programs;
  for (int t = 0; t < ntasks; ++t) programs.push_back(w.program(t, threads, sc.seed, &ready));
  std::vector<TaskEnv> envs(static_cast<std::size_t>(ntasks));
  for (int t = 0; t < ntasks; ++t) {
    TaskEnv& e = envs[static_cast<std::size_t>(t)];
    e.ctl = &ctl;
    e.slot = &shared.slot(t);
    e.samples = shared.samples(t);
    e.ready = shared.ready(t);
    e.task = t;
    const int index = w.task_cpu(t, threads, ncpus);
    e.cpu = index >= 0 ? cpus[static_cast<std::size_t>(index % ncpus)] : -1;
    for (int a = 0; a < arrays.count(); ++a) e.semids[a] = arrays.id(a);
  }
  std::vector<ChildJob> jobs;
  std::vector<std::thread> workers;
  Children children;
  Stopper stopper(ctl, arrays, workers, children);

  {
    BlockStopSignals block;  // inherited by every task thread and process
    if (!processes) {
      workers.reserve(static_cast<std::size_t>(ntasks));
      for (int t = 0; t < ntasks; ++t) {
        try {
          workers.emplace_back([t, &envs, &programs] {
            const auto k = static_cast<std::size_t>(t);
            run_task(*programs[k], envs[k]);
          });
        } catch (const std::system_error& e) {
          throw HostError("cannot create task thread " + std::to_string(t + 1) + " of " +
                          std::to_string(ntasks) + ": " + e.what());
        }
      }
    } else {
      const std::vector<int> group = w.task_processes(ntasks);
      const int nprocs = *std::max_element(group.begin(), group.end()) + 1;
      jobs.resize(static_cast<std::size_t>(nprocs));
      for (int t = 0; t < ntasks; ++t)
        jobs[static_cast<std::size_t>(group[static_cast<std::size_t>(t)])].tasks.push_back(t);
      for (auto& job : jobs) {
        job.programs = &programs;
        job.envs = &envs;
        children.spawn(child_main, &job);
      }
    }
  }

  // A slice of waiting: checks for a signal, for task processes that died, and for
  // task failures. `exit0_ok`: task processes may end (their programs are finite).
  const bool finite_tasks = completion || w.programs_may_end();
  auto wait_slice = [&](int ms) {
    if (processes) {
      const std::string died = children.poll(ms, finite_tasks);
      if (g_signal.load() != 0) throw Interrupted{};
      if (!died.empty()) throw HostError(died + " during the run (killed from outside?)");
    } else {
      struct timespec ts {
        0, static_cast<long>(ms) * 1'000'000
      };
      nanosleep(&ts, nullptr);
      if (g_signal.load() != 0) throw Interrupted{};
    }
    if (ctl.failure.load() != kNone) throw_failure(ctl);
  };
  auto wait_until = [&](std::int64_t deadline, bool stop_when_all_finished) {
    for (;;) {
      const std::int64_t now = monotonic_ns();
      if (now >= deadline) return;
      if (stop_when_all_finished && ctl.finished.load() >= ntasks) return;
      wait_slice(static_cast<int>(std::clamp<std::int64_t>((deadline - now) / 1'000'000, 1, 10)));
    }
  };

  // Start barrier: every task pinned and waiting.
  const std::int64_t ready_deadline = monotonic_ns() + 60'000'000'000LL;
  while (ctl.ready.load() < ntasks) {
    if (monotonic_ns() > ready_deadline) throw SimulationError("task start timed out after 60 s");
    wait_slice(1);
  }
  if (ctl.failure.load() != kNone) throw_failure(ctl);

  const auto n = static_cast<std::size_t>(ntasks);
  std::vector<std::uint64_t> c0(n, 0), c1(n, 0), r0(n, 0), r1(n, 0);
  auto read_counters = [&](std::vector<std::uint64_t>& ops, std::vector<std::uint64_t>& rounds) {
    for (std::size_t i = 0; i < n; ++i) {
      ops[i] = shared.slot(static_cast<int>(i)).ops.load(std::memory_order_relaxed);
      rounds[i] = shared.slot(static_cast<int>(i)).rounds.load(std::memory_order_relaxed);
    }
  };
  auto last_finish = [&] {
    std::int64_t last = 0;
    for (int i = 0; i < ntasks; ++i) last = std::max(last, shared.slot(i).finish_ns);
    return last;
  };

  std::int64_t t0 = 0;
  std::int64_t t1 = 0;
  std::int64_t busy0 = -1;  // the CPUs' busy time (/proc/stat) at t0 and t1
  std::int64_t busy1 = -1;
  auto open_window = [&] {
    t0 = monotonic_ns();
    busy0 = host_busy_ns(cpus);
  };
  int exits_in_window = -1;
  auto close_window = [&] {
    t1 = monotonic_ns();
    busy1 = host_busy_ns(cpus);
    if (processes) exits_in_window = children.exited_count();
  };
  auto start = [&] {
    ctl.go.store(1, std::memory_order_release);
    futex_wake_all(ctl.go);
  };
  RunResult result;
  if (parent) {
    // Started by SETALL once every task sleeps on its lock; ended by the parent's
    // wait-for-zero on the completion counter.
    ctl.phase.store(kWindow, std::memory_order_release);
    start();
    const int id = arrays.id(0);
    const int locks = parent->locks;
    for (;;) {
      int sleeping = 0;
      for (int i = 0; i < locks; ++i) sleeping += std::max(0, semctl(id, i, GETNCNT));
      if (sleeping >= threads) break;
      wait_slice(1);
    }
    const std::vector<int>& values = parent->start_values;
    std::vector<unsigned short> set(values.begin(), values.end());
    SemctlArg arg{};
    arg.array = set.data();
    open_window();
    if (semctl(id, 0, SETALL, arg) < 0) {
      throw SimulationError(std::string("semctl(SETALL) failed: ") + std::strerror(errno));
    }
    const ipc::Sembuf wait = parent->end_wait;
    struct sembuf op {};
    op.sem_num = static_cast<unsigned short>(wait.sem_num);
    op.sem_op = 0;
    op.sem_flg = 0;
    const struct timespec slice { 0, 10'000'000 };
    for (;;) {
      if (semtimedop(id, &op, 1, &slice) == 0) break;
      const int err = errno;
      if (err != EAGAIN && err != EINTR) {
        if (g_signal.load() != 0) throw Interrupted{};
        throw SimulationError(std::string("the parent's wait-for-zero failed: ") +
                              std::strerror(err));
      }
      wait_slice(0);
    }
    close_window();
    read_counters(c1, r1);
  } else if (completion) {
    // Finite scripts: from the start to the last task's end, or to
    // duration_ms at the latest (a script may block for ever).
    ctl.phase.store(kWindow, std::memory_order_release);
    open_window();
    start();
    wait_until(t0 + static_cast<std::int64_t>(sc.duration_ms * 1e6), true);
    close_window();
    read_counters(c1, r1);
    if (ctl.finished.load() >= ntasks) t1 = std::clamp(last_finish(), t0 + 1, t1);
  } else {
    start();
    wait_until(monotonic_ns() + static_cast<std::int64_t>(sc.warmup_ms * 1e6), false);
    ctl.phase.store(kWindow, std::memory_order_release);
    open_window();
    read_counters(c0, r0);
    wait_until(t0 + static_cast<std::int64_t>(sc.duration_ms * 1e6), true);
    close_window();
    read_counters(c1, r1);
    if (ctl.finished.load() >= ntasks) t1 = std::clamp(last_finish(), t0 + 1, t1);
  }

  const std::string died = stopper.finish(2000);
  if (g_signal.load() != 0) throw Interrupted{};
  if (!died.empty()) throw HostError(died);
  if (ctl.failure.load() != kNone) throw_failure(ctl);

  result.window_s = static_cast<double>(t1 - t0) * 1e-9;
  result.task_exits_in_window = exits_in_window;
  result.host_busy_ns = busy0 >= 0 && busy1 >= busy0 ? busy1 - busy0 : -1;
  result.tasks = threads;
  result.completed = true;
  for (int i = 0; i < threads; ++i) {
    if (shared.slot(i).finish_ns == 0) result.completed = false;
  }
  for (int i = 0; i < ntasks; ++i) {
    const auto k = static_cast<std::size_t>(i);
    const TaskSlot& slot = shared.slot(i);
    const std::uint64_t ops = c1[k] - c0[k];
    const std::uint64_t rounds = r1[k] - r0[k];
    result.ops_total += ops;
    result.own_cpu_ns += slot.cpu_ns;
    result.eagain += slot.eagain;
    if (i >= threads) {  // sembench's waker
      result.waker_calls += ops;
      result.waker_rounds += rounds;
      continue;
    }
    result.rounds_total += rounds;
    result.per_task_ops.push_back(ops);
    result.per_task_rounds.push_back(rounds);
    result.voluntary.push_back(slot.nvcsw);
    result.involuntary.push_back(slot.nivcsw);
    result.voluntary_total += slot.nvcsw;
    result.involuntary_total += slot.nivcsw;
    result.cpu_ns_total += slot.cpu_ns;
    result.cpu.push_back(slot.cpu);
    const std::uint64_t* samples = shared.samples(i);
    for (std::uint32_t s = 0; s < slot.nsamples; ++s)
      result.samples.emplace_back(samples[s], slot.sample_stride);
  }
  result.ops_per_s =
      result.window_s > 0 ? static_cast<double>(result.ops_total) / result.window_s : 0.0;
  return result;
}

}  // namespace semsim::native::detail
