#include "verify/explorer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <limits>
#include <string_view>

#include "core/rng.hpp"
#include "ipc/semantics.hpp"

namespace semsim::ipc {

using machine::Task;

const char* violation_kind_name(Violation::Kind k) {
  return k == Violation::Kind::LostWakeup ? "lost wakeup" : "race";
}

namespace {

std::string lock_name(int locknum) {
  return locknum < 0 ? std::string("the array lock") : fmt::format("sem[{}].lock", locknum);
}
std::string object_name(int object) {
  return object < 0 ? std::string("the array's queues") : fmt::format("sem[{}]", object);
}
bool covers(int locknum, int object) { return locknum < 0 || locknum == object; }

std::string describe_sops(const std::vector<Sembuf>& sops) {
  std::string s = "{";
  for (std::size_t i = 0; i < sops.size(); ++i) {
    if (i > 0) s += ", ";
    s += fmt::format("s{} {:+d}", sops[i].sem_num, sops[i].sem_op);
    if ((sops[i].sem_flg & kIpcNowait) != 0) s += " nowait";
    if ((sops[i].sem_flg & kSemUndo) != 0) s += " undo";
  }
  return s + "}";
}

}  // namespace

// ---------------------------------------------------------------------------
// InvariantChecker

void InvariantChecker::report(Violation::Kind kind, Tick at, std::string what) {
  violations_.push_back({kind, at, std::move(what)});
}

void InvariantChecker::on_cs_begin(const Task& t, int locknum) {
  Section s;
  s.id = ++sections_;
  s.task = t.id;
  s.locknum = locknum;
  s.start = t.cursor;
  open_[t.id] = std::move(s);
}

void InvariantChecker::on_modify(const Task& t, int object) {
  const auto it = open_.find(t.id);
  if (it == open_.end()) {
    report(Violation::Kind::Race, t.cursor,
           fmt::format("task {} changed {} holding no lock", t.id, object_name(object)));
    return;
  }
  Section& s = it->second;
  s.writes.emplace_back(object, t.cursor);
  if (!covers(s.locknum, object))
    report(Violation::Kind::Race, t.cursor,
           fmt::format("task {} changed {} holding only {}", t.id, object_name(object),
                       lock_name(s.locknum)));
}

void InvariantChecker::check_overlap(const Section& a, const Section& b) {
  // A change by one inside the other's interval, to an object in the other's scope.
  const auto conflict = [](const Section& writer,
                           const Section& other) -> const std::pair<int, Tick>* {
    for (const auto& w : writer.writes)
      if (w.second >= other.start && w.second <= other.end && covers(other.locknum, w.first))
        return &w;
    return nullptr;
  };
  const auto* w = conflict(a, b);
  const Section* writer = &a;
  const Section* other = &b;
  if (w == nullptr) {
    w = conflict(b, a);
    writer = &b;
    other = &a;
  }
  if (w == nullptr) return;
  const auto key = std::minmax(a.id, b.id);
  if (!reported_pairs_.insert({key.first, key.second}).second) return;
  report(Violation::Kind::Race, w->second,
         fmt::format("task {} changed {} at {:.3f} us holding {} while task {} held {} "
                     "(critical sections [{:.3f}, {:.3f}] and [{:.3f}, {:.3f}] us)",
                     writer->task, object_name(w->first), ticks_to_ns(w->second) / 1000,
                     lock_name(writer->locknum), other->task, lock_name(other->locknum),
                     ticks_to_ns(writer->start) / 1000, ticks_to_ns(writer->end) / 1000,
                     ticks_to_ns(other->start) / 1000, ticks_to_ns(other->end) / 1000));
}

void InvariantChecker::on_cs_end(const Task& t, int locknum) {
  (void)locknum;
  const auto it = open_.find(t.id);
  if (it == open_.end()) return;
  Section s = std::move(it->second);
  open_.erase(it);
  s.end = t.cursor;
  // Every pair of sections is checked when the later of the two closes.
  for (const Section& c : closed_)
    if (c.task != s.task && c.end >= s.start && c.start <= s.end) check_overlap(s, c);
  closed_.push_back(std::move(s));
  // Forget sections that no later one can overlap: every future section
  // starts at or after the current simulated date, and every open one after its start.
  Tick horizon = t.actor != nullptr ? t.actor->now() : 0;
  for (const auto& [task, o] : open_) horizon = std::min(horizon, o.start);
  while (!closed_.empty() && closed_.front().end < horizon) closed_.pop_front();
  if (open_.empty()) check_lost_wakeups(t.cursor);
}

void InvariantChecker::check_lost_wakeups(Tick now) {
  const auto& sma = k_.array();
  for (const SemQueue* q : k_.sleepers()) {
    std::vector<int> values = sma.semval;
    std::vector<int> adj;
    if (q->undo) {
      const auto* a = k_.semadj(q->process);
      if (a != nullptr) adj = *a;
    }
    if (q->undo && adj.empty()) continue;  // undo list gone: EIDRM/exit paths own it
    const int r = ipc::perform_atomic_semop(values, q->sops, adj);
    if (r > 0) continue;
    if (!reported_sleeps_.insert({q->sleeper->id, q->seq}).second) continue;
    std::string vals;
    for (const auto& sop : q->sops)
      vals +=
          fmt::format(" s{}={}", sop.sem_num, sma.semval[static_cast<std::size_t>(sop.sem_num)]);
    report(Violation::Kind::LostWakeup, now,
           fmt::format("task {} sleeps in semop {} although it could {} (values:{}), with no "
                       "critical section open at {:.3f} us",
                       q->sleeper->id, describe_sops(q->sops), r == 0 ? "proceed" : "fail", vals,
                       ticks_to_ns(now) / 1000));
  }
}

// ---------------------------------------------------------------------------
// Rig

Rig::Rig(const KernelPolicy& policy, const config::MachineParams& machine, int nsems,
         std::uint64_t seed)
    : topo_(machine), sched_(topo_) {
  kernel_ = std::make_unique<SemKernel>(policy, topo_, sched_, nsems, seed);
}

Rig::~Rig() = default;

Task& Rig::add_task(int process, Body body, int cpu) {
  const int id = static_cast<int>(tasks_.size());
  auto& t = tasks_.emplace_back();
  t.id = id;
  t.process = process;
  t.pinned = true;
  t.cpu = t.home_cpu = cpu >= 0 ? cpu % topo_.cpus() : id % topo_.cpus();
  finished_.push_back(false);
  bodies_.push_back(std::move(body));
  return t;
}

void Rig::set_controller(Body body) { controller_ = std::move(body); }

bool Rig::quiescent() const {
  for (std::size_t i = 0; i < bodies_.size(); ++i)
    if (!finished_[i] && !kernel_->sleeping(tasks_[i])) return false;
  return true;
}

bool Rig::all_finished() const {
  for (std::size_t i = 0; i < bodies_.size(); ++i)
    if (!finished_[i]) return false;
  return true;
}

void Rig::run() {
  const std::size_t n = bodies_.size();
  for (std::size_t i = 0; i < n; ++i) {
    Task& t = tasks_[i];
    t.actor = &sim_.spawn(fmt::format("task{}", i), [this, i, &t](core::Actor&) {
      sched_.start(t);
      bodies_[i](*this, t);
      finished_[i] = true;
      sched_.exit(t);
    });
  }
  if (controller_) {
    // The controller's task is not scheduled on a CPU: it never sleeps in
    // semop, it only takes the array lock (and may be woken by nobody).
    auto& c = tasks_.emplace_back();
    c.id = static_cast<int>(n);
    c.process = -1;
    c.cpu = c.home_cpu = 0;
    c.actor = &sim_.spawn("controller", [this, &c](core::Actor&) { controller_(*this, c); });
  }
  sim_.run();
}

// ---------------------------------------------------------------------------
// The explorer

config::MachineParams test_machine(int cpus, double transfer_ns) {
  config::MachineParams m;
  m.name = fmt::format("test-{}", cpus);
  m.description = "synthetic test machine: one die, uniform transfers, round-number costs";
  m.cpus = cpus;
  m.sockets = 1;
  m.dies_per_socket = 1;
  m.cores_per_die = cpus;
  m.threads_per_core = 1;
  m.socket_hops = {{0}};
  m.lat_same_die = ns_to_ticks(transfer_ns);
  m.memory_latency = ns_to_ticks(80);
  m.l1_hit = ns_to_ticks(1);
  m.atomic_rmw = ns_to_ticks(8);
  m.full_fence = ns_to_ticks(15);
  m.syscall = ns_to_ticks(60);
  m.semop_kernel_path = ns_to_ticks(150);
  m.context_switch = ns_to_ticks(1200);
  m.wakeup_waker = ns_to_ticks(500);
  m.wakeup_latency = ns_to_ticks(3000);
  m.ipi = ns_to_ticks(1000);
  m.user_loop_iteration = ns_to_ticks(10);
  m.time_slice = 3 * kTicksPerMs;
  m.clock_ghz = 2.0;
  return m;
}

std::vector<ExploreTask> mixed_workload() {
  const auto task = [](std::initializer_list<std::vector<Sembuf>> ops) {
    ExploreTask t;
    for (const auto& sops : ops) t.ops.push_back({sops, -1});
    return t;
  };
  return {
      task({{{1, -1, 0}}}),                // T0
      task({{{0, +1, 0}}}),                // T1
      task({{{0, -1, 0}, {1, +1, 0}}}),    // T2
      task({{{2, -1, 0}}}),                // T3
      task({{{2, 0, 0}, {3, +1, 0}}}),     // T4
      task({{{3, -1, 0}}}),                // T5
      task({{{2, +1, 0}}}),                // T6
      task({{{4, +1, 0}}, {{4, -1, 0}}}),  // T7: a bystander on its own semaphore
      task({{{5, +1, 0}}, {{5, -1, 0}}}),  // T8: another
  };
}

ExploreOptions small_scenario(std::uint64_t seed) {
  Rng r = Rng::derive(seed, 0x5A11);
  const auto below = [&](int n) {
    return static_cast<int>(r.below(static_cast<std::uint64_t>(n)));
  };
  const auto op_value = [&] {
    const int u = below(10);
    return u < 4 ? -1 : (u < 8 ? +1 : 0);
  };
  ExploreOptions o;
  o.seed = seed;
  o.iterations = 1;
  o.rule_probability = 0;
  o.jitter_probability = 0;
  o.max_think = 1 * kTicksPerUs;
  o.horizon = 1 * kTicksPerMs;
  const int nsems = 3 + below(2);
  for (int i = 0; i < nsems; ++i) o.initial.push_back(below(10) < 7 ? 0 : 1);
  const int ntasks = 3 + below(2);
  for (int t = 0; t < ntasks; ++t) {
    ExploreTask task;
    task.start = static_cast<Tick>(r.below(2 * kTicksPerUs));
    const int nops = 1 + below(2);
    for (int k = 0; k < nops; ++k) {
      ExploreOp op;
      if (below(100) < 35) {
        op.sops.push_back({below(nsems), op_value(), 0});
      } else {
        const int a = below(nsems);
        const int b = (a + 1 + below(nsems - 1)) % nsems;
        op.sops.push_back({a, op_value(), 0});
        op.sops.push_back({b, op_value(), 0});
      }
      if (below(100) < 20) op.timeout = static_cast<Tick>(1 + r.below(5 * kTicksPerUs));
      task.ops.push_back(std::move(op));
    }
    o.tasks.push_back(std::move(task));
  }
  return o;
}

namespace {
constexpr int kSmallPoints = 8;  // synchronisation points a small plan may perturb
constexpr int kSmallKinds = 3;   // delay, pause until a protocol write, until a section end
constexpr int kSmallKind[kSmallKinds] = {0, 2, 3};
int small_plans_per_task() {
  // one perturbation (points x kinds), or two at points o1 < o2 (pairs x kinds^2)
  return kSmallPoints * kSmallKinds +
         kSmallPoints * (kSmallPoints - 1) / 2 * kSmallKinds * kSmallKinds;
}
}  // namespace

int small_plans(const ExploreOptions& scenario) {
  return 1 + static_cast<int>(scenario.tasks.size()) * small_plans_per_task();
}

ExploreOptions small_plan(std::uint64_t seed, int index) {
  ExploreOptions o = small_scenario(seed);
  if (index <= 0) return o;
  int i = index - 1;
  const int task = i / small_plans_per_task();
  i %= small_plans_per_task();
  Rng r = Rng::derive(seed, 0x91A0 + static_cast<std::uint64_t>(index));
  const auto delay = [&] {
    // Log-uniform in [50 ns, 3.2 us].
    const Tick base = (50 * kTicksPerNs) << r.below(6);
    return base + static_cast<Tick>(r.below(static_cast<std::uint64_t>(base)));
  };
  const auto planned = [&](int occurrence, int kind) {
    ExploreOptions::Planned p;
    p.task = task;
    p.occurrence = occurrence;
    p.kind = kSmallKind[kind];
    p.remaining = 1;
    p.delay = delay();
    return p;
  };
  if (i < kSmallPoints * kSmallKinds) {
    o.plan.push_back(planned(i / kSmallKinds, i % kSmallKinds));
    return o;
  }
  i -= kSmallPoints * kSmallKinds;
  const int kinds = i % (kSmallKinds * kSmallKinds);
  int pair = i / (kSmallKinds * kSmallKinds);
  int o1 = 0;
  while (pair >= kSmallPoints - 1 - o1) pair -= kSmallPoints - 1 - o1++;
  const int o2 = o1 + 1 + pair;
  o.plan.push_back(planned(o1, kinds / kSmallKinds));
  o.plan.push_back(planned(o2, kinds % kSmallKinds));
  return o;
}

namespace {

// The perturbation of one explorer run (see ExploreOptions): the schedule
// hook, and an observer that forwards to the checker and watches critical
// sections end, for the pauses that wait for one.
class Perturber final : public KernelObserver {
  // Timed: a delay. The others are preemptions whose length is counted in
  // the other tasks' steps: synchronisation points (Step), changes of
  // complex_count or of the mode flag (Write), or ends of critical sections.
  enum class Kind { None, Timed, Step, Write, SectionEnd };
  struct Pause {
    core::Actor* actor = nullptr;
    int task = 0;
    Kind kind = Kind::Step;
    int remaining = 0;
    bool done = false;
  };

