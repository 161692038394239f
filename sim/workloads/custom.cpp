// custom as a Workload: the script programs and process grouping are custom_def.hpp.
#include <fmt/format.h>

#include "workloads/custom_def.hpp"
#include "workloads/registry.hpp"

namespace semsim::workloads {

namespace {

// SEMMNI's default before 3.19 (and Oracle's documented kernel.sem): the most arrays.
constexpr int kMaxSets = 128;

class Custom final : public Workload {
 public:
  using Workload::Workload;

  bool uses_processes() const override { return true; }
  std::vector<int> task_processes(int tasks) const override {
    return custom_processes(spec_.custom, tasks);
  }
  // A script's own `cpu` wins over workload.pin.
  int task_cpu(int task, int threads, int cpus) const override {
    const int fixed = custom_script_of(spec_.custom, task).cpu;
    if (fixed >= 0) return fixed;
    return Workload::task_cpu(task, threads, cpus);
  }
  std::optional<Problem> check() const override {
    const auto& c = spec_.custom;
    if (c.sets > 1 && !c.initial.empty())
      return Problem{"workload.initial",
                     "is for one set; with sets > 1 every semaphore starts at 0"};
    for (std::size_t i = 0; i < c.tasks.size(); ++i) {
      const auto& ops = c.tasks[i].ops;
      for (std::size_t k = 0; k < ops.size(); ++k)
        if (ops[k].set >= c.sets)
          return Problem{
              fmt::format("workload.tasks[{}].ops[{}].set", i, k),
              fmt::format("must be 0 to {} (workload.sets - 1), got {}", c.sets - 1, ops[k].set)};
    }
    return std::nullopt;
  }
  std::vector<int> array_sizes(int /*threads*/) const override {
    return std::vector<int>(static_cast<std::size_t>(spec_.custom.sets), spec_.custom.semaphores);
  }
  std::vector<int> initial_values() const override { return spec_.custom.initial; }
  int max_sops_per_call() const override { return custom_max_sops(spec_.custom); }
  Completion completion(int threads) const override {
    return custom_runs_to_completion(spec_.custom, threads) ? Completion::WhenTasksEnd
                                                            : Completion::Windowed;
  }
  bool programs_may_end() const override { return true; }
  bool reports_script_outcome() const override { return true; }
  OwnFigure own_figure() const override { return {"rounds_per_s"}; }
  std::vector<PointLabel> point_labels(int /*threads*/) const override {
    return {{"semaphores", spec_.semaphores}};
  }
  std::unique_ptr<Program> program(int task, int /*threads*/, std::uint64_t /*seed*/,
                                   ReadyFlags* /*ready*/) const override {
    return std::make_unique<ProgramOf<CustomProgram>>(custom_script_of(spec_.custom, task));
  }
};

}  // namespace

WorkloadType custom_type() {
  ParamField initial;
  initial.key = "initial";
  initial.kind = ParamField::Kind::InitialValues;
  initial.set_values = [](WorkloadSpec& s, std::vector<int> v) { s.custom.initial = std::move(v); };
  ParamField tasks;
  tasks.key = "tasks";
  tasks.kind = ParamField::Kind::TaskScripts;
  tasks.required = true;
  tasks.set_scripts = [](WorkloadSpec& s, std::vector<CustomScript> v) {
    s.custom.tasks = std::move(v);
  };
  ParamField semaphores =
      int_field("semaphores", 1, kMaxSemaphores, [](WorkloadSpec& s, std::int64_t v) {
        s.custom.semaphores = static_cast<int>(v);
        s.semaphores = s.custom.semaphores;
      });
  semaphores.required = true;
  ParamField sets = int_field("sets", 1, kMaxSets, [](WorkloadSpec& s, std::int64_t v) {
    s.custom.sets = static_cast<int>(v);
  });
  return {"custom",
          "per-task op scripts: tasks[i mod len] gives each task its semop calls, think time and "
          "repeat count, each call a semop or a semctl(SETVAL) on one of `sets` arrays of "
          "`semaphores`; scripts sharing a `process` id are threads of one process (SEM_UNDO)",
          Pinning::Unpinned,
          {semaphores, sets, initial, tasks},
          [](const WorkloadSpec& s) { return std::make_unique<const Custom>(s); }};
}

}  // namespace semsim::workloads
