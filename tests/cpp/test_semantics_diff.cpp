// Differential tests: the reference model (sim/ipc/sem_reference.hpp) against
// the real SysV semaphores of the kernel this runs on.
//
// a) One task, seeded random sequences of semop/semctl on a fresh array,
//    compared call by call (return value, errno, all values, sempid), each case
//    ending with a forked child that uses SEM_UNDO and exits, to compare the
//    undo applied at exit.
// b) Several processes that sleep in semop. Each child's operation is started
//    only once the previous one has either finished or shows up as asleep in
//    the kernel (GETNCNT/GETZCNT), so the queue order is known and the outcome
//    deterministic; children report each result through a pipe. Hand-written
//    cases name the rules (wakeup order, counts, EIDRM, EINTR, EAGAIN on
//    timeout, undo at exit); seeded random scripts cover the rest.
//
// Every real array is removed and every child reaped on every path (RAII).
// The model is of kernels >= 4.11; on an older kernel, or without SysV IPC,
// the tests are skipped.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <span>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/rng.hpp"
#include "verify/sem_reference.hpp"
#include "ipc/sembuf.hpp"

namespace semsim::ipc {
namespace {

using Clock = std::chrono::steady_clock;
using Kind = SemArrayModel::SemopKind;
using Outcome = SemArrayModel::SemopOutcome;

// glibc leaves the semctl() argument union to the caller.
union SemArg {
  int val;
  struct semid_ds* buf;
  unsigned short* array;
};

// ---------------------------------------------------------------------------
// The host

struct Host {
  bool usable = false;
  std::string why;
  int semopm = kSemopmDefault;
};

Host probe_host() {
  Host host;
  utsname u{};
  if (uname(&u) != 0) {
    host.why = "uname failed";
    return host;
  }
  int major = 0;
  int minor = 0;
  if (std::sscanf(u.release, "%d.%d", &major, &minor) != 2 ||
      (major < 4 || (major == 4 && minor < 11))) {
    host.why = std::string("the reference model is of Linux >= 4.11, this is ") + u.release;
    return host;
  }
  // kernel.sem: SEMMSL SEMMNS SEMOPM SEMMNI
  std::ifstream sem("/proc/sys/kernel/sem");
  int semmsl = 0;
  int semmns = 0;
  if (!(sem >> semmsl >> semmns >> host.semopm)) {
    host.why = "cannot read /proc/sys/kernel/sem";
    return host;
  }
  const int id = semget(IPC_PRIVATE, 8, IPC_CREAT | 0600);
  if (id < 0) {
    host.why = std::string("semget failed: ") + std::strerror(errno);
    return host;
  }
  semctl(id, 0, IPC_RMID);
  if (semmsl < 8) {
    host.why = "SEMMSL < 8";
    return host;
  }
  host.usable = true;
  return host;
}

const Host& host() {
  static const Host h = probe_host();
  return h;
}

#define SKIP_WITHOUT_SYSV()                         \
  do {                                              \
    if (!host().usable) GTEST_SKIP() << host().why; \
  } while (0)

// ---------------------------------------------------------------------------
// Real arrays and calls, results as 0/value or -errno like the model's.

class RealArray {
 public:
  explicit RealArray(int nsems) : id_(semget(IPC_PRIVATE, nsems, IPC_CREAT | 0600)) {}
  ~RealArray() {
    if (id_ >= 0 && !removed_) semctl(id_, 0, IPC_RMID);
  }
  RealArray(const RealArray&) = delete;
  RealArray& operator=(const RealArray&) = delete;
  bool ok() const { return id_ >= 0; }
  int id() const { return id_; }
  // The test removed it itself: never touch the id again in the destructor,
  // it may name somebody else's array by then.
  void removed() { removed_ = true; }

 private:
  int id_;
  bool removed_ = false;
};

std::vector<sembuf> to_kernel(std::span<const Sembuf> sops) {
  std::vector<sembuf> out(sops.size() + 1);  // +1: a valid pointer for nsops == 0
  for (std::size_t i = 0; i < sops.size(); ++i) {
    out[i].sem_num = static_cast<unsigned short>(sops[i].sem_num);
    out[i].sem_op = static_cast<short>(sops[i].sem_op);
    out[i].sem_flg = static_cast<short>(sops[i].sem_flg);
  }
  return out;
}

int k_semop(int id, std::span<const Sembuf> sops, int timeout_us = 0) {
  std::vector<sembuf> buf = to_kernel(sops);
  int r = 0;
  if (timeout_us > 0) {
    const timespec ts{timeout_us / 1000000, static_cast<long>(timeout_us % 1000000) * 1000};
    r = semtimedop(id, buf.data(), sops.size(), &ts);
  } else {
    r = semop(id, buf.data(), sops.size());
  }
  return r == 0 ? 0 : -errno;
}

int k_semctl(int id, int semnum, int cmd, SemArg arg = {}) {
  const int r = semctl(id, semnum, cmd, arg);
  return r < 0 ? -errno : r;
}

int k_setval(int id, int semnum, int value) {
  SemArg a{};
  a.val = value;
  return k_semctl(id, semnum, SETVAL, a);
}

// values are what user space passes: unsigned shorts.
int k_setall(int id, const std::vector<int>& values) {
  std::vector<unsigned short> v(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) v[i] = static_cast<unsigned short>(values[i]);
  SemArg a{};
  a.array = v.data();
  return k_semctl(id, 0, SETALL, a);
}

int k_getall(int id, int nsems, std::vector<int>* out) {
  std::vector<unsigned short> v(static_cast<std::size_t>(nsems));
  SemArg a{};
  a.array = v.data();
  const int r = k_semctl(id, 0, GETALL, a);
  out->assign(v.begin(), v.end());
  return r;
}

// An operation the model says will not sleep. Without IPC_NOWAIT on every sop
// it runs as semtimedop() with a long timeout, so that a divergence (the kernel
// does sleep) is reported as EAGAIN instead of hanging the test.
int k_semop_no_sleep(int id, std::span<const Sembuf> sops) {
  const bool all_nowait = std::all_of(
      sops.begin(), sops.end(), [](const Sembuf& s) { return (s.sem_flg & kIpcNowait) != 0; });
  return k_semop(id, sops, all_nowait ? 0 : 5000000);
}

int outcome_result(const Outcome& o) { return o.kind == Kind::kError ? o.error : 0; }

std::string describe(std::span<const Sembuf> sops) {
  std::ostringstream s;
  s << "{";
  for (const Sembuf& sop : sops) {
    s << " [" << sop.sem_num << " " << sop.sem_op;
    if ((sop.sem_flg & kIpcNowait) != 0) s << " NOWAIT";
    if ((sop.sem_flg & kSemUndo) != 0) s << " UNDO";
    s << "]";
  }
  if (sops.size() > 6) return "{" + std::to_string(sops.size()) + " sops}";
  s << " }";
  return s.str();
}

// Reads exactly n bytes, giving up after timeout_ms.
bool read_full(int fd, void* buf, std::size_t n, int timeout_ms) {
  auto* p = static_cast<char*>(buf);
  std::size_t got = 0;
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (got < n) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    pollfd pfd{fd, POLLIN, 0};
    const int pr = poll(&pfd, 1, static_cast<int>(std::max<long long>(0, left.count())));
    if (pr < 0 && errno == EINTR) continue;
    if (pr <= 0) return false;
    const ssize_t r = read(fd, p + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    got += static_cast<std::size_t>(r);
  }
  return true;
}

bool write_full(int fd, const void* buf, std::size_t n) {
  const auto* p = static_cast<const char*>(buf);
  std::size_t done = 0;
  while (done < n) {
    const ssize_t r = write(fd, p + done, n - done);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    done += static_cast<std::size_t>(r);
  }
  return true;
}

bool readable_now(int fd) {
  pollfd pfd{fd, POLLIN, 0};
  return poll(&pfd, 1, 0) > 0;
}

// A forked child that must not outlive the test: killed and reaped on every
// path unless reaped by the test.
class ChildGuard {
 public:
  ChildGuard() = default;
  ~ChildGuard() { kill_and_reap(); }
  ChildGuard(const ChildGuard&) = delete;
  ChildGuard& operator=(const ChildGuard&) = delete;
  void set(pid_t pid) { pid_ = pid; }
  pid_t pid() const { return pid_; }
  // Waits for the child; returns its wait status.
  int reap() {
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
    return status;
  }
  void kill_and_reap() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      reap();
    }
  }

