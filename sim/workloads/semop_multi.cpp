// semop-multi (Rik van Riel, 2013): every thread loops on
//   semop(+1 on s); semop(-1 on s)
// with s chosen by the scenario's pattern (semop_multi_pattern.hpp). It never
// sleeps: +1 first can always proceed, and the -1 then finds the value it
// just added.
#include "workloads/semop_multi_pattern.hpp"
#include "workloads/workload.hpp"

namespace semsim::workloads {

TaskBody semop_multi_body(const SimContext& ctx, int index) {
  const auto pattern = parse_semop_multi_pattern(ctx.scenario.workload.pattern);
  const int nsems = ctx.scenario.workload.semaphores;
  return [&ctx, pattern, nsems, index](machine::Task& task) {
    SemopMultiChooser chooser(pattern, index, nsems, ctx.seed);
    const Tick loop_cost = ctx.topo.params().user_loop_iteration;
    ctx.sched.start(task);
    while (true) {
      const int s = chooser.next();
      const ipc::Sembuf up{s, +1, 0};
      const ipc::Sembuf down{s, -1, 0};
      ctx.kernel.semop(task, {&up, 1});
      ctx.kernel.semop(task, {&down, 1});
      {
        machine::InFunc in(task, machine::Func::User);
        task.charge(loop_cost);
      }
      ctx.sched.maybe_preempt(task);
    }
  };
}

}  // namespace semsim::workloads