 public:
  Perturber(core::Simulation& sim, const ExploreOptions& o, int tasks, KernelObserver& checker)
      : sim_(sim), o_(o), checker_(checker), rng_(Rng::derive(o.seed, 0xE1)) {
    slow_ = static_cast<int>(rng_.below(static_cast<std::uint64_t>(tasks)));
    if (o.slow_task >= 0) slow_ = o.slow_task;
    for (const auto& r : o.rules) {
      Rule rule;
      rule.kind = r.kind == 0 ? Kind::Timed : static_cast<Kind>(r.kind + 1);
      rule.remaining = r.remaining;
      rule.delay = r.delay;
      rules_[r.point] = rule;
    }
    lo_bits_ = log2(std::max<Tick>(o.min_jitter, 1));
    hi_bits_ = std::max(lo_bits_, log2(std::max<Tick>(o.max_jitter, 1)));
  }

  // The schedule hook: counts this point for the pauses of others, then
  // maybe delays or pauses the task.
  Tick at_point(const Task& t, const char* point) {
    const std::string_view label(point);
    event(t, label.starts_with("write ") ? Kind::Write : Kind::Step);
    const int occurrence = occurrences_[t.id]++;
    for (const auto& planned : o_.plan) {
      if (planned.task != t.id || planned.occurrence != occurrence) continue;
      if (planned.kind == 0) return planned.delay;
      return pause(t, static_cast<Kind>(planned.kind + 1), planned.remaining);
    }
    const double q = t.id == slow_ ? o_.rule_probability : o_.other_rule_probability;
    if (q > 0) {
      // The task's rule for this code location, drawn when first met.
      const auto key = std::make_pair(t.id, std::string(point));
      auto it = task_rules_.find(key);
      if (it == task_rules_.end()) {
        const auto forced = t.id == slow_ ? rules_.find(point) : rules_.end();
        it = task_rules_.emplace(key, forced != rules_.end() ? forced->second : draw_rule(q)).first;
      }
      const Rule& rule = it->second;
      if (rule.kind != Kind::None && rng_.uniform() < o_.rule_repeat) {
        if (rule.kind == Kind::Timed) return rule.delay;
        return pause(t, rule.kind, rule.remaining);
      }
    }
    if (rng_.uniform() >= o_.jitter_probability) return 0;
    return timed_delay();
  }

