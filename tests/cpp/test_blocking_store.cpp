// What a failed try of perform_atomic_semop() writes.
// - From 3.16 a failed try of a sleeper stores to its queue entry
//   (q->blocking = sop, for count_semcnt()): each scan that tries a blocked
//   complex sleeper writes the line of the sleeper's stack that holds its struct
//   sem_queue, and scans from two CPUs move that line between them (the workload
//   of validation/host-accuracy.md, twentieth stop).
// - Before 4.10 (and for a call with a dupsop since) one pass applied each sop
//   and undid the applied ones when a later one blocked: a failed try wrote the
//   semaphores before the blocking sop twice.
#include <gtest/gtest.h>

#include <span>
#include <string>
#include <utility>

#include "config/kernel_config.hpp"
#include "core/json.hpp"
#include "verify/explorer.hpp"

namespace semsim::ipc {
namespace {

// Counts the stores to sleepers' stacks made by `scanner` while `on` is set.
struct StackStores : KernelObserver {
  const machine::Task* scanner = nullptr;
  bool on = false;
  int stores = 0;
  void on_access(const machine::Task& t, const AccessEvent& e) override {
    if (on && &t == scanner && e.field == Field::SleeperStack && e.kind == AccessKind::Write)
      ++stores;
  }
};

const Sembuf kTake[2] = {{0, -1, 0}, {1, -1, 0}};  // a complex op that blocks (both at 0)
const Sembuf kGive[2] = {{0, +1, 0}, {1, +1, 0}};  // and the op that completes it

// Task 0 sleeps in a complex op; task 1, once it sleeps, does `loops` x
// (+1, -1) on semaphore 2, each of which scans the global queue and fails to
// complete the sleeper, then releases it. Returns task 1's stores to the
// sleeper's stack during its loops.
// The scanner's part: once the sleeper is queued, `loops` x (+1, -1) on semaphore 2
// with `on` set (each call scans the sleeper and fails to complete it), then `release`.
void scan_then_release(Rig& r, machine::Task& t, int loops, bool& on,
                       std::span<const Sembuf> release) {
  t.charge(ns_to_ticks(20'000));  // the sleeper is queued by then
  EXPECT_EQ(r.kernel().sleepers().size(), 1u);
  const Sembuf up{2, +1, 0};
  const Sembuf down{2, -1, 0};
  on = true;
  for (int k = 0; k < loops; ++k) {
    EXPECT_EQ(r.kernel().semop(t, {&up, 1}), 0);
    EXPECT_EQ(r.kernel().semop(t, {&down, 1}), 0);
  }
  on = false;
  EXPECT_EQ(r.kernel().semop(t, release), 0);
}

int stores_during_scans(const KernelPolicy& p, int loops) {
  Rig rig(p, test_machine(4), 4, 1);
  StackStores seen;
  rig.kernel().set_observer(&seen);
  rig.add_task(0, [](Rig& r, machine::Task& t) { EXPECT_EQ(r.kernel().semop(t, kTake), 0); });
  machine::Task& scanner = rig.add_task(1, [&seen, loops](Rig& r, machine::Task& t) {
    scan_then_release(r, t, loops, seen.on, kGive);
  });
  seen.scanner = &scanner;
  rig.run();
  EXPECT_TRUE(rig.all_finished());
  return seen.stores;
}

// `base` with one boolean policy overridden, as a scenario's kernel object sets it.
KernelPolicy with_policy(const std::string& base, const std::string& policy, bool on) {
  return config::parse_kernel(Json{{"base", base}, {policy, on}});
}

TEST(BlockingStore, EveryFailedTryOfASleeperStoresToItsEntryFrom316) {
  constexpr int kLoops = 5;
  for (const auto& p : generations()) {
    const int stores = stores_during_scans(p, kLoops);
    // Both ops of a loop alter semaphore 2, so each scans the complex sleeper once.
    EXPECT_EQ(stores, p.blocking_store ? 2 * kLoops : 0) << p.id;
  }
  // The releases it stands for: 3.16 and later (wait_array's default is 3.16-3.18).
  for (const char* id : {"wait_array", "complex_mode", "hysteresis"})
    EXPECT_TRUE(find_generation(id)->blocking_store) << id;
  for (const char* id :
       {"global_lock", "rwlock", "per_sem_lock", "per_sem_lock_rc", "split_queues", "moved_otime"})
    EXPECT_FALSE(find_generation(id)->blocking_store) << id;
}

TEST(BlockingStore, IsAPolicyOfItsOwn) {
  EXPECT_EQ(stores_during_scans(with_policy("hysteresis", "blocking_store", false), 4), 0);
  EXPECT_EQ(stores_during_scans(with_policy("moved_otime", "blocking_store", true), 4), 8);
  EXPECT_EQ(with_policy("hysteresis", "blocking_store", false).id,
            "hysteresis+blocking_store=false");
}

// Two scanners on two CPUs, each doing (+1, -1) on its own semaphore: with the
// store each failed try takes the entry's line from the other CPU, so the line
// moves about once per scan and the scans take longer; without it, the entry
// stays shared by both after their first reads.
struct Bounce {
  std::uint64_t entry_transfers = 0;
  Tick scanners_done = 0;
};
Bounce two_scanners(const KernelPolicy& p, int loops) {
  Rig rig(p, test_machine(4), 4, 1);
  Bounce out;
  const machine::CacheLine* entry = nullptr;
  rig.add_task(0, [](Rig& r, machine::Task& t) { EXPECT_EQ(r.kernel().semop(t, kTake), 0); });
  int done = 0;
  for (int s = 0; s < 2; ++s) {
    rig.add_task(
        1 + s,
        [&, s](Rig& r, machine::Task& t) {
          t.charge(ns_to_ticks(20'000));
          if (s == 0) entry = r.kernel().sleepers().at(0)->stack_line;
          const Sembuf up{static_cast<unsigned short>(2 + s), +1, 0};
          const Sembuf down{static_cast<unsigned short>(2 + s), -1, 0};
          for (int k = 0; k < loops; ++k) {
            EXPECT_EQ(r.kernel().semop(t, {&up, 1}), 0);
            EXPECT_EQ(r.kernel().semop(t, {&down, 1}), 0);
          }
          out.scanners_done = std::max(out.scanners_done, t.cursor);
          if (++done == 2) {
            out.entry_transfers = entry->stats().misses() - entry->stats().from_memory;
            EXPECT_EQ(r.kernel().semop(t, kGive), 0);
          }
        },
        1 + s);
  }
  rig.run();
  EXPECT_TRUE(rig.all_finished());
  return out;
}

TEST(BlockingStore, ScansFromTwoCpusMoveTheEntryLine) {
  constexpr int kLoops = 50;
  const Bounce with = two_scanners(with_policy("hysteresis", "blocking_store", true), kLoops);
  const Bounce without = two_scanners(with_policy("hysteresis", "blocking_store", false), kLoops);
  // 4 * kLoops scans; about half of them follow the other CPU's store.
  EXPECT_GE(with.entry_transfers, static_cast<std::uint64_t>(kLoops)) << with.entry_transfers;
  EXPECT_LE(without.entry_transfers, 4u) << without.entry_transfers;
  EXPECT_GT(with.scanners_done, without.scanners_done);
}

// Task 0 sleeps in {0,-1},{1,-1} with semaphore 0 at 1: every try applies sop 0
// and blocks on sop 1. Task 1 then does `loops` x (+1, -1) on semaphore 2, each of
// which tries the sleeper (3.10's do_smart_update() twice: its fixed-point loop);
// returns task 1's writes of semaphore 0 and its tries of the sleeper.
struct SemZeroWrites : KernelObserver {
  const machine::Task* scanner = nullptr;
  bool on = false;
  int writes = 0, tries = 0;
  void on_access(const machine::Task& t, const AccessEvent& e) override {
    if (!on || &t != scanner) return;
    if (e.field == Field::SemVal && e.sem == 0 && e.kind == AccessKind::Write) ++writes;
    if (e.field == Field::SleeperStack && e.kind == AccessKind::Read) ++tries;  // q read first
  }
};
std::pair<int, int> undo_writes_during_scans(const KernelPolicy& p, int loops, bool dup) {
  Rig rig(p, test_machine(4), 4, 1);
  SemZeroWrites seen;
  rig.kernel().set_observer(&seen);
  // With `dup` the sleeper's call names semaphore 0 twice: a dupsop call.
  const Sembuf take_dup[3] = {{0, -1, 0}, {0, +1, 0}, {1, -1, 0}};
  rig.add_task(0, [&](Rig& r, machine::Task& t) {
    const Sembuf one{0, +1, 0};
    EXPECT_EQ(r.kernel().semop(t, {&one, 1}), 0);
    if (dup)
      EXPECT_EQ(r.kernel().semop(t, take_dup), 0);
    else
      EXPECT_EQ(r.kernel().semop(t, kTake), 0);
  });
  machine::Task& scanner = rig.add_task(1, [&seen, loops](Rig& r, machine::Task& t) {
    const Sembuf give{1, +1, 0};
    scan_then_release(r, t, loops, seen.on, {&give, 1});
  });
  seen.scanner = &scanner;
  rig.run();
  EXPECT_TRUE(rig.all_finished());
  return {seen.writes, seen.tries};
}

TEST(TwoPass, AOnePassTryWritesAndUndoesTheSopsBeforeTheBlockingOne) {
  constexpr int kLoops = 4;
  for (const auto& p : generations()) {
    const auto [writes, tries] = undo_writes_during_scans(p, kLoops, false);
    EXPECT_GE(tries, 2 * kLoops) << p.id;
    // Each try applies sop 0 (a write) and undoes it (a write).
    EXPECT_EQ(writes, p.two_pass ? 0 : 2 * tries) << p.id;
  }
  EXPECT_TRUE(find_generation("hysteresis")->two_pass);
  for (const char* id : {"global_lock", "rwlock", "per_sem_lock", "per_sem_lock_rc", "split_queues",
                         "moved_otime", "wait_array", "complex_mode"})
    EXPECT_FALSE(find_generation(id)->two_pass) << id;
  EXPECT_EQ(
      undo_writes_during_scans(with_policy("hysteresis", "two_pass", false), kLoops, false).first,
      4 * kLoops);
  EXPECT_EQ(
      undo_writes_during_scans(with_policy("complex_mode", "two_pass", true), kLoops, false).first,
      0);
}

TEST(TwoPass, ADupsopCallTakesTheOnePassPathIn410AndLater) {
  constexpr int kLoops = 3;
  // {0,-1},{0,+1},{1,-1}: sops 0 and 1 are applied (2 writes), then undone (2).
  const auto [writes, tries] =
      undo_writes_during_scans(*find_generation("hysteresis"), kLoops, true);
  EXPECT_EQ(tries, 2 * kLoops);
  EXPECT_EQ(writes, 4 * tries);
}

}  // namespace
}  // namespace semsim::ipc
