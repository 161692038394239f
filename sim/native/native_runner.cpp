#include "native/native_runner.hpp"

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/sem.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <exception>
#include <latch>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "core/errors.hpp"
#include "ipc/sembuf.hpp"
#include "native/sysv_array.hpp"
#include "workloads/semop_multi_pattern.hpp"

namespace semsim::native {

namespace {

// ---------------------------------------------------------------------------
// Signal handling. The handler may run on any thread of the process that does not
// block the signal (our workers block them, but a host process such as Python may
// have threads of its own), so the shared state is lock-free std::atomic<int>, which
// C++ allows in a signal handler, rather than a plain volatile sig_atomic_t.

static_assert(std::atomic<int>::is_always_lock_free);

// The first signal received during measure(), 0 if none.
std::atomic<int> g_signal{0};
// The array the current run uses, -1 when none. Whoever exchanges it to -1 first (the
// handler or the run's owner) is the one that removes it, exactly once.
std::atomic<int> g_active_semid{-1};
// One measure() at a time per process: one runner key per pid, and one set of handlers.
std::mutex g_measure_mutex;

constexpr int kCaughtSignals[] = {SIGINT, SIGTERM, SIGHUP};

extern "C" void on_stop_signal(int sig) {
  const int saved_errno = errno;
  int expected = 0;
  g_signal.compare_exchange_strong(expected, sig);
  const int id = g_active_semid.exchange(-1);
  // semctl(IPC_RMID) is one system call: no lock, no allocation. Removing the array
  // makes every worker's next semop fail with EIDRM/EINVAL, which stops it.
  if (id >= 0) semctl(id, 0, IPC_RMID);
  errno = saved_errno;
}

// Installs on_stop_signal for SIGINT/SIGTERM/SIGHUP for its lifetime and restores the
// previous dispositions afterwards. A signal already ignored (nohup) stays ignored.
class SignalGuard {
 public:
  SignalGuard() {
    for (std::size_t i = 0; i < std::size(kCaughtSignals); ++i) {
      struct sigaction current {};
      sigaction(kCaughtSignals[i], nullptr, &current);
      if (current.sa_handler == SIG_IGN) continue;
      struct sigaction ours {};
      ours.sa_handler = on_stop_signal;
      sigemptyset(&ours.sa_mask);
      for (int s : kCaughtSignals) sigaddset(&ours.sa_mask, s);  // no nesting
      ours.sa_flags = 0;  // no SA_RESTART: the main thread's sleep returns at once
      installed_[i] = sigaction(kCaughtSignals[i], &ours, &old_[i]) == 0;
    }
  }
  ~SignalGuard() {
    for (std::size_t i = 0; i < std::size(kCaughtSignals); ++i) {
      if (installed_[i]) sigaction(kCaughtSignals[i], &old_[i], nullptr);
    }
  }
  SignalGuard(const SignalGuard&) = delete;
  SignalGuard& operator=(const SignalGuard&) = delete;

 private:
  struct sigaction old_[std::size(kCaughtSignals)]{};
  bool installed_[std::size(kCaughtSignals)] = {};
};

// Blocks the caught signals in the calling thread for its lifetime; threads created
// meanwhile inherit the mask, which is how workers come to block them.
class BlockStopSignals {
 public:
  BlockStopSignals() {
    sigset_t set;
    sigemptyset(&set);
    for (int s : kCaughtSignals) sigaddset(&set, s);
    pthread_sigmask(SIG_BLOCK, &set, &old_);
  }
  ~BlockStopSignals() { pthread_sigmask(SIG_SETMASK, &old_, nullptr); }
  BlockStopSignals(const BlockStopSignals&) = delete;
  BlockStopSignals& operator=(const BlockStopSignals&) = delete;

 private:
  sigset_t old_{};
};

// Thrown inside a run when a caught signal was noticed; measure() turns it into a
// re-raise after the handlers are restored.
struct Interrupted {};

// The run's array, registered with the signal handler while it lives.
class ActiveArray {
 public:
  explicit ActiveArray(int nsems) : array_(nsems) { g_active_semid.store(array_.id()); }
  ~ActiveArray() {
    // If the handler got there first it has removed the array: forget the id (it may
    // in principle be reused) instead of removing it a second time.
    if (g_active_semid.exchange(-1) < 0) array_.release();
  }
  ActiveArray(const ActiveArray&) = delete;
  ActiveArray& operator=(const ActiveArray&) = delete;
  int id() const { return array_.id(); }

