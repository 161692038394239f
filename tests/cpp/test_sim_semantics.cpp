// The semantics of the SIMULATED kernel, for every generation, against the
// reference model (sem_reference.hpp, itself checked against the real kernel
// by test_semantics_diff.cpp):
//  a) one task, seeded random sequences of semop (IPC_NOWAIT) and semctl,
//     compared call by call, ending with exit (SEM_UNDO) and IPC_RMID;
//  b) several tasks run concurrently (random start dates and think times) on
//     seeded random scripts whose outcome is order-independent: the script is
//     kept only if many random serialisations through the model agree on
//     every result, the values and counts at each quiescent point and the
//     undo adjustments; then the simulator must give that outcome too;
//  c) hand-written cases: timeouts, signals, IPC_RMID, exit with undo,
//     threads sharing an undo list, argument errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "verify/explorer.hpp"
#include "verify/sem_reference.hpp"

namespace semsim::ipc {
namespace {

using Kind = SemArrayModel::SemopKind;

const config::MachineParams& machine() {
  static const config::MachineParams m = test_machine(8);
  return m;
}

int result_of(const SemArrayModel::SemopOutcome& o) { return o.kind == Kind::kError ? o.error : 0; }

std::string describe(const std::vector<Sembuf>& sops) {
  std::string s = "{";
  for (std::size_t i = 0; i < sops.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(sops[i].sem_num) + ":" + std::to_string(sops[i].sem_op);
    if ((sops[i].sem_flg & kIpcNowait) != 0) s += " nowait";
    if ((sops[i].sem_flg & kSemUndo) != 0) s += " undo";
  }
  return s + "}";
}

// ---------------------------------------------------------------------------
// a) One task

// One call of the single-task sequences, replayed on the model and the simulator.
struct Call {
  enum What { Semop, Setval, Setall, Getval, Getall, Getncnt, Getzcnt, Getpid, Rmid } what;
  std::vector<Sembuf> sops;
  int semnum = 0;
  int value = 0;
  std::vector<int> values;
};

std::vector<Call> single_task_sequence(std::uint64_t index, int* nsems_out) {
  Rng rng = Rng::derive(0x51A61E, index);
  const auto below = [&](int n) {
    return static_cast<int>(rng.below(static_cast<std::uint64_t>(n)));
  };
  const int nsems = 1 + below(5);
  *nsems_out = nsems;
  const auto semnum = [&] { return below(100) < 5 ? nsems + below(2) : below(nsems); };
  std::vector<Call> calls;
  for (int i = 0; i < 24; ++i) {
    Call c{};
    const int u = below(100);
    if (u < 65) {
      c.what = Call::Semop;
      const int v = below(100);
      const int nsops = v < 2 ? 0 : (v < 4 ? kSemopmDefault + 1 : 1 + below(4));
      for (int k = 0; k < nsops; ++k) {
        Sembuf sop;
        sop.sem_num = nsops > 4 ? below(nsems) : semnum();
        sop.sem_op = below(100) < 8 ? (below(2) == 0 ? kSemvmx : -kSemvmx) : below(7) - 3;
        sop.sem_flg = kIpcNowait | (below(100) < 40 ? kSemUndo : 0);
        c.sops.push_back(sop);
      }
    } else if (u < 73) {
      c.what = Call::Setval;
      c.semnum = semnum();
      c.value = below(100) < 10 ? kSemvmx + 1 - below(3) : below(4);
    } else if (u < 77) {
      c.what = Call::Setall;
      for (int k = 0; k < nsems; ++k) c.values.push_back(below(100) < 5 ? kSemvmx + 1 : below(4));
    } else {
      c.what = static_cast<Call::What>(Call::Getval + below(5));
      c.semnum = semnum();
    }
    calls.push_back(std::move(c));
  }
  if (below(100) < 15) {
    calls.push_back({Call::Rmid, {}, 0, 0, {}});
    calls.push_back({Call::Semop, {{0, 0, kIpcNowait}}, 0, 0, {}});
    calls.push_back({Call::Getval, {}, 0, 0, {}});
  }
  return calls;
}

int model_call(SemArrayModel& m, const Call& c, std::vector<int>* all) {
  switch (c.what) {
    case Call::Semop:
      return result_of(m.semop(0, c.sops));
    case Call::Setval:
      return m.setval(c.semnum, c.value, 1);
    case Call::Setall:
      return m.setall(c.values, 1);
    case Call::Getval:
      return m.getval(c.semnum);
    case Call::Getall:
      return m.getall(all);
    case Call::Getncnt:
      return m.getncnt(c.semnum);
    case Call::Getzcnt:
      return m.getzcnt(c.semnum);
    case Call::Getpid:
      return m.getpid(c.semnum);
    case Call::Rmid:
      return m.rmid();
  }
  return 0;
}

int sim_call(SemKernel& k, machine::Task& t, const Call& c, std::vector<int>* all) {
  switch (c.what) {
    case Call::Semop:
      return k.semop(t, c.sops);
    case Call::Setval:
      return k.setval(t, c.semnum, c.value);
    case Call::Setall:
      return k.setall(t, c.values);
    case Call::Getval:
      return k.getval(t, c.semnum);
    case Call::Getall:
      return k.getall(t, all);
    case Call::Getncnt:
      return k.getncnt(t, c.semnum);
    case Call::Getzcnt:
      return k.getzcnt(t, c.semnum);
    case Call::Getpid:
      return k.getpid(t, c.semnum);
    case Call::Rmid:
      return k.rmid(t);
  }
  return 0;
}

TEST(SimSemantics, SingleTaskSequencesOnEveryGeneration) {
  int calls = 0;
  for (const auto& p : generations()) {
    for (std::uint64_t index = 0; index < 120 && !::testing::Test::HasFailure(); ++index) {
      int nsems = 0;
      const auto seq = single_task_sequence(index, &nsems);
      SemArrayModel model(nsems);
      model.set_process(0, 1);
      Rig rig(p, machine(), nsems, index);
      std::vector<int> sim_results;
      std::vector<std::vector<int>> sim_alls;
      std::vector<int> sim_values_after_exit;
      rig.add_task(1, [&](Rig& r, machine::Task& t) {
        for (const auto& c : seq) {
          std::vector<int> all;
          sim_results.push_back(sim_call(r.kernel(), t, c, &all));
          sim_alls.push_back(all);
        }
        // The process exits: its undo adjustments are applied.
        r.kernel().exit_process(t);
        if (!r.kernel().array().deleted) sim_values_after_exit = r.kernel().array().semval;
      });
      rig.run();
      for (std::size_t i = 0; i < seq.size(); ++i) {
        std::vector<int> all;
        const int want = model_call(model, seq[i], &all);
        ++calls;
        ASSERT_EQ(sim_results[i], want)
            << p.id << " sequence " << index << " call " << i << " " << describe(seq[i].sops);
        if (seq[i].what == Call::Getall && want == 0) {
          EXPECT_EQ(sim_alls[i], all) << p.id;
        }
      }
      model.exit_process(1);
      if (!model.removed()) {
        EXPECT_EQ(sim_values_after_exit,
                  std::vector<int>(model.values().begin(), model.values().end()))
            << p.id << " sequence " << index << " after exit";
      }
    }
  }
  std::printf("[ sim sem  ] %d single-task calls compared on %zu generations\n", calls,
              generations().size());
}

// ---------------------------------------------------------------------------
// b) Several tasks, order-independent scripts

struct Script {
  int nsems = 1;
  std::vector<int> initial;
  std::vector<int> process;                           // by task
  std::vector<std::vector<std::vector<Sembuf>>> ops;  // by task
  int setval_sem = -1, setval_value = 0;              // controller event 1 (if setval_sem >= 0)
  int exit_process = -1;                              // controller event 2 (if >= 0)
  bool complex = false;                               // has a multi-sop operation
};

Script random_script(std::uint64_t index, bool simple_only) {
  Rng rng = Rng::derive(0x0D1FF, index);
  const auto below = [&](int n) {
    return static_cast<int>(rng.below(static_cast<std::uint64_t>(n)));
  };
  Script s;
  s.nsems = 1 + below(3);
  for (int i = 0; i < s.nsems; ++i) s.initial.push_back(below(3));
  const int ntasks = 2 + below(4);
  for (int t = 0; t < ntasks; ++t) {
    // Some tasks share a process (threads), so they share an undo list.
    s.process.push_back(t > 0 && below(100) < 25 ? s.process[static_cast<std::size_t>(below(t))]
                                                 : 100 + t);
    std::vector<std::vector<Sembuf>> ops;
    const int nops = 1 + below(4);
    for (int k = 0; k < nops; ++k) {
      const int nsops = simple_only || below(100) < 65 ? 1 : 2 + below(2);
      std::vector<Sembuf> sops;
      for (int j = 0; j < nsops; ++j) {
        Sembuf sop;
        sop.sem_num = below(s.nsems);
        const int v = below(100);
        sop.sem_op = v < 40 ? -1 : (v < 75 ? +1 : (v < 85 ? 0 : (v < 93 ? 2 : -2)));
        // (No IPC_NOWAIT: whether it fails depends on the order nearly
        // always; the single-task sequences cover it.)
        if (below(100) < 25) sop.sem_flg |= kSemUndo;
        sops.push_back(sop);
      }
      if (nsops > 1) s.complex = true;
      ops.push_back(std::move(sops));
    }
    s.ops.push_back(std::move(ops));
  }
  if (below(2) == 0) {
    s.setval_sem = below(s.nsems);
    s.setval_value = below(3);
  }
  if (below(2) == 0) s.exit_process = s.process[static_cast<std::size_t>(below(ntasks))];
  return s;
}

// What a script produces: every call's result by task, and at each
// quiescent point (after the tasks, after each controller event) the values
// and the wait counts; at the end the undo adjustments of the live processes.
struct Outcome {
  std::vector<std::vector<int>> results;  // by task, in call order (-EIDRM: removed asleep)
  std::vector<std::vector<int>> values, ncnt, zcnt;
  std::map<int, std::vector<int>> semadj;
  bool operator==(const Outcome&) const = default;
};

std::string show(const Outcome& o) {
  std::ostringstream s;
  for (std::size_t t = 0; t < o.results.size(); ++t) {
    s << " T" << t << ":";
    for (int r : o.results[t]) s << ' ' << r;
  }
  for (const auto& v : o.values) {
    s << " |";
    for (int x : v) s << ' ' << x;
  }
  return s.str();
}

// One random serialisation through the model.
Outcome model_run(const Script& s, std::uint64_t order_seed) {
  Rng rng = Rng::derive(0x5E41, order_seed);
  const auto ntasks = s.ops.size();
  SemArrayModel m(s.nsems);
  for (std::size_t t = 0; t < ntasks; ++t) m.set_process(static_cast<int>(t), s.process[t]);
  m.setall(s.initial, 1);
  Outcome out;
  out.results.resize(ntasks);
  std::vector<std::size_t> next(ntasks, 0);
  std::vector<bool> dead(ntasks, false);
  const auto record_woken = [&] {
    for (const auto& w : m.woken()) {
      const auto t = static_cast<std::size_t>(w.task);
      out.results[t].push_back(w.status);
      ++next[t];
      if (w.status == -EINTR) dead[t] = true;
    }
  };
  const auto run_to_quiescence = [&] {
    for (;;) {
      std::vector<std::size_t> ready;
      for (std::size_t t = 0; t < ntasks; ++t)
        if (!dead[t] && !m.sleeping(static_cast<int>(t)) && next[t] < s.ops[t].size())
          ready.push_back(t);
      if (ready.empty()) return;
      const std::size_t t = ready[rng.below(ready.size())];
      const auto o = m.semop(static_cast<int>(t), s.ops[t][next[t]]);
      if (o.kind != Kind::kBlocked) {
        out.results[t].push_back(result_of(o));
        ++next[t];
      }
      record_woken();
    }
  };
  const auto snapshot = [&] {
    out.values.emplace_back(m.values().begin(), m.values().end());
    std::vector<int> n, z;
    for (int i = 0; i < s.nsems; ++i) {
      n.push_back(m.getncnt(i));
      z.push_back(m.getzcnt(i));
    }
    out.ncnt.push_back(n);
    out.zcnt.push_back(z);
  };
  run_to_quiescence();
  snapshot();
  if (s.setval_sem >= 0) {
    m.setval(s.setval_sem, s.setval_value, 1);
    record_woken();
    run_to_quiescence();
    snapshot();
  }
  if (s.exit_process >= 0) {
    // Only tasks that have finished or sleep: the rest of the process stops.
    for (std::size_t t = 0; t < ntasks; ++t)
      if (s.process[t] == s.exit_process && !m.sleeping(static_cast<int>(t))) dead[t] = true;
    m.exit_process(s.exit_process);
    record_woken();
    run_to_quiescence();
    snapshot();
  }
  for (std::size_t t = 0; t < ntasks; ++t)
    if (const auto* adj = m.semadj(s.process[t])) out.semadj[s.process[t]] = *adj;
  m.rmid();
  record_woken();
  return out;
}

// The script in the simulator, tasks concurrent. Controller events at fixed
// dates, by which the tasks have long reached quiescence.
Outcome sim_run(const KernelPolicy& p, const Script& s, std::uint64_t timing_seed, bool* quiet) {
  const auto ntasks = s.ops.size();
  Rig rig(p, machine(), s.nsems, timing_seed);
  for (int i = 0; i < s.nsems; ++i)
    rig.kernel().array().semval[static_cast<std::size_t>(i)] =
        s.initial[static_cast<std::size_t>(i)];
  Outcome out;
  out.results.resize(ntasks);
  std::vector<bool> exited(ntasks, false);
  for (std::size_t t = 0; t < ntasks; ++t) {
    rig.add_task(s.process[t], [&, t](Rig& r, machine::Task& task) {
      Rng rng = Rng::derive(timing_seed, t);
      task.charge(static_cast<Tick>(rng.below(2 * kTicksPerUs)));
      for (const auto& sops : s.ops[t]) {
        if (exited[t]) return;
        {
          machine::InFunc in(task, machine::Func::User);
          task.charge(static_cast<Tick>(rng.below(kTicksPerUs)));
        }
        const int res = r.kernel().semop(task, sops);
        out.results[t].push_back(res);
        if (res == -EIDRM || res == -EINVAL || res == -EINTR) return;
      }
    });
  }
  *quiet = true;
  rig.set_controller([&](Rig& r, machine::Task& c) {
    Tick date = 0;
    const auto settle = [&] {
      date += 400 * kTicksPerUs;
      c.actor->sleep_until(date);
      c.idle_until(date);
      if (!r.quiescent()) *quiet = false;
      out.values.push_back(r.kernel().array().semval);
      std::vector<int> n, z;
      for (int i = 0; i < s.nsems; ++i) {
        n.push_back(r.kernel().getncnt(c, i));
        z.push_back(r.kernel().getzcnt(c, i));
      }
      out.ncnt.push_back(n);
      out.zcnt.push_back(z);
    };
    settle();
    if (s.setval_sem >= 0) {
      r.kernel().setval(c, s.setval_sem, s.setval_value);
      settle();
    }
    if (s.exit_process >= 0) {
      for (std::size_t t = 0; t < ntasks; ++t)
        if (s.process[t] == s.exit_process) exited[t] = true;
      c.process = s.exit_process;  // the controller acts as the process's last thread
      r.kernel().exit_process(c);
      c.process = -1;
      settle();
    }
    for (std::size_t t = 0; t < ntasks; ++t)
      if (const auto* adj = r.kernel().semadj(s.process[t])) out.semadj[s.process[t]] = *adj;
    r.kernel().rmid(c);
  });
  rig.run();
  return out;
}

// The order-independent scripts and their outcome, computed once: a script
// is kept if 250 random serialisations through the model agree.
struct Accepted {
  std::uint64_t index;
  Script script;
  Outcome outcome;
};

const std::vector<Accepted>& accepted_scripts(bool simple_only, int* tried) {
  static std::map<bool, std::pair<std::vector<Accepted>, int>> cache;
  auto it = cache.find(simple_only);
  if (it == cache.end()) {
    std::vector<Accepted> out;
    int n = 0;
    for (std::uint64_t index = 0; index < 700; ++index) {
      Script s = random_script(index, simple_only);
      ++n;
      const Outcome want = model_run(s, 0);
      bool independent = true;
      for (std::uint64_t order = 1; order < 250 && independent; ++order)
        independent = model_run(s, order) == want;
      if (independent) out.push_back({index, std::move(s), want});
    }
    it = cache.emplace(simple_only, std::make_pair(std::move(out), n)).first;
  }
  *tried = it->second.second;
  return it->second.first;
}

// Each accepted script in the simulator, twice with different timings.
void run_scripts(const KernelPolicy& p, bool simple_only, int* tried, int* compared) {
  const auto& scripts = accepted_scripts(simple_only, tried);
  for (const auto& a : scripts) {
    if (::testing::Test::HasFailure()) break;
    for (std::uint64_t timing = 1; timing <= 2; ++timing) {
      bool quiet = true;
      const Outcome got = sim_run(p, a.script, a.index * 7 + timing, &quiet);
      ASSERT_TRUE(quiet) << p.id << " script " << a.index << ": not quiescent at an event";
      ++*compared;
      const Outcome& want = a.outcome;
      ASSERT_EQ(got.results, want.results) << p.id << " script " << a.index << " timing " << timing
                                           << "\n sim:  " << show(got) << "\n model:" << show(want);
      EXPECT_EQ(got.values, want.values) << p.id << " script " << a.index;
      EXPECT_EQ(got.ncnt, want.ncnt) << p.id << " script " << a.index;
      EXPECT_EQ(got.zcnt, want.zcnt) << p.id << " script " << a.index;
      EXPECT_EQ(got.semadj, want.semadj) << p.id << " script " << a.index;
    }
  }
}

TEST(SimSemantics, ConcurrentScriptsOnEveryGeneration) {
  for (const auto& p : generations()) {
    if (!p.missed_wakeup_fix) continue;  // per_sem_lock_rc: below
    int tried = 0;
    int compared = 0;
    run_scripts(p, false, &tried, &compared);
    const int accepted = static_cast<int>(accepted_scripts(false, &tried).size());
    EXPECT_GT(accepted, 300) << p.id;
    std::printf("[ sim sem  ] %-16s %d order-independent scripts of %d, %d concurrent runs\n",
                p.id.c_str(), accepted, tried, compared);
  }
}

TEST(SimSemantics, ConcurrentSimpleScriptsOn310rc) {
  // 3.10-rc loses wakeups only around complex operations: with simple ones
  // only, it passes the same suite.
  int tried = 0;
  int compared = 0;
  run_scripts(*find_generation("per_sem_lock_rc"), true, &tried, &compared);
  const int accepted = static_cast<int>(accepted_scripts(true, &tried).size());
  EXPECT_GT(accepted, 300);
  std::printf(
      "[ sim sem  ] per_sem_lock_rc  %d order-independent simple-op scripts of %d, %d runs\n",
      accepted, tried, compared);
}

// ---------------------------------------------------------------------------
// c) Hand-written cases, every generation

class EveryGeneration : public ::testing::TestWithParam<std::string> {
 protected:
  const KernelPolicy& policy() const { return *find_generation(GetParam()); }
};

void at(machine::Task& t, Tick date) {
  t.actor->sleep_until(date);
  t.idle_until(date);
}

TEST_P(EveryGeneration, TimeoutGivesEagainAtItsDate) {
  Rig rig(policy(), machine(), 2, 1);
  int result = 1;
  Tick returned = 0;
  rig.add_task(1, [&](Rig& r, machine::Task& t) {
    const Sembuf down{0, -1, 0};
    result = r.kernel().semtimedop(t, {&down, 1}, 20 * kTicksPerUs);
    returned = t.cursor;
  });
  rig.run();
  EXPECT_EQ(result, -EAGAIN);
  EXPECT_GE(returned, 20 * kTicksPerUs);
  EXPECT_LT(returned, 40 * kTicksPerUs);
  EXPECT_EQ(rig.kernel().sleepers().size(), 0u);
}

// A timeout's wake-up runs in the timer interrupt (a calendar callback, no task
// of its own): it must not spin on the sleeper's rq->lock while a task holds it
// (it has no fiber to wait on). Two tasks ping-pong on the sleeper's CPU, so its
// rq->lock is held often; the timeouts sweep across their sections.
TEST_P(EveryGeneration, ATimeoutWhileTheRunQueueLockIsHeldWakesTheSleeper) {
  config::MachineParams m = machine();
  m.rq_hold_wake = 300 * kTicksPerNs;
  m.rq_hold_schedule = 400 * kTicksPerNs;
  int timeouts = 0;
  for (int i = 0; i < 40; ++i) {
    Rig rig(policy(), m, 3, 1);
    const Tick timeout = 20 * kTicksPerUs + i * 37 * kTicksPerNs;
    int result = 1;
    rig.add_task(
        1,
        [&](Rig& r, machine::Task& t) {
          const Sembuf down{2, -1, 0};
          result = r.kernel().semtimedop(t, {&down, 1}, timeout);
        },
        0);
    for (int side = 0; side < 2; ++side)
      rig.add_task(
          2 + side,
          [side](Rig& r, machine::Task& t) {
            const Sembuf down{side, -1, 0};
            const Sembuf up{1 - side, 1, 0};
            if (side == 0) r.kernel().semop(t, {&up, 1});  // start the ball
            for (int k = 0; k < 40; ++k) {
              r.kernel().semop(t, {&down, 1});
              r.kernel().semop(t, {&up, 1});
            }
          },
          0);
    ASSERT_NO_THROW(rig.run()) << "timeout " << timeout;
    EXPECT_EQ(result, -EAGAIN);
    timeouts += result == -EAGAIN;
  }
  EXPECT_EQ(timeouts, 40);
}

TEST_P(EveryGeneration, WakeupBeforeTheTimeoutWins) {
  Rig rig(policy(), machine(), 2, 1);
  int result = 1;
  rig.add_task(1, [&](Rig& r, machine::Task& t) {
    const std::vector<Sembuf> sops = {{0, -1, 0}, {1, 0, 0}};
    result = r.kernel().semtimedop(t, sops, 100 * kTicksPerUs);
  });
  rig.add_task(2, [&](Rig& r, machine::Task& t) {
    at(t, 10 * kTicksPerUs);
    const Sembuf up{0, +1, 0};
    EXPECT_EQ(r.kernel().semop(t, {&up, 1}), 0);
  });
  rig.run();
  EXPECT_EQ(result, 0);
  EXPECT_EQ(rig.kernel().array().semval[0], 0);
}

TEST_P(EveryGeneration, SignalGivesEintr) {
  Rig rig(policy(), machine(), 2, 1);
  int result = 1;
  rig.add_task(1, [&](Rig& r, machine::Task& t) {
    const std::vector<Sembuf> sops = {{0, -1, 0}, {1, -1, 0}};
    result = r.kernel().semop(t, sops);
  });
  rig.add_task(2, [&](Rig& r, machine::Task& t) {
    at(t, 10 * kTicksPerUs);
    EXPECT_TRUE(r.kernel().signal(t, r.task(0)));
    at(t, 30 * kTicksPerUs);
    EXPECT_FALSE(r.kernel().signal(t, r.task(0)));  // no longer asleep in semop
    // The complex sleeper is gone: a simple op runs without it.
    const Sembuf up{0, +1, 0};
    EXPECT_EQ(r.kernel().semop(t, {&up, 1}), 0);
  });
  rig.run();
  EXPECT_EQ(result, -EINTR);
  EXPECT_EQ(rig.kernel().array().complex_count, 0);
}

TEST_P(EveryGeneration, RmidWakesEverySleeperWithEidrm) {
  Rig rig(policy(), machine(), 2, 1);
  std::vector<int> results(3, 1);
  const std::vector<std::vector<Sembuf>> ops = {
      {{0, -1, 0}}, {{1, 0, 0}, {0, 0, 0}}, {{0, -1, kSemUndo}, {1, +1, 0}}};
  for (int i = 0; i < 3; ++i)
    rig.add_task(10 + i, [&, i](Rig& r, machine::Task& t) {
      at(t, (1 + i) * kTicksPerUs);
      results[static_cast<std::size_t>(i)] = r.kernel().semop(t, ops[static_cast<std::size_t>(i)]);
    });
  rig.kernel().array().semval[1] = 1;
  rig.set_controller([&](Rig& r, machine::Task& c) {
    at(c, 50 * kTicksPerUs);
    EXPECT_EQ(r.kernel().sleepers().size(), 3u);
    EXPECT_EQ(r.kernel().getncnt(c, 0), 2);
    EXPECT_EQ(r.kernel().getzcnt(c, 1), 1);
    EXPECT_EQ(r.kernel().rmid(c), 0);
    EXPECT_EQ(r.kernel().rmid(c), -EINVAL);
    EXPECT_EQ(r.kernel().getval(c, 0), -EINVAL);
    EXPECT_EQ(r.kernel().setval(c, 0, 1), -EINVAL);
    const Sembuf op{0, 0, kIpcNowait};
    EXPECT_EQ(r.kernel().semop(c, {&op, 1}), -EINVAL);
  });
  rig.run();
  EXPECT_EQ(results, (std::vector<int>{-EIDRM, -EIDRM, -EIDRM}));
}

TEST_P(EveryGeneration, ExitAppliesUndoAndWakesSleepers) {
  // As SemanticsDiff.ExitAppliesUndoAndWakesSleepers on the real kernel.
  Rig rig(policy(), machine(), 2, 1);
  rig.kernel().array().semval = {1, 0};
  std::vector<int> results(4, 1);
  rig.add_task(1, [&](Rig& r, machine::Task& t) {  // holds sem 0 with undo, exits at 40 us
    const Sembuf op{0, -1, kSemUndo};
    results[0] = r.kernel().semop(t, {&op, 1});
    at(t, 40 * kTicksPerUs);
    r.kernel().exit_process(t);
  });
  rig.add_task(2, [&](Rig& r, machine::Task& t) {  // waits for sem 0
    at(t, 5 * kTicksPerUs);
    const Sembuf op{0, -1, 0};
    results[1] = r.kernel().semop(t, {&op, 1});
  });
  rig.add_task(3, [&](Rig& r, machine::Task& t) {  // sem 1 = 2 with undo -2, killed at 80 us
    at(t, 10 * kTicksPerUs);
    const Sembuf op{1, +2, kSemUndo};
    results[2] = r.kernel().semop(t, {&op, 1});
    at(t, 80 * kTicksPerUs);
    r.kernel().exit_process(t);
  });
  rig.add_task(4, [&](Rig& r, machine::Task& t) {  // waits for sem 1 == 0
    at(t, 15 * kTicksPerUs);
    const Sembuf op{1, 0, 0};
    results[3] = r.kernel().semop(t, {&op, 1});
  });
  rig.set_controller([&](Rig& r, machine::Task& c) {
    at(c, 60 * kTicksPerUs);
    EXPECT_EQ(results[1], 0);  // released by task 1's exit
    EXPECT_EQ(r.kernel().getval(c, 0), 0);
    const Sembuf op{1, -1, kIpcNowait};
    EXPECT_EQ(r.kernel().semop(c, {&op, 1}), 0);  // sem 1 = 1
    at(c, 120 * kTicksPerUs);
    EXPECT_EQ(results[3], 0);  // 1 - 2 clamps to 0: released
    EXPECT_EQ(r.kernel().getval(c, 1), 0);
    EXPECT_EQ(r.kernel().getpid(c, 1), 4);  // task 4's wait-for-zero completed last
  });
  rig.run();
  EXPECT_EQ(results, (std::vector<int>{0, 0, 0, 0}));
}

TEST_P(EveryGeneration, ThreadsOfAProcessShareOneUndoList) {
  Rig rig(policy(), machine(), 1, 1);
  std::vector<int> results;
  rig.add_task(7, [&](Rig& r, machine::Task& t) {
    const Sembuf a{0, 30000, kSemUndo};
    const Sembuf b{0, -30000, 0};
    results.push_back(r.kernel().semop(t, {&a, 1}));
    results.push_back(r.kernel().semop(t, {&b, 1}));
  });
  rig.add_task(7, [&](Rig& r, machine::Task& t) {
    at(t, 20 * kTicksPerUs);
    const Sembuf a{0, 2767, kSemUndo};
    const Sembuf b{0, 1, kSemUndo};
    results.push_back(r.kernel().semop(t, {&a, 1}));
    results.push_back(r.kernel().semop(t, {&b, 1}));
    results.push_back(r.kernel().semop(t, {&b, 1}));  // the shared adjustment overflows
    ASSERT_NE(r.kernel().semadj(7), nullptr);
    EXPECT_EQ((*r.kernel().semadj(7))[0], -kSemaem - 1);
    r.kernel().exit_process(t);
  });
  rig.run();
  EXPECT_EQ(results, (std::vector<int>{0, 0, 0, 0, -ERANGE}));
  EXPECT_EQ(rig.kernel().array().semval[0], 0);  // 2768 - 32768, clamped
}

TEST_P(EveryGeneration, ArgumentErrors) {
  Rig rig(policy(), machine(), 2, 1);
  rig.add_task(1, [&](Rig& r, machine::Task& t) {
    auto& k = r.kernel();
    EXPECT_EQ(k.semop(t, std::vector<Sembuf>{}), -EINVAL);
    EXPECT_EQ(k.semop(t, std::vector<Sembuf>(kSemopmDefault + 1, Sembuf{0, 1, 0})), -E2BIG);
    EXPECT_EQ(k.semop(t, std::vector<Sembuf>{{2, 1, 0}}), -EFBIG);
    EXPECT_EQ(k.semop(t, std::vector<Sembuf>{{0, kSemvmx, 0}, {0, 1, 0}}), -ERANGE);
    EXPECT_EQ(k.semop(t, std::vector<Sembuf>{{0, -1, kIpcNowait}}), -EAGAIN);
    EXPECT_EQ(k.semtimedop(t, std::vector<Sembuf>{{0, -1, 0}}, -1), -EINVAL);
    EXPECT_EQ(k.setval(t, 0, kSemvmx + 1), -ERANGE);
    EXPECT_EQ(k.setval(t, 2, 1), -EINVAL);
    EXPECT_EQ(k.setall(t, std::vector<int>{1, -1}), -ERANGE);
    EXPECT_EQ(k.getval(t, -1), -EINVAL);
    EXPECT_EQ(k.setall(t, std::vector<int>{3, 4}), 0);
    std::vector<int> all;
    EXPECT_EQ(k.getall(t, &all), 0);
    EXPECT_EQ(all, (std::vector<int>{3, 4}));
    EXPECT_EQ(k.getpid(t, 1), 1);
  });
  rig.run();
}

// perform_atomic_semop() serves both callers: semtimedop()'s own attempt is
// charged to perform_atomic_semop and reads no sleeper's stack; a waker's
// retry of a sleeper's operation reads that sleeper's sem_queue first and is
// charged to the function that scans the queue (update_queue()).
TEST_P(EveryGeneration, PerformAtomicSemopForTheCallerAndForASleeper) {
  struct Access {
    Field field;
    AccessKind kind;
    machine::Func func;
    bool operator==(const Access&) const = default;
  };
  struct Recorder final : KernelObserver {
    int task = -1;
    std::vector<Access> seen;
    void on_access(const machine::Task& t, const AccessEvent& e) override {
      if (t.id == task && (e.field == Field::SemVal || e.field == Field::SleeperStack))
        seen.push_back({e.field, e.kind, t.func});
    }
  } rec;
  Rig rig(policy(), machine(), 1, 1);
  int sleeper = 1;
  int waker = 1;
  rig.add_task(10, [&](Rig& r, machine::Task& t) {
    sleeper = r.kernel().semop(t, std::vector<Sembuf>{{0, -1, 0}});
  });
  machine::Task& w = rig.add_task(11, [&](Rig& r, machine::Task& t) {
    at(t, 20 * kTicksPerUs);
    waker = r.kernel().semop(t, std::vector<Sembuf>{{0, +1, 0}});
  });
  rec.task = w.id;
  rig.kernel().set_observer(&rec);
  rig.run();
  EXPECT_EQ(sleeper, 0);
  EXPECT_EQ(waker, 0);
  using machine::Func;
  ASSERT_GE(rec.seen.size(), 2u);
  EXPECT_EQ(rec.seen[0], (Access{Field::SemVal, AccessKind::Read, Func::PerformAtomic}));
  EXPECT_EQ(rec.seen[1], (Access{Field::SemVal, AccessKind::Write, Func::PerformAtomic}));
  const auto stack = std::find_if(rec.seen.begin(), rec.seen.end(),
                                  [](const Access& a) { return a.field == Field::SleeperStack; });
  ASSERT_NE(stack, rec.seen.end());
  ASSERT_LT(stack + 1, rec.seen.end());
  EXPECT_EQ(*stack, (Access{Field::SleeperStack, AccessKind::Read, Func::UpdateQueue}));
  EXPECT_EQ(stack[1], (Access{Field::SemVal, AccessKind::Read, Func::UpdateQueue}));
}

// semctl() on a removed array fails in the lookup (EINVAL), before any lock.
TEST_P(EveryGeneration, SemctlOnARemovedArrayTakesNoLock) {
  struct Recorder final : KernelObserver {
    const machine::Task* task = nullptr;
    int lock_accesses = 0;
    void on_access(const machine::Task& t, const AccessEvent& e) override {
      if (&t == task && (e.field == Field::Lock || e.field == Field::SemLock)) ++lock_accesses;
    }
  } rec;
  Rig rig(policy(), machine(), 2, 1);
  rig.set_controller([&](Rig& r, machine::Task& c) {
    auto& k = r.kernel();
    ASSERT_EQ(k.rmid(c), 0);
    k.set_observer(&rec);
    rec.task = &c;
    std::vector<int> all;
    EXPECT_EQ(k.getall(c, &all), -EINVAL);
    EXPECT_EQ(k.setall(c, std::vector<int>{1, 1}), -EINVAL);
    EXPECT_EQ(k.getval(c, 0), -EINVAL);
    EXPECT_EQ(k.getpid(c, 0), -EINVAL);
    EXPECT_EQ(k.getncnt(c, 0), -EINVAL);
    EXPECT_EQ(k.getzcnt(c, 0), -EINVAL);
    EXPECT_EQ(k.setval(c, 0, 1), -EINVAL);
    EXPECT_EQ(k.setval(c, 0, kSemvmx + 1), -ERANGE);  // checked before the lookup
    EXPECT_EQ(k.rmid(c), -EINVAL);
    EXPECT_TRUE(all.empty());
    EXPECT_EQ(rec.lock_accesses, 0);
    k.set_observer(nullptr);
  });
  rig.run();
}

std::vector<std::string> all_ids() {
  std::vector<std::string> ids;
  for (const auto& g : generations()) ids.push_back(g.id);
  return ids;
}

std::string param_name(const ::testing::TestParamInfo<std::string>& param) { return param.param; }

INSTANTIATE_TEST_SUITE_P(SimSemantics, EveryGeneration, ::testing::ValuesIn(all_ids()), param_name);

}  // namespace
}  // namespace semsim::ipc
