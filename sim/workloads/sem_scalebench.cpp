// sem-scalebench as a Workload: the task program and get_cpunr placement are
// sem_scalebench_def.hpp.
#include <fmt/format.h>

#include "workloads/registry.hpp"
#include "workloads/sem_scalebench_def.hpp"

namespace semsim::workloads {

namespace {

class Scalebench final : public Workload {
 public:
  using Workload::Workload;

  std::optional<Problem> check() const override {
    const auto& p = spec_.scalebench;
    if (p.complex_every > 0 && p.mode != 2)
      return Problem{"workload.complex_every",
                     fmt::format("applies to mode 2 (ping-pong) only; this workload has mode {}; "
                                 "remove the field or set it to 0",
                                 p.mode)};
    return std::nullopt;
  }
  std::string check_threads(int n) const override {
    const auto& p = spec_.scalebench;
    if (p.mode == 2 && n % 2 != 0)
      return fmt::format(
          "sem-scalebench mode 2 (ping-pong) runs threads in pairs: every thread count must be "
          "even, got {}",
          n);
    const auto sems = static_cast<std::int64_t>(p.distance) * n;
    if (sems > kMaxSemaphores)
      return fmt::format(
          "sem-scalebench uses an array of distance x threads = {} x {} = {} semaphores, more "
          "than {} (SEMMSL)",
          p.distance, n, sems, kMaxSemaphores);
    return "";
  }
  int task_cpu(int task, int /*threads*/, int cpus) const override {
    if (spec_.pin != Pinning::Pinned || cpus < 1) return -1;
    const auto& p = spec_.scalebench;
    return scalebench_cpu(task, p.interleave, p.threads_per_core, max_cpus(cpus));
  }
  std::vector<int> array_sizes(int threads) const override {
    return {scalebench_array_size(spec_.scalebench, threads)};
  }
  int max_sops_per_call() const override { return scalebench_max_sops(spec_.scalebench); }
  std::string size_field() const override { return "workload.distance"; }
  OwnFigure own_figure() const override { return {"rounds_per_s"}; }
  std::unique_ptr<Program> program(int task, int /*threads*/, std::uint64_t /*seed*/,
                                   ReadyFlags* /*ready*/) const override {
    return std::make_unique<ProgramOf<ScalebenchProgram>>(spec_.scalebench, task);
  }

  std::string check_cpus(int cpus, const std::string& whose) const override {
    const int wanted = spec_.scalebench.max_cpus;
    if (spec_.pin != Pinning::Pinned || wanted <= cpus) return "";
    return fmt::format("workload.max_cpus: {} CPUs, but {}", wanted, whose);
  }
  std::string unplaceable(int n, int cpus, const std::string& whose) const override {
    const auto& p = spec_.scalebench;
    for (int t = 0; t < n; ++t) {
      const int index = task_cpu(t, n, cpus);
      if (index < cpus) continue;
      const int fit =
          scalebench_first_unplaceable(n, p.interleave, p.threads_per_core, max_cpus(cpus));
      return fmt::format(
          "workload.pin: sem-scalebench places thread {} of {} on CPU {} (get_cpunr with "
          "interleave {}, threads_per_core {}, {} CPUs), but {}: at most {} threads can be "
          "pinned; raise threads_per_core, or set workload.pin to \"unpinned\"",
          t, n, index, p.interleave, p.threads_per_core, max_cpus(cpus), whose, fit);
    }
    return "";
  }

 private:
  int max_cpus(int cpus) const {
    return spec_.scalebench.max_cpus > 0 ? spec_.scalebench.max_cpus : cpus;
  }
};

}  // namespace

WorkloadType sem_scalebench_type() {
  ParamField mode;
  mode.key = "mode";
  mode.kind = ParamField::Kind::IntChoice;
  mode.int_choices = {1, 2, 4};
  mode.choices_text = "1 (wait-for-zero), 2 (ping-pong) or 4 (complex no-wait)";
  mode.set_int = [](WorkloadSpec& s, std::int64_t v) { s.scalebench.mode = static_cast<int>(v); };
  auto field = [](const char* key, std::int64_t lo, std::int64_t hi, int ScalebenchParams::*m) {
    return int_field(key, lo, hi, [m](WorkloadSpec& s, std::int64_t v) {
      s.scalebench.*m = static_cast<int>(v);
    });
  };
  return {"sem-scalebench",
          "ipcscale sem-scalebench: mode 1 wait-for-zero, 2 ping-pong in pairs (complex_every: "
          "2-sop ops), 4 complex no-wait; get_cpunr placement (Manfred Spraul, 2014-2016)",
          Pinning::Pinned,
          {mode, field("threads_per_core", 1, 4096, &ScalebenchParams::threads_per_core),
           field("interleave", 1, 4096, &ScalebenchParams::interleave),
           field("delay", 0, 1'000'000, &ScalebenchParams::delay),
           field("distance", 1, kMaxSemaphores, &ScalebenchParams::distance),
           field("complex_every", 0, 1'000'000, &ScalebenchParams::complex_every),
           field("max_cpus", 1, 4096, &ScalebenchParams::max_cpus)},
          [](const WorkloadSpec& s) { return std::make_unique<const Scalebench>(s); }};
}

}  // namespace semsim::workloads