 private:
  SemArray array_;
};

// ---------------------------------------------------------------------------
// Time.

std::int64_t monotonic_ns() {
  struct timespec ts {};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Sleeps `ms` in slices of at most 10 ms so a caught signal is noticed quickly.
// Returns false (early) when one was.
bool sleep_unless_signalled(double ms) {
  const std::int64_t deadline = monotonic_ns() + static_cast<std::int64_t>(std::llround(ms * 1e6));
  constexpr std::int64_t kSliceNs = 10'000'000;
  for (;;) {
    if (g_signal.load() != 0) return false;
    const std::int64_t now = monotonic_ns();
    if (now >= deadline) return true;
    const std::int64_t until = std::min(deadline, now + kSliceNs);
    struct timespec ts {};
    ts.tv_sec = static_cast<time_t>(until / 1'000'000'000);
    ts.tv_nsec = static_cast<long>(until % 1'000'000'000);
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr);  // EINTR: loop checks
  }
}

// ---------------------------------------------------------------------------
// One run of semop-multi.

struct RunParams {
  int threads = 1;
  int semaphores = 1;
  workloads::SemopMultiPattern pattern = workloads::SemopMultiPattern::Stride;
  bool pinned = true;
  std::uint64_t seed = 1;
  double warmup_ms = 0;
  double duration_ms = 0;
};

struct RunResult {
  double window_s = 0;
  double ops_per_s = 0;
  std::uint64_t ops_total = 0;
  std::vector<std::uint64_t> per_task;  // ops of each thread in the window
  long voluntary = 0;
  long involuntary = 0;
};

// The per-thread counter, alone on its cache line: the owner is its only writer, so
// the line never bounces except when the main thread reads it at the window's edges.
struct alignas(64) Counter {
  std::atomic<std::uint64_t> ops{0};
};

// The phase word every worker reads each iteration (read-mostly, written twice a run).
enum Phase : int { kWarmup = 0, kWindow = 1, kStop = 2 };
struct alignas(64) PhaseWord {
  std::atomic<int> value{kWarmup};
};

// Written by a worker before it exits, read by the main thread after join.
struct WorkerOut {
  long nvcsw = 0;
  long nivcsw = 0;
};

// Kinds of worker failure; the first one is kept.
enum Failure : int { kNone = 0, kPinFailed = 1, kSemopFailed = 2, kArrayGone = 3 };

struct Shared {
  PhaseWord phase;
  std::latch ready;
  std::latch start{1};
  std::atomic<int> failure{kNone};
  std::atomic<int> failure_errno{0};
  explicit Shared(int n) : ready(n) {}
  void fail(Failure kind, int err) {
    int expected = kNone;
    if (failure.compare_exchange_strong(expected, kind)) failure_errno.store(err);
  }
};

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    for (int c = 0; c < CPU_SETSIZE; ++c) {
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
    }
  }
  if (cpus.empty()) {
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    for (int c = 0; c < std::max(1L, n); ++c) cpus.push_back(c);
  }
  return cpus;
}

// One semop() that must not block; returns 0 or the errno. EINTR cannot happen for an
// operation that never sleeps, but retrying it is harmless.
int semop_once(int semid, int sem, short op) {
  struct sembuf sop {};
  sop.sem_num = static_cast<unsigned short>(sem);
  sop.sem_op = op;
  sop.sem_flg = 0;
  for (;;) {
    if (semop(semid, &sop, 1) == 0) return 0;
    if (errno != EINTR) return errno;
  }
}

void semop_multi_worker(int t, int cpu, int semid, const RunParams& p, Shared& shared,
                        Counter& counter, WorkerOut& out) {
  if (p.pinned) {
    // Thread t on the (t mod n)-th CPU this process may use: CPU t mod online CPUs on a
    // host without an affinity restriction, as semop-multi did.
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    const int err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
    if (err != 0) shared.fail(kPinFailed, err);
  }
  workloads::SemopMultiChooser chooser(p.pattern, t, p.semaphores, p.seed);
  shared.ready.count_down();
  shared.start.wait();

  struct rusage at_start {
  }, at_end{};
  bool have_start = false;
  int seen = kWarmup;
  std::uint64_t ops = 0;
  for (;;) {
    const int phase = shared.phase.value.load(std::memory_order_relaxed);
    if (phase != seen) {  // rare: twice a run
      if (!have_start && phase >= kWindow) {
        getrusage(RUSAGE_THREAD, &at_start);
        have_start = true;
      }
      if (phase >= kStop) {
        getrusage(RUSAGE_THREAD, &at_end);
        break;
      }
      seen = phase;
    }
    const int sem = chooser.next();
    int err = semop_once(semid, sem, +1);
    if (err == 0) {
      counter.ops.store(++ops, std::memory_order_relaxed);
      err = semop_once(semid, sem, -1);  // never blocks: our own +1 is still there
    }
    if (err != 0) {
      // EIDRM/EINVAL: the array was removed (a signal handler, or someone's ipcrm).
      // Stop quietly; the main thread decides what it means.
      shared.fail(err == EIDRM || err == EINVAL ? kArrayGone : kSemopFailed, err);
      return;
    }
    counter.ops.store(++ops, std::memory_order_relaxed);
  }
  out.nvcsw = at_end.ru_nvcsw - at_start.ru_nvcsw;
  out.nivcsw = at_end.ru_nivcsw - at_start.ru_nivcsw;
}

// Joins the workers on every exit path of a run; releases the start latch first if the
// run never got that far, so no worker waits forever.
class WorkerJoiner {
 public:
  WorkerJoiner(Shared& shared, std::vector<std::thread>& threads)
      : shared_(shared), threads_(threads) {}
  ~WorkerJoiner() { finish(); }
  WorkerJoiner(const WorkerJoiner&) = delete;
  WorkerJoiner& operator=(const WorkerJoiner&) = delete;
  void mark_started() { started_ = true; }
  void finish() {
    shared_.phase.value.store(kStop, std::memory_order_relaxed);
    if (!started_) {
      started_ = true;
      shared_.start.count_down();
    }
    for (auto& th : threads_) {
      if (th.joinable()) th.join();
    }
  }