  Tick pause(const Task& t, Kind kind, int remaining) {
    auto pause = std::make_shared<Pause>();
    pause->actor = t.actor;
    pause->task = t.id;
    pause->kind = kind;
    pause->remaining = remaining;
    t.actor->sleep_until(t.cursor);  // the pause starts at our own date
    pauses_.push_back(pause);
    sim_.at(t.actor->now() + o_.max_jitter, [pause] {
      if (pause->done) return;
      pause->done = true;
      pause->actor->unpark();
    });
    t.actor->park();
    return t.actor->now() - t.cursor;
  }

  void on_access(const Task& t, const AccessEvent& e) override { checker_.on_access(t, e); }
  void on_cs_begin(const Task& t, int locknum) override { checker_.on_cs_begin(t, locknum); }
  void on_cs_end(const Task& t, int locknum) override {
    checker_.on_cs_end(t, locknum);
    event(t, Kind::SectionEnd);
  }
  void on_modify(const Task& t, int object) override { checker_.on_modify(t, object); }
  void on_wake(const Task& waker, const Task& wakee, int status) override {
    checker_.on_wake(waker, wakee, status);
  }

 private:
  struct Rule {
    Kind kind = Kind::None;
    int remaining = 1;
    Tick delay = 0;
  };
  Rule draw_rule(double probability) {
    Rule r;
    if (rng_.uniform() >= probability) return r;
    r.kind = static_cast<Kind>(1 + rng_.below(4));
    switch (r.kind) {
      case Kind::Timed:
        r.delay = timed_delay();
        break;
      case Kind::Step:
        r.remaining = 1 + static_cast<int>(rng_.below(
                              static_cast<std::uint64_t>(std::max(1, o_.max_pause_steps))));
        break;
      default:
        r.remaining = 1 + static_cast<int>(rng_.below(2));
        break;
    }
    return r;
  }
  Tick timed_delay() {
    // Log-uniform: a scale 2^k, then uniform within it.
    const int k = lo_bits_ +
                  static_cast<int>(rng_.below(static_cast<std::uint64_t>(hi_bits_ - lo_bits_) + 1));
    const Tick base = Tick{1} << k;
    return std::clamp<Tick>(base + static_cast<Tick>(rng_.below(static_cast<std::uint64_t>(base))),
                            o_.min_jitter, o_.max_jitter);
  }
  static int log2(Tick v) {
    int bits = 0;
    while ((v >> (bits + 1)) > 0) ++bits;
    return bits;
  }
  void event(const Task& t, Kind kind) {
    // No simulation call while walking the list (one lets other tasks run);
    // the paused task resumes just after the event, after the step it ends.
    std::vector<core::Actor*> resume;
    for (auto& pause : pauses_) {
      if (pause->done || pause->task == t.id) continue;
      if (pause->kind != Kind::Step && pause->kind != kind) continue;
      if (--pause->remaining > 0) continue;
      pause->done = true;
      resume.push_back(pause->actor);
    }
    std::erase_if(pauses_, [](const auto& pause) { return pause->done; });
    for (core::Actor* a : resume) a->unpark_at(std::max(t.cursor, a->now()) + 1);
  }

