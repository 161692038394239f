#include "native/run_support.hpp"

#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/sem.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>

#include "core/errors.hpp"
#include "native/host_error.hpp"
#include "native/ownership.hpp"

namespace semsim::native::detail {

// ---------------------------------------------------------------------------
// Signals. The handler may run on any thread of the process that does not block the
// signal (our tasks block them, but a host process such as Python may have threads of
// its own), so the shared state is lock-free std::atomic<int>, which C++ allows in a
// signal handler.

static_assert(std::atomic<int>::is_always_lock_free);

std::atomic<int> g_signal{0};

std::mutex& runner_mutex() {
  static std::mutex m;
  return m;
}

namespace {

// The arrays the current run registered, -1 where none. Whoever exchanges a slot to -1
// first (the handler or the run's owner) removes that array, exactly once.
std::atomic<int> g_active_semids[kMaxArraysPerProcess] = {-1, -1, -1, -1};
static_assert(kMaxArraysPerProcess == 4);

constexpr int kCaughtSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
static_assert(std::size(kCaughtSignals) == 4);  // SignalGuard's old_ and installed_

extern "C" void on_stop_signal(int sig) {
  const int saved_errno = errno;
  int expected = 0;
  g_signal.compare_exchange_strong(expected, sig);
  for (auto& slot : g_active_semids) {
    const int id = slot.exchange(-1);
    // semctl(IPC_RMID) is one system call: no lock, no allocation. Removing the array
    // makes every task's next (or current, sleeping) semop fail with EIDRM/EINVAL.
    if (id >= 0) semctl(id, 0, IPC_RMID);
  }
  errno = saved_errno;
}

}  // namespace

SignalGuard::SignalGuard() {
  for (std::size_t i = 0; i < std::size(kCaughtSignals); ++i) {
    struct sigaction current {};
    sigaction(kCaughtSignals[i], nullptr, &current);
    if (current.sa_handler == SIG_IGN) continue;
    struct sigaction ours {};
    ours.sa_handler = on_stop_signal;
    sigemptyset(&ours.sa_mask);
    for (int s : kCaughtSignals) sigaddset(&ours.sa_mask, s);  // no nesting
    ours.sa_flags = 0;  // no SA_RESTART: the main thread's waits return at once
    installed_[i] = sigaction(kCaughtSignals[i], &ours, &old_[i]) == 0;
  }
}

SignalGuard::~SignalGuard() {
  for (std::size_t i = 0; i < std::size(kCaughtSignals); ++i) {
    if (installed_[i]) sigaction(kCaughtSignals[i], &old_[i], nullptr);
  }
}

BlockStopSignals::BlockStopSignals() {
  sigset_t set;
  sigemptyset(&set);
  for (int s : kCaughtSignals) sigaddset(&set, s);
  pthread_sigmask(SIG_BLOCK, &set, &old_);
}

BlockStopSignals::~BlockStopSignals() { pthread_sigmask(SIG_SETMASK, &old_, nullptr); }

ActiveArrays::ActiveArrays(const std::vector<int>& sizes, const std::vector<int>& initial) {
  if (sizes.size() > static_cast<std::size_t>(kMaxArraysPerProcess)) {
    throw SimulationError("a run needs " + std::to_string(sizes.size()) +
                          " arrays; the runner's key scheme allows " +
                          std::to_string(kMaxArraysPerProcess));
  }
  try {
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      SemArray a(sizes[i], static_cast<int>(i), i == 0 ? initial : std::vector<int>{});
      const int id = a.release();
      ids_.push_back(id);
      g_active_semids[i].store(id);
    }
  } catch (...) {
    remove_all();
    throw;
  }
}

ActiveArrays::~ActiveArrays() { remove_all(); }

void ActiveArrays::remove_all() {
  for (std::size_t i = 0; i < ids_.size(); ++i) {
    // If the handler got there first it has removed the array: do not remove it twice
    // (the id could in principle have been reused since).
    if (g_active_semids[i].exchange(-1) >= 0) semctl(ids_[i], 0, IPC_RMID);
    forget_array(ids_[i]);
  }
  ids_.clear();
}