 private:
  Shared& shared_;
  std::vector<std::thread>& threads_;
  bool started_ = false;
};

std::vector<std::uint64_t> read_counters(const std::vector<Counter>& counters) {
  std::vector<std::uint64_t> values(counters.size());
  for (std::size_t i = 0; i < counters.size(); ++i) {
    values[i] = counters[i].ops.load(std::memory_order_relaxed);
  }
  return values;
}

RunResult run_semop_multi(const RunParams& p) {
  if (g_signal.load() != 0) throw Interrupted{};
  const std::vector<int> cpus = allowed_cpus();
  const auto n = static_cast<std::size_t>(p.threads);

  // Declaration order is destruction order in reverse: the joiner (last) joins the
  // workers before the array, counters and latches they use go away.
  ActiveArray array(p.semaphores);
  Shared shared(p.threads);
  std::vector<Counter> counters(n);
  std::vector<WorkerOut> outs(n);
  std::vector<std::thread> threads;
  threads.reserve(n);
  WorkerJoiner joiner(shared, threads);

  {
    BlockStopSignals block;  // inherited by the workers
    for (std::size_t t = 0; t < n; ++t) {
      try {
        threads.emplace_back(semop_multi_worker, static_cast<int>(t), cpus[t % cpus.size()],
                             array.id(), std::cref(p), std::ref(shared), std::ref(counters[t]),
                             std::ref(outs[t]));
      } catch (const std::system_error& e) {
        throw SimulationError("cannot create worker thread " + std::to_string(t + 1) + " of " +
                              std::to_string(n) + ": " + e.what());
      }
    }
  }
  shared.ready.wait();
  if (shared.failure.load() == kPinFailed) {
    throw SimulationError("pthread_setaffinity_np failed: " +
                          std::string(std::strerror(shared.failure_errno.load())) +
                          " (workload.pin = \"unpinned\" avoids pinning)");
  }
  shared.start.count_down();
  joiner.mark_started();

  if (!sleep_unless_signalled(p.warmup_ms)) throw Interrupted{};
  shared.phase.value.store(kWindow, std::memory_order_relaxed);
  const std::int64_t t0 = monotonic_ns();
  const std::vector<std::uint64_t> c0 = read_counters(counters);
  if (!sleep_unless_signalled(p.duration_ms)) throw Interrupted{};
  const std::int64_t t1 = monotonic_ns();
  const std::vector<std::uint64_t> c1 = read_counters(counters);
  joiner.finish();  // stop flag, join

  if (g_signal.load() != 0) throw Interrupted{};
  const int failure = shared.failure.load();
  if (failure == kArrayGone) {
    throw SimulationError("the semaphore array was removed during the run (ipcrm?)");
  }
  if (failure != kNone) {
    throw SimulationError("semop failed in a worker: " +
                          std::string(std::strerror(shared.failure_errno.load())));
  }

  RunResult r;
  r.window_s = static_cast<double>(t1 - t0) * 1e-9;
  r.per_task.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    r.per_task[i] = c1[i] - c0[i];
    r.ops_total += r.per_task[i];
    r.voluntary += outs[i].nvcsw;
    r.involuntary += outs[i].nivcsw;
  }
  r.ops_per_s = r.window_s > 0 ? static_cast<double>(r.ops_total) / r.window_s : 0.0;
  return r;
}

// ---------------------------------------------------------------------------
// Validation and results.

void validate(const Scenario& s) {
  const WorkloadSpec& w = s.workload;
  if (w.type != "semop-multi") {
    throw InputError("workload.type: the native runner supports \"semop-multi\" only, got \"" +
                     w.type + "\"");
  }
  if (s.threads.empty()) throw InputError("threads: give at least one thread count");
  for (int t : s.threads) {
    if (t < 1) throw InputError("threads: every value must be >= 1, got " + std::to_string(t));
    // All threads may hold +1 on one semaphore at once; values stop at SEMVMX.
    if (t > ipc::kSemvmx) {
      throw InputError("threads: at most " + std::to_string(ipc::kSemvmx) +
                       " (SEMVMX, the largest semaphore value), got " + std::to_string(t));
    }
  }
  if (w.semaphores < 1) {
    throw InputError("workload.semaphores: must be >= 1, got " + std::to_string(w.semaphores));
  }
  const int limit = semmsl();
  if (w.semaphores > limit) {
    throw InputError("workload.semaphores: " + std::to_string(w.semaphores) +
                     " exceeds this host's SEMMSL of " + std::to_string(limit) +
                     " (/proc/sys/kernel/sem, first field)");
  }
  if (w.pattern != "stride" && w.pattern != "own" && w.pattern != "random") {
    throw InputError("workload.pattern: one of \"stride\", \"own\", \"random\", got \"" +
                     w.pattern + "\"");
  }
  if (!std::isfinite(s.duration_ms) || s.duration_ms <= 0) {
    throw InputError("duration_ms: must be > 0");
  }
  if (!std::isfinite(s.warmup_ms) || s.warmup_ms < 0) throw InputError("warmup_ms: must be >= 0");
  if (s.repeats < 1) {
    throw InputError("repeats: must be >= 1, got " + std::to_string(s.repeats));
  }
}

double median_of(std::vector<std::uint64_t> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  if (v.size() % 2 == 1) return static_cast<double>(v[m]);
  return (static_cast<double>(v[m - 1]) + static_cast<double>(v[m])) / 2.0;
}

// One point: the median run (lower median for an even count) and the spread.
Json point_json(int threads, const std::vector<RunResult>& runs, const HostInfo& host,
                const Scenario& s) {
  std::vector<std::size_t> order(runs.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return runs[a].ops_per_s < runs[b].ops_per_s;
  });
  const RunResult& med = runs[order[(order.size() - 1) / 2]];