 private:
  pid_t pid_ = -1;
};

struct Pipe {
  int fd[2] = {-1, -1};
  Pipe() {
    if (pipe(fd) != 0) fd[0] = fd[1] = -1;
  }
  ~Pipe() {
    for (const int f : fd) {
      if (f >= 0) close(f);
    }
  }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  bool ok() const { return fd[0] >= 0; }
};

// Records a divergence with its context; a case stops at its first one (what
// follows would only repeat it).
class Checker {
 public:
  explicit Checker(std::string label) : label_(std::move(label)) {}
  void at(std::string where) { where_ = std::move(where); }
  bool eq(long long kernel, long long model, const std::string& what) {
    if (kernel == model) return true;
    fail() << what << ": kernel " << kernel << ", model " << model;
    return false;
  }
  bool eq(const std::vector<int>& kernel, std::span<const int> model, const std::string& what) {
    if (std::equal(kernel.begin(), kernel.end(), model.begin(), model.end())) return true;
    std::ostringstream k;
    std::ostringstream m;
    for (const int v : kernel) k << v << " ";
    for (const int v : model) m << v << " ";
    fail() << what << ": kernel [ " << k.str() << "], model [ " << m.str() << "]";
    return false;
  }
  bool check(bool ok, const std::string& what) {
    if (!ok) fail() << what;
    return ok;
  }
  bool failed() const { return failed_; }

 private:
  struct Failure {
    explicit Failure(Checker* c) : c_(c) {}
    ~Failure() { ADD_FAILURE() << c_->label_ << " at " << c_->where_ << ": " << s_.str(); }
    template <typename T>
    Failure& operator<<(const T& v) {
      s_ << v;
      return *this;
    }
    Checker* c_;
    std::ostringstream s_;
  };
  Failure fail() {
    failed_ = true;
    return Failure(this);
  }
  std::string label_;
  std::string where_;
  bool failed_ = false;
};

// ---------------------------------------------------------------------------
// a) One task, random sequences

constexpr std::uint64_t kSingleSeed = 0x5E3C0DE5EEDULL;
constexpr int kSingleCases = 2000;
constexpr int kOpsPerCase = 20;
constexpr int kTimedBlocks = 150;  // ops that really sleep until a 1 ms timeout
constexpr int kParentProc = 1;     // the test process, in the model
constexpr int kChildProc = 2;      // the forked child that exits with SEM_UNDO

struct SingleTotals {
  long long ops = 0;
  long long semctls = 0;
  long long exits = 0;
  long long timed_blocks = 0;
  long long rmids = 0;
};

class SingleTaskCase {
 public:
  SingleTaskCase(std::uint64_t index, int* timed_left, SingleTotals* totals)
      : rng_(Rng::derive(kSingleSeed, index)),
        nsems_(1 + static_cast<int>(rng_.below(8))),
        real_(nsems_),
        model_(nsems_, host().semopm),
        check_("single-task case " + std::to_string(index) + " (nsems " + std::to_string(nsems_) +
               ")"),
        timed_left_(timed_left),
        totals_(totals) {}

  void run() {
    if (!check_.check(real_.ok(), std::string("semget: ") + std::strerror(errno))) return;
    check_.at("start");
    if (!compare_state()) return;
    for (int step = 0; step < kOpsPerCase && !check_.failed(); ++step) {
      check_.at("step " + std::to_string(step));
      const std::uint64_t what = rng_.below(100);
      if (what < 70) {
        random_semop();
      } else if (what < 78) {
        random_setval();
      } else if (what < 82) {
        random_setall();
      } else {
        random_get();
      }
      if (!check_.failed()) compare_state();
    }
    if (check_.failed()) return;
    check_.at("exit");
    child_with_undo_exits();
    if (check_.failed()) return;
    if (rng_.below(100) < 10) {
      check_.at("rmid");
      remove_and_poke();
    }
  }

