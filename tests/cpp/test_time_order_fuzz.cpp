// Time order under the machine parameters that stress it (machine/task.hpp,
// machine/cache_line.hpp): every shipped host scenario, under several
// generations and seeds, on machines whose wake-ups, IPIs and interrupts are
// long against the work between them (a calibrated VM guest: tens of us per
// kick), with OS noise, the store buffer on and off. A run must never stop with
// a time-order fault (a line request dated before one it served, a task resumed
// behind the clock), and the fast path must give the reference mode's bytes.
// The equivalence tests of test_time_order.cpp cannot catch a fault that the
// model itself makes in both modes; these runs can.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "config/scenario.hpp"
#include "core/errors.hpp"
#include "core/simulation.hpp"
#include "driver/simulate.hpp"
#include "test_reference_order.hpp"

namespace semsim {
namespace {

namespace fs = std::filesystem;

using test_reference::load_file;
using test_reference::simulate_bytes;

void set_cost(Json& machine, const std::string& key, double ns) {
  machine["costs_ns"][key] = {{"value", ns}, {"source", "test: a stressing value"}};
}

// A shipped preset under a name of the fuzz test's own.
Json preset_as(const char* file, const char* name) {
  Json m = load_file(fs::path(SEMSIM_SOURCE_DIR) / "cpu_models" / file);
  m["name"] = name;
  return m;
}

// host-default with a VM guest's wake-up costs (the calibration of 2026-12-01's
// Firecracker guest: kicking a halted vCPU ~42 us, the reschedule IPI ~19 us) and
// OS noise of 20 us interruptions.
Json vm_guest() {
  Json m = preset_as("host-default.json", "fuzz-vm-guest");
  set_cost(m, "ipi", 42'000);
  set_cost(m, "wakeup_waker", 42'400);
  set_cost(m, "resched_ipi", 19'000);
  set_cost(m, "wakeup_latency", 1);
  m["wakeup_preemption"] = {{"value", true}, {"source", "test"}};
  m["os_noise"] = {{"value", {{"per_s", 5000}, {"durations_ns", {2'000, 20'000}}}},
                   {"source", "test: frequent long interruptions"}};
  return m;
}

// The same without a store buffer (every store stalls until its line is here).
Json vm_guest_no_store_buffer() {
  Json m = vm_guest();
  m["name"] = "fuzz-vm-guest-nosb";
  m["store_buffer_entries"] = {{"value", 0}, {"source", "test"}};
  return m;
}

// An SMT machine of 8 sockets (siblings share a core: smt.cpp's passes) with
// the same noise and long reschedule IPIs.
Json smt_sockets() {
  Json m = preset_as("westmere-ex-160.json", "fuzz-smt-sockets");
  set_cost(m, "resched_ipi", 19'000);
  m["os_noise"] = vm_guest()["os_noise"];
  return m;
}

// 8 sockets whose cross-LLC wake-ups queue the wakee on the target, whose
// running task pays the IPI's handler (ipi_target, machine/ipi_queue.hpp).
Json remote_wakeup_ipis() {
  Json m = preset_as("box-64.json", "fuzz-remote-ipis");
  set_cost(m, "ipi_target", 5'000);
  m["os_noise"] = vm_guest()["os_noise"];
  return m;
}

struct MachineFile {
  explicit MachineFile(const Json& doc)
      : path(fs::temp_directory_path() / ("semsim-fuzz-" + doc["name"].get<std::string>() + "-" +
                                          std::to_string(::getpid()) + ".json")) {
    std::ofstream(path) << doc.dump();
  }
  ~MachineFile() { fs::remove(path); }
  fs::path path;
};

std::vector<fs::path> host_scenarios() {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(fs::path(SEMSIM_SOURCE_DIR) / "scenarios/host"))
    if (e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

Json short_run(const fs::path& file, const fs::path& machine, const char* kernel, int seed) {
  Json doc = load_file(file);
  doc["machine"] = machine.string();
  doc["kernel"] = kernel;
  doc["duration_ms"] = 0.6;
  doc["warmup_ms"] = 0.1;
  doc["precision"] = 0;
  doc["repeats"] = 1;
  doc["seed"] = seed;
  auto& w = doc["workload"];
  if (w["type"] == "sem-lockunlock") w["loops"] = 300;
  Json threads = Json::array();
  for (const auto& n : doc["threads"])
    if (n.get<int>() <= 8) threads.push_back(n);
  doc["threads"] = threads;
  return doc;
}

TEST(TimeOrderFuzz, LongWakeupsAndInterruptsNeverBreakTheOrder) {
  const auto files = host_scenarios();
  ASSERT_GE(files.size(), 10u);
  int runs = 0;
  for (const Json& m :
       {vm_guest(), vm_guest_no_store_buffer(), smt_sockets(), remote_wakeup_ipis()}) {
    const MachineFile machine(m);
    for (const char* kernel : {"global_lock", "per_sem_lock_rc", "hysteresis"})
      for (int seed : {1, 2})
        for (const auto& file : files) {
          SCOPED_TRACE(m["name"].get<std::string>() + " " + kernel + " seed " +
                       std::to_string(seed) + " " + file.filename().string());
          const Json doc = short_run(file, machine.path, kernel, seed);
          std::string fast;
          ASSERT_NO_THROW(fast = simulate_bytes(doc, false));
          if (seed == 1) {
            EXPECT_EQ(fast, simulate_bytes(doc, true));
          }
          ++runs;
        }
  }
  EXPECT_EQ(runs, 4 * 3 * 2 * static_cast<int>(files.size()));
}

}  // namespace
}  // namespace semsim