  Json rates = Json::array();
  Json windows = Json::array();
  for (const RunResult& r : runs) {
    rates.push_back(r.ops_per_s);
    windows.push_back(r.window_s);
  }
  const auto [lo, hi] = std::minmax_element(
      runs.begin(), runs.end(),
      [](const RunResult& a, const RunResult& b) { return a.ops_per_s < b.ops_per_s; });
  const auto [task_lo, task_hi] = std::minmax_element(med.per_task.begin(), med.per_task.end());

  Json p;
  p["threads"] = threads;
  p["kernel"] = host.generation;
  p["machine"] = "host";
  p["workload"] = s.workload.type;
  p["semaphores"] = s.workload.semaphores;
  p["pattern"] = s.workload.pattern;
  p["pin"] = s.workload.pin == Pinning::Pinned ? "pinned" : "unpinned";
  p["repeats"] = runs.size();
  p["ops_per_s"] = med.ops_per_s;
  p["ops_per_s_runs"] = rates;
  p["ops_per_s_min"] = lo->ops_per_s;
  p["ops_per_s_max"] = hi->ops_per_s;
  p["window_s"] = med.window_s;
  p["window_s_runs"] = windows;
  p["ops_total"] = med.ops_total;
  p["per_task_ops"] = {{"min", *task_lo}, {"median", median_of(med.per_task)}, {"max", *task_hi}};
  p["context_switches"] = {{"voluntary", med.voluntary}, {"involuntary", med.involuntary}};
  p["host_kernel_release"] = host.kernel_release;
  return p;
}

}  // namespace

