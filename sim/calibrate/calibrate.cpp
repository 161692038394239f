#include "calibrate/calibrate.hpp"

#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>

#include "calibrate/close_kernel_path.hpp"
#include "calibrate/derive.hpp"
#include "calibrate/measurements.hpp"
#include "core/errors.hpp"
#include "native/run_support.hpp"

namespace semsim::calibrate {

namespace fs = std::filesystem;

Json run(bool quick, const std::string& name) {
  std::lock_guard<std::mutex> lock(native::detail::runner_mutex());
  const std::int64_t started = native::detail::monotonic_ns();
  Json m = derive_model(measure(quick, name), simulated_call_ns);
  m["provenance"]["wall_s"] = static_cast<double>(native::detail::monotonic_ns() - started) * 1e-9;
  return m;
}

std::string run_to_file(const std::string& path, bool quick) {
  const std::string name = path.empty() ? "host" : fs::path(path).stem().string();
  if (!path.empty()) {
    const fs::path parent = fs::path(path).parent_path();
    if (!parent.empty() && !fs::is_directory(parent))
      throw InputError(path + ": cannot write the model: directory " + parent.string() +
                       " does not exist");
  }
  const Json model = run(quick, name);
  const std::string text = model.dump(2) + "\n";
  if (!path.empty()) {
    std::ofstream out(path);
    if (!out) throw InputError(path + ": cannot open for writing");
    out << text;
    if (!out) throw InputError(path + ": write failed");
  }
  return text;
}

}  // namespace semsim::calibrate