// ---------------------------------------------------------------------------
// Time and CPUs.

std::int64_t thread_cpu_ns() {
  struct timespec ts {};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::int64_t monotonic_ns() {
  struct timespec ts {};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

bool sleep_until_unless_signalled(std::int64_t deadline_ns) {
  constexpr std::int64_t kSliceNs = 10'000'000;
  for (;;) {
    if (g_signal.load() != 0) return false;
    const std::int64_t now = monotonic_ns();
    if (now >= deadline_ns) return true;
    const std::int64_t until = std::min(deadline_ns, now + kSliceNs);
    struct timespec ts {};
    ts.tv_sec = static_cast<time_t>(until / 1'000'000'000);
    ts.tv_nsec = static_cast<long>(until % 1'000'000'000);
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr);  // EINTR: loop checks
  }
}

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

std::int64_t host_busy_ns(const std::vector<int>& cpus) {
  std::FILE* f = std::fopen("/proc/stat", "r");
  if (f == nullptr) return -1;
  const long hz = sysconf(_SC_CLK_TCK);
  std::int64_t busy_ticks = 0;
  int found = 0;
  char line[512];
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    int cpu = -1;
    unsigned long long user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0,
                       steal = 0;
    if (std::sscanf(line, "cpu%d %llu %llu %llu %llu %llu %llu %llu %llu", &cpu, &user, &nice,
                    &system, &idle, &iowait, &irq, &softirq, &steal) != 9)
      continue;
    if (std::find(cpus.begin(), cpus.end(), cpu) == cpus.end()) continue;
    busy_ticks += static_cast<std::int64_t>(user + nice + system + irq + softirq + steal);
    ++found;
  }
  std::fclose(f);
  if (found == 0 || hz <= 0) return -1;
  return busy_ticks * (1'000'000'000 / hz);
}

int pin_current_thread(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

// ---------------------------------------------------------------------------
// Shared memory.

SharedRegion::SharedRegion(std::size_t bytes) : bytes_(std::max<std::size_t>(bytes, 4096)) {
  void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    throw SimulationError("mmap of " + std::to_string(bytes_) +
                          " bytes of shared memory failed: " + std::strerror(errno));
  }
  base_ = static_cast<unsigned char*>(p);
}

SharedRegion::~SharedRegion() {
  if (base_ != nullptr) munmap(base_, bytes_);
}

namespace {
std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }
}  // namespace

RunShared::RunShared(int tasks)
    : tasks_(tasks), region_([tasks] {
        const auto n = static_cast<std::size_t>(tasks);
        return round_up(sizeof(RunControl), 64) + n * sizeof(TaskSlot) +
               n * kSampleCapacity * sizeof(std::uint64_t) + round_up(n * sizeof(ReadyEntry), 64);
      }()) {
  const auto n = static_cast<std::size_t>(tasks);
  unsigned char* p = region_.data();
  control_ = new (p) RunControl();
  p += round_up(sizeof(RunControl), 64);
  slots_ = reinterpret_cast<TaskSlot*>(p);
  for (std::size_t i = 0; i < n; ++i) new (slots_ + i) TaskSlot();
  p += n * sizeof(TaskSlot);
  samples_ = reinterpret_cast<std::uint64_t*>(p);
  p += n * kSampleCapacity * sizeof(std::uint64_t);
  ready_ = reinterpret_cast<ReadyEntry*>(p);
  for (std::size_t i = 0; i < n; ++i) {
    auto* e = new (ready_ + i) ReadyEntry();
    e->ready.store(0);
  }
}

void futex_wait(std::atomic<int>& word, int expected) {
  syscall(SYS_futex, reinterpret_cast<int*>(&word), FUTEX_WAIT, expected, nullptr, nullptr, 0);
}

void futex_wake_all(std::atomic<int>& word) {
  syscall(SYS_futex, reinterpret_cast<int*>(&word), FUTEX_WAKE, 0x7fffffff, nullptr, nullptr, 0);
}

// ---------------------------------------------------------------------------
// Forked task processes.

std::string describe_wait_status(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* name = sigabbrev_np(sig);
    return "killed by signal " + std::to_string(sig) +
           (name ? std::string(" (SIG") + name + ")" : "");
  }
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  return "ended with wait status " + std::to_string(status);
}

Children::Children() = default;

Children::~Children() { reap_all(0); }

void Children::spawn(int (*body)(void*), void* arg) {
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    const int err = errno;
    throw HostError(std::string("fork of a task process failed: ") + std::strerror(err) +
                          (err == EAGAIN ? " (process limit, RLIMIT_NPROC or pid_max?)" : ""));
  }
  if (pid == 0) {
    // The child: only async-signal-safe work until it runs the task, then _exit (no
    // destructors, no atexit handlers of the parent's process image).
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(125);  // the parent died before prctl took effect
    _exit(body(arg));
  }
  pids_.push_back(pid);
  reaped_.push_back(false);
  int fd = -1;
#ifdef SYS_pidfd_open
  fd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
#endif
  pidfds_.push_back(fd);
}

