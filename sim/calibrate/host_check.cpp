#include "calibrate/host_check.hpp"

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "calibrate/host_topology.hpp"
#include "calibrate/probes.hpp"
#include "native/native_runner.hpp"
#include "native/run_support.hpp"

namespace semsim::calibrate {

Json host_check() {
  std::lock_guard<std::mutex> lock(native::detail::runner_mutex());
  native::cleanup_leftovers();
  const std::vector<int> cpus = native::detail::allowed_cpus();
  probes::Settings st;
  st.quick = true;
  st.repeats = 3;
  st.cpu = cpus.front();
  Json out = Json::object();
  std::vector<double> semop;
  semop.push_back(probes::semop_uncontended(st).median);
  const int n = static_cast<int>(cpus.size());
  if (n > 1) {
    const ModelTopology topo = infer_topology(read_cpus(cpus));
    std::map<Relation, std::vector<double>> by_class;
    for (int a = 0; a < n; ++a)
      for (int b = a + 1; b < n; ++b)
        by_class[model_relation(a, b, topo)].push_back(
            probes::line_pingpong(cpus[static_cast<std::size_t>(a)],
                                  cpus[static_cast<std::size_t>(b)], st)
                .median);
    Json lat = Json::object();
    for (const auto& [relation, values] : by_class)
      lat[class_name(relation)] = probes::summarize(values).median;
    out["latency_ns"] = lat;
  }
  semop.push_back(probes::semop_uncontended(st).median);
  semop.push_back(probes::semop_uncontended(st).median);
  out["semop_ns"] = probes::summarize(semop).median;
  return out;
}

}  // namespace semsim::calibrate
