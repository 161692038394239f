#include "native/sysv_array.hpp"

#include <sys/ipc.h>
#include <sys/sem.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

#include "core/errors.hpp"
#include "native/host_error.hpp"
#include "native/ownership.hpp"

namespace semsim::native {

namespace {

// glibc leaves the fourth semctl argument for the caller to declare (semctl(2)).
union Semun {
  int val;
  struct semid_ds* buf;
  unsigned short* array;
  struct seminfo* info;
};

constexpr key_t kRunnerTag = static_cast<key_t>('S') << 24;
constexpr key_t kTagMask = static_cast<key_t>(0xFF) << 24;
constexpr int kIndexShift = 22;
constexpr key_t kPidMask = (static_cast<key_t>(1) << kIndexShift) - 1;

std::string errno_text(int err) { return std::string(std::strerror(err)); }

}  // namespace

key_t runner_key(pid_t pid, int index) {
  return kRunnerTag | (static_cast<key_t>(index & (kMaxArraysPerProcess - 1)) << kIndexShift) |
         (static_cast<key_t>(pid) & kPidMask);
}

bool is_runner_key(key_t key) { return (key & kTagMask) == kRunnerTag; }

pid_t runner_key_pid(key_t key) { return static_cast<pid_t>(key & kPidMask); }

int runner_key_index(key_t key) {
  return static_cast<int>((key >> kIndexShift) & (kMaxArraysPerProcess - 1));
}

std::vector<ArrayInfo> list_arrays() {
  std::vector<ArrayInfo> out;
  struct seminfo info {};
  Semun arg{};
  arg.info = &info;
  // SEM_INFO returns the highest index in use in the kernel's array of sets.
  const int highest = semctl(0, 0, SEM_INFO, arg);
  if (highest < 0) return out;
  for (int index = 0; index <= highest; ++index) {
    struct semid_ds ds {};
    Semun stat_arg{};
    stat_arg.buf = &ds;
    // SEM_STAT takes an index, not an id, and returns the id of the set there.
    const int id = semctl(index, 0, SEM_STAT, stat_arg);
    if (id < 0) continue;  // free slot (EINVAL) or not readable by us (EACCES)
    out.push_back(ArrayInfo{id, ds.sem_perm.__key, ds.sem_nsems, ds.sem_perm.cuid});
  }
  return out;
}

SemLimits sem_limits() {
  // /proc/sys/kernel/sem: SEMMSL SEMMNS SEMOPM SEMMNI.
  SemLimits l;
  std::ifstream in("/proc/sys/kernel/sem");
  long msl = 0, mns = 0, opm = 0, mni = 0;
  if (in >> msl >> mns >> opm >> mni && msl > 0 && opm > 0 && mni > 0) {
    l.semmsl = static_cast<int>(msl);
    l.semmns = mns;
    l.semopm = static_cast<int>(opm);
    l.semmni = static_cast<int>(mni);
    return l;
  }
  struct seminfo info {};
  Semun arg{};
  arg.info = &info;
  if (semctl(0, 0, IPC_INFO, arg) >= 0 && info.semmsl > 0) {
    l.semmsl = info.semmsl;
    l.semmns = info.semmns;
    l.semopm = info.semopm;
    l.semmni = info.semmni;
    return l;
  }
  throw SimulationError(
      "cannot read the semaphore limits from /proc/sys/kernel/sem or semctl(IPC_INFO)");
}

int semmsl() { return sem_limits().semmsl; }

SemArray::SemArray(int nsems, int index, const std::vector<int>& initial) {
  open_ownership_record();
  const key_t key = runner_key(getpid(), index);
  id_ = semget(key, nsems, IPC_CREAT | IPC_EXCL | 0600);
  key_t used = key;
  if (id_ < 0 && errno == EEXIST) {
    // The key is taken. Perhaps by a runner that had our pid and was killed: cleanup
    // removes its array if the records prove it. Otherwise it belongs to someone else
    // (an ftok(path, 'S') key, say), which we never touch: we go without a key.
    cleanup_recorded();
    id_ = semget(key, nsems, IPC_CREAT | IPC_EXCL | 0600);
    if (id_ < 0 && errno == EEXIST) {
      used = IPC_PRIVATE;
      id_ = semget(IPC_PRIVATE, nsems, IPC_CREAT | 0600);
    }
  }
  if (id_ < 0) {
    const int err = errno;
    const std::string what = "semget of " + std::to_string(nsems) +
                             " semaphores failed: " + errno_text(err);
    if (err == ENOSPC)
      throw HostError(what + " (SEMMNS or SEMMNI, /proc/sys/kernel/sem, reached: other "
                             "programs' arrays count too; see ipcs -s)");
    throw SimulationError(what);
  }
  if (!record_array(id_, used)) {
    semctl(id_, 0, IPC_RMID);
    id_ = -1;
    throw HostError("the record of semsim's arrays in " + ownership_dir() + " is full");
  }
  // Linux initialises a new set's values to 0, but say so explicitly: every workload
  // starts from known values (all zeros unless the scenario gives them).
  std::vector<unsigned short> values(static_cast<std::size_t>(nsems), 0);
  for (std::size_t i = 0; i < initial.size() && i < values.size(); ++i)
    values[i] = static_cast<unsigned short>(initial[i]);
  Semun arg{};
  arg.array = values.data();
  if (semctl(id_, 0, SETALL, arg) < 0) {
    const int err = errno;
    semctl(id_, 0, IPC_RMID);
    forget_array(id_);
    id_ = -1;
    throw SimulationError("semctl(SETALL) on a new array failed: " + errno_text(err));
  }
  stamp_array(id_);  // after SETALL, which sets sem_ctime
}

SemArray::~SemArray() {
  // EINVAL/EIDRM here means it is already gone; nothing more we can do in a destructor.
  if (id_ >= 0) {
    semctl(id_, 0, IPC_RMID);
    forget_array(id_);
  }
}

int SemArray::release() {
  const int id = id_;
  id_ = -1;
  return id;
}

}  // namespace semsim::native
