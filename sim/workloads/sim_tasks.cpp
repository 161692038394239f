#include "workloads/sim_tasks.hpp"

#include <algorithm>
#include <cerrno>

#include "workloads/lock_stress.hpp"
#include "workloads/locktorture.hpp"

namespace semsim::workloads {

namespace {

using machine::Func;
using machine::InFunc;
using machine::Task;

// The simulator's view of sembench's ready flags.
class SimReady final : public ReadyFlags {
 public:
  explicit SimReady(std::vector<char>* flags) : flags_(flags) {}
  bool take(int worker) override {
    char& f = (*flags_)[static_cast<std::size_t>(worker)];
    if (!f) return false;
    f = 0;
    return true;
  }

 private:
  std::vector<char>* flags_;
};

// User-space work after a call, charged from the machine model.
void charge_user_work(const SimContext& ctx, Task& t, const Step& s) {
  const auto& p = ctx.topo.params();
  InFunc in(t, Func::User);
  Tick work = p.user_loop_iteration;
  work += static_cast<Tick>(s.delay_rounds) * p.bubble_sort_round;
  work += ns_to_ticks(p.busy_loop_iteration_ns * static_cast<double>(s.busy_loops));
  work += ns_to_ticks(p.memcpy_byte_ns * s.memcpy_bytes);
  work += s.think_ns * kTicksPerNs;
  t.charge_private(work);
}

// semget()/IPC_RMID of aim9's private array: a syscall and the kernel path;
// the array is modelled as reused (its lines stay hot in this CPU's cache).
void charge_array_lifecycle(const SimContext& ctx, Task& t) {
  const auto& p = ctx.topo.params();
  InFunc in(t, Func::SyscallEntry);
  t.charge(p.syscall);
  InFunc body(t, Func::SysSemtimedop);
  t.charge(p.semop_kernel_path);
}

// The earliest a store on another CPU reaches `cpu`: the nearest CPU's line transfer
// (0 on a one-CPU machine).
Tick nearest_transfer(const SimContext& ctx, int cpu) {
  Tick best = 0;
  for (int c = 0; c < ctx.topo.cpus(); ++c)
    if (c != cpu && (best == 0 || ctx.topo.transfer(c, cpu) < best))
      best = ctx.topo.transfer(c, cpu);
  return best;
}

void execute(SimContext& ctx, Task& t, int index, Program& program) {
  Step s;
  // A task whose array is its own (aim9-shm: private per process) uses
  // array `index`; the others name the shared array in each step.
  const bool own_array =
      ctx.workload.arrays_per_task() > 0 && static_cast<std::size_t>(index) < ctx.arrays.size();
  while (program.next(s)) {
    auto& kernel = *ctx.arrays[own_array ? static_cast<std::size_t>(index)
                                         : static_cast<std::size_t>(s.array)];
    if (s.announce_ready) {
      kernel.fence(t);  // worklist_add(): smp_mb() then the flag
      // Published at this task's date (time order: machine/task.hpp), so the
      // waker cannot see it before this task's semop has begun.
      ctx.ready[static_cast<std::size_t>(index)] = 1;
    }
    switch (s.kind) {
      case StepKind::Semop: {
        const auto before = t.semops;
        int r = kernel.semop(t, {s.sops, static_cast<std::size_t>(s.nsops)});
        // A call that fails with EAGAIN still is a completed semop() call.
        if (r == -EAGAIN && s.counts_op) t.count_semop();
        if (!s.counts_op) t.uncount_semops(before);
        break;
      }
      case StepKind::SetVal:
        kernel.setval(t, s.sem, s.value);
        break;
      case StepKind::CreateArray:
      case StepKind::RemoveArray:
        charge_array_lifecycle(ctx, t);
        break;
      case StepKind::UserOnly: {
        // sembench's waker found nobody ready and scans again. A flag set on another CPU
        // reaches this one a line transfer later at the earliest, so a pass costs at least
        // that: the waker sees a flag no later than the loop would, and the simulation
        // takes one step per transfer, not one per pass (under 1 ns on some hosts).
        InFunc in(t, Func::User);
        t.charge(std::max<Tick>(
            0, nearest_transfer(ctx, t.cpu) - ctx.topo.params().user_loop_iteration));
        break;
      }
    }
    t.count_rounds(ctx.rounds[static_cast<std::size_t>(index)],
                   static_cast<std::uint64_t>(s.rounds));
    charge_user_work(ctx, t, s);
    ctx.sched.maybe_preempt(t);
  }
}

TaskBody program_body(SimContext& ctx, int index) {
  return [&ctx, index](Task& t) {
    SimReady ready(&ctx.ready);
    auto program = ctx.workload.program(index, ctx.threads, ctx.seed, &ready);
    ctx.sched.start(t);
    execute(ctx, t, index, *program);
    ++ctx.finished;
    t.sync();
    ctx.sched.exit(t);
  };
}

// The parent of a run it starts and ends (sem-lockunlock): SETALL starts the
// run (and wakes the children that already sleep on their locks), a
// wait-for-zero on the counter ends it.
TaskBody parent_body(SimContext& ctx, ParentRun run) {
  return [&ctx, run](Task& t) {
    ctx.sched.start(t);
    t.sync();
    const Tick start = t.cursor;
    auto& kernel = *ctx.arrays[0];
    kernel.setall(t, run.start_values);
    kernel.semop(t, {&run.end_wait, 1});
    t.sync();
    ctx.on_complete(start, t.cursor);
  };
}

}  // namespace

int sim_task_count(const Workload& w, int threads) {
  return threads + w.extra_tasks() + (w.parent(threads) ? 1 : 0);
}

TaskBody make_task_body(SimContext& ctx, int index) {
  if (ctx.workload.takes_user_lock()) return lock_stress_task_body(ctx, index);
  if (!ctx.workload.kthread().empty()) return locktorture_task_body(ctx, index);
  const int workers = ctx.threads + ctx.workload.extra_tasks();
  if (index >= workers) return parent_body(ctx, *ctx.workload.parent(ctx.threads));
  return program_body(ctx, index);
}

}  // namespace semsim::workloads
