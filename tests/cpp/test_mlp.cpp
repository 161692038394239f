// Oracles of memory-level parallelism (machine/mlp.hpp) and of its use in the
// kernel path's lookup (SemKernel::do_semtimedop): a miss followed by
// independent work of length W costs max(miss, W), not miss + W; a dependent
// use waits for the value; independent misses overlap up to fill_buffers and
// serialise beyond; the stall goes to the functions in retirement order; a
// fast run equals a reference-order run.
#include <gtest/gtest.h>

#include <vector>

#include "core/simulation.hpp"
#include "ipc/sem_kernel.hpp"
#include "machine/cache_line.hpp"
#include "machine/mlp.hpp"
#include "machine/store_buffer.hpp"
#include "test_machine_harness.hpp"
#include "test_reference_order.hpp"
#include "verify/explorer.hpp"

namespace semsim {
namespace {

using machine::Access;
using machine::CacheLine;
using machine::Func;
using machine::LoadWindow;
using machine::Task;

constexpr double kTransfer = 100, kL1 = 1;

Tick ns(double v) { return ns_to_ticks(v); }

config::MachineParams machine_with(double fill_buffers) {
  auto m = machine_test::uniform_machine(4, kTransfer);
  m.fill_buffers = fill_buffers;
  return m;
}

// Lines CPU 1 owns (Modified): a load from CPU 0 misses for kTransfer. The task
// is on CPU 0 at 1000 ns (no simulation: nothing else runs).
struct RemoteLines {
  std::vector<CacheLine> lines;
  Task t;
  RemoteLines(const machine::Topology& topo, int n) : lines(static_cast<std::size_t>(n)) {
    for (auto& l : lines) l.access(topo, 1, Access::Write, 0);
    t.cpu = 0;
    t.cursor = ns(1000);
  }
  // Independent loads of every line, issued back to back, then waited for.
  void load_all(const machine::Topology& topo) {
    LoadWindow w;
    for (auto& l : lines) w.load(topo, t, l);
    w.drain(t);
  }
};

TEST(Mlp, AMissThenIndependentWorkCostsTheLongerOfTheTwo) {
  const machine::Topology topo(machine_with(10));
  for (const double work : {30.0, 99.0, 150.0, 400.0}) {
    RemoteLines r(topo, 1);
    LoadWindow w;
    w.load(topo, r.t, r.lines[0]);
    r.t.charge(ns(work));  // instructions that do not need the value
    w.drain(r.t);
    EXPECT_EQ(r.t.cursor, ns(1000) + std::max(ns(kTransfer), ns(kL1 + work))) << work;
    // The serial model (a plain load, then the work) pays both.
    RemoteLines serial(topo, 1);
    machine::load(topo, serial.t, serial.lines[0]);
    serial.t.charge(ns(work));
    EXPECT_EQ(serial.t.cursor, ns(1000 + kTransfer + work)) << work;
  }
}

TEST(Mlp, ADependentUseWaitsForTheValue) {
  const machine::Topology topo(machine_with(10));
  RemoteLines r(topo, 2);
  LoadWindow w;
  const Tick first = w.load(topo, r.t, r.lines[0]);
  EXPECT_EQ(first, ns(1000 + kTransfer));
  w.use(r.t, first);  // the next address is the first load's value: pointer chasing
  EXPECT_EQ(r.t.cursor, first);
  w.load(topo, r.t, r.lines[1]);
  w.drain(r.t);
  EXPECT_EQ(r.t.cursor, ns(1000 + 2 * kTransfer));
  RemoteLines plain(topo, 2);  // the same as two plain loads
  machine::load(topo, plain.t, plain.lines[0]);
  machine::load(topo, plain.t, plain.lines[1]);
  EXPECT_EQ(plain.t.cursor, r.t.cursor);
}

TEST(Mlp, IndependentMissesOverlapUpToTheFillBuffersAndSerialiseBeyond) {
  // Ten buffers: three misses issue one L1 lookup apart and overlap.
  const machine::Topology ten(machine_with(10));
  RemoteLines r10(ten, 3);
  r10.load_all(ten);
  EXPECT_EQ(r10.t.cursor, ns(1000 + 2 * kL1 + kTransfer));
  // Two buffers: the third miss waits for the first to free (1100), ends at 1200.
  const machine::Topology two(machine_with(2));
  RemoteLines r2(two, 3);
  r2.load_all(two);
  EXPECT_EQ(r2.t.cursor, ns(1000 + 2 * kTransfer));
  // Five misses on two buffers: three rounds.
  RemoteLines r25(two, 5);
  r25.load_all(two);
  EXPECT_EQ(r25.t.cursor, ns(1000 + 3 * kTransfer));
  // One buffer: no parallelism, as plain loads.
  const machine::Topology one(machine_with(1));
  RemoteLines r1(one, 3);
  r1.load_all(one);
  EXPECT_EQ(r1.t.cursor, ns(1000 + 3 * kTransfer));
}

TEST(Mlp, HitsCostWhatPlainLoadsCost) {
  const machine::Topology topo(machine_with(10));
  RemoteLines r(topo, 1);
  machine::load(topo, r.t, r.lines[0]);  // now cached
  const Tick from = r.t.cursor;
  r.load_all(topo);
  EXPECT_EQ(r.t.cursor, from + ns(kL1));
}

TEST(Mlp, ASecondLoadOfAnOutstandingLineWaitsForItsFill) {
  const machine::Topology topo(machine_with(10));
  RemoteLines r(topo, 1);
  LoadWindow w;
  const Tick first = w.load(topo, r.t, r.lines[0]);
  const Tick second = w.load(topo, r.t, r.lines[0]);  // the same fill buffer
  EXPECT_EQ(first, ns(1000 + kTransfer));
  EXPECT_EQ(second, first);
  w.drain(r.t);
  EXPECT_EQ(r.t.cursor, first);
  EXPECT_EQ(r.lines[0].stats().misses(), 2u);  // CPU 1's write and our one read
}

TEST(Mlp, TheStallGoesToTheFunctionsInRetirementOrder) {
  const machine::Topology topo(machine_with(10));
  RemoteLines r(topo, 2);
  LoadWindow w;
  r.t.func = Func::IpcObtain;
  w.load(topo, r.t, r.lines[0]);  // done 1100
  r.t.func = Func::IpcPerms;
  r.t.charge(ns(40));             // ipcperms' own work, in the miss's shadow
  w.load(topo, r.t, r.lines[1]);  // issued 1041, done 1141
  r.t.func = Func::SemLock;
  w.drain(r.t);
  const auto at = [&](Func f) { return r.t.time[static_cast<std::size_t>(f)]; };
  // IpcObtain: its issue and the stall until its line is here (1042..1100);
  // IpcPerms: its work, its issue and the stall 1100..1141; the drainer nothing.
  EXPECT_EQ(at(Func::IpcObtain), ns(kL1 + 58));
  EXPECT_EQ(at(Func::IpcPerms), ns(40 + kL1 + 41));
  EXPECT_EQ(at(Func::SemLock), 0);
}

// --- the kernel path: semtimedop()'s lookup before the lock (3.10+)

// CPU 1 writes sem_otime (3.10: the line of sem_perm.seq and .security); then
// CPU 0 does one semop: the time ipc_obtain_object_check's row gets, and the
// semop's time.
struct LookupCost {
  Tick obtain = 0;  // CPU time in ipc_obtain_object_check
  Tick semop = 0;
};
LookupCost lookup_after_a_write(double fill_buffers) {
  auto m = ipc::test_machine(4, kTransfer);
  m.fill_buffers = fill_buffers;
  ipc::Rig rig(*ipc::find_generation("per_sem_lock_rc"), m, 4, 1);
  auto& k = rig.kernel();
  LookupCost c;
  rig.add_task(
      0,
      [&](ipc::Rig&, Task& t) {
        t.charge(5 * kTicksPerUs);  // after CPU 0's first semop
        k.set_semotime(t, {});
      },
      1);
  rig.add_task(
      0,
      [&](ipc::Rig&, Task& t) {
        const ipc::Sembuf up{0, +1, 0};
        k.semop(t, {&up, 1});        // warm: every line of the array is here
        t.charge(10 * kTicksPerUs);  // meanwhile CPU 1 writes sem_otime
        const Tick obtain0 = t.time[static_cast<std::size_t>(Func::IpcObtain)];
        const Tick from = t.cursor;
        k.semop(t, {&up, 1});
        c.semop = t.cursor - from;
        c.obtain = t.time[static_cast<std::size_t>(Func::IpcObtain)] - obtain0;
      },
      0);
  rig.run();
  return c;
}

TEST(MlpKernel, TheSeqMissOverlapsWithTheChecksAfterIt) {
  const auto m = ipc::test_machine(4, kTransfer);
  const auto own = ipc::path_ticks(m.semop_kernel_path, ipc::PathFn::IpcObtainObjectCheck);
  // The work after the load until the window's end: ipcperms, the two
  // ipc_has_perm/avc_has_perm_flags calls, security_sem_semop.
  Tick after = 0;
  for (ipc::PathFn f :
       {ipc::PathFn::Ipcperms, ipc::PathFn::IpcHasPerm, ipc::PathFn::AvcHasPerm,
        ipc::PathFn::SecuritySemSemop, ipc::PathFn::IpcHasPerm, ipc::PathFn::AvcHasPerm})
    after += ipc::path_ticks(m.semop_kernel_path, f);
  ASSERT_LT(after, ns(kTransfer));  // on this machine the miss is the longer
  const LookupCost overlapped = lookup_after_a_write(10);
  // The row keeps its own work and the part of the miss the checks did not hide.
  EXPECT_GE(overlapped.obtain, own + ns(kTransfer) - after - ns(4 * kL1));
  EXPECT_LE(overlapped.obtain, own + ns(kTransfer) - after + ns(4 * kL1));
  // One fill buffer: the lookup's other loads wait for seq's fill (the model
  // cannot tell a hit before its request), so less is hidden.
  const LookupCost one = lookup_after_a_write(1);
  EXPECT_GT(one.semop, overlapped.semop);
  EXPECT_LE(one.obtain, own + ns(kTransfer));
}

// The window itself, on the kernel's fields: a miss on seq, then W of the
// checks' own work; with the window max(miss, W), without it miss + W.
Tick seq_miss_then_checks(bool window, Tick* work) {
  const auto m = ipc::test_machine(4, kTransfer);
  ipc::Rig rig(*ipc::find_generation("per_sem_lock_rc"), m, 4, 1);
  auto& k = rig.kernel();
  Tick cost = 0;
  rig.add_task(0, [&](ipc::Rig&, Task& t) { k.set_semotime(t, {}); }, 1);
  rig.add_task(
      0,
      [&](ipc::Rig&, Task& t) {
        t.charge(10 * kTicksPerUs);  // CPU 1's store of sem_otime is done
        const Tick from = t.cursor;
        if (window) k.begin_loads(t);
        k.read(t, ipc::Field::Seq);  // misses: CPU 1 holds line 1
        const Tick before = t.cursor;
        k.path(t, ipc::PathFn::Ipcperms);
        k.path(t, ipc::PathFn::AvcHasPerm);
        *work = t.cursor - before;
        if (window) k.end_loads(t);
        cost = t.cursor - from;
      },
      0);
  rig.run();
  return cost;
}

TEST(MlpKernel, TheWindowHidesTheChecksBehindTheSeqMiss) {
  Tick work = 0;
  const Tick serial = seq_miss_then_checks(false, &work);
  ASSERT_GT(work, 0);
  const Tick miss = serial - work;
  ASSERT_GE(miss, ns(kTransfer));  // a line transfer
  EXPECT_EQ(seq_miss_then_checks(true, &work), std::max(miss, ns(kL1) + work));
}

// A semop-multi-like run of 4 tasks on 4 CPUs, fast and in reference order:
// the same cursors, semops and CPU time by function.
std::vector<Tick> run_semops(const char* gen, bool reference) {
  test_reference::ReferenceOrder mode(reference);
  ipc::Rig rig(*ipc::find_generation(gen), ipc::test_machine(4), 8, 1);
  for (int i = 0; i < 4; ++i)
    rig.add_task(i, [i](ipc::Rig& r, Task& t) {
      const ipc::Sembuf up{i % 2, +1, 0};
      const ipc::Sembuf down{i % 2, -1, 0};
      for (int k = 0; k < 200; ++k) {
        r.kernel().semop(t, {&up, 1});
        r.kernel().semop(t, {&down, 1});
      }
    });
  rig.run();
  std::vector<Tick> out;
  for (int i = 0; i < 4; ++i) {
    const Task& t = rig.task(i);
    out.push_back(t.cursor);
    out.push_back(static_cast<Tick>(t.semops));
    for (Tick f : t.time) out.push_back(f);
  }
  return out;
}

TEST(MlpKernel, FastRunEqualsReferenceOrder) {
  for (const char* gen : {"per_sem_lock_rc", "hysteresis", "global_lock"}) {
    const auto fast = run_semops(gen, false);
    EXPECT_EQ(fast, run_semops(gen, true)) << gen;
    EXPECT_EQ(fast[1], 400) << gen;
  }
}

}  // namespace
}  // namespace semsim
