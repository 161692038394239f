// The 2013 series' array rwlock: readers share the lock but every
// read_lock/read_unlock is an atomic RMW on one word; a writer waits for the
// readers to drain and excludes them.
#include <gtest/gtest.h>

#include <vector>

#include "machine/rwlock.hpp"
#include "test_machine_harness.hpp"

namespace semsim {
namespace {

using machine::Func;
using machine::InFunc;
using machine::RwLock;
using machine::Task;

const Tick kHold = ns_to_ticks(10000);

TEST(MachineRwLock, ReadersRunInParallelButTheLinePingPongs) {
  constexpr int kReaders = 8;
  const auto params = machine_test::uniform_machine(kReaders, 100);
  machine::Topology topo(params);
  machine::CacheLine line("rwlock");
  RwLock lock(&line);
  machine_test::TaskSet set;
  std::vector<Tick> done(kReaders);
  for (int i = 0; i < kReaders; ++i)
    set.add(i, [&, i](Task& t) {
      lock.read_lock(topo, t);
      t.charge(kHold);
      lock.read_unlock(topo, t);
      done[static_cast<std::size_t>(i)] = t.cursor;
    });
  set.sim.run();
  Tick last = 0;
  for (Tick d : done) last = std::max(last, d);
  // Parallel critical sections: about one hold plus the line's RMW
  // transfers, far from kReaders holds.
  EXPECT_LT(last, kHold + 2 * kReaders * topo.transfer(0, 1) + ns_to_ticks(1000));
  EXPECT_EQ(lock.stats().max_readers, static_cast<std::uint64_t>(kReaders));
  EXPECT_EQ(lock.stats().read.acquisitions, static_cast<std::uint64_t>(kReaders));
  EXPECT_EQ(lock.stats().read.contended, 0U);
  // Every lock and unlock but the very first one pulls the line from another CPU.
  EXPECT_EQ(line.stats().transfers[static_cast<std::size_t>(machine::Distance::SameDie)],
            static_cast<std::uint64_t>(2 * kReaders - 1));
}

TEST(MachineRwLock, WriterExcludesReadersAndWaitsForThemToDrain) {
  const auto params = machine_test::uniform_machine(4, 100);
  machine::Topology topo(params);
  machine::CacheLine line("rwlock");
  RwLock lock(&line);
  machine_test::TaskSet set;
  Tick writer_in = 0, writer_out = 0, late_reader_in = 0;
  Tick reader_out = 0;
  // Reader on CPU 0 from t=0 holds for kHold.
  set.add(0, [&](Task& t) {
    lock.read_lock(topo, t);
    t.charge(kHold);
    lock.read_unlock(topo, t);
    reader_out = t.cursor;
  });
  // Writer arrives at kHold/2: must wait for the reader to drain.
  set.add(1, [&](Task& t) {
    t.idle_until(kHold / 2);
    lock.write_lock(topo, t);
    writer_in = t.cursor;
    t.charge(kHold);
    writer_out = t.cursor;
    lock.write_unlock(topo, t);
  });
  // Reader arriving while the writer holds it: must wait for the write release.
  set.add(2, [&](Task& t) {
    t.idle_until(kHold + kHold / 2);
    lock.read_lock(topo, t);
    late_reader_in = t.cursor;
    EXPECT_FALSE(lock.write_held());
    lock.read_unlock(topo, t);
  });
  set.sim.run();
  EXPECT_GE(writer_in, reader_out);
  EXPECT_LE(writer_in, reader_out + 2 * topo.transfer(0, 1) + ns_to_ticks(100));
  EXPECT_GE(late_reader_in, writer_out);
  EXPECT_EQ(lock.stats().write.contended, 1U);
  EXPECT_EQ(lock.stats().read.contended, 1U);
  EXPECT_GT(lock.stats().write.wait, kHold / 2 - ns_to_ticks(1000));
}

TEST(MachineRwLock, SpinningIsAccountedAsSpinTime) {
  const auto params = machine_test::uniform_machine(2, 100);
  machine::Topology topo(params);
  machine::CacheLine line("rwlock");
  RwLock lock(&line);
  machine_test::TaskSet set;
  Task* reader = nullptr;
  set.add(0, [&](Task& t) {
    lock.write_lock(topo, t);
    t.charge(kHold);
    lock.write_unlock(topo, t);
  });
  reader = &set.add(1, [&](Task& t) {
    t.idle_until(ns_to_ticks(10));
    lock.read_lock(topo, t);
    lock.read_unlock(topo, t);
  });
  set.sim.run();
  const Tick spun = reader->time[static_cast<std::size_t>(Func::RawReadLock)];
  EXPECT_GT(spun, kHold - ns_to_ticks(100));
  EXPECT_EQ(machine::category_of(Func::RawReadLock), machine::CpuCategory::Spin);
}

}  // namespace
}  // namespace semsim
