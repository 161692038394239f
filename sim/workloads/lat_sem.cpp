// lat-sem as a Workload: the task programs are lat_sem_def.hpp.
#include <fmt/format.h>

#include "workloads/lat_sem_def.hpp"
#include "workloads/registry.hpp"

namespace semsim::workloads {

namespace {

class LatSem final : public Workload {
 public:
  using Workload::Workload;

  std::string check_threads(int n) const override {
    if (n == kLatSemTasks) return "";
    return fmt::format(
        "lat-sem is a ping-pong between exactly 2 processes: threads must be 2, got {}", n);
  }
  bool uses_processes() const override { return true; }
  std::vector<int> array_sizes(int /*threads*/) const override { return {kLatSemArraySize}; }
  int max_sops_per_call() const override { return 2; }
  std::string size_field() const override { return "threads"; }
  OwnFigure own_figure() const override { return {"latency_us", OwnFigure::Of::MicrosPerCall}; }
  std::unique_ptr<Program> program(int task, int /*threads*/, std::uint64_t /*seed*/,
                                   ReadyFlags* /*ready*/) const override {
    return std::make_unique<ProgramOf<LatSemProgram>>(task);
  }
};

}  // namespace

WorkloadType lat_sem_type() {
  return {"lat-sem",
          "lmbench lat_sem: two processes ping-pong with 2-sop complex ops (threads must be 2)",
          Pinning::Unpinned,
          {},
          [](const WorkloadSpec& s) { return std::make_unique<const LatSem>(s); }};
}

}  // namespace semsim::workloads