  bool failed() const { return check_.failed(); }

 private:
  int random_semnum() {
    const std::uint64_t u = rng_.below(100);
    if (u < 3) return nsems_ + static_cast<int>(rng_.below(3));
    if (u < 5) return -1;
    return static_cast<int>(rng_.below(static_cast<std::uint64_t>(nsems_)));
  }

  Sembuf random_sop(int nowait_pct, int undo_pct) {
    Sembuf sop;
    const std::uint64_t n = rng_.below(100);
    if (n < 3) {
      sop.sem_num = nsems_ + static_cast<int>(rng_.below(3));
    } else if (n < 4) {
      sop.sem_num = 65535;
    } else {
      sop.sem_num = static_cast<int>(rng_.below(static_cast<std::uint64_t>(nsems_)));
    }
    if (rng_.below(100) < 10) {
      static constexpr std::array<int, 8> kBig = {kSemvmx, -kSemvmx, kSemvmx - 1, -kSemvmx - 1,
                                                  16384,   -16384,   kSemvmx - 2, 16383};
      sop.sem_op = kBig[rng_.below(kBig.size())];
    } else {
      sop.sem_op = static_cast<int>(rng_.below(7)) - 3;
    }
    if (static_cast<int>(rng_.below(100)) < nowait_pct) sop.sem_flg |= kIpcNowait;
    if (static_cast<int>(rng_.below(100)) < undo_pct) sop.sem_flg |= kSemUndo;
    return sop;
  }

  std::vector<Sembuf> random_sops(int nowait_pct, int undo_pct) {
    const std::uint64_t u = rng_.below(100);
    std::size_t nsops = 1 + rng_.below(4);
    if (u < 2) {
      nsops = 0;
    } else if (u < 4) {
      nsops = static_cast<std::size_t>(host().semopm) + 1;
    }
    std::vector<Sembuf> sops(nsops);
    for (Sembuf& sop : sops) sop = random_sop(nowait_pct, undo_pct);
    if (u < 4 && nsops > 0) {
      // Keep the oversized operation otherwise valid.
      for (Sembuf& sop : sops) sop.sem_num %= nsems_;
    }
    return sops;
  }

  void random_semop() {
    ++totals_->ops;
    std::vector<Sembuf> sops = random_sops(80, 40);
    SemArrayModel probe = model_;
    const Outcome predicted = probe.semop(kParentProc, sops);
    if (predicted.kind != Kind::kBlocked) {
      const int kernel = k_semop_no_sleep(real_.id(), sops);
      const Outcome o = model_.semop(kParentProc, sops);
      check_.eq(kernel, outcome_result(o), "semop " + describe(sops));
      check_.eq(static_cast<long long>(model_.woken().size()), 0, "woken tasks");
      return;
    }
    if (*timed_left_ > 0) {
      // Let it really sleep: semtimedop() with 1 ms, then EAGAIN.
      --*timed_left_;
      ++totals_->timed_blocks;
      const auto t0 = Clock::now();
      const int kernel = k_semop(real_.id(), sops, 1000);
      const auto slept = Clock::now() - t0;
      const Outcome o = model_.semop(kParentProc, sops, true);
      check_.check(o.kind == Kind::kBlocked, "model: blocked");
      check_.check(model_.timeout(kParentProc), "model: timeout");
      check_.eq(kernel, -EAGAIN, "semtimedop " + describe(sops));
      check_.check(slept >= std::chrono::microseconds(900),
                   "semtimedop returned before its timeout: it did not sleep");
      return;
    }
    // Out of sleeping budget: the same operation with IPC_NOWAIT everywhere.
    for (Sembuf& sop : sops) sop.sem_flg |= kIpcNowait;
    const int kernel = k_semop(real_.id(), sops);
    const Outcome o = model_.semop(kParentProc, sops);
    check_.eq(kernel, outcome_result(o), "semop " + describe(sops));
    check_.eq(kernel, -EAGAIN, "semop that the model says would block");
  }

  int random_value() {
    const std::uint64_t u = rng_.below(100);
    if (u < 60) return static_cast<int>(rng_.below(6));
    if (u < 88) return kSemvmx - 3 + static_cast<int>(rng_.below(4));
    if (u < 95) return kSemvmx + 1 + static_cast<int>(rng_.below(2));
    return -1 - static_cast<int>(rng_.below(2));
  }

  void random_setval() {
    ++totals_->semctls;
    const int semnum = random_semnum();
    const int value = random_value();
    check_.eq(k_setval(real_.id(), semnum, value), model_.setval(semnum, value, kParentProc),
              "SETVAL " + std::to_string(semnum) + " " + std::to_string(value));
  }

  void random_setall() {
    ++totals_->semctls;
    std::vector<int> values(static_cast<std::size_t>(nsems_));
    for (int& v : values) {
      const std::uint64_t u = rng_.below(100);
      if (u < 70) {
        v = static_cast<int>(rng_.below(6));
      } else if (u < 97) {
        v = kSemvmx - 3 + static_cast<int>(rng_.below(4));
      } else {
        v = kSemvmx + 1 + static_cast<int>(rng_.below(3));  // an unsigned short > SEMVMX
      }
    }
    check_.eq(k_setall(real_.id(), values), model_.setall(values, kParentProc), "SETALL");
  }

  void random_get() {
    ++totals_->semctls;
    const int semnum = random_semnum();
    switch (rng_.below(5)) {
      case 0:
        check_.eq(k_semctl(real_.id(), semnum, GETVAL), model_.getval(semnum),
                  "GETVAL " + std::to_string(semnum));
        break;
      case 1:
        check_.eq(k_semctl(real_.id(), semnum, GETNCNT), model_.getncnt(semnum),
                  "GETNCNT " + std::to_string(semnum));
        break;
      case 2:
        check_.eq(k_semctl(real_.id(), semnum, GETZCNT), model_.getzcnt(semnum),
                  "GETZCNT " + std::to_string(semnum));
        break;
      case 3:
        check_.eq(k_semctl(real_.id(), semnum, GETPID), real_pid(model_.getpid(semnum)),
                  "GETPID " + std::to_string(semnum));
        break;
      default: {
        std::vector<int> all;
        std::vector<int> model_all;
        check_.eq(k_getall(real_.id(), nsems_, &all), model_.getall(&model_all), "GETALL");
        check_.eq(all, model_all, "GETALL values");
      }
    }
  }

