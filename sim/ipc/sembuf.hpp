// SysV semaphore operations as user space passes them to semop(2), with Linux's
// flag values and limits. Shared by the simulator's semantics, the generations
// and the native runner.
#pragma once

#include <cstdint>

namespace semsim::ipc {

struct Sembuf {
  int sem_num = 0;  // index in the array
  int sem_op = 0;   // > 0 add, < 0 subtract (may block), 0 wait for zero
  int sem_flg = 0;  // kIpcNowait | kSemUndo
};

constexpr int kIpcNowait = 04000;  // IPC_NOWAIT, as in <linux/ipc.h>
constexpr int kSemUndo = 0x1000;   // SEM_UNDO, as in <linux/sem.h>

constexpr int kSemvmx = 32767;       // SEMVMX: largest semaphore value
constexpr int kSemaem = kSemvmx;     // SEMAEM: largest adjust-on-exit value
constexpr int kSemopmDefault = 500;  // SEMOPM default since 3.19 (was 32)
constexpr int kSemmslDefault = 32000;

}  // namespace semsim::ipc
