#include "calibrate/close_kernel_path.hpp"

#include "config/kernel_config.hpp"
#include "config/machine_config.hpp"
#include "config/scenario.hpp"
#include "driver/run_point.hpp"
#include "machine/task.hpp"

namespace semsim::calibrate {

// What the simulator charges per call, outside user space, for one task running
// `workload` alone on model `m` under the host's generation, without OS noise (the
// probes' batches are the uninterrupted ones): the model's own figure for what a
// single-call probe measured.
double simulated_call_ns(Json m, const std::string& generation, const Json& workload) {
  m.erase("os_noise");
  const config::MachineParams machine = config::parse_machine(m, "the calibrated model");
  const Scenario sc = parse_scenario(Json{{"name", "calibration check"},
                                          {"machine", "host"},
                                          {"kernel", generation},
                                          {"workload", workload},
                                          {"threads", 1},
                                          {"duration_ms", 2},
                                          {"warmup_ms", 0.2}});
  const Json point = driver::run_point(sc, machine, sc.kernel, 1, 1);
  double kernel_ns = 0;
  for (const Json& f : point.at("profile"))
    if (f.at("function") != machine::func_name(machine::Func::User))
      kernel_ns += f.at("cpu_ns").get<double>();
  return kernel_ns / point.at("ops_total").get<double>();
}

}  // namespace semsim::calibrate
