// Linked against semsim_native alone (and what it links): if the native runner ever
// needed the driver or the calibration, this program would not link.
#include <cstdio>

#include "native/native_runner.hpp"

int main() {
  const semsim::native::HostInfo host = semsim::native::host_info();
  std::printf("native runner links without the driver: %d CPUs\n", host.cpus);
  return host.cpus > 0 ? 0 : 1;
}
