// The derivation of a machine model from calibration measurements (sim/calibrate/
// derive.cpp) on fixed probe values: the model -- every parameter's value and source
// text, the provenance and the checks -- is the one recorded in
// tests/cpp/data/calibration_derived_*.json from the code before the derivation became
// a table of rules. SEMSIM_RECORD_CALIBRATION=1 re-records (only for a change of the
// derivation that is meant, in its own commit).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "calibrate/close_kernel_path.hpp"
#include "calibrate/derive.hpp"
#include "config/machine_config.hpp"
#include "config/machine_decl.hpp"
#include "machine/line_spin.hpp"
#include "machine/store_buffer.hpp"
#include "test_machine_harness.hpp"

namespace semsim::calibrate {
namespace {

probes::Stat stat(double median, double spread = 0.1) {
  return {median, median * (1 - spread), median * (1 + spread), 7};
}

// A host of `n` CPUs (2 per core when n is even and > 2) with plausible probe values;
// `preempts`: the same-CPU SCHED_NORMAL ping-pong preempted the waker.
Measurements fixture(int n, bool preempts) {
  Measurements x;
  x.name = "fixture";
  x.quick = false;
  x.kernel_release = "6.1.0-28-amd64";
  x.generation = "hysteresis";
  x.cpu_model = "Fixture CPU @ 2.00GHz";
  x.cpuinfo_mhz = 1999.5;
  x.load_average = 0.25;
  x.date = "2026-01-02T03:04:05Z";
  const int threads = n > 2 && n % 2 == 0 ? 2 : 1;
  for (int c = 0; c < n; ++c) {
    x.cpus.push_back(c);
    CpuInfo info;
    info.cpu = c;
    info.core = c % (n / threads);  // linux numbering: siblings at +cores
    for (int t = 0; t < threads; ++t) info.siblings.insert(info.core + t * (n / threads));
    x.cpu_info.push_back(info);
  }
  x.semop_rounds = {stat(190), stat(182), stat(230)};
  for (int a = 0; a < n; ++a)
    for (int b = a + 1; b < n; ++b)
      x.line_pingpong.push_back({a, b, stat(b - a == n / threads ? 9.5 : 31 + a + 0.5 * b)});
  x.atomic_rmw = stat(5.2);
  x.locked_add_fence = stat(5.9);
  x.mfence = stat(11.3);
  x.rmw_loads = stat(8.0);
  x.rmw_mfence_loads = stat(25.5);
  x.rmw_lockadd_loads = stat(14.5);
  x.getppid = stat(61.5);
  x.semop_efbig = stat(98.25);
  x.semctl_getval = stat(121.0);
  x.semctl_getval_removed = stat(80.5);
  x.semop_wait_for_zero = stat(171.0);
  x.futex_wake_nobody = stat(70.0);
  x.futex_same_cpu = {stat(1650), stat(410), 0.02, {}, {}};
  x.futex_same_cpu_normal = {stat(1380), stat(900), preempts ? 0.93 : 0.04, {}, {}};
  if (n > 1)
    x.futex_cross_cpu = {stat(6100), stat(1900), 0.11, {0.4, 0.8, 1.1, 1.7}, {0.5, 0.9, 1.6}};
  int k_i = 0;
  for (int k : {2, 4, 8, 16, 64, 256}) {
    x.rings.emplace_back(k, stat(1200 + 40.0 * k_i * k_i));
    x.process_rings.emplace_back(k, stat(1500 + 90.0 * k_i - (k_i == 3 ? 200 : 0)));
    ++k_i;
  }
  if (n > 1) {
    x.idle_search = {420, 351};
    x.pv_spinlocks = true;
    x.pv_spinlock_evidence = "a KVM guest (fixture)";
    x.kernel_sched_options = {"sched_vcpu_pack=15"};
    x.busy_pull = {380, 97};
  }
  x.busy_pull_pairs = 4 * n;
  x.protection.preempted_share = {{0, 0.05}, {250'000, 0.1}, {1'000'000, 0.75}, {4'000'000, 1}};
  if (n > 1) x.remote = {stat(2400), stat(1750)};
  x.l1_load = stat(1.25);
  x.memory_load = stat(96.5);
  x.semop_loop_bare = stat(166.0);
  x.runner_loop_semop = stat(174.0);
  x.busy_loop_iteration = stat(0.51);
  x.bubble_sort_round = stat(212.0);
  x.memcpy_byte = stat(0.031);
  x.tsc_ghz = stat(2.0);
  x.time_slice = stat(2'800'000);
  for (int c = 0; c < n; ++c) x.os_noise.push_back({c, 1.5, {1200, 1500.0 + c, 3000, 45'000}});
  return x;
}

std::string data_file(const std::string& name) {
  return std::string(SEMSIM_SOURCE_DIR) + "/tests/cpp/data/" + name;
}

void expect_recorded(const Json& model, const std::string& name) {
  Json got = model;
  got["provenance"].erase("semsim_version");  // changes with releases, not with the derivation
  const std::string file = data_file(name);
  if (std::getenv("SEMSIM_RECORD_CALIBRATION") != nullptr) {
    std::ofstream(file) << got.dump(2) << "\n";
    GTEST_SKIP() << "recorded " << file;
  }
  std::ifstream in(file);
  ASSERT_TRUE(in.good()) << file;
  const Json want = Json::parse(in);
  EXPECT_EQ(got.dump(2), want.dump(2)) << "derivation differs from " << file;
}

TEST(CalibrateDerive, FourCpusThatPreemptGiveTheRecordedModel) {
  const Json m = derive_model(fixture(4, true), simulated_call_ns);
  expect_recorded(m, "calibration_derived_4cpu.json");
  // The derived model is a machine the loader accepts.
  EXPECT_EQ(config::parse_machine(m, "derived").cpus, 4);
}

// The line_pingpong probe replayed on the model: thread A stores 2i+1 and spins
// until it reads 2i+2, thread B the other way round; the one-way time in ns.
double simulated_pingpong_ns(const config::MachineParams& params, int cpu_a, int cpu_b) {
  machine::Topology topo(params);
  machine_test::TaskSet set;
  machine::CacheLine line("pingpong");
  machine::LineWatchers watchers(1);
  watchers.attach(line);
  std::uint64_t value = 0, rereads = 0;
  constexpr int kTrips = 200;
  Tick end = 0;
  set.add(cpu_a, [&](machine::Task& t) {
    for (int i = 0; i < kTrips; ++i) {
      value = 2 * static_cast<std::uint64_t>(i) + 1;
      machine::store(topo, t, line);
      machine::spin_on_line(topo, t, line, rereads, [&] { return value == 2u * i + 2; });
    }
    end = t.cursor;
  });
  set.add(cpu_b, [&](machine::Task& t) {
    for (int i = 0; i < kTrips; ++i) {
      machine::spin_on_line(topo, t, line, rereads, [&] { return value == 2u * i + 1; });
      value = 2 * static_cast<std::uint64_t>(i) + 2;
      machine::store(topo, t, line);
    }
  });
  set.sim.run();
  return ticks_to_ns(end) / (2.0 * kTrips);
}

TEST(CalibrateDerive, TheModelsPingPongIsTheProbes) {
  // The transfer is derived so that the model, which charges a store after its own
  // read miss write_after_read of a transfer, replays the probe's one-way time (within
  // 3 %: about 0.2 ns of the stores' own issue rides on top, 2.5 % of the 9.5 ns pair).
  const Measurements x = fixture(4, true);
  const auto params = config::parse_machine(derive_model(x, simulated_call_ns), "derived");
  for (const auto& pair : x.line_pingpong) {
    const double simulated = simulated_pingpong_ns(params, pair.a, pair.b);
    EXPECT_NEAR(simulated, pair.one_way.median, 0.03 * pair.one_way.median)
        << "CPUs " << pair.a << "," << pair.b;
  }
}

TEST(CalibrateDerive, OneCpuThatDoesNotPreemptGivesTheRecordedModel) {
  const Json m = derive_model(fixture(1, false), simulated_call_ns);
  expect_recorded(m, "calibration_derived_1cpu.json");
}

// The runner's own work is its loop minus the same rejected semop() in a bare loop, not
// minus getppid: the semop's own wrapper and entry path are in semop_kernel_path.
TEST(CalibrateDerive, TheUserLoopIsTheRunnersLoopMinusTheBareRejectedSemop) {
  const Json m = derive_model(fixture(4, true), simulated_call_ns);
  EXPECT_DOUBLE_EQ(m["costs_ns"]["user_loop_iteration"]["value"].get<double>(), 74.0 - 66.0);
}

}  // namespace
}  // namespace semsim::calibrate
