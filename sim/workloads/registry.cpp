#include "workloads/registry.hpp"

#include "core/errors.hpp"

namespace semsim::workloads {

// Defined each in its own file, sim/workloads/<type>.cpp.
WorkloadType semop_multi_type();
WorkloadType sem_scalebench_type();
WorkloadType sem_lockunlock_type();
WorkloadType aim9_shm_type();
WorkloadType lat_sem_type();
WorkloadType sembench_type();
WorkloadType custom_type();
WorkloadType lock_stress_type();
WorkloadType locktorture_type();

const std::vector<WorkloadType>& workload_types() {
  static const std::vector<WorkloadType> kTypes = {
      semop_multi_type(), sem_scalebench_type(), sem_lockunlock_type(),
      aim9_shm_type(),    lat_sem_type(),        sembench_type(),
      custom_type(),      lock_stress_type(),    locktorture_type(),
  };
  return kTypes;
}

const WorkloadType* find_workload_type(const std::string& type) {
  for (const auto& t : workload_types())
    if (t.type == type) return &t;
  return nullptr;
}

std::unique_ptr<const Workload> make_workload(const WorkloadSpec& spec) {
  const WorkloadType* t = find_workload_type(spec.type);
  if (t == nullptr) {
    std::string known;
    for (const auto& k : workload_types()) known += (known.empty() ? "\"" : ", \"") + k.type + "\"";
    throw InputError("workload.type: one of " + known + ", got \"" + spec.type + "\"");
  }
  return t->make(spec);
}

ParamField int_field(std::string key, std::int64_t lo, std::int64_t hi,
                     std::function<void(WorkloadSpec&, std::int64_t)> set) {
  ParamField f;
  f.key = std::move(key);
  f.lo = lo;
  f.hi = hi;
  f.set_int = std::move(set);
  return f;
}

}  // namespace semsim::workloads
