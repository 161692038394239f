// Real SysV semaphore arrays for the native runner: the key scheme that marks an
// array as ours, an RAII owner that removes it, and a scan of the host's arrays.
//
// Key scheme: key = ('S' << 24) | (index << 22) | pid. The top byte says "semsim
// native runner", the low 22 bits name the process the array belongs to (Linux's
// pid_max is at most 2^22, PID_MAX_LIMIT, so a pid always fits) and the two bits
// between number its arrays: a process holds at most kMaxArraysPerProcess runner
// arrays at a time (sembench needs one per 250 workers). Anyone can then tell whether
// the owner is still alive, and remove an array whose owner died without cleaning up
// (SIGKILL, a crash): see cleanup_leftovers(). measure() serialises itself so that
// one process never runs two measurements at once. Forked task processes that create
// arrays of their own (aim9-shm) key them with their own pid.
#pragma once

#include <sys/types.h>

#include <vector>

namespace semsim::native {

constexpr int kMaxArraysPerProcess = 4;

// The key of runner array number `index` (0 .. kMaxArraysPerProcess-1) of process `pid`.
key_t runner_key(pid_t pid, int index = 0);

// True when `key` follows the runner scheme (top byte 'S').
bool is_runner_key(key_t key);

// The owning pid and the array index encoded in a runner key.
pid_t runner_key_pid(key_t key);
int runner_key_index(key_t key);

// One SysV semaphore array present on the host, as SEM_STAT reports it.
struct ArrayInfo {
  int id = -1;  // semid, usable with semctl/semop
  key_t key = 0;
  unsigned long nsems = 0;
  uid_t cuid = 0;  // creator's uid
};

// Every array this process may stat (SEM_STAT over 0..highest index of SEM_INFO).
// Arrays we cannot read (EACCES) are skipped; they are not ours.
std::vector<ArrayInfo> list_arrays();

// The host's SysV semaphore limits: /proc/sys/kernel/sem ("SEMMSL SEMMNS SEMOPM
// SEMMNI"), or semctl(IPC_INFO) when /proc is unreadable.
struct SemLimits {
  int semmsl = 0;   // semaphores per array
  long semmns = 0;  // semaphores in all arrays
  int semopm = 0;   // sops per semop() call
  int semmni = 0;   // arrays
};
SemLimits sem_limits();

// SEMMSL alone (sem_limits().semmsl).
int semmsl();

// Owns one SysV array created with this process's runner key, all values 0. The
// destructor removes it (IPC_RMID) on every path, exceptions included.
class SemArray {
 public:
  // Creates an array of `nsems` semaphores with key runner_key(getpid(), index), mode
  // 0600, IPC_CREAT|IPC_EXCL, and sets it to `initial` (one value per semaphore; empty:
  // all 0). A stale array already holding that key (a dead process that had our pid) is
  // removed first. Throws SimulationError when the kernel refuses.
  explicit SemArray(int nsems, int index = 0, const std::vector<int>& initial = {});
  ~SemArray();
  SemArray(const SemArray&) = delete;
  SemArray& operator=(const SemArray&) = delete;

  int id() const { return id_; }

  // Gives up ownership without removing (someone else, e.g. a signal handler, already
  // removed it). Returns the id.
  int release();

 private:
  int id_ = -1;
};

}  // namespace semsim::native
