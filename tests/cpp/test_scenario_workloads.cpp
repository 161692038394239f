// The workload part of the scenario format (sim/config/scenario.cpp) and the shared
// workload definitions (sim/workloads/*_def.hpp): every workload parses with its
// defaults, bad fields are refused naming the field and the allowed values, and the
// definitions produce exactly the benchmarks' call sequences and placements.

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "config/scenario.hpp"
#include "core/errors.hpp"
#include "workloads/lat_sem_def.hpp"
#include "workloads/registry.hpp"
#include "workloads/semop_multi_def.hpp"

namespace semsim {
namespace {

using workloads::Step;
using workloads::StepKind;

Json doc_with(const std::string& workload, const std::string& threads = "[2]") {
  return Json::parse(R"({"machine": "host", "kernel": "hysteresis", "workload": )" + workload +
                     R"(, "threads": )" + threads + "}");
}

Scenario parse(const std::string& workload, const std::string& threads = "[2]") {
  return parse_scenario(doc_with(workload, threads));
}

std::string error_of(const std::string& workload, const std::string& threads = "[2]") {
  try {
    parse(workload, threads);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(accepted)";
}

// The sops of the next `n` steps of a program, as text "num:op:flg,num:op:flg|...".
template <class Program>
std::vector<std::string> steps_of(Program& p, int n) {
  std::vector<std::string> out;
  Step s;
  for (int i = 0; i < n && p.next(s); ++i) {
    std::string text;
    if (s.kind == StepKind::Semop) {
      for (int k = 0; k < s.nsops; ++k) {
        if (k > 0) text.push_back(',');
        text.append(std::to_string(s.sops[k].sem_num));
        text.push_back(':');
        text.append(std::to_string(s.sops[k].sem_op));
        text.push_back(':');
        text.append(std::to_string(s.sops[k].sem_flg));
      }
    } else {
      text = s.kind == StepKind::CreateArray   ? "create"
             : s.kind == StepKind::SetVal      ? "setval " + std::to_string(s.value)
             : s.kind == StepKind::RemoveArray ? "remove"
                                               : "user";
    }
    out.push_back(text);
  }
  return out;
}

TEST(ScenarioWorkloads, EveryWorkloadIsInTheCatalogAndParsesWithItsDefaults) {
  std::vector<std::string> types;
  for (const auto& w : known_workloads()) types.push_back(w.substr(0, w.find('\t')));
  EXPECT_EQ(types, (std::vector<std::string>{"semop-multi", "sem-scalebench", "sem-lockunlock",
                                             "aim9-shm", "lat-sem", "sembench", "custom",
                                             "lock-stress", "locktorture"}));

  const Scenario sb = parse(R"({"type": "sem-scalebench"})");
  EXPECT_EQ(sb.workload.scalebench.mode, 1);
  EXPECT_EQ(sb.workload.scalebench.threads_per_core, 1);
  EXPECT_EQ(sb.workload.scalebench.interleave, 1);
  EXPECT_EQ(sb.workload.scalebench.distance, 1);
  EXPECT_EQ(sb.workload.pin, Pinning::Pinned);  // sem-scalebench binds every thread

  const Scenario lu =
      parse(R"({"type": "sem-lockunlock", "semaphores": 64, "loops": 1000})", "[256]");
  EXPECT_EQ(lu.workload.lockunlock.semaphores, 64);
  EXPECT_EQ(lu.workload.semaphores, 64);
  EXPECT_EQ(lu.workload.lockunlock.loops, 1000);
  EXPECT_EQ(lu.workload.pin, Pinning::Unpinned);  // osim binds nothing

  EXPECT_EQ(parse(R"({"type": "aim9-shm"})").workload.aim9.loops, 100);
  EXPECT_EQ(parse(R"({"type": "lat-sem"})").workload.pin, Pinning::Unpinned);
  const Scenario sem = parse(R"({"type": "sembench"})");
  EXPECT_EQ(sem.workload.sembench.wake_num, 256);
  EXPECT_EQ(sem.workload.sembench.wake_batch, 64);
  EXPECT_EQ(sem.workload.pin, Pinning::Pinned);
  EXPECT_EQ(parse(R"({"type": "sem-scalebench", "pin": "unpinned"})").workload.pin,
            Pinning::Unpinned);
  // semop-multi keeps its behaviour.
  const Scenario sm = parse(R"({"type": "semop-multi", "semaphores": 8, "pattern": "own"})");
  EXPECT_EQ(sm.workload.semaphores, 8);
  EXPECT_EQ(sm.workload.pattern, "own");
  EXPECT_EQ(sm.workload.pin, Pinning::Pinned);
  // locktorture: the module's constants, its kthreads unpinned.
  const Scenario lt = parse(R"({"type": "locktorture"})");
  EXPECT_EQ(lt.workload.locktorture.longdelay_ms, 100);
  EXPECT_EQ(lt.workload.locktorture.shortdelay_us, 2);
  EXPECT_EQ(lt.workload.pin, Pinning::Unpinned);
  EXPECT_EQ(parse(R"({"type": "locktorture", "pin": "spread"})").workload.pin, Pinning::Spread);
}

TEST(ScenarioWorkloads, BadFieldsNameTheFieldAndWhatIsAllowed) {
  auto has = [](const std::string& msg, const std::string& part) {
    return msg.find(part) != std::string::npos;
  };
  std::string m = error_of(R"({"type": "sem-scalebench", "mode": 3})");
  EXPECT_TRUE(has(m, "workload.mode") && has(m, "1 (wait-for-zero), 2 (ping-pong) or 4")) << m;
  m = error_of(R"({"type": "sem-scalebench", "mode": 1, "complex_every": 4})");
  EXPECT_TRUE(has(m, "workload.complex_every") && has(m, "mode 2")) << m;
  m = error_of(R"({"type": "sem-scalebench", "interleave": 0})");
  EXPECT_TRUE(has(m, "workload.interleave") && has(m, "from 1 to")) << m;
  m = error_of(R"({"type": "sem-scalebench", "semaphores": 4})");
  EXPECT_TRUE(has(m, "workload.semaphores") && has(m, "allowed fields here") && has(m, "distance"))
      << m;
  m = error_of(R"({"type": "sem-lockunlock", "loops": 0})");
  EXPECT_TRUE(has(m, "workload.loops")) << m;
  m = error_of(R"({"type": "sem-lockunlock", "semaphores": 32000})");
  EXPECT_TRUE(has(m, "workload.semaphores") && has(m, "31999")) << m;
  m = error_of(R"({"type": "aim9-shm", "semaphores": 1})");
  EXPECT_TRUE(has(m, "workload.semaphores") && has(m, "loops")) << m;
  m = error_of(R"({"type": "lat-sem", "loops": 3})");
  EXPECT_TRUE(has(m, "workload.loops") && has(m, "type, pin")) << m;
  m = error_of(R"({"type": "sembench", "wake_batch": 65})");
  EXPECT_TRUE(has(m, "workload.wake_batch") && has(m, "from 1 to 64")) << m;
  m = error_of(R"({"type": "sembench", "pin": "sometimes"})");
  EXPECT_TRUE(has(m, "workload.pin") && has(m, "pinned, unpinned")) << m;
  m = error_of(R"({"type": "osim"})");
  EXPECT_TRUE(has(m, "workload.type") && has(m, "sem-lockunlock") && has(m, "custom")) << m;
}

TEST(ScenarioWorkloads, ThreadCountsMustFitTheWorkload) {
  std::string m = error_of(R"({"type": "sem-scalebench", "mode": 2})", "[2, 3]");
  EXPECT_NE(m.find("threads[1]"), std::string::npos) << m;
  EXPECT_NE(m.find("even"), std::string::npos) << m;
  m = error_of(R"({"type": "lat-sem"})", "[4]");
  EXPECT_NE(m.find("threads[0]"), std::string::npos) << m;
  EXPECT_NE(m.find("exactly 2"), std::string::npos) << m;
  m = error_of(R"({"type": "sem-scalebench", "distance": 200})", "[256]");
  EXPECT_NE(m.find("distance x threads"), std::string::npos) << m;
  EXPECT_NO_THROW(parse(R"({"type": "sem-scalebench", "mode": 2})", "[2, 4, 256]"));
  EXPECT_NO_THROW(
      parse(R"({"type": "sem-lockunlock", "semaphores": 64, "loops": 1000000})", "[256]"));
}

TEST(ScenarioWorkloads, CustomScriptsParseFlagsProcessesAndInitialValues) {
  const Scenario s = parse(R"({"type": "custom", "semaphores": 3, "initial": [1, 0, 2], "tasks": [
      {"process": 5, "repeat": 10, "ops": [{"sops": [[0, -1, "undo"], [2, 0]], "think_ns": 250}]},
      {"process": "own", "cpu": 1, "ops": [{"sops": [[1, 1, "nowait|undo"]]}, {"sops": [[1, -1, 2048]]}]}]})");
  const auto& c = s.workload.custom;
  ASSERT_EQ(c.tasks.size(), 2u);
  EXPECT_EQ(c.initial, (std::vector<int>{1, 0, 2}));
  EXPECT_EQ(c.tasks[0].process, 5);
  EXPECT_EQ(c.tasks[0].repeat, 10);
  EXPECT_EQ(c.tasks[0].ops[0].think_ns, 250);
  EXPECT_EQ(c.tasks[0].ops[0].sops[0].sem_flg, ipc::kSemUndo);
  EXPECT_EQ(c.tasks[0].ops[0].sops[1].sem_op, 0);
  EXPECT_EQ(c.tasks[1].process, -1);
  EXPECT_EQ(c.tasks[1].cpu, 1);
  EXPECT_EQ(c.tasks[1].ops[0].sops[0].sem_flg, ipc::kIpcNowait | ipc::kSemUndo);
  EXPECT_EQ(c.tasks[1].ops[1].sops[0].sem_flg, ipc::kIpcNowait);
  EXPECT_EQ(
      parse(
          R"({"type": "custom", "semaphores": 2, "initial": 3, "tasks": [{"ops": [{"sops": [[0, 1]]}]}]})")
          .workload.custom.initial,
      (std::vector<int>{3, 3}));