  long long real_pid(int model_pid) const {
    if (model_pid == kParentProc) return getpid();
    if (model_pid == kChildProc) return child_pid_;
    return model_pid;  // 0 (never set) or an error
  }

  bool compare_state() {
    std::vector<int> all;
    if (!check_.eq(k_getall(real_.id(), nsems_, &all), 0, "GETALL")) return false;
    if (!check_.eq(all, model_.values(), "values")) return false;
    for (int i = 0; i < nsems_; ++i) {
      if (!check_.eq(k_semctl(real_.id(), i, GETPID), real_pid(model_.getpid(i)),
                     "sempid of " + std::to_string(i))) {
        return false;
      }
    }
    return true;
  }

  // A child process does a few SEM_UNDO operations, the parent moves the
  // values (so that the undo may have to be clamped), then the child exits.
  void child_with_undo_exits() {
    ++totals_->exits;
    const int nops = 1 + static_cast<int>(rng_.below(4));
    std::vector<std::vector<Sembuf>> ops;
    for (int i = 0; i < nops; ++i) {
      std::vector<Sembuf> sops(1 + rng_.below(2));
      for (Sembuf& sop : sops) {
        sop = random_sop(100, 85);
        sop.sem_num %= nsems_;
      }
      ops.push_back(std::move(sops));
    }
    Pipe results;
    Pipe go;
    if (!check_.check(results.ok() && go.ok(), "pipe")) return;
    ChildGuard child;
    const pid_t pid = fork();
    if (pid == 0) {
      for (const auto& sops : ops) {
        const int r = k_semop(real_.id(), sops);
        if (!write_full(results.fd[1], &r, sizeof r)) _exit(3);
      }
      char c = 0;
      if (!read_full(go.fd[0], &c, 1, 10000)) _exit(4);
      _exit(0);
    }
    if (!check_.check(pid > 0, "fork")) return;
    child.set(pid);
    child_pid_ = pid;
    for (const auto& sops : ops) {
      int kernel = 0;
      if (!check_.check(read_full(results.fd[0], &kernel, sizeof kernel, 10000),
                        "child's result")) {
        return;
      }
      const Outcome o = model_.semop(kChildProc, sops);
      if (!check_.eq(kernel, outcome_result(o), "child semop " + describe(sops))) return;
    }
    const int moves = static_cast<int>(rng_.below(3));
    for (int i = 0; i < moves; ++i) {
      std::vector<Sembuf> sops{random_sop(100, 0)};
      sops[0].sem_num = static_cast<int>(rng_.below(static_cast<std::uint64_t>(nsems_)));
      const int kernel = k_semop(real_.id(), sops);
      if (!check_.eq(kernel, outcome_result(model_.semop(kParentProc, sops)),
                     "semop " + describe(sops))) {
        return;
      }
    }
    const char c = 'x';
    if (!check_.check(write_full(go.fd[1], &c, 1), "write to child")) return;
    const int status = child.reap();
    if (!check_.check(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child exit status")) {
      return;
    }
    model_.exit_process(kChildProc);
    check_.at("after exit");
    compare_state();
  }

  void remove_and_poke() {
    ++totals_->rmids;
    if (!check_.eq(k_semctl(real_.id(), 0, IPC_RMID), model_.rmid(), "IPC_RMID")) return;
    real_.removed();
    // The id no longer resolves. Only calls that cannot alter an array: the id
    // could in theory name another array by now.
    std::vector<Sembuf> sops{{0, 0, kIpcNowait}};
    check_.eq(k_semop(real_.id(), sops), outcome_result(model_.semop(kParentProc, sops)),
              "semop after IPC_RMID");
    check_.eq(k_semctl(real_.id(), 0, GETVAL), model_.getval(0), "GETVAL after IPC_RMID");
    check_.eq(k_setval(real_.id(), 0, -1), model_.setval(0, -1), "SETVAL -1 after IPC_RMID");
    std::vector<Sembuf> none;
    check_.eq(k_semop(real_.id(), none), outcome_result(model_.semop(kParentProc, none)),
              "semop nsops=0 after IPC_RMID");
  }

  Rng rng_;
  int nsems_;
  RealArray real_;
  SemArrayModel model_;
  Checker check_;
  int* timed_left_;
  SingleTotals* totals_;
  pid_t child_pid_ = -1;
};

TEST(SemanticsDiff, SingleTaskRandomSequences) {
  SKIP_WITHOUT_SYSV();
  const auto t0 = Clock::now();
  int timed_left = kTimedBlocks;
  SingleTotals totals;
  int failed_cases = 0;
  for (int i = 0; i < kSingleCases && failed_cases < 3; ++i) {
    SingleTaskCase c(static_cast<std::uint64_t>(i), &timed_left, &totals);
    c.run();
    if (c.failed()) ++failed_cases;
  }
  const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  std::printf(
      "[ diff     ] %d single-task cases: %lld semops (%lld slept to a timeout), %lld semctls, "
      "%lld undo exits, %lld IPC_RMIDs in %.2f s\n",
      kSingleCases, totals.ops, totals.timed_blocks, totals.semctls, totals.exits, totals.rmids,
      secs);
}

// ---------------------------------------------------------------------------
// b) Several processes

constexpr int kMaxSops = 4;
constexpr int kParentTask = 1000;  // the test process, in the model
constexpr int kReplyMs = 5000;     // how long a child may take to report

struct Command {
  std::int32_t exit = 0;
  std::int32_t timeout_us = 0;
  std::int32_t nsops = 0;
  std::int32_t sops[3 * kMaxSops] = {};
};
struct Record {
  std::int32_t step = 0;
  std::int32_t result = 0;  // 0 or -errno
};
static_assert(sizeof(Command) < PIPE_BUF);

void on_sigusr1(int) {}

// The child: one semop per command, each result reported on the pipe.
[[noreturn]] void worker(int semid, int cmd_fd, int res_fd) {
  struct sigaction sa {};
  sa.sa_handler = on_sigusr1;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: semop() returns EINTR (it is never restarted anyway)
  sigaction(SIGUSR1, &sa, nullptr);
  for (std::int32_t step = 0;; ++step) {
    Command c;
    std::size_t got = 0;
    while (got < sizeof c) {
      const ssize_t r = read(cmd_fd, reinterpret_cast<char*>(&c) + got, sizeof c - got);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) _exit(0);
      got += static_cast<std::size_t>(r);
    }
    if (c.exit != 0) _exit(0);
    sembuf buf[kMaxSops];
    for (int i = 0; i < c.nsops; ++i) {
      buf[i].sem_num = static_cast<unsigned short>(c.sops[3 * i]);
      buf[i].sem_op = static_cast<short>(c.sops[3 * i + 1]);
      buf[i].sem_flg = static_cast<short>(c.sops[3 * i + 2]);
    }
    int r = 0;
    if (c.timeout_us > 0) {
      const timespec ts{c.timeout_us / 1000000, static_cast<long>(c.timeout_us % 1000000) * 1000};
      r = semtimedop(semid, buf, static_cast<std::size_t>(c.nsops), &ts);
    } else {
      r = semop(semid, buf, static_cast<std::size_t>(c.nsops));
    }
    const Record rec{step, r == 0 ? 0 : -errno};
    if (!write_full(res_fd, &rec, sizeof rec)) _exit(2);
  }
}

