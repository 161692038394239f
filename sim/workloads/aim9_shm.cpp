// aim9-shm as a Workload: the task program is aim9_shm_def.hpp.
#include "workloads/aim9_shm_def.hpp"
#include "workloads/registry.hpp"

namespace semsim::workloads {

namespace {

class Aim9 final : public Workload {
 public:
  using Workload::Workload;

  bool uses_processes() const override { return true; }
  // None shared: each task creates (and removes) its own array on every call.
  std::vector<int> array_sizes(int /*threads*/) const override { return {}; }
  int arrays_per_task() const override { return 1; }
  std::string size_field() const override { return "threads"; }
  OwnFigure own_figure() const override { return {"shared_memory_ops_per_s"}; }
  std::unique_ptr<Program> program(int /*task*/, int /*threads*/, std::uint64_t /*seed*/,
                                   ReadyFlags* /*ready*/) const override {
    return std::make_unique<ProgramOf<Aim9Program>>(spec_.aim9);
  }
};

}  // namespace

WorkloadType aim9_shm_type() {
  return {"aim9-shm",
          "AIM9 shared_memory: each process creates a private semaphore and does `loops` x "
          "{-1, memcpy, +1, -1, memcpy, +1} per call; uncontended",
          Pinning::Unpinned,
          {int_field("loops", 1, 1'000'000,
                     [](WorkloadSpec& s, std::int64_t v) { s.aim9.loops = static_cast<int>(v); })},
          [](const WorkloadSpec& s) { return std::make_unique<const Aim9>(s); }};
}

}  // namespace semsim::workloads
