// The kernel generations: the registry, the struct layouts of reference
// section 2.3, what-if kernels, which lock simple operations take, and the
// wakeup order of each generation (reference sections 3.2, 5.4, 7.3).
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <string>
#include <vector>

#include "config/kernel_config.hpp"
#include "config/scenario.hpp"
#include "core/errors.hpp"
#include "driver/simulate.hpp"
#include "verify/explorer.hpp"
#include "verify/sem_reference.hpp"

namespace semsim::ipc {
namespace {

const KernelPolicy& gen(const std::string& id) {
  const KernelPolicy* p = find_generation(id);
  if (p == nullptr) throw std::runtime_error("no generation " + id);
  return *p;
}

const config::MachineParams& machine() {
  static const config::MachineParams m = test_machine(8);
  return m;
}

// ---------------------------------------------------------------------------
// Registry and policies

TEST(Generations, AllReleasedGenerationsInKernelOrder) {
  std::vector<std::string> ids;
  for (const auto& g : generations()) ids.push_back(g.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"global_lock", "rwlock", "per_sem_lock_rc",
                                           "per_sem_lock", "split_queues", "moved_otime",
                                           "wait_array", "complex_mode", "hysteresis"}));
  for (const auto& g : generations()) {
    EXPECT_TRUE(check_policy(g).empty()) << g.id;
    EXPECT_FALSE(g.kernels.empty()) << g.id;
    EXPECT_FALSE(g.description.empty()) << g.id;
  }
}

TEST(Generations, SpinlockIsTicketUntil41QueuedFrom42) {
  for (const char* id : {"global_lock", "rwlock", "per_sem_lock_rc", "per_sem_lock", "split_queues",
                         "moved_otime", "wait_array"})
    EXPECT_EQ(gen(id).spinlock, SpinlockKind::Ticket) << id;
  for (const char* id : {"complex_mode", "hysteresis"})
    EXPECT_EQ(gen(id).spinlock, SpinlockKind::Queued) << id;
}

TEST(Generations, PoliciesFollowTheReference) {
  EXPECT_EQ(gen("global_lock").sem_lock, LockProtocol::GlobalLock);
  EXPECT_EQ(gen("rwlock").sem_lock, LockProtocol::RwLock);
  EXPECT_EQ(gen("per_sem_lock").sem_lock, LockProtocol::PerSemLock);
  EXPECT_EQ(gen("moved_otime").sem_lock, LockProtocol::PerSemLock);  // 3.11 kept 3.10's
  EXPECT_EQ(gen("wait_array").sem_lock, LockProtocol::WaitArray);
  EXPECT_EQ(gen("complex_mode").sem_lock, LockProtocol::ComplexMode);
  EXPECT_EQ(gen("hysteresis").sem_lock, LockProtocol::Hysteresis);
  EXPECT_EQ(gen("hysteresis").hysteresis, 10);
  // Fences: full in 3.12-3.18 and 4.9, none in 4.11+.
  EXPECT_EQ(gen("wait_array").fence, FastPathFence::Full);
  EXPECT_EQ(gen("complex_mode").fence, FastPathFence::Full);
  EXPECT_EQ(gen("hysteresis").fence, FastPathFence::None);
  EXPECT_EQ(gen("per_sem_lock").fence, FastPathFence::None);
  // Queues: 3.9's global list, 3.10's one list, 3.11's merged alter queue.
  EXPECT_EQ(gen("global_lock").queues, QueueScheme::Global);
  EXPECT_EQ(gen("per_sem_lock").queues, QueueScheme::OneList);
  EXPECT_EQ(gen("split_queues").queues, QueueScheme::Merged);
  EXPECT_EQ(gen("hysteresis").queues, QueueScheme::Merged);
  EXPECT_FALSE(gen("per_sem_lock_rc").missed_wakeup_fix);
  EXPECT_TRUE(gen("per_sem_lock").missed_wakeup_fix);
  // sem_otime: the array's until 3.10, the semaphore's from 3.11; for all ops from 3.12.
  EXPECT_EQ(gen("split_queues").otime, OtimeLocation::Array);
  EXPECT_EQ(gen("moved_otime").otime, OtimeLocation::PerSem);
  EXPECT_FALSE(gen("moved_otime").otime_all_ops);
  EXPECT_TRUE(gen("wait_array").otime_all_ops);
  // IN_WAKEUP until 4.9, wake_q from 4.10.
  EXPECT_EQ(gen("complex_mode").wakeup, WakeupDelivery::InWakeup);
  EXPECT_EQ(gen("hysteresis").wakeup, WakeupDelivery::WakeQ);
}

