// Facts about the host the model's description and provenance name.
#pragma once

#include <string>

namespace semsim::calibrate {

std::string cpu_model_name();  // /proc/cpuinfo "model name" of the first CPU
double cpuinfo_mhz();          // its "cpu MHz"; 0 when absent
std::string utc_now();         // ISO 8601, seconds

}  // namespace semsim::calibrate
