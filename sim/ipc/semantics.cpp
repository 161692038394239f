#include "ipc/semantics.hpp"

#include <cerrno>
#include <string>

#include "core/errors.hpp"

namespace semsim::ipc {

int check_semop_nsops(std::size_t nsops, int semopm) {
  // The kernel tests the upper bound first; nsops is unsigned there, so a
  // negative count from user space shows up as E2BIG, never as EINVAL.
  if (semopm < 0 || nsops > static_cast<std::size_t>(semopm)) return -E2BIG;
  if (nsops < 1) return -EINVAL;
  return 0;
}

int check_semop_args(std::span<const Sembuf> sops, int nsems, int semopm) {
  if (const int err = check_semop_nsops(sops.size(), semopm); err != 0) return err;
  for (const Sembuf& sop : sops) {
    if (sop.sem_num < 0 || sop.sem_num >= nsems) return -EFBIG;
  }
  return 0;
}

bool sops_alter(std::span<const Sembuf> sops) {
  for (const Sembuf& sop : sops) {
    if (sop.sem_op != 0) return true;
  }
  return false;
}

bool sops_undo(std::span<const Sembuf> sops) {
  for (const Sembuf& sop : sops) {
    if ((sop.sem_flg & kSemUndo) != 0) return true;
  }
  return false;
}

namespace {

[[noreturn]] void precondition_failed(const char* what, std::size_t index) {
  throw SimulationError(std::string("perform_atomic_semop: ") + what + " (sop " +
                        std::to_string(index) + ")");
}

// Reverts sops [0, done) in reverse order, so a failed operation leaves no
// trace, as the kernel's slow path does.
void revert(std::span<int> semval, std::span<const Sembuf> sops, std::span<int> semadj,
            std::size_t done) {
  while (done > 0) {
    --done;
    const Sembuf& sop = sops[done];
    const auto num = static_cast<std::size_t>(sop.sem_num);
    semval[num] -= sop.sem_op;
    if ((sop.sem_flg & kSemUndo) != 0) semadj[num] += sop.sem_op;
  }
}

}  // namespace

int perform_atomic_semop(std::span<int> semval, std::span<const Sembuf> sops, std::span<int> semadj,
                         int* blocking) {
  // One sequential pass with rollback. It gives the same answers as the
  // kernel's two-pass fast path whenever that one is used (no altering sop
  // before another sop on the same semaphore), and it is exactly its slow path
  // otherwise, so one loop serves both.
  for (std::size_t i = 0; i < sops.size(); ++i) {
    const Sembuf& sop = sops[i];
    if (sop.sem_num < 0 || static_cast<std::size_t>(sop.sem_num) >= semval.size()) {
      revert(semval, sops, semadj, i);
      precondition_failed("sem_num out of range", i);
    }
    const auto num = static_cast<std::size_t>(sop.sem_num);
    // 64-bit intermediates: Sembuf carries ints, wider than the kernel's
    // shorts, and an absurd sem_op must give ERANGE, not overflow.
    const long long value = semval[num];
    const long long result = value + sop.sem_op;
    int failure = 0;
    if ((sop.sem_op == 0 && value != 0) || result < 0) {
      failure = (sop.sem_flg & kIpcNowait) != 0 ? -EAGAIN : kSemopBlock;
    } else if (result > kSemvmx) {
      failure = -ERANGE;
    } else if ((sop.sem_flg & kSemUndo) != 0) {
      if (num >= semadj.size()) {
        revert(semval, sops, semadj, i);
        precondition_failed("SEM_UNDO sop without undo adjustments", i);
      }
      const long long undo = static_cast<long long>(semadj[num]) - sop.sem_op;
      if (undo < -kSemaem - 1LL || undo > kSemaem) {
        failure = -ERANGE;
      } else {
        semadj[num] = static_cast<int>(undo);
      }
    }
    if (failure != 0) {
      revert(semval, sops, semadj, i);
      if (blocking != nullptr) *blocking = static_cast<int>(i);
      return failure;
    }
    semval[num] = static_cast<int>(result);
  }
  return 0;
}

}  // namespace semsim::ipc
