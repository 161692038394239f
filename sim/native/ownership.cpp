#include "native/ownership.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/sem.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "native/host_error.hpp"

namespace semsim::native {

namespace {

union Semun {
  int val;
  struct semid_ds* buf;
};

constexpr char kMagic[8] = {'S', 'E', 'M', 'S', 'I', 'M', 'R', '1'};
// 8192 records of 32 bytes (256 KiB). One record per array alive at once: a run holds
// at most a few runner arrays plus one per task process (at most 4096 tasks).
constexpr std::uint32_t kSlots = 1u << 13;

enum SlotState : std::int32_t { kFree = 0, kWriting = 1, kLive = 2 };

// Every field atomic (relaxed, published by the release store of `state`): records are
// read by other threads and processes while their owner writes its own.
struct Slot {
  std::atomic<std::int32_t> state;
  std::atomic<std::int32_t> id;
  std::atomic<std::int32_t> key;
  std::atomic<std::int32_t> creator;
  std::atomic<std::int64_t> creator_start;  // /proc/<pid>/stat starttime, ticks since boot
  std::atomic<std::int64_t> ctime;          // sem_ctime when stamped, 0: not stamped
};
static_assert(sizeof(Slot) == 32);
static_assert(std::atomic<std::int32_t>::is_always_lock_free);
static_assert(std::atomic<std::int64_t>::is_always_lock_free);

struct Header {
  char magic[8];
  char boot_id[40];  // /proc/sys/kernel/random/boot_id: arrays do not outlive a boot
  std::int32_t owner;
  std::int32_t slots;
  std::int64_t owner_start;
  std::int64_t opened_s;  // CLOCK_REALTIME seconds when the file was made
  char pad[64 - 8 - 40 - 4 - 4 - 8 - 8 + 64];
};
static_assert(sizeof(Header) == 128);

constexpr std::size_t kFileBytes = sizeof(Header) + sizeof(Slot) * kSlots;

// This process's record (inherited by forked task processes).
Header* g_header = nullptr;
Slot* g_slots = nullptr;
std::mutex g_open_mutex;

// Reads a small file into buf (NUL-terminated); async-signal-safe. Returns the length or -1.
long read_small(const char* path, char* buf, std::size_t size) {
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  std::size_t got = 0;
  while (got + 1 < size) {
    const ssize_t n = read(fd, buf + got, size - 1 - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  close(fd);
  buf[got] = '\0';
  return static_cast<long>(got);
}

// "/proc/<pid>/stat" without allocating; async-signal-safe.
void stat_path(pid_t pid, char* out) {
  char digits[16];
  int n = 0;
  for (unsigned v = static_cast<unsigned>(pid); n == 0 || v != 0; v /= 10)
    digits[n++] = static_cast<char>('0' + v % 10);
  const char* head = "/proc/";
  std::size_t i = 0;
  for (; head[i] != '\0'; ++i) out[i] = head[i];
  while (n > 0) out[i++] = digits[--n];
  const char* tail = "/stat";
  for (std::size_t k = 0; tail[k] != '\0'; ++k) out[i++] = tail[k];
  out[i] = '\0';
}

// State letter and start time of a process from /proc/<pid>/stat. False when unreadable.
bool proc_stat(pid_t pid, char* state, std::int64_t* start) {
  char path[40];
  stat_path(pid, path);
  char buf[1024];
  if (read_small(path, buf, sizeof(buf)) <= 0) return false;
  // Fields after the command name, which may itself hold ')' and spaces: from the last ')'.
  const char* p = std::strrchr(buf, ')');
  if (p == nullptr || p[1] != ' ') return false;
  p += 2;
  *state = *p;
  // starttime is field 22; the state is field 3.
  int field = 3;
  while (*p != '\0' && field < 22) {
    if (*p == ' ') ++field;
    ++p;
  }
  if (field != 22) return false;
  std::int64_t v = 0;
  while (*p >= '0' && *p <= '9') v = v * 10 + (*p++ - '0');
  *start = v;
  return true;
}

// This process's pid, without a system call per record (aim9-shm records an array per
// operation): set when the record is opened and, in a forked child, by the atfork hook.
std::atomic<pid_t> g_pid{0};
extern "C" void on_fork_child() { g_pid.store(getpid()); }

pid_t own_pid() {
  const pid_t p = g_pid.load(std::memory_order_relaxed);
  return p != 0 ? p : getpid();
}

// The calling process's start time, cached per pid (a forked child computes its own).
std::int64_t own_start() {
  static std::atomic<pid_t> cached_pid{0};
  static std::atomic<std::int64_t> cached_start{0};
  const pid_t me = own_pid();
  if (cached_pid.load() == me) return cached_start.load();
  char state = 0;
  std::int64_t start = 0;
  if (!proc_stat(me, &state, &start)) start = 0;
  cached_start.store(start);
  cached_pid.store(me);
  return start;
}

// Gone: no process with that pid, another process under it (a different start time),
// or a zombie (it has exited; only its parent's wait is missing).
bool creator_gone(pid_t pid, std::int64_t start) {
  if (pid <= 0) return false;
  char state = 0;
  std::int64_t now_start = 0;
  if (proc_stat(pid, &state, &now_start)) {
    if (state == 'Z' || state == 'X') return true;
    return start != 0 && now_start != start;
  }
  // No /proc entry: only ESRCH proves it is gone (no /proc mounted: keep it).
  return kill(pid, 0) != 0 && errno == ESRCH;
}

std::string boot_id() {
  char buf[64];
  if (read_small("/proc/sys/kernel/random/boot_id", buf, sizeof(buf)) <= 0) return "";
  std::string id(buf);
  while (!id.empty() && (id.back() == '\n' || id.back() == ' ')) id.pop_back();
  return id.substr(0, 39);
}

std::int64_t realtime_s() {
  struct timespec ts {};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec);
}

// Opens the directory as a directory we own with no group/other access.
int open_safe_dir(const std::string& dir) {
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    throw HostError("cannot create the directory of semsim's array records " + dir + ": " +
                    std::strerror(errno));
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    throw HostError("cannot open the directory of semsim's array records " + dir +
                    " (it must be a directory, not a symlink): " + std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0 || st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
    close(fd);
    throw HostError("the directory of semsim's array records " + dir +
                    " must belong to this user with mode 0700 (chmod 700, or remove it)");
  }
  return fd;
}

Header* map_file(int fd, bool writable) {
  void* p =
      mmap(nullptr, kFileBytes, writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd, 0);
  return p == MAP_FAILED ? nullptr : static_cast<Header*>(p);
}

Slot* slots_of(Header* h) {
  return reinterpret_cast<Slot*>(reinterpret_cast<unsigned char*>(h) + sizeof(Header));
}

std::string file_name(pid_t pid, std::int64_t start) {
  return std::to_string(pid) + "-" + std::to_string(start) + ".arrays";
}

// Settles one live record of another (or this) process: removes the array when the
// proof holds, drops the record when the array is gone or is not the recorded one.
bool settle(Slot& s, std::int64_t fallback_ctime) {
  if (s.state.load(std::memory_order_acquire) != kLive) return false;
  const int id = s.id;
  const key_t key = s.key;
  const pid_t creator = s.creator;
  const std::int64_t start = s.creator_start;
  const std::int64_t stamped = s.ctime;
  const std::int64_t ctime = stamped != 0 ? stamped : fallback_ctime;
  if (!creator_gone(creator, start)) return false;
  struct semid_ds ds {};
  Semun arg{};
  arg.buf = &ds;
  bool removed = false;
  if (semctl(id, 0, IPC_STAT, arg) == 0) {
    const bool ours = ds.sem_perm.__key == key && ds.sem_perm.cuid == geteuid() &&
                      static_cast<std::int64_t>(ds.sem_ctime) >= ctime;
    if (ours) removed = semctl(id, 0, IPC_RMID) == 0;
  } else if (errno == EACCES || errno == EPERM) {
    return false;  // an array under that id we may not even read: not ours, keep the record
  }
  std::int32_t live = kLive;
  s.state.compare_exchange_strong(live, kFree);
  return removed;
}

}  // namespace

std::string ownership_dir() {
  const char* xdg = std::getenv("XDG_RUNTIME_DIR");
  if (xdg != nullptr && xdg[0] == '/') {
    struct stat st {};
    if (stat(xdg, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid())
      return std::string(xdg) + "/semsim";
  }
  return "/tmp/semsim-" + std::to_string(geteuid());
}

void open_ownership_record() {
  std::lock_guard<std::mutex> lock(g_open_mutex);
  if (g_header != nullptr) return;
  static const bool hooked = pthread_atfork(nullptr, nullptr, on_fork_child) == 0;
  (void)hooked;
  g_pid.store(getpid());
  const std::string dir = ownership_dir();
  const int dfd = open_safe_dir(dir);
  const pid_t me = getpid();
  const std::int64_t start = own_start();
  const std::string name = file_name(me, start);
  unlinkat(dfd, name.c_str(), 0);  // a leftover of this very process (cannot hold live arrays)
  const int fd =
      openat(dfd, name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  const int err = errno;
  close(dfd);
  if (fd < 0)
    throw HostError("cannot create the record of semsim's arrays in " + dir + ": " +
                    std::strerror(err));
  Header* h = nullptr;
  if (ftruncate(fd, static_cast<off_t>(kFileBytes)) == 0) h = map_file(fd, true);
  const int map_err = errno;
  close(fd);
  if (h == nullptr)
    throw HostError("cannot map the record of semsim's arrays in " + dir + ": " +
                    std::strerror(map_err));
  const std::string boot = boot_id();
  std::memcpy(h->boot_id, boot.c_str(), boot.size() + 1);
  h->owner = me;
  h->slots = static_cast<std::int32_t>(kSlots);
  h->owner_start = start;
  h->opened_s = realtime_s();
  std::memcpy(h->magic, kMagic, sizeof(kMagic));
  g_slots = slots_of(h);
  g_header = h;
}

bool record_array(int id, key_t key) {
  if (g_slots == nullptr) return false;
  const pid_t me = own_pid();
  const std::uint32_t first = static_cast<std::uint32_t>(me) * 2654435761u % kSlots;
  for (std::uint32_t k = 0; k < kSlots; ++k) {
    Slot& s = g_slots[(first + k) % kSlots];
    std::int32_t free = kFree;
    if (!s.state.compare_exchange_strong(free, kWriting)) continue;
    s.id = id;
    s.key = key;
    s.creator = me;
    s.creator_start = own_start();
    s.ctime = 0;
    s.state.store(kLive, std::memory_order_release);
    return true;
  }
  return false;
}

namespace {
Slot* find_live(int id) {
  if (g_slots == nullptr) return nullptr;
  const pid_t me = own_pid();
  const std::uint32_t first = static_cast<std::uint32_t>(me) * 2654435761u % kSlots;
  for (std::uint32_t k = 0; k < kSlots; ++k) {
    Slot& s = g_slots[(first + k) % kSlots];
    if (s.state.load(std::memory_order_acquire) == kLive && s.id == id && s.creator == me)
      return &s;
  }
  return nullptr;
}
}  // namespace

void stamp_array(int id) {
  Slot* s = find_live(id);
  if (s == nullptr) return;
  struct semid_ds ds {};
  Semun arg{};
  arg.buf = &ds;
  if (semctl(id, 0, IPC_STAT, arg) == 0) s->ctime = static_cast<std::int64_t>(ds.sem_ctime);
}

void forget_array(int id) {
  Slot* s = find_live(id);
  if (s == nullptr) return;
  std::int32_t live = kLive;
  s->state.compare_exchange_strong(live, kFree);
}

int cleanup_recorded() {
  const std::string dir = ownership_dir();
  struct stat st {};
  if (lstat(dir.c_str(), &st) != 0) return 0;  // nothing was ever recorded here
  const int dfd = open_safe_dir(dir);
  DIR* d = fdopendir(dfd);
  if (d == nullptr) {
    close(dfd);
    return 0;
  }
  const std::string boot = boot_id();
  const std::string mine =
      g_header != nullptr ? file_name(g_header->owner, g_header->owner_start) : "";
  int removed = 0;
  while (struct dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name.size() < 8 || name.substr(name.size() - 7) != ".arrays") continue;
    const int fd = openat(dfd, name.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) continue;
    struct stat fst {};
    Header* h = nullptr;
    if (fstat(fd, &fst) == 0 && S_ISREG(fst.st_mode) && fst.st_uid == geteuid() &&
        static_cast<std::size_t>(fst.st_size) == kFileBytes)
      h = map_file(fd, true);
    close(fd);
    if (h == nullptr) continue;  // not a record file of ours: leave it
    const bool valid = std::memcmp(h->magic, kMagic, sizeof(kMagic)) == 0 &&
                       h->slots == static_cast<std::int32_t>(kSlots);
    if (!valid) {
      munmap(h, kFileBytes);
      continue;
    }
    // Records of an earlier boot: their arrays died with it, and their ids mean nothing.
    const bool stale_boot =
        boot.empty() || std::string(h->boot_id, strnlen(h->boot_id, 39)) != boot;
    Slot* slots = slots_of(h);
    bool any_live = false;
    for (std::uint32_t i = 0; i < kSlots; ++i) {
      Slot& s = slots[i];
      if (s.state.load(std::memory_order_acquire) == kFree) continue;
      if (stale_boot) {
        s.state.store(kFree);
        continue;
      }
      if (settle(s, h->opened_s)) ++removed;
      if (s.state.load(std::memory_order_acquire) != kFree) any_live = true;
    }
    const bool owner_gone = name != mine && (stale_boot || creator_gone(h->owner, h->owner_start));
    munmap(h, kFileBytes);
    if (owner_gone && !any_live) unlinkat(dfd, name.c_str(), 0);
  }
  closedir(d);
  return removed;
}

}  // namespace semsim::native