struct MultiTotals {
  long long cases = 0;
  long long events = 0;
  long long sleeps = 0;
  long long wakeups = 0;
};

// One array, the test process (task kParentTask) and forked children (tasks
// 1..n, each its own process), driven in lockstep with the model.
class MultiTaskCase {
 public:
  MultiTaskCase(int nsems, std::string label, MultiTotals* totals)
      : nsems_(nsems),
        real_(nsems),
        model_(nsems, host().semopm),
        check_(std::move(label)),
        totals_(totals) {
    ++totals_->cases;
    check_.check(real_.ok(), std::string("semget: ") + std::strerror(errno));
  }
  ~MultiTaskCase() {
    for (auto& entry : children_) {
      Child& c = entry.second;
      if (c.alive) {
        ::kill(c.pid, SIGKILL);
        int status = 0;
        while (waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
        }
      }
      close(c.cmd_fd);
      close(c.res_fd);
    }
  }
  MultiTaskCase(const MultiTaskCase&) = delete;
  MultiTaskCase& operator=(const MultiTaskCase&) = delete;

  bool ok() const { return !check_.failed(); }
  const SemArrayModel& model() const { return model_; }
  bool alive(int task) const {
    const auto it = children_.find(task);
    return it != children_.end() && it->second.alive;
  }
  bool idle(int task) const { return alive(task) && !model_.sleeping(task); }

  void spawn(int task) {
    if (!ok()) return;
    int cmd[2];
    int res[2];
    if (!check_.check(pipe(cmd) == 0 && pipe(res) == 0, "pipe")) return;
    const pid_t pid = fork();
    if (pid == 0) {
      close(cmd[1]);
      close(res[0]);
      worker(real_.id(), cmd[0], res[1]);
    }
    close(cmd[0]);
    close(res[1]);
    children_[task] = Child{pid, cmd[1], res[0], 0, pid > 0};
    check_.check(pid > 0, "fork");
  }

  // Child `task` runs one semop (semtimedop when timeout_us > 0).
  void child_op(int task, std::vector<Sembuf> sops, int timeout_us = 0) {
    if (!begin("task " + std::to_string(task) + " semop " + describe(sops))) return;
    if (!check_.check(sops.size() <= kMaxSops, "a child op has at most 4 sops")) return;
    Child& c = children_.at(task);
    Command cmd;
    cmd.timeout_us = timeout_us;
    cmd.nsops = static_cast<std::int32_t>(sops.size());
    for (std::size_t i = 0; i < sops.size() && i < kMaxSops; ++i) {
      cmd.sops[3 * i] = sops[i].sem_num;
      cmd.sops[3 * i + 1] = sops[i].sem_op;
      cmd.sops[3 * i + 2] = sops[i].sem_flg;
    }
    if (!check_.check(write_full(c.cmd_fd, &cmd, sizeof cmd), "write to child")) return;
    c.expect_step = c.next_step++;
    const Outcome o = model_.semop(task, sops, timeout_us > 0);
    if (o.kind == Kind::kBlocked) {
      ++totals_->sleeps;
      if (timeout_us > 0) {
        // Nothing else happens until it times out.
        model_.timeout(task);
        collect();
      } else {
        wait_asleep(task);
      }
    } else {
      expect_record(task, outcome_result(o));
      collect();
    }
    compare_state();
  }

  // The test process runs one semop; it must not block.
  void parent_op(std::vector<Sembuf> sops) {
    if (!begin("parent semop " + describe(sops))) return;
    const Outcome o = model_.semop(kParentTask, sops);
    if (!check_.check(o.kind != Kind::kBlocked, "the script lets the test process sleep")) return;
    check_.eq(k_semop_no_sleep(real_.id(), sops), outcome_result(o), "parent semop");
    collect();
    compare_state();
  }

  void setval(int semnum, int value) {
    if (!begin("SETVAL " + std::to_string(semnum) + " " + std::to_string(value))) return;
    check_.eq(k_setval(real_.id(), semnum, value), model_.setval(semnum, value, kParentTask),
              "SETVAL");
    collect();
    compare_state();
  }

  void setall(std::vector<int> values) {
    if (!begin("SETALL")) return;
    check_.eq(k_setall(real_.id(), values), model_.setall(values, kParentTask), "SETALL");
    collect();
    compare_state();
  }

  // SIGUSR1 to a sleeping child: EINTR.
  void signal(int task) {
    if (!begin("signal task " + std::to_string(task))) return;
    if (!check_.check(model_.signal(task), "the script signals a task that is not asleep")) return;
    ::kill(children_.at(task).pid, SIGUSR1);
    collect();
    compare_state();
  }

