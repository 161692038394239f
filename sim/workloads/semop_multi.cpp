// semop-multi as a Workload: the task program is semop_multi_def.hpp.
#include <fmt/format.h>

#include "workloads/registry.hpp"
#include "workloads/semop_multi_def.hpp"

namespace semsim::workloads {

namespace {

class SemopMulti final : public Workload {
 public:
  using Workload::Workload;

  std::string check_threads(int threads) const override {
    if (threads <= ipc::kSemvmx) return "";
    return fmt::format(
        "semop-multi: at most {} threads (SEMVMX: all threads may hold +1 on one semaphore), "
        "got {}",
        ipc::kSemvmx, threads);
  }
  std::vector<int> array_sizes(int /*threads*/) const override { return {spec_.semaphores}; }
  std::vector<PointLabel> point_labels(int /*threads*/) const override {
    return {{"semaphores", spec_.semaphores}, {"pattern", spec_.pattern}};
  }
  std::unique_ptr<Program> program(int task, int /*threads*/, std::uint64_t seed,
                                   ReadyFlags* /*ready*/) const override {
    return std::make_unique<ProgramOf<SemopMultiProgram>>(parse_semop_multi_pattern(spec_.pattern),
                                                          task, spec_.semaphores, seed);
  }
};

}  // namespace

WorkloadType semop_multi_type() {
  ParamField pattern;
  pattern.key = "pattern";
  pattern.kind = ParamField::Kind::Choice;
  pattern.choices = {"stride", "own", "random"};
  pattern.set_text = [](WorkloadSpec& s, const std::string& v) { s.pattern = v; };
  return {"semop-multi",
          "N threads, M semaphores in one array, +1 then -1 on one semaphore per iteration, never "
          "sleeps (Rik van Riel, 2013)",
          Pinning::Pinned,
          {int_field("semaphores", 1, kMaxSemaphores,
                     [](WorkloadSpec& s, std::int64_t v) { s.semaphores = static_cast<int>(v); }),
           pattern},
          [](const WorkloadSpec& s) { return std::make_unique<const SemopMulti>(s); }};
}

}  // namespace semsim::workloads
