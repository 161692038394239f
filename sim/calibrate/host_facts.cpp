#include "calibrate/host_facts.hpp"

#include <time.h>

#include <fstream>
#include <string>

namespace semsim::calibrate {

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) {
        auto v = line.substr(colon + 1);
        v.erase(0, v.find_first_not_of(' '));
        return v;
      }
    }
  }
  return "unknown CPU";
}

double cpuinfo_mhz() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("cpu MHz", 0) == 0) {
      const auto colon = line.find(':');
      try {
        return std::stod(line.substr(colon + 1));
      } catch (const std::exception&) {
        return 0;
      }
    }
  }
  return 0;
}

std::string utc_now() {
  const time_t now = time(nullptr);
  struct tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace semsim::calibrate
