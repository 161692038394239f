// Real SysV semaphore arrays for the native runner: the key scheme that marks an
// array as ours, an RAII owner that removes it, and a scan of the host's arrays.
//
// Key scheme: key = ('S' << 24) | (creating pid & 0xFFFFFF). The top byte says
// "semsim native runner", the low 24 bits name the process that created it
// (Linux's pid_max is at most 2^22, so a pid always fits). Anyone can then tell
// whether the creator is still alive, and remove an array whose creator died
// without cleaning up (SIGKILL, a crash): see cleanup_leftovers(). One key per
// process means one runner array per process at a time; measure() serialises
// itself to keep it so.
#pragma once

#include <sys/types.h>

#include <vector>

namespace semsim::native {

// The key of the runner array created by process `pid`.
key_t runner_key(pid_t pid);

// True when `key` follows the runner scheme (top byte 'S').
bool is_runner_key(key_t key);

// The creating pid encoded in a runner key.
pid_t runner_key_pid(key_t key);

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

// SEMMSL, the most semaphores one array may hold, from /proc/sys/kernel/sem (semctl
// IPC_INFO when /proc is unreadable).
int semmsl();

// Owns one SysV array created with this process's runner key, all values 0. The
// destructor removes it (IPC_RMID) on every path, exceptions included.
class SemArray {
 public:
  // Creates an array of `nsems` semaphores with key runner_key(getpid()), mode 0600,
  // IPC_CREAT|IPC_EXCL. A stale array already holding that key (a dead process that had
  // our pid) is removed first. Throws SimulationError when the kernel refuses.
  explicit SemArray(int nsems);
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