std::string generation_for_release(const std::string& release) {
  // MAJOR.MINOR at the start; anything after (".patch-extra") is ignored.
  std::size_t pos = 0;
  auto read_number = [&](int& out) {
    const std::size_t begin = pos;
    long value = 0;
    while (pos < release.size() && release[pos] >= '0' && release[pos] <= '9' && pos - begin < 6) {
      value = value * 10 + (release[pos] - '0');
      ++pos;
    }
    out = static_cast<int>(value);
    return pos > begin;
  };
  int major = 0;
  int minor = 0;
  if (!read_number(major) || pos >= release.size() || release[pos] != '.' ||
      (++pos, !read_number(minor))) {
    throw InputError("kernel release \"" + release + "\": expected MAJOR.MINOR[...]");
  }
  const int v = major * 1000 + minor;
  if (v <= 3009) return "global_lock";
  if (v == 3010) return "per_sem_lock";
  if (v == 3011) return "moved_otime";
  if (v <= 4008) return "wait_array";
  if (v <= 4010) return "complex_mode";
  return "hysteresis";
}

HostInfo host_info() {
  struct utsname u {};
  if (uname(&u) != 0) throw SimulationError("uname failed: " + std::string(std::strerror(errno)));
  HostInfo h;
  h.kernel_release = u.release;
  h.cpus = static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  h.generation = generation_for_release(h.kernel_release);
  return h;
}

int cleanup_leftovers() {
  int removed = 0;
  const uid_t me = geteuid();
  for (const ArrayInfo& a : list_arrays()) {
    if (!is_runner_key(a.key) || a.cuid != me) continue;
    const pid_t pid = runner_key_pid(a.key);
    if (pid <= 0) continue;
    // Alive (or not ours to signal, EPERM): leave it. Only ESRCH proves the creator is gone.
    if (kill(pid, 0) == 0 || errno != ESRCH) continue;
    if (semctl(a.id, 0, IPC_RMID) == 0) ++removed;
  }
  return removed;
}

Json measure(const Scenario& scenario) {
  std::lock_guard<std::mutex> lock(g_measure_mutex);
  validate(scenario);
  cleanup_leftovers();
  const HostInfo host = host_info();

  RunParams params;
  params.semaphores = scenario.workload.semaphores;
  params.pattern = workloads::parse_semop_multi_pattern(scenario.workload.pattern);
  params.pinned = scenario.workload.pin == Pinning::Pinned;
  params.seed = scenario.seed;
  params.warmup_ms = scenario.warmup_ms;
  params.duration_ms = scenario.duration_ms;

  Json result;
  result["side"] = "measured";
  result["scenario"] = scenario.name;
  result["host"] = {{"kernel_release", host.kernel_release},
                    {"cpus", host.cpus},
                    {"generation", host.generation}};
  Json points = Json::array();

  g_signal.store(0);
  std::exception_ptr failure;
  {
    SignalGuard guard;
    try {
      for (int threads : scenario.threads) {
        params.threads = threads;
        std::vector<RunResult> runs;
        for (int r = 0; r < scenario.repeats; ++r) runs.push_back(run_semop_multi(params));
        points.push_back(point_json(threads, runs, host, scenario));
      }
    } catch (const Interrupted&) {
      // handled below, once the previous handlers are back
    } catch (...) {
      failure = std::current_exception();
    }
  }  // previous handlers restored; every array is already removed
  const int sig = g_signal.exchange(0);
  if (sig != 0) {
    // Let the previous disposition act: default termination, or e.g. Python's handler,
    // which only sets a flag and returns, hence the exception after it.
    raise(sig);
    throw SimulationError("interrupted by signal " + std::to_string(sig));
  }
  if (failure) std::rethrow_exception(failure);
  result["points"] = std::move(points);
  return result;
}

}  // namespace semsim::native
