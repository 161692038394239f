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

void write_all(int fd, const void* data, std::size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) ::_exit(1);  // the caller is gone: nothing to report to
    p += n;
    size -= static_cast<std::size_t>(n);
  }
}

void write_frame(int fd, char kind, const void* data, std::uint64_t size) {
  char head[1 + sizeof size];
  head[0] = kind;
  std::memcpy(head + 1, &size, sizeof size);
  write_all(fd, head, sizeof head);
  write_all(fd, data, size);
}

[[noreturn]] void child_main(int fd, pid_t parent, const std::function<Json()>& task, bool report) {
  // Ctrl-C reaches the whole process group: end at once (the caller's Python
  // handler, inherited, would only set a flag nobody reads here). And end
  // with the caller, whichever way it ends.
  ::signal(SIGINT, SIG_DFL);
  ::signal(SIGPIPE, SIG_DFL);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(1);  // the caller ended before the line above
  using Clock = std::chrono::steady_clock;
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
    const std::vector<std::uint8_t> bytes = Json::to_cbor(task());
    write_frame(fd, kResult, bytes.data(), bytes.size());
    ::_exit(0);
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

struct Child {
  pid_t pid = -1;
  int fd = -1;
  std::size_t task = 0;
  std::string buffer;
  bool answered = false;
};

std::string describe_status(int status) {
  if (WIFSIGNALED(status)) {
    const char* name = ::sigabbrev_np(WTERMSIG(status));
    return std::string("the run's process was killed by SIG") + (name ? name : "?");
  }
  return "the run's process exited with status " + std::to_string(WEXITSTATUS(status)) +
         " without a result";
}

class Pool {
 public:
  Pool(const std::vector<std::function<Json()>>& tasks, const PoolOptions& options)
      : tasks_(tasks), options_(options), outcomes_(tasks.size()) {}
  ~Pool() { kill_all(); }

  std::vector<TaskOutcome> run(const std::function<std::optional<std::size_t>()>& pick) {
    const std::size_t jobs = static_cast<std::size_t>(std::max(1, options_.jobs));
    while (true) {
      while (children_.size() < jobs && !(failed_ && options_.stop_on_error)) {
        const auto task = pick();
        if (!task) break;
        start(*task);
      }
      if (children_.empty()) break;
      wait_once();
      end_abandoned();
      if (options_.poll) options_.poll();
    }
    return std::move(outcomes_);
  }

 private:
  void start(std::size_t task) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0)
      throw SimulationError(std::string("run pool: pipe: ") + std::strerror(errno));
    const pid_t self = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) {
      ::close(fds[0]);
      ::close(fds[1]);
      throw SimulationError(std::string("run pool: fork: ") + std::strerror(errno));
    }
    if (pid == 0) {
      ::close(fds[0]);
      for (const auto& c : children_) ::close(c.fd);
      child_main(fds[1], self, tasks_[task], static_cast<bool>(options_.progress));
    }
    ::close(fds[1]);
    // Non-blocking: one child's pipe never holds up the others'.
    ::fcntl(fds[0], F_SETFL, ::fcntl(fds[0], F_GETFL) | O_NONBLOCK);
    children_.push_back(Child{pid, fds[0], task, {}, false});
  }

  void wait_once() {
    std::vector<pollfd> fds;
    for (const auto& c : children_) fds.push_back(pollfd{c.fd, POLLIN, 0});
    const int n = ::poll(fds.data(), fds.size(), 100);
    if (n < 0 && errno != EINTR)
      throw SimulationError(std::string("run pool: poll: ") + std::strerror(errno));
    if (n <= 0) return;
    for (std::size_t i = fds.size(); i-- > 0;) {
      if (fds[i].revents == 0 || drain(children_[i])) continue;
      Child done = std::move(children_[i]);
      children_.erase(children_.begin() + static_cast<std::ptrdiff_t>(i));
      finish(done);
    }
  }

  // Reads what the child has written; false at its end (EOF).
  bool drain(Child& c) {
    char chunk[1 << 16];
    while (true) {
      const ssize_t n = ::read(c.fd, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
      if (n < 0) throw SimulationError(std::string("run pool: read: ") + std::strerror(errno));
      if (n == 0) return false;
      c.buffer.append(chunk, static_cast<std::size_t>(n));
      parse_frames(c);
    }
  }

  void parse_frames(Child& c) {
    constexpr std::size_t head = 1 + sizeof(std::uint64_t);
    std::size_t at = 0;
    while (c.buffer.size() - at >= head) {
      std::uint64_t size = 0;
      std::memcpy(&size, c.buffer.data() + at + 1, sizeof size);
      if (c.buffer.size() - at - head < size) break;
      const char kind = c.buffer[at];
      const std::string_view payload(c.buffer.data() + at + head, size);
      at += head + size;
      if (kind == kProgress && size == sizeof(ProgressFrame)) {
        ProgressFrame f{};
        std::memcpy(&f, payload.data(), sizeof f);
        RunProgress p;
        p.done = f.done, p.target = f.target, p.adaptive = f.adaptive != 0,
        p.finished = f.finished != 0;
        if (options_.progress) options_.progress(c.task, p);
      } else if (kind == kResult) {
        TaskOutcome& out = outcomes_[c.task];
        out.ok = true;
        out.value = Json::from_cbor(payload.begin(), payload.end());
        c.answered = true;
      } else if (kind == kError) {
        TaskOutcome& out = outcomes_[c.task];
        const auto zero = payload.find('\0');
        out.error_type = std::string(payload.substr(0, zero));
        out.message = zero == std::string_view::npos ? "" : std::string(payload.substr(zero + 1));
        c.answered = true;
      }
    }
    c.buffer.erase(0, at);
  }

  // The child has closed its pipe: reap it and record its outcome (a child
  // that ended without one crashed).
  void finish(Child& c) {
    ::close(c.fd);
    int status = 0;
    while (::waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
    }
    TaskOutcome& out = outcomes_[c.task];
    if (!c.answered) {
      out.error_type = "SimulationError";
      out.message = describe_status(status);
    }
    if (!out.ok) failed_ = true;
    if (options_.finished) options_.finished(c.task, out);
  }

  static void end(Child& c) {
    ::kill(c.pid, SIGKILL);
    ::close(c.fd);
    int status = 0;
    while (::waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
    }
  }

  void end_abandoned() {
    if (!options_.abandoned) return;
    for (std::size_t i = children_.size(); i-- > 0;) {
      if (!options_.abandoned(children_[i].task)) continue;
      end(children_[i]);
      children_.erase(children_.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }

  void kill_all() {
    for (auto& c : children_) end(c);
    children_.clear();
  }

  const std::vector<std::function<Json()>>& tasks_;
  const PoolOptions& options_;
  std::vector<TaskOutcome> outcomes_;
  std::vector<Child> children_;
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
  Pool pool(tasks, options);  // its destructor ends the children an exception leaves
  return pool.run(pick);
}

}  // namespace semsim::driver