  std::string m =
      error_of(R"({"type": "custom", "semaphores": 2, "tasks": [{"ops": [{"sops": [[2, 1]]}]}]})");
  EXPECT_NE(m.find("workload.tasks[0].ops[0].sops[0][0] (num)"), std::string::npos) << m;
  EXPECT_NE(m.find("from 0 to 1"), std::string::npos) << m;
  m = error_of(
      R"({"type": "custom", "semaphores": 2, "tasks": [{"ops": [{"sops": [[0, 1, "always"]]}]}]})");
  EXPECT_NE(m.find("(flags)"), std::string::npos) << m;
  EXPECT_NE(m.find("\"nowait\", \"undo\""), std::string::npos) << m;
  m = error_of(
      R"({"type": "custom", "semaphores": 2, "tasks": [{"ops": [{"sops": [[0, 1, 1]]}]}]})");
  EXPECT_NE(m.find("2048 (IPC_NOWAIT)"), std::string::npos) << m;
  m = error_of(
      R"({"type": "custom", "semaphores": 2, "initial": [1], "tasks": [{"ops": [{"sops": [[0, 1]]}]}]})");
  EXPECT_NE(m.find("workload.initial"), std::string::npos) << m;
  m = error_of(R"({"type": "custom", "semaphores": 2, "tasks": []})");
  EXPECT_NE(m.find("workload.tasks"), std::string::npos) << m;
  m = error_of(R"({"type": "custom", "tasks": [{"ops": [{"sops": [[0, 1]]}]}]})");
  EXPECT_NE(m.find("workload.semaphores: is required"), std::string::npos) << m;
  m = error_of(
      R"({"type": "custom", "semaphores": 1, "tasks": [{"ops": [{"sops": [[0, 1]]}], "process": "shared"}]})");
  EXPECT_NE(m.find("workload.tasks[0].process"), std::string::npos) << m;
}

// ---------------------------------------------------------------------------
// The definitions.

TEST(ScenarioDefs, ScalebenchPlacementIsGetCpunr) {
  using workloads::scalebench_cpu;
  auto place = [](int threads, int interleave, int tpc, int cpus) {
    std::vector<int> out;
    for (int t = 0; t < threads; ++t) out.push_back(scalebench_cpu(t, interleave, tpc, cpus));
    return out;
  };
  EXPECT_EQ(place(8, 1, 1, 8), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(place(8, 2, 1, 8), (std::vector<int>{0, 2, 4, 6, 1, 3, 5, 7}));
  EXPECT_EQ(place(8, 4, 1, 8), (std::vector<int>{0, 4, 1, 5, 2, 6, 3, 7}));
  EXPECT_EQ(place(8, 2, 2, 8), (std::vector<int>{0, 0, 2, 2, 4, 4, 6, 6}));
  // Past the CPUs the original's offsets repeat CPUs and then run beyond the last one.
  EXPECT_EQ(place(5, 1, 1, 2), (std::vector<int>{0, 1, 1, 2, 3}));
  EXPECT_EQ(workloads::scalebench_first_unplaceable(5, 1, 1, 2), 3);
  EXPECT_EQ(workloads::scalebench_first_unplaceable(6, 1, 2, 2), -1);
  EXPECT_EQ(workloads::scalebench_first_unplaceable(8, 2, 1, 8), -1);
}

TEST(ScenarioDefs, ScalebenchModesIssueTheBenchmarksCalls) {
  workloads::ScalebenchParams p;
  p.distance = 3;
  p.mode = 1;
  workloads::ScalebenchProgram w1(p, 2);  // own semaphore 3 - 1 + 3 * 2 = 8
  EXPECT_EQ(steps_of(w1, 2), (std::vector<std::string>{"8:0:0", "8:0:0"}));

  p.mode = 2;
  workloads::ScalebenchProgram sender(p, 1);  // odd: sender; own 5, partner thread 0 -> 2
  EXPECT_EQ(steps_of(sender, 5),
            (std::vector<std::string>{"5:1:0", "5:-1:0", "2:1:0", "5:-1:0", "2:1:0"}));
  workloads::ScalebenchProgram receiver(p, 0);  // own 2, partner 5, no token
  EXPECT_EQ(steps_of(receiver, 2), (std::vector<std::string>{"2:-1:0", "5:1:0"}));

  p.mode = 4;
  p.distance = 1;
  workloads::ScalebenchProgram w4(p, 3);
  Step s;
  ASSERT_TRUE(w4.next(s));
  EXPECT_EQ(s.nsops, 2);
  EXPECT_EQ(s.rounds, 0);  // the round is counted after the simple op
  EXPECT_EQ(steps_of(w4, 1), (std::vector<std::string>{"3:-1:0"}));
}

TEST(ScenarioDefs, ScalebenchComplexEveryMakesOneLoopInNComplex) {
  EXPECT_EQ(workloads::scalebench_complex_phase(3, 0), 0);
  EXPECT_EQ(workloads::scalebench_complex_phase(3, 1), 1);  // floor(1.854) mod 3
  EXPECT_EQ(workloads::scalebench_complex_phase(4, 3), 3);  // floor(7.416) mod 4
  workloads::ScalebenchParams p;
  p.mode = 2;
  p.complex_every = 3;
  workloads::ScalebenchProgram t1(p, 1);  // phase 1: loop 1 (of 0, 1, 2) is complex
  const auto steps = steps_of(t1, 7);     // token, then loops 0..2
  EXPECT_EQ(steps, (std::vector<std::string>{"1:1:0", "1:-1:0", "0:1:0", "1:-1:0,1:0:0",
                                             "0:0:0,0:1:0", "1:-1:0", "0:1:0"}));
  EXPECT_EQ(workloads::scalebench_max_sops(p), 2);
}

TEST(ScenarioDefs, LockunlockTasksLockTheirSemaphoreThenSignalTheParent) {
  workloads::LockunlockParams p;
  p.semaphores = 3;
  p.loops = 5;
  p.busy_in = 7;
  p.busy_out = 9;
  EXPECT_EQ(workloads::lockunlock_loops_per_task(p, 2), 3);
  workloads::LockunlockProgram task(p, 4, 2);  // lock 4 mod 3 = 1, 3 loops
  Step s;
  std::vector<std::string> seq;
  std::int64_t busy = 0;
  int counted = 0;
  while (task.next(s)) {
    seq.push_back(std::to_string(s.sops[0].sem_num) + ":" + std::to_string(s.sops[0].sem_op) + ":" +
                  std::to_string(s.sops[0].sem_flg));
    busy += s.busy_loops;
    counted += s.counts_op ? 1 : 0;
  }
  EXPECT_EQ(seq, (std::vector<std::string>{"1:-1:0", "1:1:0", "1:-1:0", "1:1:0", "1:-1:0", "1:1:0",
                                           "3:-1:2048"}));
  EXPECT_EQ(busy, 3 * (7 + 9));
  EXPECT_EQ(counted, 6);  // the final decrement is not a counted call
  EXPECT_EQ(workloads::lockunlock_start_values(p, 2), (std::vector<int>{1, 1, 1, 2}));
}

TEST(ScenarioDefs, Aim9CallCreatesSetsLoopsAndRemoves) {
  long sum = 0;
  for (int size : workloads::kAim9Sizes) sum += size;
  EXPECT_EQ(workloads::kAim9SizeCount, 31);
  EXPECT_EQ(sum, 10176);  // mean 328 bytes, as the reference says (~330)
  workloads::Aim9Params p;
  p.loops = 2;
  workloads::Aim9Program prog(p);
  EXPECT_EQ(steps_of(prog, 13),
            (std::vector<std::string>{"create", "setval 1", "0:-1:0", "0:1:0", "0:-1:0", "0:1:0",
                                      "0:-1:0", "0:1:0", "0:-1:0", "0:1:0", "remove", "create",
                                      "setval 1"}));
  workloads::Aim9Program sizes(p);
  Step s;
  std::vector<int> copied;
  for (int i = 0; i < 12; ++i) {
    sizes.next(s);
    if (s.memcpy_bytes > 0) copied.push_back(s.memcpy_bytes);
  }
  // Each loop copies its size twice; the size table advances once per loop.
  EXPECT_EQ(copied, (std::vector<int>{1, 1, 3, 3}));
}

TEST(ScenarioDefs, LatSemIsAComplexPingPong) {
  workloads::LatSemProgram child(0), parent(1);
  EXPECT_EQ(steps_of(child, 3),
            (std::vector<std::string>{"1:1:0", "0:-1:0,1:1:0", "0:-1:0,1:1:0"}));
  EXPECT_EQ(steps_of(parent, 2), (std::vector<std::string>{"1:-1:0,0:1:0", "1:-1:0,0:1:0"}));
}

struct FakeReady {
  std::vector<int>* flags;
  bool take(int w) const {
    if ((*flags)[static_cast<std::size_t>(w)] == 0) return false;
    (*flags)[static_cast<std::size_t>(w)] = 0;
    return true;
  }
};

TEST(ScenarioDefs, SembenchWakerBatchesReadyWorkersPerArray) {
  EXPECT_EQ(workloads::sembench_arrays(250), 1);
  EXPECT_EQ(workloads::sembench_arrays(251), 2);
  workloads::SembenchWorkerProgram worker(260);
  Step s;
  ASSERT_TRUE(worker.next(s));
  EXPECT_EQ(s.array, 1);
  EXPECT_EQ(s.sops[0].sem_num, 10);
  EXPECT_TRUE(s.announce_ready);

  std::vector<int> ready(300, 0);
  for (int w : {3, 5, 7, 251, 299}) ready[static_cast<std::size_t>(w)] = 1;
  workloads::SembenchParams p;
  p.wake_num = 4;
  p.wake_batch = 2;
  workloads::SembenchWakerProgram<FakeReady> waker(p, 300, FakeReady{&ready});
  // Round 1 takes 4 ready workers (3, 5, 7, 251): array 0 in calls of <= 2 sops, then
  // array 1; round 2 takes 299; then nobody is ready.
  EXPECT_EQ(steps_of(waker, 5), (std::vector<std::string>{"3:1:2048,5:1:2048", "7:1:2048",
                                                          "1:1:2048", "49:1:2048", "user"}));
  EXPECT_EQ(workloads::make_workload(parse(R"({"type": "sembench", "wake_batch": 16})").workload)
                ->max_sops_per_call(),
            16);
}

TEST(ScenarioDefs, CustomProgramsRepeatAndGroupIntoProcesses) {
  const Scenario s = parse(R"({"type": "custom", "semaphores": 2, "tasks": [
      {"process": 9, "repeat": 2, "ops": [{"sops": [[0, 1]]}, {"sops": [[0, -1]]}]},
      {"ops": [{"sops": [[1, 0]]}]}]})",
                           "[5]");
  const auto& c = s.workload.custom;
  // Tasks 0, 2, 4 run script 0 (process 9: one process), tasks 1, 3 script 1 (own).
  EXPECT_EQ(workloads::custom_processes(c, 5), (std::vector<int>{0, 1, 0, 2, 0}));
  EXPECT_FALSE(workloads::custom_runs_to_completion(c, 5));
  workloads::CustomProgram prog(c.tasks[0]);
  Step st;
  int calls = 0;
  int rounds = 0;
  while (prog.next(st)) {
    ++calls;
    rounds += st.rounds;
  }
  EXPECT_EQ(calls, 4);
  EXPECT_EQ(rounds, 2);
}

