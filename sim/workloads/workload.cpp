#include "workloads/workload.hpp"

namespace semsim::workloads {

double figure_value(const OwnFigure& f, double window_s, double rounds, double calls) {
  if (window_s <= 0) return 0.0;
  switch (f.of) {
    case OwnFigure::Of::MicrosPerRound:
      return rounds > 0 ? window_s * 1e6 / rounds : 0.0;
    case OwnFigure::Of::MicrosPerCall:
      return calls > 0 ? window_s * 1e6 / calls : 0.0;
    case OwnFigure::Of::RoundsPerSecond:
      break;
  }
  return rounds / window_s;
}

std::string Workload::check_threads(int /*threads*/) const { return ""; }

std::vector<int> Workload::task_processes(int tasks) const {
  std::vector<int> out(static_cast<std::size_t>(tasks), 0);
  if (uses_processes())
    for (int t = 0; t < tasks; ++t) out[static_cast<std::size_t>(t)] = t;
  return out;
}

int Workload::task_cpu(int task, int threads, int cpus) const {
  if (spec_.pin != Pinning::Pinned || cpus < 1 || task >= threads) return -1;
  return task % cpus;
}

std::string Workload::unplaceable(int threads, int cpus, const std::string& whose) const {
  const int ntasks = threads + extra_tasks();
  for (int t = 0; t < ntasks; ++t) {
    const int index = task_cpu(t, threads, cpus);
    if (index < cpus) continue;
    return "workload.tasks: task " + std::to_string(t) + " is pinned to CPU " +
           std::to_string(index) + ", but " + whose + " (0.." + std::to_string(cpus - 1) + ")";
  }
  return "";
}

}  // namespace semsim::workloads