  // SIGKILL: the child dies wherever it is; exit_sem() applies its undo.
  void kill(int task) {
    if (!begin("SIGKILL task " + std::to_string(task))) return;
    Child& c = children_.at(task);
    ::kill(c.pid, SIGKILL);
    int status = 0;
    while (waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
    }
    c.alive = false;
    check_.check(WIFSIGNALED(status), "child killed");
    model_.exit_process(task);
    collect();
    compare_state();
  }

  // An idle child exits normally.
  void exit(int task) {
    if (!begin("exit task " + std::to_string(task))) return;
    Child& c = children_.at(task);
    Command cmd;
    cmd.exit = 1;
    check_.check(write_full(c.cmd_fd, &cmd, sizeof cmd), "write to child");
    int status = 0;
    while (waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
    }
    c.alive = false;
    check_.check(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child exit status");
    model_.exit_process(task);
    collect();
    compare_state();
  }

  void rmid() {
    if (!begin("IPC_RMID")) return;
    if (!check_.eq(k_semctl(real_.id(), 0, IPC_RMID), model_.rmid(), "IPC_RMID")) return;
    real_.removed();
    collect();
  }

  // Ends the case: removes the array (waking every sleeper with EIDRM) if the
  // script did not, and lets every child exit.
  void finish() {
    if (!model_.removed()) rmid();
    for (auto& entry : children_) {
      if (entry.second.alive && ok()) exit(entry.first);
    }
  }

 private:
  struct Child {
    pid_t pid = -1;
    int cmd_fd = -1;
    int res_fd = -1;
    std::int32_t next_step = 0;
    bool alive = false;
    std::int32_t expect_step = 0;
  };

  bool begin(const std::string& what) {
    ++totals_->events;
    check_.at("event " + std::to_string(event_++) + " (" + what + ")");
    return ok();
  }

  void expect_record(int task, int status) {
    Child& c = children_.at(task);
    Record rec;
    if (!check_.check(read_full(c.res_fd, &rec, sizeof rec, kReplyMs),
                      "task " + std::to_string(task) + " did not report (the model says " +
                          std::to_string(status) + ")")) {
      return;
    }
    check_.eq(rec.step, c.expect_step, "task " + std::to_string(task) + " step");
    check_.eq(rec.result, status, "task " + std::to_string(task) + " result");
  }

  // Every task whose sleep ended in the model must report that result.
  void collect() {
    for (const SemArrayModel::Wakeup& w : model_.woken()) {
      if (!ok()) return;
      if (!alive(w.task)) continue;  // killed: it reports nothing
      ++totals_->wakeups;
      expect_record(w.task, w.status);
    }
  }

  int kernel_sleepers() {
    int total = 0;
    for (int i = 0; i < nsems_; ++i) {
      total += k_semctl(real_.id(), i, GETNCNT) + k_semctl(real_.id(), i, GETZCNT);
    }
    return total;
  }

  // Each sleeper counts exactly once in GETNCNT+GETZCNT (on its blocking
  // sop), so the sums tell when the child has gone to sleep.
  void wait_asleep(int task) {
    const int expected = static_cast<int>(model_.sleeping_tasks().size());
    const auto deadline = Clock::now() + std::chrono::milliseconds(kReplyMs);
    for (int spin = 0;; ++spin) {
      const int n = kernel_sleepers();
      if (n == expected) return;
      if (readable_now(children_.at(task).res_fd)) {
        Record rec;
        read_full(children_.at(task).res_fd, &rec, sizeof rec, kReplyMs);
        check_.eq(
            rec.result, 1,
            "task " + std::to_string(task) + " completed (result shown) where the model sleeps");
        return;
      }
      if (Clock::now() > deadline) {
        check_.eq(
            n, expected,
            "sleepers in the kernel (waiting for task " + std::to_string(task) + " to sleep)");
        return;
      }
      if (spin < 20) {
        sched_yield();
      } else {
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      }
    }
  }

  long long real_pid(int model_pid) const {
    if (model_pid == kParentTask) return getpid();
    const auto it = children_.find(model_pid);
    if (it != children_.end()) return it->second.pid;
    return model_pid;
  }

  void compare_state() {
    if (!ok()) return;
    if (model_.removed()) {
      check_.eq(k_semctl(real_.id(), 0, GETVAL), model_.getval(0), "GETVAL after IPC_RMID");
      return;
    }
    std::vector<int> all;
    if (!check_.eq(k_getall(real_.id(), nsems_, &all), 0, "GETALL")) return;
    if (!check_.eq(all, model_.values(), "values")) return;
    for (int i = 0; i < nsems_; ++i) {
      const std::string n = std::to_string(i);
      if (!check_.eq(k_semctl(real_.id(), i, GETNCNT), model_.getncnt(i), "GETNCNT " + n) ||
          !check_.eq(k_semctl(real_.id(), i, GETZCNT), model_.getzcnt(i), "GETZCNT " + n) ||
          !check_.eq(k_semctl(real_.id(), i, GETPID), real_pid(model_.getpid(i)), "GETPID " + n)) {
        return;
      }
    }
  }

  int nsems_;
  RealArray real_;
  SemArrayModel model_;
  Checker check_;
  MultiTotals* totals_;
  std::map<int, Child> children_;
  int event_ = 0;
};

MultiTotals& multi_totals() {
  static MultiTotals t;
  return t;
}

std::vector<Sembuf> ops(std::initializer_list<Sembuf> l) { return std::vector<Sembuf>(l); }

// --- hand-written cases: one rule each ---------------------------------------

TEST(SemanticsDiff, DecrementSleepsAndPerSemaphoreFifo) {
  SKIP_WITHOUT_SYSV();
  MultiTaskCase c(1, "per-semaphore FIFO", &multi_totals());
  for (int t = 1; t <= 3; ++t) c.spawn(t);
  c.child_op(1, ops({{0, -2, 0}}));
  c.child_op(2, ops({{0, -1, 0}}));
  c.child_op(3, ops({{0, -1, 0}}));
  c.parent_op(ops({{0, 1, kIpcNowait}}));  // only task 2 can go; task 3 finds 0
  c.parent_op(ops({{0, 3, kIpcNowait}}));  // tasks 1 and 3
  c.finish();
}

TEST(SemanticsDiff, WaitForZeroSleepersGoFirst) {
  SKIP_WITHOUT_SYSV();
  MultiTaskCase c(2, "wait-for-zero first", &multi_totals());
  c.spawn(1);
  c.spawn(2);
  c.setval(0, 1);
  c.child_op(1, ops({{0, 0, 0}}));
  c.child_op(2, ops({{1, -1, 0}, {0, 1, 0}}));
  c.parent_op(ops({{0, -1, kIpcNowait}, {1, 1, kIpcNowait}}));  // both complete
  c.finish();
}

TEST(SemanticsDiff, ComplexSleeperMakesOneGlobalFifo) {
  SKIP_WITHOUT_SYSV();
  MultiTaskCase c(2, "global FIFO while a complex op sleeps", &multi_totals());
  for (int t = 1; t <= 3; ++t) c.spawn(t);
  c.child_op(1, ops({{0, -1, 0}}));
  c.child_op(3, ops({{0, -1, 0}, {1, -1, 0}}));
  c.child_op(2, ops({{0, -1, 0}}));
  c.parent_op(ops({{0, 2, kIpcNowait}, {1, 1, kIpcNowait}}));  // tasks 1 and 3, not 2
  c.parent_op(ops({{0, 1, kIpcNowait}}));                      // now task 2
  c.finish();
}

TEST(SemanticsDiff, CountsFollowTheBlockingSop) {
  SKIP_WITHOUT_SYSV();
  MultiTaskCase c(3, "GETNCNT/GETZCNT", &multi_totals());
  for (int t = 1; t <= 3; ++t) c.spawn(t);
  c.setval(2, 1);
  c.child_op(1, ops({{0, -1, 0}, {1, -1, 0}}));
  c.child_op(2, ops({{2, 0, 0}, {0, 0, 0}}));
  c.child_op(3, ops({{2, 0, 0}, {1, 1, 0}}));
  c.parent_op(ops({{0, 1, kIpcNowait}}));  // task 1 now blocks on sem 1
  c.parent_op(ops({{2, -1, kIpcNowait}}));
  c.parent_op(ops({{1, 1, kIpcNowait}}));
  c.finish();
}

TEST(SemanticsDiff, RetriedOperationFailsWithEagainOrErange) {
  SKIP_WITHOUT_SYSV();
  MultiTaskCase c(3, "EAGAIN/ERANGE on retry", &multi_totals());
  c.spawn(1);
  c.spawn(2);
  c.setval(2, kSemvmx);
  c.child_op(1, ops({{0, -1, 0}, {1, -1, kIpcNowait}}));
  c.child_op(2, ops({{0, -1, 0}, {2, 1, 0}}));
  c.parent_op(ops({{0, 1, kIpcNowait}}));
  c.finish();
}

TEST(SemanticsDiff, ExitAppliesUndoAndWakesSleepers) {
  SKIP_WITHOUT_SYSV();
  MultiTaskCase c(2, "undo at exit", &multi_totals());
  for (int t = 1; t <= 4; ++t) c.spawn(t);
  c.setall({1, 0});
  c.child_op(1, ops({{0, -1, kSemUndo}}));  // holds sem 0
  c.child_op(2, ops({{0, -1, 0}}));         // waits for it
  c.child_op(3, ops({{1, 2, kSemUndo}}));   // sem 1 = 2, undo -2
  c.child_op(4, ops({{1, 0, 0}}));          // waits for sem 1 == 0
  c.exit(1);                                // releases task 2
  c.parent_op(ops({{1, -1, kIpcNowait}}));  // sem 1 = 1
  c.kill(3);                                // 1 - 2 clamps to 0: task 4
  c.finish();
}

TEST(SemanticsDiff, KilledSleeperWithUndo) {
  SKIP_WITHOUT_SYSV();
  MultiTaskCase c(2, "SIGKILL while asleep", &multi_totals());
  for (int t = 1; t <= 2; ++t) c.spawn(t);
  c.child_op(1, ops({{1, 3, kSemUndo}}));
  c.child_op(1, ops({{0, -1, 0}}));  // asleep
  c.child_op(2, ops({{1, -3, 0}}));
  c.child_op(2, ops({{1, 0, 0}}));   // runs: sem 1 is 0 already
  c.child_op(2, ops({{1, -1, 0}}));  // asleep
  c.kill(1);                         // undo +(-3) clamps at 0, wakes nobody
  c.parent_op(ops({{1, 1, kIpcNowait}}));
  c.finish();
}

TEST(SemanticsDiff, RmidWakesEverySleeperWithEidrm) {
  SKIP_WITHOUT_SYSV();
  MultiTaskCase c(2, "IPC_RMID", &multi_totals());
  for (int t = 1; t <= 4; ++t) c.spawn(t);
  c.setval(1, 1);
  c.child_op(1, ops({{0, -1, 0}}));
  c.child_op(2, ops({{1, 0, 0}}));
  c.child_op(3, ops({{1, 0, 0}, {0, 0, 0}}));
  c.child_op(4, ops({{0, -1, kSemUndo}, {1, 1, 0}}));
  c.rmid();
  c.finish();
}

TEST(SemanticsDiff, SignalGivesEintrAndTimeoutEagain) {
  SKIP_WITHOUT_SYSV();
  MultiTaskCase c(2, "EINTR/EAGAIN", &multi_totals());
  for (int t = 1; t <= 3; ++t) c.spawn(t);
  c.child_op(1, ops({{0, -1, 0}, {1, -1, 0}}));
  c.child_op(2, ops({{0, -1, 0}}));
  c.signal(1);  // the complex sleeper leaves: task 2 goes back to sem 0's queue
  c.child_op(3, ops({{1, 0, 0}, {0, -1, 0}}), 20000);  // sleeps 20 ms, EAGAIN
  c.parent_op(ops({{0, 1, kIpcNowait}}));
  c.child_op(1, ops({{0, -1, 0}}), 20000);
  c.finish();
}

TEST(SemanticsDiff, ThreadsShareOneUndoList) {
  SKIP_WITHOUT_SYSV();
  // Two threads of one child process: the second one's SEM_UNDO overflows the
  // adjustment the first one started, which only happens with one shared list.
  RealArray real(1);
  ASSERT_TRUE(real.ok());
  SemArrayModel model(1, host().semopm);
  model.set_process(2, 1);
  const std::vector<std::vector<Sembuf>> first = {ops({{0, 30000, kSemUndo}}),
                                                  ops({{0, -30000, 0}})};
  const std::vector<std::vector<Sembuf>> second = {
      ops({{0, 2767, kSemUndo}}), ops({{0, 1, kSemUndo}}), ops({{0, 1, kSemUndo}})};
  Pipe results;
  ASSERT_TRUE(results.ok());
  ChildGuard child;
  const pid_t pid = fork();
  if (pid == 0) {
    const auto run = [&](const std::vector<std::vector<Sembuf>>& list) {
      for (const auto& sops : list) {
        const int r = k_semop(real.id(), sops);
        write_full(results.fd[1], &r, sizeof r);
      }
    };
    std::thread a(run, std::cref(first));
    a.join();
    std::thread b(run, std::cref(second));
    b.join();
    _exit(0);
  }
  ASSERT_GT(pid, 0);
  child.set(pid);
  for (int task = 1; task <= 2; ++task) {
    for (const auto& sops : task == 1 ? first : second) {
      int kernel = 0;
      ASSERT_TRUE(read_full(results.fd[0], &kernel, sizeof kernel, kReplyMs));
      EXPECT_EQ(kernel, outcome_result(model.semop(task, sops))) << describe(sops);
    }
  }
  ASSERT_NE(model.semadj(1), nullptr);
  EXPECT_EQ((*model.semadj(1))[0], -kSemaem - 1);
  const int status = child.reap();
  ASSERT_TRUE(WIFEXITED(status));
  model.exit_process(1);
  EXPECT_EQ(k_semctl(real.id(), 0, GETVAL), model.getval(0));
  EXPECT_EQ(model.getval(0), 0);  // 2768 - 32768, clamped
}

// --- random scripts -----------------------------------------------------------

constexpr std::uint64_t kMultiSeed = 0xD1FF5E3ULL;
constexpr int kMultiCases = 600;
constexpr int kTimeoutBudget = 20;  // child ops that sleep into a 20 ms timeout

void run_random_script(std::uint64_t index, int* timeouts_left) {
  Rng rng = Rng::derive(kMultiSeed, index);
  const int nsems = 1 + static_cast<int>(rng.below(3));
  const int nchildren = 2 + static_cast<int>(rng.below(4));
  MultiTaskCase c(nsems,
                  "random script " + std::to_string(index) + " (nsems " + std::to_string(nsems) +
                      ", " + std::to_string(nchildren) + " children)",
                  &multi_totals());
  for (int t = 1; t <= nchildren; ++t) c.spawn(t);
  const auto below = [&](int n) {
    return static_cast<int>(rng.below(static_cast<std::uint64_t>(n)));
  };
  if (below(2) == 0) {
    std::vector<int> values(static_cast<std::size_t>(nsems));
    for (int& v : values) v = below(3);
    c.setall(values);
  }
  const auto random_sops = [&](int min_op, int max_op, int nowait_pct, int undo_pct) {
    const int u = below(100);
    const int nsops = u < 55 ? 1 : (u < 90 ? 2 : 3);
    std::vector<Sembuf> sops(static_cast<std::size_t>(nsops));
    for (Sembuf& sop : sops) {
      sop.sem_num = below(nsems);
      sop.sem_op = min_op + below(max_op - min_op + 1);
      if (below(100) < nowait_pct) sop.sem_flg |= kIpcNowait;
      if (below(100) < undo_pct) sop.sem_flg |= kSemUndo;
    }
    return sops;
  };
  const int events = 8 + below(10);
  for (int e = 0; e < events && c.ok(); ++e) {
    std::vector<int> idle;
    std::vector<int> asleep;
    std::vector<int> alive;
    for (int t = 1; t <= nchildren; ++t) {
      if (c.alive(t)) alive.push_back(t);
      if (c.idle(t)) idle.push_back(t);
      if (c.alive(t) && c.model().sleeping(t)) asleep.push_back(t);
    }
    const auto pick = [&](const std::vector<int>& v) {
      return v[static_cast<std::size_t>(below(static_cast<int>(v.size())))];
    };
    const int u = below(100);
    if (u < 50 && !idle.empty()) {
      int timeout_us = 0;
      if (*timeouts_left > 0 && below(100) < 4) {
        --*timeouts_left;
        timeout_us = 20000;
      }
      c.child_op(pick(idle), random_sops(-2, 1, 8, 30), timeout_us);
    } else if (u < 78) {
      c.parent_op(random_sops(-1, 3, 100, 15));
    } else if (u < 84) {
      c.setval(below(nsems), below(4));
    } else if (u < 87) {
      std::vector<int> values(static_cast<std::size_t>(nsems));
      for (int& v : values) v = below(3);
      c.setall(values);
    } else if (u < 92 && !asleep.empty()) {
      c.signal(pick(asleep));
    } else if (u < 96 && !alive.empty()) {
      c.kill(pick(alive));
    } else if (!idle.empty()) {
      c.exit(pick(idle));
    }
  }
  c.finish();
}

TEST(SemanticsDiff, MultiTaskRandomScripts) {
  SKIP_WITHOUT_SYSV();
  const auto t0 = Clock::now();
  const MultiTotals before = multi_totals();
  int timeouts_left = kTimeoutBudget;
  for (int i = 0; i < kMultiCases && !::testing::Test::HasFailure(); ++i) {
    run_random_script(static_cast<std::uint64_t>(i), &timeouts_left);
  }
  const MultiTotals& t = multi_totals();
  const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  std::printf(
      "[ diff     ] %lld multi-task scripts: %lld events, %lld sleeps, %lld checked wakeups "
      "in %.2f s\n",
      t.cases - before.cases, t.events - before.events, t.sleeps - before.sleeps,
      t.wakeups - before.wakeups, secs);
}

}  // namespace
}  // namespace semsim::ipc