// Oracle's post/wait (reproduce_swingbench.py): a process waits with semop(-1) on
// its own semaphore and is posted with semctl(SETVAL, 1); its semaphores lie in
// several sets of SEMMSL-limited size.
TEST(ScenarioDefs, CustomSetvalOpsAndSetsNameTheirArray) {
  const Scenario s = parse(R"({"type": "custom", "semaphores": 3, "sets": 2, "tasks": [
      {"ops": [{"sops": [[2, -1]], "set": 1, "think_ns": 7}, {"setval": [1, 1]}]}]})");
  const auto& c = s.workload.custom;
  EXPECT_EQ(c.sets, 2);
  const auto w = workloads::make_workload(s.workload);
  EXPECT_EQ(w->array_sizes(2), (std::vector<int>{3, 3}));
  workloads::CustomProgram prog(c.tasks[0]);
  Step st;
  ASSERT_TRUE(prog.next(st));
  EXPECT_EQ(st.kind, StepKind::Semop);
  EXPECT_EQ(st.array, 1);
  EXPECT_EQ(st.think_ns, 7);
  ASSERT_TRUE(prog.next(st));
  EXPECT_EQ(st.kind, StepKind::SetVal);
  EXPECT_EQ(st.array, 0);
  EXPECT_EQ(st.sem, 1);
  EXPECT_EQ(st.value, 1);
  EXPECT_EQ(st.rounds, 1);
  // One array by default, as before.
  EXPECT_EQ(
      workloads::make_workload(
          parse(R"({"type": "custom", "semaphores": 4, "tasks": [{"ops": [{"sops": [[0, 1]]}]}]})")
              .workload)
          ->array_sizes(2),
      (std::vector<int>{4}));

  std::string m = error_of(
      R"({"type": "custom", "semaphores": 2, "sets": 2, "tasks": [{"ops": [{"sops": [[0, 1]], "set": 2}]}]})");
  EXPECT_NE(m.find("workload.tasks[0].ops[0].set: must be 0 to 1"), std::string::npos) << m;
  m = error_of(
      R"({"type": "custom", "semaphores": 2, "tasks": [{"ops": [{"sops": [[0, 1]], "setval": [0, 1]}]}]})");
  EXPECT_NE(m.find("workload.tasks[0].ops[0]: needs either"), std::string::npos) << m;
  m = error_of(R"({"type": "custom", "semaphores": 2, "tasks": [{"ops": [{"setval": [2, 1]}]}]})");
  EXPECT_NE(m.find("workload.tasks[0].ops[0].setval[0] (num)"), std::string::npos) << m;
  m = error_of(R"({"type": "custom", "semaphores": 2, "tasks": [{"ops": [{"setval": [0]}]}]})");
  EXPECT_NE(m.find("must be [num, value]"), std::string::npos) << m;
  m = error_of(
      R"({"type": "custom", "semaphores": 2, "sets": 2, "initial": 1, "tasks": [{"ops": [{"setval": [0, 1]}]}]})");
  EXPECT_NE(m.find("workload.initial: is for one set"), std::string::npos) << m;
  m = error_of(
      R"({"type": "custom", "semaphores": 2, "sets": 0, "tasks": [{"ops": [{"setval": [0, 1]}]}]})");
  EXPECT_NE(m.find("workload.sets"), std::string::npos) << m;
}

