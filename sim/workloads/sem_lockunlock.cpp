// sem-lockunlock as a Workload: the task programs and the parent's SETALL and
// wait-for-zero are sem_lockunlock_def.hpp.
#include <fmt/format.h>

#include "workloads/registry.hpp"
#include "workloads/sem_lockunlock_def.hpp"

namespace semsim::workloads {

namespace {

class Lockunlock final : public Workload {
 public:
  using Workload::Workload;

  std::string check_threads(int n) const override {
    if (n <= ipc::kSemvmx) return "";
    return fmt::format(
        "sem-lockunlock sets its completion counter to the task count, at most {} (SEMVMX), "
        "got {}",
        ipc::kSemvmx, n);
  }
  bool uses_processes() const override { return true; }
  std::vector<int> array_sizes(int /*threads*/) const override {
    return {lockunlock_array_size(spec_.lockunlock)};
  }
  Completion completion(int /*threads*/) const override { return Completion::ByParent; }
  std::optional<ParentRun> parent(int threads) const override {
    const auto& p = spec_.lockunlock;
    return ParentRun{p.semaphores, lockunlock_start_values(p, threads), lockunlock_parent_wait(p)};
  }
  bool programs_may_end() const override { return true; }
  OwnFigure own_figure() const override { return {"per_loop_us", OwnFigure::Of::MicrosPerRound}; }
  std::vector<PointLabel> point_labels(int threads) const override {
    return {{"semaphores", spec_.semaphores},
            {"loops_per_task", lockunlock_loops_per_task(spec_.lockunlock, threads)}};
  }
  std::unique_ptr<Program> program(int task, int threads, std::uint64_t /*seed*/,
                                   ReadyFlags* /*ready*/) const override {
    return std::make_unique<ProgramOf<LockunlockProgram>>(spec_.lockunlock, task, threads);
  }
};

}  // namespace

WorkloadType sem_lockunlock_type() {
  auto field = [](const char* key, std::int64_t lo, std::int64_t hi,
                  std::int64_t LockunlockParams::*m) {
    return int_field(key, lo, hi, [m](WorkloadSpec& s, std::int64_t v) { s.lockunlock.*m = v; });
  };
  return {"sem-lockunlock",
          "osim / ipcscale sem-lockunlock: forked tasks lock/unlock semaphore i mod S with busy "
          "loops, started by SETALL, runs until `loops` are done (duration_ms does not apply)",
          Pinning::Unpinned,
          {// One more semaphore (the completion counter) must fit the array.
           int_field("semaphores", 1, kMaxSemaphores - 1,
                     [](WorkloadSpec& s, std::int64_t v) {
                       s.lockunlock.semaphores = static_cast<int>(v);
                       s.semaphores = s.lockunlock.semaphores;
                     }),
           field("loops", 1, 1'000'000'000'000LL, &LockunlockParams::loops),
           field("busy_in", 0, 1'000'000'000LL, &LockunlockParams::busy_in),
           field("busy_out", 0, 1'000'000'000LL, &LockunlockParams::busy_out)},
          [](const WorkloadSpec& s) { return std::make_unique<const Lockunlock>(s); }};
}

}  // namespace semsim::workloads
