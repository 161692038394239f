// custom as a Workload: the script programs and process grouping are custom_def.hpp.
#include "workloads/custom_def.hpp"
#include "workloads/registry.hpp"

namespace semsim::workloads {

namespace {

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
  std::vector<int> array_sizes(int /*threads*/) const override { return {spec_.custom.semaphores}; }
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
  return {"custom",
          "per-task op scripts: tasks[i mod len] gives each task its semop calls, think time and "
          "repeat count; scripts sharing a `process` id are threads of one process (SEM_UNDO)",
          Pinning::Unpinned,
          {semaphores, initial, tasks},
          [](const WorkloadSpec& s) { return std::make_unique<const Custom>(s); }};
}

}  // namespace semsim::workloads