TEST(ScenarioDefs, WorkloadQuestionsAnsweredPerType) {
  auto of = [](const Scenario& sc) { return workloads::make_workload(sc.workload); };
  EXPECT_EQ(of(parse(R"({"type": "sem-scalebench", "distance": 4})", "[8]"))->array_sizes(8),
            (std::vector<int>{32}));
  EXPECT_EQ(of(parse(R"({"type": "sem-lockunlock", "semaphores": 64})"))->array_sizes(256),
            (std::vector<int>{65}));
  EXPECT_EQ(of(parse(R"({"type": "sembench"})"))->array_sizes(600),
            (std::vector<int>{250, 250, 250}));
  EXPECT_TRUE(of(parse(R"({"type": "aim9-shm"})"))->array_sizes(4).empty());
  EXPECT_TRUE(of(parse(R"({"type": "lat-sem"})"))->uses_processes());
  EXPECT_FALSE(of(parse(R"({"type": "sem-scalebench"})"))->uses_processes());
  EXPECT_TRUE(of(parse(R"({"type": "sem-lockunlock"})"))->runs_to_completion(2));
  // Pinning: semop-multi round-robin, sembench's waker never, unpinned workloads never.
  const auto sm = of(parse(R"({"type": "semop-multi"})"));
  EXPECT_EQ(sm->task_cpu(5, 8, 2), 1);
  const auto sb = of(parse(R"({"type": "sembench"})"));
  EXPECT_EQ(sb->task_cpu(3, 4, 2), 1);
  EXPECT_EQ(sb->task_cpu(4, 4, 2), -1);
  EXPECT_EQ(of(parse(R"({"type": "lat-sem"})"))->task_cpu(1, 2, 2), -1);
  const auto pp = of(parse(R"({"type": "sem-scalebench", "mode": 2, "threads_per_core": 2})"));
  EXPECT_EQ(pp->task_cpu(1, 2, 2), 0);  // both partners on CPU 0
}

TEST(ScenarioDefs, UserWorkHelpersDoTheirWork) {
  // 12 ints sorted ascending: data[0] is 1 after each round.
  EXPECT_EQ(workloads::bubble_sort_delay(5), 5);
  EXPECT_EQ(workloads::bubble_sort_delay(0), 0);
  workloads::busy_loop(1000);  // returns
}

}  // namespace
}  // namespace semsim
