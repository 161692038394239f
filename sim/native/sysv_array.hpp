// Real SysV semaphore arrays for the native runner: the key scheme, an RAII owner
// that removes its array, and a scan of the host's arrays.
//
// Key scheme: key = ('S' << 24) | (index << 22) | pid, so that `ipcs -s` shows which
// process an array belongs to (Linux's pid_max is at most 2^22, so a pid fits; the two
// bits between number a process's arrays, at most kMaxArraysPerProcess at a time). A
// key proves nothing, though: any program may use such a key (ftok(path, 'S') makes
// them). What is ours is what the ownership record (ownership.hpp) says we created, and
// cleanup goes by that record only. When our key is taken by someone else's array, the
// array is made without a key (IPC_PRIVATE) and the other one is left alone.
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
  // Creates an array of `nsems` semaphores with key runner_key(getpid(), index) (or no
  // key when another array holds it), mode 0600, records it (ownership.hpp) and sets it
  // to `initial` (one value per semaphore; empty: all 0). Throws HostError when the
  // kernel's limits are used up or the record cannot be kept, SimulationError when
  // the kernel refuses otherwise.
  explicit SemArray(int nsems, int index = 0, const std::vector<int>& initial = {});
  ~SemArray();
  SemArray(const SemArray&) = delete;
  SemArray& operator=(const SemArray&) = delete;

  int id() const { return id_; }

  // Gives up ownership without removing (the caller removes it and forgets its record,
  // forget_array). Returns the id.
  int release();

 private:
  int id_ = -1;
};

}  // namespace semsim::native
