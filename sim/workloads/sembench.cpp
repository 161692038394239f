// sembench as a Workload: the worker and waker programs are sembench_def.hpp.
#include "workloads/registry.hpp"
#include "workloads/sembench_def.hpp"

namespace semsim::workloads {

namespace {

class Sembench final : public Workload {
 public:
  using Workload::Workload;

  int extra_tasks() const override { return 1; }  // the waker
  std::vector<int> array_sizes(int threads) const override {
    return std::vector<int>(static_cast<std::size_t>(sembench_arrays(threads)),
                            sembench_array_size());
  }
  int max_sops_per_call() const override { return spec_.sembench.wake_batch; }
  std::string size_field() const override { return "threads"; }
  std::string sops_field() const override { return "workload.wake_batch"; }
  OwnFigure own_figure() const override { return {"worker_burns_per_s"}; }
  std::unique_ptr<Program> program(int task, int threads, std::uint64_t /*seed*/,
                                   ReadyFlags* ready) const override {
    if (task >= threads)
      return std::make_unique<ProgramOf<SembenchWakerProgram<ReadyRef>>>(spec_.sembench, threads,
                                                                         ReadyRef{ready});
    return std::make_unique<ProgramOf<SembenchWorkerProgram>>(task);
  }
};

}  // namespace

WorkloadType sembench_type() {
  return {"sembench",
          "sembench (Oracle 2007): worker threads sleep on -1, a waker thread posts batches of up "
          "to wake_batch (<= 64) +1 sops to up to wake_num ready workers",
          Pinning::Pinned,
          {int_field(
               "wake_num", 1, 1'000'000,
               [](WorkloadSpec& s, std::int64_t v) { s.sembench.wake_num = static_cast<int>(v); }),
           int_field("wake_batch", 1, kSembenchMaxBatch,
                     [](WorkloadSpec& s, std::int64_t v) {
                       s.sembench.wake_batch = static_cast<int>(v);
                     })},
          [](const WorkloadSpec& s) { return std::make_unique<const Sembench>(s); }};
}

}  // namespace semsim::workloads