std::string Children::reap_one(std::size_t i, int status, bool exit0_ok) {
  reaped_[i] = true;
  if (pidfds_[i] >= 0) {
    close(pidfds_[i]);
    pidfds_[i] = -1;
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && exit0_ok) return "";
  return "task process " + std::to_string(pids_[i]) + " " + describe_wait_status(status);
}

std::string Children::poll(int timeout_ms, bool exit0_ok) {
  if (timeout_ms > 0) {
    std::vector<struct pollfd> fds;
    bool all_fds = true;
    for (std::size_t i = 0; i < pids_.size(); ++i) {
      if (reaped_[i]) continue;
      if (pidfds_[i] < 0)
        all_fds = false;
      else
        fds.push_back({pidfds_[i], POLLIN, 0});
    }
    if (all_fds && !fds.empty()) {
      ::poll(fds.data(), fds.size(), timeout_ms);  // EINTR: the caller checks g_signal
    } else {
      struct timespec ts {
        0, static_cast<long>(timeout_ms) * 1'000'000
      };
      nanosleep(&ts, nullptr);
    }
  }
  std::string first;
  for (std::size_t i = 0; i < pids_.size(); ++i) {
    if (reaped_[i]) continue;
    int status = 0;
    if (waitpid(pids_[i], &status, WNOHANG) == pids_[i]) {
      std::string what = reap_one(i, status, exit0_ok);
      if (first.empty()) first = what;
    }
  }
  return first;
}

int Children::exited_count() const {
  int n = 0;
  for (std::size_t i = 0; i < pids_.size(); ++i) {
    if (reaped_[i]) {
      ++n;
      continue;
    }
    siginfo_t info{};
    if (waitid(P_PID, static_cast<id_t>(pids_[i]), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
        info.si_pid != 0)
      ++n;
  }
  return n;
}

bool Children::all_reaped() const {
  return std::all_of(reaped_.begin(), reaped_.end(), [](bool r) { return r; });
}

std::string Children::reap_all(int grace_ms) {
  std::string first;
  const std::int64_t deadline = monotonic_ns() + static_cast<std::int64_t>(grace_ms) * 1'000'000;
  while (!all_reaped() && monotonic_ns() < deadline) {
    std::string what = poll(5, true);
    if (first.empty()) first = what;
  }
  for (std::size_t i = 0; i < pids_.size(); ++i) {
    if (reaped_[i]) continue;
    kill(pids_[i], SIGKILL);
    int status = 0;
    while (waitpid(pids_[i], &status, 0) < 0 && errno == EINTR) {
    }
    // Killed by us: not a failure of the task.
    reap_one(i, status, true);
  }
  return first;
}

}  // namespace semsim::native::detail
