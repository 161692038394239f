// Per-op memory traffic: for an uncontended simple altering op (semop +1 on
// semaphore 0, no sleepers, after warm-up), the lines each generation
// touches and how, against the reference's section 10 (and the step lists of
// sections 3.4, 5.2, 9.2). The trace hook is SemKernel's observer.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "verify/explorer.hpp"

namespace semsim::ipc {
namespace {

struct Trace : KernelObserver {
  bool on = false;
  std::vector<AccessEvent> events;
  void on_access(const machine::Task&, const AccessEvent& e) override {
    if (on) events.push_back(e);
  }
};

std::vector<AccessEvent> one_simple_op(const KernelPolicy& p) {
  Rig rig(p, test_machine(4), 4, 1);
  Trace trace;
  rig.kernel().set_observer(&trace);
  rig.add_task(0, [&trace](Rig& r, machine::Task& t) {
    const Sembuf up{0, +1, 0};
    const Sembuf down{0, -1, 0};
    // Warm up (and leave 4.11+'s initial global mode).
    for (int k = 0; k < 10; ++k) {
      r.kernel().semop(t, {&up, 1});
      r.kernel().semop(t, {&down, 1});
    }
    trace.on = true;
    r.kernel().semop(t, {&up, 1});
    trace.on = false;
  });
  rig.run();
  return trace.events;
}

std::string describe(const std::vector<AccessEvent>& events) {
  std::string s;
  for (const auto& e : events) {
    if (!s.empty()) s += ' ';
    s += access_kind_name(e.kind);
    s += ':';
    s += field_name(e.field);
    if (e.line >= 0) {
      s += '@';
      s += std::to_string(e.line);
    }
  }
  return s;
}

// What the op does to the array's lines (not the semaphore's): line -> kinds.
std::map<int, std::set<std::string>> array_lines(const KernelPolicy& p,
                                                 const std::vector<AccessEvent>& events) {
  (void)p;
  std::map<int, std::set<std::string>> out;
  for (const auto& e : events) {
    const bool sem_field = e.field == Field::SemVal || e.field == Field::SemLock ||
                           e.field == Field::SemPending || e.field == Field::SemOtime;
    if (e.line < 0 || sem_field) continue;
    out[e.line].insert(access_kind_name(e.kind));
  }
  return out;
}

int count(const std::vector<AccessEvent>& events, AccessKind kind, Field field) {
  int n = 0;
  for (const auto& e : events)
    if (e.kind == kind && e.field == field) ++n;
  return n;
}

int count_kind(const std::vector<AccessEvent>& events, AccessKind kind) {
  int n = 0;
  for (const auto& e : events)
    if (e.kind == kind) ++n;
  return n;
}

using Lines = std::map<int, std::set<std::string>>;

// Section 10, column by column, then the exact sequence.
TEST(Traffic, GlobalLock39) {
  const auto& p = *find_generation("global_lock");
  const auto ev = one_simple_op(p);
  // A+W lock line; R perms; W otime line (also sem_base); R complex_count line.
  EXPECT_EQ(array_lines(p, ev), (Lines{{0, {"A", "R", "W"}}, {1, {"R", "W"}}, {2, {"R"}}}));
  EXPECT_EQ(count(ev, AccessKind::Rmw, Field::Lock), 1);
  EXPECT_EQ(count(ev, AccessKind::Write, Field::Lock), 1);
  EXPECT_EQ(count(ev, AccessKind::Write, Field::Otime), 1);
  EXPECT_EQ(count(ev, AccessKind::Write, Field::SemVal), 1);  // semval and sempid
  EXPECT_EQ(count_kind(ev, AccessKind::Fence), 0);
  EXPECT_EQ(describe(ev),
            "A:sem_perm.lock@0 R:sem_perm.seq@0 R:sma->sem_nsems@2 R:sem_perm (deleted/perms)@0 "
            "R:sem_perm.security@1 R:sem_perm.security@1 R:sma->sem_base@1 R:sem->semval@2 "
            "W:sem->semval@2 "
            "R:sma->complex_count@2 R:sem->pending@2 W:sma->sem_otime@1 W:sem_perm.lock@0");
}

TEST(Traffic, Rwlock2013) {
  const auto& p = *find_generation("rwlock");
  const auto ev = one_simple_op(p);
  // A+A rwlock line (read_lock, read_unlock); W otime; A/W sem lock, RW semval.
  EXPECT_EQ(count(ev, AccessKind::Rmw, Field::Lock), 2);
  EXPECT_EQ(count(ev, AccessKind::Write, Field::Lock), 0);
  EXPECT_EQ(count(ev, AccessKind::Write, Field::Otime), 1);
  EXPECT_EQ(count(ev, AccessKind::Rmw, Field::SemLock), 1);
  EXPECT_EQ(count(ev, AccessKind::Write, Field::SemLock), 1);
  EXPECT_EQ(array_lines(p, ev), (Lines{{0, {"A", "R"}}, {1, {"R", "W"}}, {2, {"R"}}}));
  // The series' code (3.9-rc with Davidlohr Bueso's lockless lookup) on 3.9's
  // 16-byte header: ipc_checkid()'s seq and ipcperms()'s fields are read on
  // the rwlock's line before read_lock(); nothing re-reads sem_perm.deleted
  // under the lock (gen_rwlock.cpp).
  EXPECT_EQ(describe(ev),
            "R:sem_perm.seq@0 R:sma->sem_nsems@2 R:sem_perm (deleted/perms)@0 "
            "R:sem_perm.security@1 R:sem_perm.security@1 A:sem_perm.lock@0 R:sma->complex_count@2 "
            "A:sem->lock@2 "
            "R:sma->sem_base@1 R:sem->semval@2 W:sem->semval@2 R:sma->complex_count@2 "
            "R:sem->pending@2 R:sma->complex_count@2 W:sma->sem_otime@1 W:sem->lock@2 "
            "A:sem_perm.lock@0");
}

TEST(Traffic, PerSemLock310) {
  for (const char* id : {"per_sem_lock", "per_sem_lock_rc"}) {
    const auto& p = *find_generation(id);
    const auto ev = one_simple_op(p);
    // R complex_count x2 (sem_lock), R lock word (spin_is_locked), R sem_base;
    // W sem_otime; A/W sem lock on a line shared with the neighbour. The 24-byte
    // ipc_rcu header puts sem_perm.seq (ipc_checkid) on line 1, with sem_otime.
    EXPECT_EQ(array_lines(p, ev), (Lines{{0, {"R"}}, {1, {"R", "W"}}, {2, {"R"}}})) << id;
    EXPECT_GE(count(ev, AccessKind::Read, Field::ComplexCount), 3) << id;
    EXPECT_EQ(count(ev, AccessKind::Read, Field::Lock), 1) << id;
    EXPECT_EQ(count(ev, AccessKind::Write, Field::Otime), 1) << id;
    EXPECT_EQ(count(ev, AccessKind::Rmw, Field::SemLock), 1) << id;
    EXPECT_EQ(count(ev, AccessKind::Write, Field::SemLock), 1) << id;
    EXPECT_EQ(count_kind(ev, AccessKind::Fence), 0) << id;
  }
  EXPECT_EQ(describe(one_simple_op(*find_generation("per_sem_lock"))),
            "R:sem_perm.seq@1 R:sma->sem_nsems@2 R:sem_perm (deleted/perms)@0 "
            "R:sem_perm.security@1 R:sem_perm.security@1 R:sma->complex_count@2 A:sem->lock@2 "
            "R:sma->complex_count@2 "
            "R:sem_perm.lock@0 R:sem_perm (deleted/perms)@0 R:sma->sem_base@1 R:sem->semval@2 "
            "W:sem->semval@2 R:sma->complex_count@2 R:sem->pending@2 R:sma->complex_count@2 "
            "W:sma->sem_otime@1 W:sem->lock@2");
}

TEST(Traffic, SplitQueues) {
  const auto& p = *find_generation("split_queues");
  const auto ev = one_simple_op(p);
  // 3.10's locking and shared sem_otime; semaphore 0 now on line 3 (48-byte struct sem).
  EXPECT_EQ(array_lines(p, ev), (Lines{{0, {"R"}}, {1, {"R", "W"}}, {2, {"R"}}}));
  EXPECT_EQ(count(ev, AccessKind::Write, Field::Otime), 1);
}

TEST(Traffic, MovedOtime311) {
  const auto& p = *find_generation("moved_otime");
  const auto ev = one_simple_op(p);
  // R only on the array (sem_base, complex_count, lock word, perms); A/W
  // lock, RW semval, W otime on the semaphore's own line.
  EXPECT_EQ(array_lines(p, ev), (Lines{{1, {"R"}}, {2, {"R"}}}));
  EXPECT_EQ(count(ev, AccessKind::Write, Field::SemOtime), 1);
  EXPECT_EQ(count(ev, AccessKind::Write, Field::Otime), 0);
  EXPECT_EQ(count_kind(ev, AccessKind::Fence), 0);
  EXPECT_EQ(describe(ev),
            "R:sem_perm.seq@1 R:sma->sem_nsems@2 R:sem_perm (deleted/perms)@1 "
            "R:sem_perm.security@1 R:sem_perm.security@1 R:sma->complex_count@2 A:sem->lock@3 "
            "R:sma->complex_count@2 "
            "R:sem_perm.lock@1 R:sem_perm (deleted/perms)@1 R:sma->sem_base@2 R:sem->semval@3 "
            "W:sem->semval@3 R:sem->semval@3 R:sma->pending@2 R:sem->pending@3 "
            "W:sem->sem_otime@3 W:sem->lock@3");
}

TEST(Traffic, WaitArray312To48) {
  const auto& p = *find_generation("wait_array");
  const auto ev = one_simple_op(p);
  // R complex_count, the lock word once, complex_count again; a full fence
  // (3.12-3.18); smp_rmb() from 3.19, free on x86.
  EXPECT_EQ(array_lines(p, ev), (Lines{{1, {"R"}}, {2, {"R"}}}));
  EXPECT_EQ(count(ev, AccessKind::Read, Field::Lock), 1);
  EXPECT_EQ(count_kind(ev, AccessKind::Fence), 1);
  EXPECT_EQ(describe(ev),
            "R:sem_perm.seq@1 R:sma->sem_nsems@2 R:sem_perm (deleted/perms)@1 "
            "R:sem_perm.security@1 R:sem_perm.security@1 R:sma->complex_count@2 A:sem->lock@3 "
            "R:sem_perm.lock@1 "
            "F:barrier R:sma->complex_count@2 R:sem_perm (deleted/perms)@1 R:sma->sem_base@2 "
            "R:sem->semval@3 W:sem->semval@3 R:sem->semval@3 R:sma->pending@2 R:sem->pending@3 "
            "W:sem->sem_otime@3 W:sem->lock@3");
  KernelPolicy rmb = p;
  rmb.fence = FastPathFence::ReadOnly;
  const auto ev_rmb = one_simple_op(rmb);
  EXPECT_EQ(count_kind(ev_rmb, AccessKind::Fence), 0);
  EXPECT_EQ(count_kind(ev_rmb, AccessKind::ReadBarrier), 1);
}

TEST(Traffic, ComplexMode49) {
  const auto& p = *find_generation("complex_mode");
  const auto ev = one_simple_op(p);
  // R complex_mode (its own line), a full fence after spin_lock.
  EXPECT_EQ(array_lines(p, ev), (Lines{{1, {"R"}}, {2, {"R"}}, {3, {"R"}}}));
  EXPECT_EQ(count(ev, AccessKind::Read, Field::ModeFlag), 2);
  EXPECT_EQ(count(ev, AccessKind::Read, Field::ComplexCount), 0);
  EXPECT_EQ(count_kind(ev, AccessKind::Fence), 1);
  EXPECT_EQ(describe(ev),
            "R:sem_perm.seq@1 R:sma->sem_nsems@2 R:sem_perm (deleted/perms)@1 "
            "R:sem_perm.security@1 R:sem_perm.security@1 R:complex_mode/use_global_lock@3 "
            "A:sem->lock@4 F:barrier "
            "R:complex_mode/use_global_lock@3 R:sem_perm (deleted/perms)@1 R:sma->sem_base@2 "
            "R:sem->semval@4 W:sem->semval@4 R:sem->semval@4 R:sma->pending@2 R:sem->pending@4 "
            "W:sem->sem_otime@4 W:sem->lock@4");
}

TEST(Traffic, Hysteresis411AndCurrent) {
  const auto& p = *find_generation("hysteresis");
  const auto ev = one_simple_op(p);
  // R use_global_lock x2 (plain, then acquire), R sem_nsems, perms, deleted,
  // pending_alter head; A/W lock, RW semval, W otime; no fence.
  EXPECT_EQ(array_lines(p, ev), (Lines{{0, {"R"}}, {2, {"R"}}, {3, {"R"}}}));
  EXPECT_EQ(count(ev, AccessKind::Read, Field::ModeFlag), 2);
  EXPECT_EQ(count_kind(ev, AccessKind::Fence), 0);
  EXPECT_EQ(count(ev, AccessKind::Read, Field::SemBase), 0);  // struct sem embedded (4.13)
  EXPECT_EQ(describe(ev),
            "R:sem_perm.seq@0 R:sma->sem_nsems@2 R:sem_perm (deleted/perms)@0 "
            "R:sem_perm.security@0 R:sem_perm.security@0 R:sma->sem_nsems@2 "
            "R:complex_mode/use_global_lock@3 "
            "A:sem->lock@4 R:complex_mode/use_global_lock@3 R:sem_perm (deleted/perms)@0 "
            "R:sem->semval@4 W:sem->semval@4 R:sem->semval@4 R:sma->pending@2 R:sem->pending@4 "
            "W:sem->sem_otime@4 W:sem->lock@4");
}

// The shared writes that limit scaling, generation by generation: only
// <= 3.10 write an array line on a simple op.
TEST(Traffic, SharedArrayWritesEndIn311) {
  for (const auto& p : generations()) {
    const auto ev = one_simple_op(p);
    bool writes_array = false;
    for (const auto& [line, kinds] : array_lines(p, ev))
      if (kinds.count("W") != 0 || kinds.count("A") != 0) writes_array = true;
    const bool old = p.otime == OtimeLocation::Array;
    EXPECT_EQ(writes_array, old) << p.id << ": " << describe(ev);
  }
}

}  // namespace
}  // namespace semsim::ipc