// ---------------------------------------------------------------------------
// Layouts (reference section 2.3: absolute cache-line map)

int line(const ArrayLayout&, int off) { return off < 0 ? -1 : ArrayLayout::line_of(off); }

struct LineMap {
  int lock, perm, security, otime, sem_base, pending, nsems, mode, sem0, sem_size;
};

LineMap lines_of(const KernelPolicy& p) {
  const ArrayLayout l = layout_for(p);
  return {line(l, l.lock),     line(l, l.perm),    line(l, l.security), line(l, l.otime),
          line(l, l.sem_base), line(l, l.pending), line(l, l.nsems),    line(l, l.mode_flag),
          line(l, l.sems),     l.sem_size};
}

void expect_lines(const char* id, LineMap want) {
  const LineMap got = lines_of(gen(id));
  EXPECT_EQ(got.lock, want.lock) << id << " sem_perm.lock";
  EXPECT_EQ(got.perm, want.perm) << id << " perm";
  EXPECT_EQ(got.security, want.security) << id << " security";
  EXPECT_EQ(got.otime, want.otime) << id << " sem_otime";
  EXPECT_EQ(got.sem_base, want.sem_base) << id << " sem_base";
  EXPECT_EQ(got.pending, want.pending) << id << " pending lists";
  EXPECT_EQ(got.nsems, want.nsems) << id << " sem_nsems/complex_count";
  EXPECT_EQ(got.mode, want.mode) << id << " complex_mode/use_global_lock";
  EXPECT_EQ(got.sem0, want.sem0) << id << " sem[0]";
  EXPECT_EQ(got.sem_size, want.sem_size) << id << " sizeof(struct sem)";
}

TEST(Generations, LayoutsMatchTheCacheLineMap) {
  //               lock perm sec otime base pend nsems mode sem0 size
  expect_lines("global_lock", {0, 0, 1, 1, 1, 1, 2, -1, 2, 24});   // 3.9, header 16
  expect_lines("rwlock", {0, 0, 1, 1, 1, 1, 2, -1, 2, 32});        // March 2013, header 16
  expect_lines("per_sem_lock", {0, 0, 1, 1, 1, 1, 2, -1, 2, 32});  // 3.10, header 24
  expect_lines("moved_otime", {1, 1, 1, -1, 2, 2, 2, -1, 3, 64});  // 3.11-4.7, header 64
  expect_lines("wait_array", {1, 1, 1, -1, 2, 2, 2, -1, 3, 64});
  expect_lines("complex_mode", {1, 1, 1, -1, 2, 2, 2, 3, 4, 64});  // 4.8-4.12
  expect_lines("hysteresis", {0, 0, 0, -1, -1, 2, 2, 3, 4, 64});   // current, sems[] embedded
  // 3.9 and 3.10: sem[0] shares line 2 with complex_count; in 3.10 two
  // semaphores share a line and sem[1] straddles 192.
  const ArrayLayout l310 = layout_for(gen("per_sem_lock"));
  EXPECT_EQ(line(l310, l310.complex_count), line(l310, l310.sems));
  EXPECT_EQ(line(l310, l310.sems + l310.sem_size), 2);
  EXPECT_EQ(line(l310, l310.sems + 2 * l310.sem_size - 1), 3);
  // The March 2013 series on 3.9's 16-byte header: sem_perm.seq on the
  // rwlock's line, and sem[1] (its lock too) on complex_count's line.
  const ArrayLayout lrw = layout_for(gen("rwlock"));
  EXPECT_EQ(lrw.sems, 16 + 128);
  EXPECT_EQ(line(lrw, lrw.seq), line(lrw, lrw.lock));
  EXPECT_EQ(line(lrw, lrw.sems + lrw.sem_size + lrw.sem_lock), line(lrw, lrw.complex_count));
  EXPECT_NE(line(l310, l310.seq), line(l310, l310.lock));
  // split_queues: 48-byte unaligned struct sem, so semaphores straddle lines.
  const ArrayLayout ls = layout_for(gen("split_queues"));
  EXPECT_EQ(ls.sem_size, 48);
  EXPECT_NE(ls.sems % kCacheLineBytes, 0);
  // 3.11+: one line per semaphore, sem_otime in it.
  const ArrayLayout l311 = layout_for(gen("moved_otime"));
  EXPECT_EQ(l311.sems % kCacheLineBytes, 0);
  EXPECT_GE(l311.sem_otime, 0);
  EXPECT_LT(l311.sem_otime, 64);
}

