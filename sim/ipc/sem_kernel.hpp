// ipc/sem.c of one generation, over one simulated array: semtimedop() and
// the paths it runs (sem_lock, perform_atomic_semop, do_smart_update,
// update_queue, the sleep and wakeup protocol), charging each memory access
// to the cache line it touches and each step to the kernel function that
// performs it.
//
// What differs between generations is isolated in a Generation object
// (gen_*.cpp): the sem_lock()/sem_unlock() protocol and the struct layout.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "ipc/kernel_policy.hpp"
#include "ipc/sem_array.hpp"
#include "machine/scheduler.hpp"

namespace semsim::ipc {

class SemKernel;

// The generation-specific part: locking protocol and layout.
class Generation {
 public:
  virtual ~Generation() = default;
  // Returns the semaphore index whose lock is held, or kGlobalLock.
  virtual int sem_lock(SemKernel& k, machine::Task& t, std::span<const Sembuf> sops) = 0;
  virtual void sem_unlock(SemKernel& k, machine::Task& t, int locknum) = 0;
  // The array's initial lock state as newary() leaves it.
  virtual void newary(SemArray& sma) { (void)sma; }
  static constexpr int kGlobalLock = -1;
};

ArrayLayout layout_for(const KernelPolicy& p);
std::unique_ptr<Generation> make_generation(const KernelPolicy& p);

class SemKernel {
 public:
  SemKernel(const KernelPolicy& policy, const machine::Topology& topo, machine::Scheduler& sched,
            int nsems, std::uint64_t seed);

  // semop(2) from user space: syscall entry to exit. Returns 0 or -errno;
  // may block (the task sleeps until another operation completes its op).
  int semop(machine::Task& t, std::span<const Sembuf> sops);

  SemArray& array() { return sma_; }
  const machine::Topology& topo() const { return topo_; }

  // Memory accesses at the task's cursor, charged to its current function.
  void read(machine::Task& t, machine::CacheLine& line);
  void write(machine::Task& t, machine::CacheLine& line);
  void rmw(machine::Task& t, machine::CacheLine& line);
  void fence(machine::Task& t);
  void lock(machine::Task& t, machine::Spinlock& l) { l.lock(topo_, t); }
  void unlock(machine::Task& t, machine::Spinlock& l) { l.unlock(topo_, t); }

 private:
  struct TaskState {
    SemQueue queue;
    machine::CacheLine stack_line{"sleeper stack (struct sem_queue)"};
  };
  TaskState& state_of(machine::Task& t);
  int do_semtimedop(machine::Task& t, std::span<const Sembuf> sops);
  int perform_atomic_semop(machine::Task& t, std::span<const Sembuf> sops);
  void do_smart_update(machine::Task& t, std::span<const Sembuf> sops,
                       std::vector<SemQueue*>& wake);
  bool update_queue(machine::Task& t, std::deque<SemQueue*>& queue, std::vector<SemQueue*>& wake);
  void set_semotime(machine::Task& t, std::span<const Sembuf> sops);
  void wake_up_sleepers(machine::Task& t, std::vector<SemQueue*>& wake);

  const machine::Topology& topo_;
  machine::Scheduler& sched_;
  SemArray sma_;
  std::unique_ptr<Generation> gen_;
  std::vector<std::unique_ptr<TaskState>> tasks_;
};

}  // namespace semsim::ipc