  core::Simulation& sim_;
  const ExploreOptions& o_;
  KernelObserver& checker_;
  Rng rng_;
  int slow_ = 0;
  int lo_bits_ = 0, hi_bits_ = 0;
  std::vector<std::shared_ptr<Pause>> pauses_;
  std::map<int, int> occurrences_;     // synchronisation points passed, by task
  std::map<std::string, Rule> rules_;  // imposed on the slow task, by code location
  std::map<std::pair<int, std::string>, Rule> task_rules_;  // by task and code location
};

}  // namespace

ExploreResult explore(const KernelPolicy& policy, const config::MachineParams& machine,
                      const ExploreOptions& o) {
  const auto tasks = o.tasks.empty() ? mixed_workload() : o.tasks;
  int nsems = static_cast<int>(o.initial.size());
  for (const auto& task : tasks)
    for (const auto& op : task.ops)
      for (const auto& sop : op.sops) nsems = std::max(nsems, sop.sem_num + 1);
  Rig rig(policy, machine, std::max(nsems, 1), o.seed);
  for (std::size_t i = 0; i < o.initial.size(); ++i) rig.kernel().array().semval[i] = o.initial[i];
  InvariantChecker checker(rig.kernel());
  std::unique_ptr<TeeObserver> tee;
  if (o.also != nullptr) tee = std::make_unique<TeeObserver>(checker, *o.also);
  KernelObserver& watch = tee ? static_cast<KernelObserver&>(*tee) : checker;
  Perturber perturber(rig.sim(), o, static_cast<int>(tasks.size()), watch);
  rig.kernel().set_observer(&perturber);
  rig.kernel().set_schedule_hook(
      [&perturber](const Task& t, const char* point) { return perturber.at_point(t, point); });
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    rig.add_task(static_cast<int>(i), [task = tasks[i], i, &o](Rig& r, Task& t) {
      Rng rng = Rng::derive(o.seed, 0x7A5C + i);
      t.charge(task.start);
      for (int k = 0; k < o.iterations; ++k) {
        for (const auto& op : task.ops) {
          {
            machine::InFunc in(t, machine::Func::User);
            t.charge(static_cast<Tick>(rng.below(static_cast<std::uint64_t>(o.max_think) + 1)));
          }
          const int result = op.timeout >= 0 ? r.kernel().semtimedop(t, op.sops, op.timeout)
                                             : r.kernel().semop(t, op.sops);
          if (result == -EIDRM || result == -EINVAL) return;  // the array is gone
        }
      }
    });
  }
  ExploreResult result;
  rig.set_controller([&](Rig& r, Task& c) {
    core::Actor& self = *c.actor;
    const Tick step = 20 * kTicksPerUs;
    while (!r.all_finished()) {
      self.sleep_until(self.now() + step);
      c.idle_until(self.now());
      if (r.quiescent() || self.now() >= o.horizon) {
        if (r.all_finished()) break;
        // Nothing runs and somebody sleeps: a lost wakeup if it could proceed.
        checker.check_lost_wakeups(self.now());
        for (int i = 0; i < r.tasks(); ++i)
          if (!r.finished(i) && r.kernel().sleeping(r.task(i))) ++result.stuck;
        r.kernel().rmid(c);
        break;
      }
    }
    result.end = self.now();
  });
  rig.run();
  for (int i = 0; i < rig.tasks(); ++i) result.semops += rig.task(i).semops;
  result.violations = checker.violations();
  result.critical_sections = checker.critical_sections();
  return result;
}

}  // namespace semsim::ipc

namespace semsim::ipc {

SearchResult search_mixed(const KernelPolicy& policy, const config::MachineParams& machine,
                          std::uint64_t first_seed, int max_runs) {
  SearchResult s;
  for (int i = 0; i < max_runs; ++i) {
    ExploreOptions o;
    o.seed = first_seed + static_cast<std::uint64_t>(i);
    s.result = explore(policy, machine, o);
    s.seed = o.seed;
    ++s.runs;
    if (!s.result.violations.empty()) {
      s.found = true;
      return s;
    }
  }
  return s;
}

SearchResult search_small(const KernelPolicy& policy, const config::MachineParams& machine,
                          std::uint64_t first_seed, int max_runs) {
  SearchResult s;
  for (std::uint64_t seed = first_seed; s.runs < max_runs; ++seed) {
    const int plans = small_plans(small_scenario(seed));
    for (int plan = 0; plan < plans && s.runs < max_runs; ++plan) {
      s.result = explore(policy, machine, small_plan(seed, plan));
      s.seed = seed;
      s.plan = plan;
      ++s.runs;
      if (!s.result.violations.empty()) {
        s.found = true;
        return s;
      }
    }
  }
  return s;
}

}  // namespace semsim::ipc