TEST(Generations, ArrayLinesAreNamedAfterTheirFields) {
  machine::Topology topo(machine());
  machine::Scheduler sched(topo);
  SemKernel k(gen("per_sem_lock"), topo, sched, 4, 1);
  std::vector<std::string> names;
  for (const auto* l : k.array().lines()) names.push_back(l->name());
  ASSERT_GE(names.size(), 4u);
  EXPECT_NE(names[1].find("sem_otime"), std::string::npos) << names[1];
  EXPECT_NE(names[1].find("sem_base"), std::string::npos) << names[1];
  EXPECT_NE(names[2].find("complex_count"), std::string::npos) << names[2];
  EXPECT_NE(names[2].find("sem[0]"), std::string::npos) << names[2];
  EXPECT_NE(names[3].find("sem[1]"), std::string::npos) << names[3];
}

// ---------------------------------------------------------------------------
// What-if kernels

TEST(KernelConfig, GenerationIdAndOverrides) {
  EXPECT_EQ(config::parse_kernel(Json("wait_array")).id, "wait_array");
  const auto p = config::parse_kernel(
      Json::parse(R"({"base": "per_sem_lock", "sem_layout": "aligned64", "otime": "per_sem",
                      "spinlock": "queued", "fence": "rmb", "wakeup": "wake_q",
                      "missed_wakeup_fix": false, "queues": "one_list", "header": "ipc_rcu64",
                      "otime_all_ops": true})"));
  EXPECT_EQ(p.sem_lock, LockProtocol::PerSemLock);
  EXPECT_EQ(p.sem_layout, SemLayout::Aligned64);
  EXPECT_EQ(p.otime, OtimeLocation::PerSem);
  EXPECT_EQ(p.spinlock, SpinlockKind::Queued);
  EXPECT_EQ(p.fence, FastPathFence::ReadOnly);
  EXPECT_EQ(p.wakeup, WakeupDelivery::WakeQ);
  EXPECT_FALSE(p.missed_wakeup_fix);
  EXPECT_EQ(p.header_bytes, 64);
  EXPECT_TRUE(p.otime_all_ops);
  EXPECT_NE(p.id.find("per_sem_lock+"), std::string::npos);
  EXPECT_NE(p.id.find("sem_layout=aligned64"), std::string::npos);
  // Every protocol and layout can be named.
  const auto q = config::parse_kernel(Json::parse(
      R"({"base": "hysteresis", "sem_lock": "complex_mode", "hysteresis": 1, "array_layout": "v4_8",
          "queues": "merged", "header_bytes": 64})"));
  EXPECT_EQ(q.sem_lock, LockProtocol::ComplexMode);
  EXPECT_EQ(q.array_layout, ArrayLayoutKind::V4_8);
  EXPECT_EQ(q.hysteresis, 1);
}

