// The include rules of the machine, native and calibrate folders: sim/machine reads no
// JSON and no config header (the loader in sim/config hands it machine/params.hpp);
// sim/native includes neither the driver nor the calibration; in sim/calibrate only
// close_kernel_path.cpp, the one step that simulates, includes the driver.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

// "<file>: <line>" for every include line of the folder's files that contains one of `bad`.
std::vector<std::string> includes_of(const std::string& folder, const std::vector<std::string>& bad,
                                     const std::string& except = "") {
  std::vector<std::string> found;
  for (const auto& entry :
       fs::directory_iterator(std::string(SEMSIM_SOURCE_DIR) + "/sim/" + folder)) {
    if (entry.path().filename() == except) continue;
    std::ifstream in(entry.path());
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("#include", 0) != 0) continue;
      for (const auto& b : bad)
        if (line.find(b) != std::string::npos)
          found.push_back(entry.path().filename().string() + ": " + line);
    }
  }
  return found;
}

TEST(Layers, MachineIncludesNoConfigAndNoJson) {
  EXPECT_EQ(includes_of("machine", {"\"config/", "nlohmann", "core/json.hpp"}),
            std::vector<std::string>{});
}

TEST(Layers, NativeIncludesNeitherTheDriverNorTheCalibration) {
  EXPECT_EQ(includes_of("native", {"\"driver/", "\"calibrate/"}), std::vector<std::string>{});
}

TEST(Layers, OnlyTheClosingStepOfTheCalibrationIncludesTheDriver) {
  EXPECT_EQ(includes_of("calibrate", {"\"driver/"}, "close_kernel_path.cpp"),
            std::vector<std::string>{});
  EXPECT_EQ(includes_of("calibrate", {"\"driver/"}).size(), 1u);
}

}  // namespace
