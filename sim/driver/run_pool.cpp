#include "driver/run_pool.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <exception>
#include <optional>
#include <string_view>

#include "core/errors.hpp"

namespace semsim::driver {

namespace {

// The pipe protocol, child to caller: frames of [kind: 1 byte][size: u64][payload].
// 'P' a progress report (the RunProgress fields), 'R' the result (CBOR, which
// keeps every number's type and bits, so the caller's document is the one the
// child would have written), 'E' an error (type, '\0', message).
constexpr char kProgress = 'P', kResult = 'R', kError = 'E';

struct ProgressFrame {
  std::int64_t done, target;
  std::uint8_t adaptive, finished;
};

// Writes all of it; false if the other end is gone.
bool write_fully(int fd, const void* data, std::size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

void write_all(int fd, const void* data, std::size_t size) {
  if (!write_fully(fd, data, size)) ::_exit(1);  // the caller is gone: nothing to report to
}

void write_frame(int fd, char kind, const void* data, std::uint64_t size) {
  char head[1 + sizeof size];
  head[0] = kind;
  std::memcpy(head + 1, &size, sizeof size);
  write_all(fd, head, sizeof head);
  write_all(fd, data, size);
}

bool read_all(int fd, void* data, std::size_t size) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    const ssize_t n = ::read(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

// A worker: runs the tasks whose indices the caller sends on `cmd`, one after
// the other, each answered on `fd` by its progress and one result or error
// frame; ends when the caller closes `cmd`, and after an error (a run that
// threw may have left its process in any state: a fresh worker takes the next).
[[noreturn]] void worker_main(int fd, int cmd, pid_t parent,
                              const std::vector<std::function<Json()>>& tasks, bool report) {
  // Ctrl-C reaches the whole process group: end at once (the caller's Python
  // handler, inherited, would only set a flag nobody reads here). And end
  // with the caller, whichever way it ends.
  ::signal(SIGINT, SIG_DFL);
  ::signal(SIGPIPE, SIG_DFL);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(1);  // the caller ended before the line above
  using Clock = std::chrono::steady_clock;
  while (true) {
    std::uint64_t task = 0;
    if (!read_all(cmd, &task, sizeof task) || task >= tasks.size()) ::_exit(0);
    Clock::time_point next{};
    // The hook only reads the run's clock: the run is the same with or without it.
    set_progress_hook(report ? ProgressHook([fd, &next](const RunProgress& p) {
      const auto now = Clock::now();
      if (!p.finished && now < next) return;
      next = now + std::chrono::milliseconds(50);
      const ProgressFrame f{p.done, p.target, p.adaptive, p.finished};
      write_frame(fd, kProgress, &f, sizeof f);
    })
                             : ProgressHook{});
    std::string type, message;
    try {
      const std::vector<std::uint8_t> bytes = Json::to_cbor(tasks[task]());
      write_frame(fd, kResult, bytes.data(), bytes.size());
      continue;
    } catch (const InputError& e) {
      type = "InputError", message = e.what();
    } catch (const SimulationError& e) {
      type = "SimulationError", message = e.what();
    } catch (const std::exception& e) {
      type = "Error", message = e.what();
    } catch (...) {
      type = "Error", message = "unknown exception";
    }
    const std::string payload = type + '\0' + message;
    write_frame(fd, kError, payload.data(), payload.size());
    ::_exit(0);
  }
}

struct Worker {
  pid_t pid = -1;
  int fd = -1;                      // frames, worker to caller (non-blocking)
  int cmd = -1;                     // task indices, caller to worker
  std::optional<std::size_t> task;  // the task it runs (none: idle)
  bool retiring = false;            // answered with an error: it is ending
  std::string buffer;
};

std::string describe_status(int status) {
  if (WIFSIGNALED(status)) {
    const char* name = ::sigabbrev_np(WTERMSIG(status));
    return std::string("the run's process was killed by SIG") + (name ? name : "?");
  }
  return "the run's process exited with status " + std::to_string(WEXITSTATUS(status)) +
         " without a result";
}

// At most `jobs` workers, forked when a task needs one and kept for the next
// tasks: a fork copies the caller's page tables and every page either side
// then writes (the caller's Python heap: its objects' reference counts), so
// one fork per worker instead of one per run. A worker's runs are the runs
// of one process one after the other, which give the same bytes as runs in
// fresh processes (the one-process path of driver/simulate.cpp does it).
class Pool {
 public:
  Pool(const std::vector<std::function<Json()>>& tasks, const PoolOptions& options)
      : tasks_(tasks), options_(options), outcomes_(tasks.size()) {}
  ~Pool() { kill_all(); }

  std::vector<TaskOutcome> run(const std::function<std::optional<std::size_t>()>& pick) {
    const std::size_t jobs = static_cast<std::size_t>(std::max(1, options_.jobs));
    while (true) {
      while (busy() < jobs && !(failed_ && options_.stop_on_error)) {
        const auto task = pick();
        if (!task) break;
        assign(idle_worker(), *task);
      }
      if (busy() == 0 && !retiring()) break;
      wait_once();
      end_abandoned();
      if (options_.poll) options_.poll();
    }
    return std::move(outcomes_);  // the idle workers end with the pool (kill_all())
  }

 private:
  std::size_t busy() const {
    return static_cast<std::size_t>(
        std::count_if(workers_.begin(), workers_.end(), [](const Worker& w) { return w.task; }));
  }
  bool retiring() const {
    return std::any_of(workers_.begin(), workers_.end(),
                       [](const Worker& w) { return w.retiring; });
  }

  Worker& idle_worker() {
    for (auto& w : workers_)
      if (!w.task && !w.retiring) return w;
    return spawn();
  }

  Worker& spawn() {
    int out[2], in[2];
    if (::pipe2(out, O_CLOEXEC) != 0)
      throw SimulationError(std::string("run pool: pipe: ") + std::strerror(errno));
    if (::pipe2(in, O_CLOEXEC) != 0) {
      ::close(out[0]);
      ::close(out[1]);
      throw SimulationError(std::string("run pool: pipe: ") + std::strerror(errno));
    }
    const pid_t self = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) {
      for (int fd : {out[0], out[1], in[0], in[1]}) ::close(fd);
      throw SimulationError(std::string("run pool: fork: ") + std::strerror(errno));
    }
    if (pid == 0) {
      ::close(out[0]);
      ::close(in[1]);
      // The other workers' pipes: a copy of a command pipe's write end kept
      // here would keep its worker from ever seeing the end of its tasks.
      for (const auto& w : workers_) {
        ::close(w.fd);
        ::close(w.cmd);
      }
      worker_main(out[1], in[0], self, tasks_, static_cast<bool>(options_.progress));
    }
    ::close(out[1]);
    ::close(in[0]);
    // Non-blocking: one worker's pipe never holds up the others'.
    ::fcntl(out[0], F_SETFL, ::fcntl(out[0], F_GETFL) | O_NONBLOCK);
    Worker w;
    w.pid = pid, w.fd = out[0], w.cmd = in[1];
    workers_.push_back(std::move(w));
    return workers_.back();
  }

  void assign(Worker& w, std::size_t task) {
    w.task = task;
    const std::uint64_t index = task;
    // A worker that is gone: its end of file records the crash.
    write_fully(w.cmd, &index, sizeof index);
  }

  void wait_once() {
    std::vector<pollfd> fds;
    for (const auto& w : workers_) fds.push_back(pollfd{w.fd, POLLIN, 0});
    const int n = ::poll(fds.data(), fds.size(), 100);
    if (n < 0 && errno != EINTR)
      throw SimulationError(std::string("run pool: poll: ") + std::strerror(errno));
    if (n <= 0) return;
    // Workers are only added in run(), so the indices hold through this loop
    // (a finished callback makes tasks ready; it starts none).
    for (std::size_t i = fds.size(); i-- > 0;) {
      if (fds[i].revents == 0 || drain(workers_[i])) continue;
      Worker gone = std::move(workers_[i]);
      workers_.erase(workers_.begin() + static_cast<std::ptrdiff_t>(i));
      reap(gone);
    }
  }

  // Reads what the worker has written; false at its end (EOF).
  bool drain(Worker& w) {
    char chunk[1 << 16];
    while (true) {
      const ssize_t n = ::read(w.fd, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
      if (n < 0) throw SimulationError(std::string("run pool: read: ") + std::strerror(errno));
      if (n == 0) return false;
      w.buffer.append(chunk, static_cast<std::size_t>(n));
      parse_frames(w);
    }
  }

  void parse_frames(Worker& w) {
    constexpr std::size_t head = 1 + sizeof(std::uint64_t);
    std::size_t at = 0;
    while (w.buffer.size() - at >= head) {
      std::uint64_t size = 0;
      std::memcpy(&size, w.buffer.data() + at + 1, sizeof size);
      if (w.buffer.size() - at - head < size) break;
      const char kind = w.buffer[at];
      const std::string_view payload(w.buffer.data() + at + head, size);
      at += head + size;
      if (!w.task) continue;  // nothing is asked of it (cannot happen)
      const std::size_t task = *w.task;
      if (kind == kProgress && size == sizeof(ProgressFrame)) {
        ProgressFrame f{};
        std::memcpy(&f, payload.data(), sizeof f);
        RunProgress p;
        p.done = f.done, p.target = f.target, p.adaptive = f.adaptive != 0,
        p.finished = f.finished != 0;
        if (options_.progress) options_.progress(task, p);
      } else if (kind == kResult) {
        TaskOutcome& out = outcomes_[task];
        out.ok = true;
        out.value = Json::from_cbor(payload.begin(), payload.end());
        w.task.reset();
        finish(task);
      } else if (kind == kError) {
        TaskOutcome& out = outcomes_[task];
        const auto zero = payload.find('\0');
        out.error_type = std::string(payload.substr(0, zero));
        out.message = zero == std::string_view::npos ? "" : std::string(payload.substr(zero + 1));
        w.task.reset();
        w.retiring = true;  // it ends after an error
        finish(task);
      }
    }
    w.buffer.erase(0, at);
  }

  void finish(std::size_t task) {
    const TaskOutcome& out = outcomes_[task];
    if (!out.ok) failed_ = true;
    if (options_.finished) options_.finished(task, out);
  }

  // The worker has closed its pipe: reap it; a task it had not answered
  // crashed it.
  void reap(Worker& w) {
    const int status = close_and_wait(w);
    if (!w.task) return;
    TaskOutcome& out = outcomes_[*w.task];
    out.error_type = "SimulationError";
    out.message = describe_status(status);
    finish(*w.task);
  }

  // Its pipes closed, its exit waited for: its status.
  static int close_and_wait(Worker& w) {
    ::close(w.fd);
    ::close(w.cmd);
    int status = 0;
    while (::waitpid(w.pid, &status, 0) < 0 && errno == EINTR) {
    }
    return status;
  }

  static void end(Worker& w) {
    ::kill(w.pid, SIGKILL);
    close_and_wait(w);
  }

  // A worker whose task is abandoned is ended with it (a fresh one takes the
  // next task).
  void end_abandoned() {
    if (!options_.abandoned) return;
    for (std::size_t i = workers_.size(); i-- > 0;) {
      if (!workers_[i].task || !options_.abandoned(*workers_[i].task)) continue;
      end(workers_[i]);
      workers_.erase(workers_.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }

  // The workers left: idle ones at the end (closing their command pipe would
  // do; they wait in read(), so a kill is as clean and does not wait for them),
  // or any after an exception.
  void kill_all() {
    for (auto& w : workers_) end(w);
    workers_.clear();
  }

  const std::vector<std::function<Json()>>& tasks_;
  const PoolOptions& options_;
  std::vector<TaskOutcome> outcomes_;
  std::vector<Worker> workers_;
  bool failed_ = false;
};

}  // namespace

std::vector<TaskOutcome> run_pool(const std::vector<std::function<Json()>>& tasks,
                                  const std::vector<std::size_t>& order,
                                  const PoolOptions& options) {
  std::size_t next = 0;
  return run_pool_picked(
      tasks,
      [&]() -> std::optional<std::size_t> {
        if (next == order.size()) return std::nullopt;
        return order[next++];
      },
      options);
}

std::vector<TaskOutcome> run_pool_picked(const std::vector<std::function<Json()>>& tasks,
                                         const std::function<std::optional<std::size_t>()>& pick,
                                         const PoolOptions& options) {
  Pool pool(tasks, options);  // its destructor ends the workers, idle or left by an exception
  return pool.run(pick);
}

}  // namespace semsim::driver