std::string error_of(const std::string& json) {
  try {
    config::parse_kernel(Json::parse(json));
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(KernelConfig, ErrorsNameTheFieldAndTheAllowedValues) {
  auto e = error_of(R"({"base": "per_sem_lock", "sem_lock": "spinning"})");
  EXPECT_NE(e.find("kernel.sem_lock"), std::string::npos) << e;
  EXPECT_NE(e.find("wait_array"), std::string::npos) << e;
  e = error_of(R"({"base": "nope"})");
  EXPECT_NE(e.find("kernel.base"), std::string::npos) << e;
  EXPECT_NE(e.find("hysteresis"), std::string::npos) << e;
  e = error_of(R"({"sem_layout": "aligned64"})");
  EXPECT_NE(e.find("kernel.base"), std::string::npos) << e;
  e = error_of(R"({"base": "hysteresis", "queue": "merged"})");
  EXPECT_NE(e.find("kernel.queue"), std::string::npos) << e;
  EXPECT_NE(e.find("queues"), std::string::npos) << e;
  e = error_of(R"({"base": "hysteresis", "header": "big"})");
  EXPECT_NE(e.find("kernel.header"), std::string::npos) << e;
  EXPECT_NE(e.find("ipc_rcu24"), std::string::npos) << e;
  e = error_of(R"({"base": "hysteresis", "missed_wakeup_fix": "yes"})");
  EXPECT_NE(e.find("kernel.missed_wakeup_fix"), std::string::npos) << e;
  // Compositions that cannot exist name the field and what would do.
  e = error_of(R"({"base": "per_sem_lock", "sem_layout": "packed24"})");
  EXPECT_NE(e.find("kernel.sem_layout"), std::string::npos) << e;
  EXPECT_NE(e.find("packed32"), std::string::npos) << e;
  e = error_of(R"({"base": "per_sem_lock", "queues": "merged"})");
  EXPECT_NE(e.find("kernel.queues"), std::string::npos) << e;
  e = error_of(R"({"base": "global_lock", "otime": "per_sem"})");
  EXPECT_NE(e.find("kernel.otime"), std::string::npos) << e;
  e = error_of(R"({"base": "per_sem_lock", "sem_lock": "hysteresis"})");
  EXPECT_NE(e.find("kernel.sem_lock"), std::string::npos) << e;
  EXPECT_NE(e.find("array_layout"), std::string::npos) << e;
  e = error_of(R"({"base": "hysteresis", "header": "none", "header_bytes": 8})");
  EXPECT_NE(e.find("kernel.header_bytes"), std::string::npos) << e;
}

TEST(KernelConfig, PolicyJsonRoundTripsEveryGenerationAndName) {
  // Each generation's policies, written over another base, read back the same.
  for (const auto& g : generations()) {
    Json doc = config::policy_json(g);
    doc["base"] = g.id == "global_lock" ? "hysteresis" : "global_lock";
    const auto back = config::parse_kernel(doc);
    EXPECT_EQ(config::policy_json(back), config::policy_json(g)) << g.id;
  }
  // Every name of every enum policy comes back as itself.
  const std::vector<std::pair<std::string, std::vector<std::string>>> names = {
      {"spinlock", {"ticket", "queued", "cna"}},
      {"sem_lock",
       {"global_lock", "rwlock", "per_sem_lock", "lock_all", "wait_array", "complex_mode",
        "hysteresis"}},
      {"fence", {"none", "full", "rmb"}},
      {"sem_layout", {"packed24", "packed32", "unaligned48", "unaligned56", "aligned64"}},
      {"array_layout", {"v3_9", "v3_10_split", "v3_11", "v4_8", "current"}},
      {"otime", {"array", "per_sem"}},
      {"queues", {"global", "one_list", "merged"}},
      {"wakeup", {"in_wakeup", "wake_q"}}};
  for (const auto& [key, values] : names)
    for (const auto& value : values) {
      // Over the first base whose other policies allow it (a layout a protocol needs).
      bool tried = false;
      for (const auto& g : generations()) {
        const Json doc = {{"base", g.id}, {key, value}};
        try {
          const auto p = config::parse_kernel(doc);
          EXPECT_EQ(config::policy_json(p)[key], value) << key << "=" << value;
          tried = true;
          break;
        } catch (const InputError&) {
        }
      }
      EXPECT_TRUE(tried) << key << "=" << value;
    }
}

TEST(KernelConfig, EveryWhatIfCompositionRuns) {
  // Attribution of the 3.11 gain: each part of moved_otime on its own.
  for (const char* json :
       {R"({"base": "per_sem_lock", "sem_layout": "aligned64"})",
        R"({"base": "per_sem_lock", "sem_layout": "unaligned56", "otime": "per_sem"})",
        R"({"base": "moved_otime", "sem_lock": "wait_array", "fence": "rmb"})",
        R"({"base": "hysteresis", "hysteresis": 1})",
        R"({"base": "hysteresis", "wakeup": "in_wakeup", "fence": "full"})",
        R"({"base": "global_lock", "queues": "one_list", "spinlock": "queued"})",
        R"({"base": "split_queues", "missed_wakeup_fix": false})",
        R"({"base": "per_sem_lock", "sem_lock": "lock_all"})"}) {
    const auto p = config::parse_kernel(Json::parse(json));
    const auto r = explore(p, machine(), [] {
      ExploreOptions o;
      o.rule_probability = 0;
      o.jitter_probability = 0;
      return o;
    }());
    EXPECT_EQ(r.semops, 7u * 12u + 2u * 24u) << json;
  }
}

TEST(Generations, SameSeedSameBytes) {
  // Every generation, twice, through the driver: identical result documents;
  // a complex-op workload, so sleeps, wakeups and global mode are exercised.
  for (const auto& g : generations()) {
    const Json doc = {{"name", "determinism"},
                      {"machine", "laptop-4"},
                      {"kernel", g.id},
                      {"workload", {{"type", "sem-scalebench"}, {"mode", 2}, {"complex_every", 2}}},
                      {"threads", {4}},
                      {"duration_ms", 0.05},
                      {"warmup_ms", 0.01},
                      {"seed", 3},
                      {"repeats", 1}};
    const Json first = driver::simulate(parse_scenario(doc));
    EXPECT_GT(first["points"][0]["ops_total"].get<std::uint64_t>(), 0u) << g.id;
    EXPECT_EQ(first.dump(), driver::simulate(parse_scenario(doc)).dump()) << g.id;
  }
}

// ---------------------------------------------------------------------------
// Which lock simple operations take

struct CountSections : KernelObserver {
  int global = 0, per_sem = 0;
  void on_cs_begin(const machine::Task&, int locknum) override {
    (locknum < 0 ? global : per_sem) += 1;
  }
};

// Task 0 runs 20 simple ops from t = 0; seven more tasks start at 100 us
// (after task 0's first nine) and run 20 each, on their own semaphores.
std::pair<std::uint64_t, CountSections> simple_only(const KernelPolicy& p) {
  Rig rig(p, machine(), 8, 1);
  CountSections count;
  rig.kernel().set_observer(&count);
  for (int i = 0; i < 8; ++i) {
    rig.add_task(i, [i](Rig& r, machine::Task& t) {
      if (i > 0) {
        t.actor->sleep_until(100 * kTicksPerUs);
        t.idle_until(100 * kTicksPerUs);
      }
      for (int k = 0; k < 10; ++k) {
        const Sembuf up{i, +1, 0};
        const Sembuf down{i, -1, 0};
        ASSERT_EQ(r.kernel().semop(t, {&up, 1}), 0);
        ASSERT_EQ(r.kernel().semop(t, {&down, 1}), 0);
      }
    });
  }
  rig.run();
  return {rig.kernel().array().array_lock->stats().acquisitions, count};
}

TEST(Generations, SimpleOpsNeverTakeTheGlobalLockFrom310) {
  const auto [global_acq, global_cs] = simple_only(gen("global_lock"));
  EXPECT_EQ(global_acq, 160u);  // every op
  EXPECT_EQ(global_cs.global, 160);
  for (const char* id : {"per_sem_lock_rc", "per_sem_lock", "split_queues", "moved_otime",
                         "wait_array", "complex_mode"}) {
    const auto [acq, cs] = simple_only(gen(id));
    EXPECT_EQ(acq, 0u) << id;
    EXPECT_EQ(cs.global, 0) << id;
    EXPECT_EQ(cs.per_sem, 160) << id;
  }
  // 4.11+: a fresh array runs its first nine operations in global mode.
  const auto [acq, cs] = simple_only(gen("hysteresis"));
  EXPECT_EQ(acq, 9u);
  EXPECT_EQ(cs.global, 9);
  EXPECT_EQ(cs.per_sem, 151);
  // The rwlock series: every simple op takes the rwlock for reading, never the spinlock.
  Rig rig(gen("rwlock"), machine(), 1, 1);
  rig.add_task(0, [](Rig& r, machine::Task& t) {
    const Sembuf up{0, +1, 0};
    for (int k = 0; k < 5; ++k) r.kernel().semop(t, {&up, 1});
  });
  rig.run();
  EXPECT_EQ(rig.kernel().array().rwlock->stats().read.acquisitions, 5u);
  EXPECT_EQ(rig.kernel().array().rwlock->stats().write.acquisitions, 0u);
  EXPECT_EQ(rig.kernel().array().array_lock->stats().acquisitions, 0u);
}

// The v3 series as posted (6062a8dc, 3.10-rc1): a complex op, semctl() too, takes the
// array lock and then every semaphore's lock; 3.10 as released takes the array lock
// and only waits (spin_unlock_wait) for each semaphore's lock to be free.
TEST(Generations, PostedV3TakesEverySemaphoreLockForAComplexOpOrSemctl) {
  const auto posted =
      config::parse_kernel(Json::parse(R"({"base": "per_sem_lock", "sem_lock": "lock_all"})"));
  for (const bool lock_all : {true, false}) {
    Rig rig(lock_all ? posted : gen("per_sem_lock"), machine(), 6, 1);
    rig.add_task(0, [](Rig& r, machine::Task& t) {
      const Sembuf two[2] = {{0, +1, 0}, {3, +1, 0}};
      ASSERT_EQ(r.kernel().semop(t, {two, 2}), 0);
      ASSERT_EQ(r.kernel().setval(t, 5, 1), 0);
      const Sembuf one{2, +1, 0};
      ASSERT_EQ(r.kernel().semop(t, {&one, 1}), 0);  // a simple op: its own lock only
    });
    rig.run();
    const auto& sma = rig.kernel().array();
    EXPECT_EQ(sma.array_lock->stats().acquisitions, 2u) << lock_all;
    for (int i = 0; i < 6; ++i) {
      const auto want = (lock_all ? 2u : 0u) + (i == 2 ? 1u : 0u);
      EXPECT_EQ(sma.sem_locks[static_cast<std::size_t>(i)]->stats().acquisitions, want)
          << "sem " << i << (lock_all ? " lock_all" : " per_sem_lock");
    }
  }
}

// ---------------------------------------------------------------------------
// Wakeup order

struct Wakes : KernelObserver {
  std::vector<std::pair<int, int>> order;  // (wakee, status)
  void on_wake(const machine::Task&, const machine::Task& wakee, int status) override {
    order.emplace_back(wakee.id, status);
  }
};

struct Step {
  int task;
  std::vector<Sembuf> sops;
};

// The steps run one at a time, 50 us apart (each task waits for its turn),
// from the initial values; returns the wakeups of the last step, in the
// order the waker queued them (wake_up_sem_queue_prepare).
std::vector<int> last_step_wakes(const KernelPolicy& p, std::vector<int> initial,
                                 const std::vector<Step>& steps) {
  int ntasks = 0;
  for (const auto& s : steps) ntasks = std::max(ntasks, s.task + 1);
  Rig rig(p, machine(), static_cast<int>(initial.size()), 1);
  for (std::size_t i = 0; i < initial.size(); ++i) rig.kernel().array().semval[i] = initial[i];
  Wakes wakes;
  rig.kernel().set_observer(&wakes);
  std::size_t last_start = 0;
  for (int task = 0; task < ntasks; ++task) {
    rig.add_task(task, [task, &steps](Rig& r, machine::Task& t) {
      for (std::size_t i = 0; i < steps.size(); ++i) {
        if (steps[i].task != task) continue;
        const Tick at = static_cast<Tick>(i + 1) * 50 * kTicksPerUs;
        t.actor->sleep_until(at);
        t.idle_until(at);
        if (r.kernel().semop(t, steps[i].sops) == -EIDRM) return;
      }
    });
  }
  const Tick last = static_cast<Tick>(steps.size()) * 50 * kTicksPerUs;
  rig.set_controller([&](Rig& r, machine::Task& c) {
    c.actor->sleep_until(last - 1);
    last_start = wakes.order.size();
    c.actor->sleep_until(last + 40 * kTicksPerUs);
    c.idle_until(c.actor->now());
    r.kernel().rmid(c);  // the rest fail with EIDRM
  });
  rig.run();
  std::vector<int> out;
  for (std::size_t i = last_start; i < wakes.order.size(); ++i)
    if (wakes.order[i].second != -EIDRM) out.push_back(wakes.order[i].first);
  return out;
}

const std::vector<std::string> kOld = {"global_lock", "rwlock", "per_sem_lock_rc", "per_sem_lock"};
const std::vector<std::string> kMerged = {"split_queues", "moved_otime", "wait_array",
                                          "complex_mode", "hysteresis"};

TEST(WakeupOrder, WaitForZeroFirstFrom311) {
  // s0 = 1. T1 waits for zero, T2 waits to take 2; T3 adds 1: T2 completes
  // and brings s0 to 0, which releases T1. 3.11+ wakes the wait-for-zero
  // sleeper first (do_smart_wakeup_zero before the alter op's own wakeup);
  // <= 3.10 find T2 first and restart for T1 (check_restart).
  const std::vector<Step> steps = {{1, {{0, 0, 0}}}, {2, {{0, -2, 0}}}, {3, {{0, +1, 0}}}};
  for (const auto& id : kOld)
    EXPECT_EQ(last_step_wakes(gen(id), {1}, steps), (std::vector<int>{2, 1})) << id;
  for (const auto& id : kMerged)
    EXPECT_EQ(last_step_wakes(gen(id), {1}, steps), (std::vector<int>{1, 2})) << id;
}

TEST(WakeupOrder, WaitForZeroIsLifoUntil310FifoFrom311) {
  // s0 = 1; T1 then T2 wait for zero; T3 takes s0 to 0. <= 3.10 queue
  // wait-for-zero ops at the head (list_add), 3.11+ at the tail.
  const std::vector<Step> steps = {{1, {{0, 0, 0}}}, {2, {{0, 0, 0}}}, {3, {{0, -1, 0}}}};
  for (const auto& id : kOld)
    EXPECT_EQ(last_step_wakes(gen(id), {1}, steps), (std::vector<int>{2, 1})) << id;
  for (const auto& id : kMerged)
    EXPECT_EQ(last_step_wakes(gen(id), {1}, steps), (std::vector<int>{1, 2})) << id;
}

TEST(WakeupOrder, ComplexSleepersFirstIn310) {
  // s1 = 1. T1 (simple) then T2 (complex, needs s0 and s1) wait for s0; T3
  // adds one to s0. 3.9 scans the global list in arrival order and 3.11+ the
  // merged alter queue: T1 gets it. 3.10 scans the complex sleepers first: T2.
  const std::vector<Step> steps = {
      {1, {{0, -1, 0}}}, {2, {{0, -1, 0}, {1, -1, 0}}}, {3, {{0, +1, 0}}}};
  for (const char* id : {"rwlock", "per_sem_lock_rc", "per_sem_lock"})
    EXPECT_EQ(last_step_wakes(gen(id), {0, 1}, steps), (std::vector<int>{2})) << id;
  EXPECT_EQ(last_step_wakes(gen("global_lock"), {0, 1}, steps), (std::vector<int>{1}));
  for (const auto& id : kMerged)
    EXPECT_EQ(last_step_wakes(gen(id), {0, 1}, steps), (std::vector<int>{1})) << id;
}

TEST(WakeupOrder, MergeQueuesPutsTheLastSemaphoreFirst) {
  // T1 sleeps on s0, T2 on s1 (simple decrements), then T3 (complex, needs
  // s2) sleeps: 3.11+ merge_queues() splices each semaphore's queue at the
  // head of the array's, so the array queue is T2, T1, T3. T4 adds one to s0
  // and s1: 3.11+ wake T2 then T1; 3.9 (one global list in arrival order)
  // and 3.10 (per-semaphore passes in sops order) wake T1 then T2.
  const std::vector<Step> steps = {{1, {{0, -1, 0}}},
                                   {2, {{1, -1, 0}}},
                                   {3, {{2, -1, 0}, {0, 0, 0}}},
                                   {4, {{0, +1, 0}, {1, +1, 0}}}};
  for (const auto& id : kOld)
    EXPECT_EQ(last_step_wakes(gen(id), {0, 0, 0}, steps), (std::vector<int>{1, 2})) << id;
  for (const auto& id : kMerged)
    EXPECT_EQ(last_step_wakes(gen(id), {0, 0, 0}, steps), (std::vector<int>{2, 1})) << id;
}

TEST(WakeupOrder, GlobalFifoWhileAComplexOpSleeps) {
  // s1 = 0, s2 = 1. T1 waits on s1 (simple), T2 (complex) on s1 and s2, T3 on
  // s1 again; T4 adds 2 to s1. Every generation serves T1 first; 3.10 tries
  // the complex sleeper T2 first.
  const std::vector<Step> steps = {
      {1, {{1, -1, 0}}}, {2, {{1, -1, 0}, {2, -1, 0}}}, {3, {{1, -1, 0}}}, {4, {{1, +2, 0}}}};
  for (const char* id :
       {"global_lock", "split_queues", "moved_otime", "wait_array", "complex_mode", "hysteresis"})
    EXPECT_EQ(last_step_wakes(gen(id), {0, 0, 1}, steps), (std::vector<int>{1, 2})) << id;
  for (const char* id : {"rwlock", "per_sem_lock_rc", "per_sem_lock"})
    EXPECT_EQ(last_step_wakes(gen(id), {0, 0, 1}, steps), (std::vector<int>{2, 1})) << id;
}

// 3.11+ against the reference model of the current kernel: random lockstep
// scripts, the wakeups of every step in the model's order.
TEST(WakeupOrder, MergedGenerationsMatchTheReferenceModel) {
  int checked = 0;
  for (std::uint64_t script = 0; script < 60; ++script) {
    Rng rng = Rng::derive(0x0DE5, script);
    const auto below = [&](int n) {
      return static_cast<int>(rng.below(static_cast<std::uint64_t>(n)));
    };
    const int nsems = 1 + below(3);
    const int ntasks = 3 + below(3);
    std::vector<Step> steps;
    SemArrayModel model(nsems);
    std::vector<std::vector<SemArrayModel::Wakeup>> expected;
    std::vector<bool> asleep(static_cast<std::size_t>(ntasks), false);
    for (int s = 0; s < 10; ++s) {
      std::vector<int> idle;
      for (int t = 0; t < ntasks; ++t)
        if (!asleep[static_cast<std::size_t>(t)]) idle.push_back(t);
      if (idle.empty()) break;
      const int task = idle[static_cast<std::size_t>(below(static_cast<int>(idle.size())))];
      std::vector<Sembuf> sops(static_cast<std::size_t>(1 + (below(3) == 0 ? 1 : 0)));
      for (auto& sop : sops) sop = {below(nsems), below(4) - 1, 0};
      const auto o = model.semop(task, sops);
      if (o.kind == SemArrayModel::SemopKind::kBlocked)
        asleep[static_cast<std::size_t>(task)] = true;
      for (const auto& w : model.woken()) asleep[static_cast<std::size_t>(w.task)] = false;
      steps.push_back({task, sops});
      expected.push_back(model.woken());
    }
    for (const auto& id : kMerged) {
      // Replay the prefix ending at each step with wakeups, compare that step's.
      for (std::size_t upto = 1; upto <= steps.size(); ++upto) {
        if (expected[upto - 1].empty()) continue;
        const std::vector<Step> prefix(steps.begin(), steps.begin() + static_cast<long>(upto));
        std::vector<int> want;
        for (const auto& w : expected[upto - 1]) want.push_back(w.task);
        EXPECT_EQ(
            last_step_wakes(gen(id), std::vector<int>(static_cast<std::size_t>(nsems), 0), prefix),
            want)
            << id << " script " << script << " step " << upto;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 100);
  std::printf("[ wakeups  ] %d wakeup lists compared with the reference model\n", checked);
}

}  // namespace
}  // namespace semsim::ipc
