// The semantics of one semop() that every simulated kernel generation shares:
// argument checks and the all-or-nothing application of a set of sops.
//
// These are the pieces of ipc/sem.c that did not change across the generations
// we replay (3.9 to 6.x); the generations differ in locking, queueing and wakeup
// order, which live elsewhere. Every function here is pure and allocation-free,
// because the simulator calls them on every simulated semop.
//
// Results follow the kernel's convention: 0 (or a positive code) for success,
// -errno for an error.
#pragma once

#include <cstddef>
#include <span>

#include "ipc/sembuf.hpp"

namespace semsim::ipc {

// perform_atomic_semop() outcomes besides 0 (done) and -errno.
constexpr int kSemopBlock = 1;  // the caller must sleep; nothing was changed

// The nsops checks of semtimedop(), done before the array is looked up:
// nsops > semopm -> -E2BIG; nsops < 1 -> -EINVAL. Returns 0 or -errno.
int check_semop_nsops(std::size_t nsops, int semopm);

// Argument checks of semtimedop() that do not need the array lock, in the
// kernel's order: the nsops checks above, then (after the array lookup, which
// the caller models) max sem_num >= nsems -> -EFBIG. A negative sem_num counts
// as out of range: user space passes an unsigned short, which the kernel would
// see as a value above any nsems it allows. Returns 0 or -errno.
int check_semop_args(std::span<const Sembuf> sops, int nsems, int semopm);

// True if the operation alters the array (any sem_op != 0); false for a pure
// wait-for-zero operation, which never wakes anybody.
bool sops_alter(std::span<const Sembuf> sops);

// True if the operation has a SEM_UNDO sop, so the caller needs its process's
// undo adjustments (find_alloc_undo()).
bool sops_undo(std::span<const Sembuf> sops);

// perform_atomic_semop(): applies all sops or none.
//
// semval: the array's values. semadj: the calling process's undo adjustments
// for this array (one per semaphore); it may be empty when no sop has
// SEM_UNDO. Preconditions: check_semop_args() returned 0 for these sops.
//
// The sops are processed in order, each seeing the effect of the earlier ones
// (the kernel's fast path only differs when an altering sop precedes another
// sop on the same semaphore, and then it takes the sequential slow path):
//   sem_op == 0 and value != 0        -> blocks
//   value + sem_op < 0                -> blocks
//   value + sem_op > SEMVMX           -> -ERANGE
//   SEM_UNDO and semadj - sem_op outside [-SEMAEM-1, SEMAEM] -> -ERANGE
// The first sop that fails decides: it blocks (returns kSemopBlock) unless it
// has IPC_NOWAIT (returns -EAGAIN), or it is out of range (-ERANGE). On any
// failure semval and semadj are left exactly as they were.
//
// Returns 0 (done: semval and semadj updated), kSemopBlock, -EAGAIN or -ERANGE.
// *blocking (if non-null) receives the index of the sop that blocked or failed;
// it is left alone on success.
int perform_atomic_semop(std::span<int> semval, std::span<const Sembuf> sops, std::span<int> semadj,
                         int* blocking = nullptr);

}  // namespace semsim::ipc
