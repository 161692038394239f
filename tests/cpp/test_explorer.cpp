// The schedule explorer (sim/ipc/explorer.hpp) against every generation:
// it finds the missed wakeup of 3.10-rc, the sem_lock() race of 3.10/3.11 and
// the complex_count race of 3.12-4.8, each with a replayable schedule, and
// nothing in the generations without them over thousands of schedules.
//
// Every search is deterministic (a fixed range of seeds and plans), so these
// tests never flake; the budgets leave room for the first hit to move if the
// machine model's costs change (today, with the store buffer: the 3.10/3.11
// race at mixed seeds 179-646, about one run in 400; the 3.12 race once in
// about 500,000 small schedules).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "verify/explorer.hpp"

namespace semsim::ipc {
namespace {

// The machine of the searches: test_machine()'s costs with its store buffer
// (x86-TSO, machine/store_buffer.hpp), as every preset has one. The seeds and
// budgets below were found on it.
const config::MachineParams& machine() {
  static const config::MachineParams m = test_machine(8);
  return m;
}

// The named interleavings' machine: every store stalls until its line is here
// (no store buffer), so a planned stall point lines up with the code's order
// of stores and loads. On a store buffer the same points land at other dates
// (the 3.12 plan below no longer meets C's section); the searches cover it.
const config::MachineParams& in_order_machine() {
  static const config::MachineParams m = [] {
    config::MachineParams t = test_machine(8);
    t.store_buffer_entries = 0;
    t.locked_drain = 0;
    return t;
  }();
  return m;
}

const KernelPolicy& gen(const char* id) {
  const KernelPolicy* p = find_generation(id);
  if (p == nullptr) throw std::runtime_error(std::string("no generation ") + id);
  return *p;
}

bool has(const ExploreResult& r, Violation::Kind kind) {
  for (const auto& v : r.violations)
    if (v.kind == kind) return true;
  return false;
}

std::string first_violation(const ExploreResult& r) {
  return r.violations.empty() ? std::string("(none)") : r.violations.front().what;
}

// The run of a found schedule, replayed: the same violations, byte for byte.
void expect_replays(const KernelPolicy& policy, const SearchResult& s) {
  const auto again = s.plan < 0 ? [&] {
    ExploreOptions o;
    o.seed = s.seed;
    return explore(policy, machine(), o);
  }()
                                : explore(policy, machine(), small_plan(s.seed, s.plan));
  ASSERT_EQ(again.violations.size(), s.result.violations.size());
  for (std::size_t i = 0; i < again.violations.size(); ++i)
    EXPECT_EQ(again.violations[i].what, s.result.violations[i].what);
  EXPECT_EQ(again.end, s.result.end);
  EXPECT_EQ(again.semops, s.result.semops);
}

void report(const char* what, const KernelPolicy& p, const SearchResult& s) {
  std::printf("[ explorer ] %s in %s: %s seed %llu%s after %d schedules: %s\n", what, p.id.c_str(),
              s.plan < 0 ? "mixed workload" : "small scenario",
              static_cast<unsigned long long>(s.seed),
              s.plan < 0 ? "" : (" plan " + std::to_string(s.plan)).c_str(), s.runs,
              first_violation(s.result).c_str());
}

TEST(Explorer, FindsTheMissedWakeupOf310rc) {
  const auto& p = gen("per_sem_lock_rc");
  const auto s = search_mixed(p, machine(), 1, 50);
  ASSERT_TRUE(s.found);
  EXPECT_TRUE(has(s.result, Violation::Kind::LostWakeup)) << first_violation(s.result);
  report("missed wakeup", p, s);
  expect_replays(p, s);
}

TEST(Explorer, TheMissedWakeupFixRemovesIt) {
  // The same schedules on 3.10 as released: no lost wakeup, nobody stuck.
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    ExploreOptions o;
    o.seed = seed;
    const auto rc = explore(gen("per_sem_lock_rc"), machine(), o);
    const auto fixed = explore(gen("per_sem_lock"), machine(), o);
    EXPECT_FALSE(has(fixed, Violation::Kind::LostWakeup))
        << "seed " << seed << ": " << first_violation(fixed);
    EXPECT_EQ(fixed.stuck, 0) << "seed " << seed;
    if (seed == 1) {
      EXPECT_TRUE(has(rc, Violation::Kind::LostWakeup));
    }
  }
}

TEST(Explorer, FindsTheSemLockRaceOf310And311) {
  // 3.10's sem_lock() tests complex_count before spin_is_locked(): a simple
  // op proceeds beside a complex op that went to sleep in between.
  for (const char* id : {"per_sem_lock", "split_queues", "moved_otime"}) {
    const auto& p = gen(id);
    const auto s = search_mixed(p, machine(), 1, 2500);
    ASSERT_TRUE(s.found) << id;
    EXPECT_TRUE(has(s.result, Violation::Kind::Race)) << id << ": " << first_violation(s.result);
    report("sem_lock race", p, s);
    expect_replays(p, s);
  }
}

TEST(Explorer, FindsTheComplexCountRaceOf312To48) {
  const auto& p = gen("wait_array");
  // With every request served at its date the window is narrow: a search from
  // seed 1 first finds it at seed 508, plan 983 (492,495 schedules, ten minutes
  // on a loaded host; mixed-workload seeds 1-100,000 do not find it); the test
  // searches from there so that it stays a CI test.
  const auto s = search_small(p, machine(), 508, 5000);
  ASSERT_TRUE(s.found);
  EXPECT_TRUE(has(s.result, Violation::Kind::Race)) << first_violation(s.result);
  // A simple op beside an array-wide critical section (either side may be the
  // one caught changing a semaphore).
  const std::string& what = s.result.violations.front().what;
  EXPECT_NE(what.find("the array lock"), std::string::npos) << what;
  EXPECT_NE(what.find(".lock"), std::string::npos) << what;
  report("complex_count race", p, s);
  expect_replays(p, s);
  // 3.19-4.8 (smp_rmb() instead of smp_mb()) carries it too: the same schedule.
  KernelPolicy rmb = p;
  rmb.fence = FastPathFence::ReadOnly;
  EXPECT_TRUE(has(explore(rmb, machine(), small_plan(s.seed, s.plan)), Violation::Kind::Race));
  // And 4.9's complex_mode removes it: the same schedule is clean.
  EXPECT_TRUE(
      explore(gen("complex_mode"), machine(), small_plan(s.seed, s.plan)).violations.empty());
}

TEST(Explorer, FindsNothingIn49AndLater) {
  for (const char* id : {"complex_mode", "hysteresis"}) {
    const auto& p = gen(id);
    const auto mixed = search_mixed(p, machine(), 1, 1000);
    EXPECT_FALSE(mixed.found) << id << " seed " << mixed.seed << ": "
                              << first_violation(mixed.result);
    const auto small = search_small(p, machine(), 1, 4000);
    EXPECT_FALSE(small.found) << id << " seed " << small.seed << " plan " << small.plan << ": "
                              << first_violation(small.result);
    // Where 3.12's race shows (seed 508's plans, the test above): clean here.
    const auto near = search_small(p, machine(), 508, 2000);
    EXPECT_FALSE(near.found) << id << " seed " << near.seed << " plan " << near.plan << ": "
                             << first_violation(near.result);
    std::printf("[ explorer ] %s: nothing in %d + %d + %d schedules\n", id, mixed.runs, small.runs,
                near.runs);
  }
}

TEST(Explorer, FindsNothingInTheGlobalLockAndTheRwlock) {
  for (const char* id : {"global_lock", "rwlock"}) {
    const auto& p = gen(id);
    const auto mixed = search_mixed(p, machine(), 1, 300);
    EXPECT_FALSE(mixed.found) << id << ": " << first_violation(mixed.result);
    const auto small = search_small(p, machine(), 1, 1500);
    EXPECT_FALSE(small.found) << id << ": " << first_violation(small.result);
  }
}

// The two races as named interleavings (planned perturbations of one task).
// A is a simple op on s2, or (a_wakes_b) the +1 on s0 that completes B.
ExploreOptions interleaving(Tick a_start, Tick c_start, std::vector<ExploreOptions::Planned> plan,
                            bool a_wakes_b) {
  ExploreOptions o;
  o.iterations = 1;
  o.rule_probability = 0;
  o.jitter_probability = 0;
  o.max_think = 0;
  o.horizon = 1 * kTicksPerMs;
  o.tasks = {
      {{{{{0, -1, 0}, {1, +1, 0}}, -1}}, 0},            // B: a complex op that sleeps
      {{{{{a_wakes_b ? 0 : 2, +1, 0}}, -1}}, a_start},  // A: a simple op
      {{{{{0, +1, 0}}, -1}}, c_start},                  // C: completes B
  };
  o.plan = std::move(plan);
  return o;
}

// A's start is swept in steps of a_step: a window of a few ns needs a fine step.
int count_races(const char* id, const std::vector<ExploreOptions::Planned>& plan, bool a_wakes_b,
                Tick a_step = 50 * kTicksPerNs) {
  int races = 0;
  // When A completes B itself, C comes much later (it only balances the values).
  const Tick c_from = a_wakes_b ? 100 * kTicksPerUs : 500 * kTicksPerNs;
  const Tick c_to = a_wakes_b ? c_from + 1 : 4000 * kTicksPerNs;
  for (Tick a = 0; a < 1500 * kTicksPerNs; a += a_step)
    for (Tick c = c_from; c < c_to; c += 100 * kTicksPerNs)
      if (has(explore(gen(id), in_order_machine(), interleaving(a, c, plan, a_wakes_b)),
              Violation::Kind::Race))
        ++races;
  return races;
}

TEST(Explorer, NamedInterleavings) {
  // 3.10: A's synchronisation points are syscall (0), the complex_count test
  // (1), spin_lock (2), the complex_count recheck (3), spin_is_locked (4). A
  // stalls before spin_is_locked(); B goes to sleep meanwhile; A's op then
  // completes B holding only its own semaphore's lock.
  const std::vector<ExploreOptions::Planned> stall = {{1, 4, 0, 1, 1 * kTicksPerUs}};
  EXPECT_GT(count_races("per_sem_lock", stall, true, 5 * kTicksPerNs), 0);
  EXPECT_EQ(count_races("wait_array", stall, true, 5 * kTicksPerNs), 0);
  // 3.12: A's points are syscall (0), the complex_count test (1), spin_lock
  // (2), spin_is_locked (3), the recheck after the barrier (4). A stalls
  // before spin_lock until B's section ends (B asleep), then
  // before its recheck until C changes complex_count (C completes B without
  // scanning the locks): A runs beside C.
  const std::vector<ExploreOptions::Planned> two = {{1, 2, 3, 1, 0}, {1, 4, 2, 1, 0}};
  EXPECT_GT(count_races("wait_array", two, false), 0);
  for (const char* id : {"complex_mode", "hysteresis", "per_sem_lock"})
    EXPECT_EQ(count_races(id, two, false), 0) << id;
}

TEST(Explorer, CheckerSeesNothingWithoutPerturbation) {
  // Unperturbed runs of every generation (per_sem_lock_rc aside) are clean.
  for (const auto& p : generations()) {
    if (!p.missed_wakeup_fix) continue;
    for (std::uint64_t seed = 1; seed <= 5; ++seed) {
      ExploreOptions o;
      o.seed = seed;
      o.rule_probability = 0;
      o.jitter_probability = 0;
      const auto r = explore(p, machine(), o);
      EXPECT_TRUE(r.violations.empty()) << p.id << " seed " << seed << ": " << first_violation(r);
      EXPECT_EQ(r.stuck, 0) << p.id;
      EXPECT_EQ(r.semops, 7u * 12u + 2u * 24u) << p.id;  // T7 and T8 do two ops per round
    }
  }
}

}  // namespace
}  // namespace semsim::ipc
