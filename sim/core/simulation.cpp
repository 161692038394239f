#include "core/simulation.hpp"

#include <algorithm>
#include <boost/context/fiber.hpp>
#include <boost/context/protected_fixedsize_stack.hpp>
#include <cstdint>
#include <cstring>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

#include "core/calendar.hpp"
#include "core/engine.hpp"
#include "core/errors.hpp"

namespace sg4 = simgrid::s4u;
namespace bctx = boost::context;

namespace semsim::core {

namespace {

// A task's fiber stack. 256 KiB: what SimGrid's contexts gave each task
// before the tasks became fibers (contexts/stack-size:256), so no model path
// that ran then can overflow now. mmap reserves it and only the pages a task
// touches become resident, so 4,096 tasks (the most a scenario may ask for)
// reserve 1 GiB of address space and cost only their used pages. The guard
// page below it (protected_fixedsize_stack) turns an overflow into a SIGSEGV
// at the faulting frame instead of a silent write into a neighbour; it is a
// second mapping per task, far below vm.max_map_count even at 4,096 tasks.
constexpr std::size_t kFiberStackBytes = 256 * 1024;

// Lines of a suspended task's stack prefetched before a hand-off to it: 256
// bytes, its saved registers and the frames it returns through first. Measured
// on the Firecracker Intel guest of 2026-12-07 (C++ driver, user CPU, runs
// interleaved): ping-pong 1.81 s with 4 lines against 1.88 s with 8 (median of
// 8 each), no line 1.76 s; the uniform-64 hysteresis, laptop-4 and demo cases
// the same with 0, 4 or 8 within their noise. More lines, or lines below the
// top, measured no faster on the uniform-64 bench of 2026-12-02.
constexpr int kPrefetchStackLines = 4;

// Where a suspended fiber's saved context sits on its stack: a fiber is its
// fcontext_t (the stack pointer at the switch) and nothing else.
static_assert(sizeof(bctx::fiber) == sizeof(void*));
const char* stack_top(const bctx::fiber& f) {
  const char* sp = nullptr;
  std::memcpy(&sp, &f, sizeof sp);
  return sp;
}

enum class ActorState : std::uint8_t { Waiting, Parked, Running, Exited };

// AddressSanitizer must be told which stack runs after a fiber switch (the
// system's boost.context announces its fcontext switches only when built for
// it), or it takes a throw on a task's stack for an overflow of the host's
// (tests/sanitize.sh). Each context's stack: where it begins and its size,
// the host's learnt at the first switch out of it. Nothing in other builds.
struct StackBounds {
  const void* bottom = nullptr;
  std::size_t size = 0;
};
#if defined(__SANITIZE_ADDRESS__)
// Before a switch to `to` (nullptr fake: the running fiber is ending).
void asan_leave(void** fake, const StackBounds& to) {
  __sanitizer_start_switch_fiber(fake, to.bottom, to.size);
}
// Back on a stack after a switch; `from` (if given) learns the stack left.
void asan_enter(void* fake, StackBounds* from) {
  const void* bottom = nullptr;
  std::size_t size = 0;
  __sanitizer_finish_switch_fiber(fake, &bottom, &size);
  if (from != nullptr && from->bottom == nullptr) *from = {bottom, size};
}
#else
void asan_leave(void**, const StackBounds&) {}
void asan_enter(void*, StackBounds*) {}
#endif

// protected_fixedsize_stack that records where the stack it allocates lies.
class RecordedStack {
 public:
  RecordedStack(std::size_t bytes, StackBounds* bounds) : alloc_(bytes), bounds_(bounds) {}
  bctx::stack_context allocate() {
    bctx::stack_context sc = alloc_.allocate();
    *bounds_ = {static_cast<char*>(sc.sp) - sc.size, sc.size};
    return sc;
  }
  // Under ASan the stack's redzones are cleared first: the pages may come back
  // from a later mmap (a file, another stack) that must not look poisoned.
  void deallocate(bctx::stack_context& sc) noexcept {
#if defined(__SANITIZE_ADDRESS__)
    __asan_unpoison_memory_region(static_cast<char*>(sc.sp) - sc.size, sc.size);
#endif
    alloc_.deallocate(sc);
  }

 private:
  bctx::protected_fixedsize_stack alloc_;
  StackBounds* bounds_;
};

}  // namespace

// A task's record; the calendar's events point here, so that a hand-off
// reads one object: its state and the context to switch to.
struct Actor::Impl {
  explicit Impl(Actor& a) : actor(a) {}
  Actor& actor;
  std::function<void(Actor&)> body;
  // Where the task resumes: set while it is suspended (waiting or parked),
  // empty while it runs and once it has exited.
  bctx::fiber context;
  StackBounds stack;  // its fiber's stack (for AddressSanitizer)
  ActorState state = ActorState::Waiting;
  int wakes = 0;  // unparks that arrived while it was not parked
  // While it waits: the date of its live turn event in the calendar, at or before
  // the date of its turn (Actor::pending_turn()). A turn event of another date
  // than `queued` is one that advance_turn() replaced (stale: skipped when it comes
  // out); the live one, when postpone_turn() moved the turn past it, is pushed
  // again at the turn's date when it comes out, without running the task.
  Tick queued = 0;
};

struct Simulation::Impl {
  explicit Impl(ClockState& c) : clock(c) {}
  ClockState& clock;
  SimGridEngine sg;
  std::exception_ptr error;
  bool deadlock = false;
  bool stopped = false;
  bool ran = false;
  bool unwinding = false;  // the tasks left are being unwound (end of run)

  using Task = Actor::Impl;
  // Events name a task by its id (its index here) or a callback by its slot.
  Calendar calendar;
  std::vector<Task*> tasks;
  std::vector<std::function<void()>> callbacks;
  std::vector<std::uint32_t> free_callbacks;
  std::uint64_t handoffs = 0;

  // The context of the SimGrid actor that runs the fibers, kept while a task
  // runs; a task switches back to it when nothing can run any more.
  bctx::fiber host_context;
  StackBounds host_stack;  // its stack (for AddressSanitizer)
  // Where the context that switched last keeps its continuation: the one
  // resumed stores it there (a fiber switch hands over the suspended caller).
  bctx::fiber* resumer_slot = nullptr;

  void push(const Event& e) {
    if (clock.ahead)  // see "Read-ahead" in simulation.hpp
      throw SimulationError("time order: an event scheduled by a task that read ahead of its turn");
    calendar.push(e);
    clock.horizon = calendar.earliest();
  }
  // Every event passes here: the clock advances to its date.
  void advance(Tick date, const Task* who) {
    if (date > clock.now) {
      clock.now = date;
      clock.at_now = 0;
    } else if (who != nullptr && ++clock.at_now > Actor::kNoProgressTurns) {
      who->actor.no_progress();
    }
  }
  // Let one event take effect; returns the task it lets run, if any.
  Task* dispatch(const Event& e, Task* self) {
    advance(e.date, self);
    clock.ahead = false;  // whoever read ahead has given up the CPU
    if (e.kind == EventKind::Callback) {
      auto cb = std::move(callbacks[e.ref]);
      callbacks[e.ref] = nullptr;
      free_callbacks.push_back(e.ref);
      clock.current = nullptr;
      cb();
      return nullptr;
    }
    Task& t = *tasks[e.ref];
    if (e.kind == EventKind::Turn) {
      if (t.state != ActorState::Waiting || e.date != t.queued)
        return nullptr;                 // replaced by an earlier turn (advance_turn())
      if (e.date < t.actor.pending_) {  // postponed (postpone_turn()): its turn is later
        t.queued = t.actor.pending_;
        calendar.push(Event{t.queued, EventKind::Turn, e.ref});
        clock.horizon = calendar.earliest();
        return nullptr;
      }
    }
    if (e.kind == EventKind::Wake && t.state != ActorState::Parked) {
      if (t.state != ActorState::Exited) ++t.wakes;  // its next park() returns at once
      return nullptr;
    }
    t.state = ActorState::Running;
    t.actor.pending_ = -1;
    clock.current = &t.actor;
    if (&t != self) ++handoffs;
    return &t;
  }
  // Schedule `queued` (if any), then run events until one lets a task run,
  // and return that task (it may be `self`); nullptr when nothing can run
  // (the calendar is empty: every task left has parked, or stop_all() was
  // called). Scheduling and taking the earliest event is one push_pop().
  Task* next_runner(Task* self, const Event* queued = nullptr) {
    if (queued != nullptr) {
      if (stopped) {
        push(*queued);
      } else {
        if (!calendar.empty()) prefetch(calendar.top());
        const Event e = calendar.push_pop(*queued);
        clock.horizon = calendar.earliest();
        if (Task* t = dispatch(e, self)) return t;
      }
    }
    while (!calendar.empty() && !stopped) {
      const Event e = calendar.pop();
      clock.horizon = calendar.earliest();
      if (Task* t = dispatch(e, self)) return t;
    }
    clock.current = nullptr;
    return nullptr;
  }
  // Start loading what a hand-off to e's task reads first -- its record and
  // the top of its stack, where the switch pops its registers and returns
  // through its frames -- while the calendar sifts: with tens of tasks
  // those lines have left the L1 cache since the task last ran.
  void prefetch(const Event& e) const {
    if (e.kind == EventKind::Callback) return;
    const Task* t = tasks[e.ref];
    __builtin_prefetch(t);
    const char* sp = stack_top(t->context);
    if (sp == nullptr) return;
    for (int line = 0; line < kPrefetchStackLines; ++line) __builtin_prefetch(sp + 64 * line);
  }
  bctx::fiber& context_of(Task* t) { return t != nullptr ? t->context : host_context; }
  const StackBounds& stack_of(const Task* t) const { return t != nullptr ? t->stack : host_stack; }
  // Suspend the running context, keeping its continuation in `mine`, and
  // resume `to` (on the stack `bounds`). Returns when someone switches back to us.
  void switch_to(bctx::fiber& mine, bctx::fiber& to, const StackBounds& bounds) {
    resumer_slot = &mine;
    void* fake = nullptr;
    asan_leave(&fake, bounds);
#if defined(__SANITIZE_ADDRESS__)
    bctx::fiber back;
    try {
      back = std::move(to).resume();
    } catch (const bctx::detail::forced_unwind&) {  // unwound at the end of the run
      asan_enter(fake, nullptr);
      throw;
    }
#else
    bctx::fiber back = std::move(to).resume();
#endif
    asan_enter(fake, nullptr);
    *resumer_slot = std::move(back);
  }
  // The running task `self` (nullptr: the host, at start) gives up the CPU
  // and the earliest event's task gets it: a direct fiber switch, or none if
  // that is `self`. With nothing to run, the CPU goes back to the host.
  void hand_off(Task* self, const Event* queued = nullptr) {
    // Unwinding at the end of the run: a destructor that waits must not switch.
    if (unwinding) return;
    Task* next = next_runner(self, queued);
    if (next != self) switch_to(context_of(self), context_of(next), stack_of(next));
  }
  void fail(std::exception_ptr e) {
    if (!error) error = std::move(e);
    stopped = true;
    clock.current = nullptr;
  }
  // The whole life of a task's fiber; returns the context to switch to when
  // the task has ended (its stack is freed then).
  bctx::fiber task_main(Task& task) {
    Task* next = nullptr;
    try {
      task.body(task.actor);
      task.state = ActorState::Exited;
      next = next_runner(&task);
    } catch (const bctx::detail::forced_unwind&) {
      // The fiber is being unwound (end of run): must reach boost.context,
      // which switches back to the host.
      asan_leave(nullptr, host_stack);
      throw;
    } catch (...) {
      fail(std::current_exception());
    }
    task.state = ActorState::Exited;
    resumer_slot = &task.context;  // receives nothing: this fiber is gone
    asan_leave(nullptr, stack_of(next));
    return std::move(context_of(next));
  }
  // The body of the one SimGrid actor: the tasks run as fibers inside it.
  void run_tasks(const std::vector<std::unique_ptr<Actor>>& actors) {
    try {
      for (const auto& a : actors) {
        Task* task = a->impl_.get();
        task->context =
            bctx::fiber(std::allocator_arg, RecordedStack(kFiberStackBytes, &task->stack),
                        [this, task](bctx::fiber&& from) {
                          asan_enter(nullptr, &host_stack);  // the first switch is the host's
                          *resumer_slot = std::move(from);
                          return task_main(*task);
                        });
      }
      hand_off(nullptr);
    } catch (...) {
      fail(std::current_exception());
    }
    deadlock = !stopped && std::any_of(actors.begin(), actors.end(), [](const auto& a) {
      return a->impl_->state != ActorState::Exited;
    });
    // Unwind every task still suspended (stop_all(), an error, a deadlock), in
    // spawn order: destroying its fiber runs its destructors (RAII) on its stack.
    unwinding = true;
    for (const auto& a : actors) {
      if (!a->impl_->context) continue;
      void* fake = nullptr;
      asan_leave(&fake, a->impl_->stack);
      a->impl_->context = bctx::fiber{};
      asan_enter(fake, nullptr);
    }
    unwinding = false;
  }
};

Actor::Actor(Simulation& sim, int id, ClockState* clock)
    : sim_(sim), id_(id), clock_(clock), impl_(std::make_unique<Impl>(*this)) {}
Actor::~Actor() = default;

void Actor::queue_turn(Tick date) {
  auto& s = *sim_.impl_;
  if (s.unwinding) return;
  impl_->state = ActorState::Waiting;
  const Event turn{std::max(date, clock_->now), EventKind::Turn, static_cast<std::uint32_t>(id_)};
  clock_->ahead = false;  // its read-ahead ends with this turn
  if (observer_) clock_->barrier = turn.date;
  impl_->queued = pending_ = turn.date;
  s.hand_off(impl_.get(), &turn);
}

bool Actor::waiting() const { return impl_->state == ActorState::Waiting && !running(); }

void Actor::advance_turn(Tick date) {
  if (!waiting() || observer_ || date >= pending_ || sim_.impl_->unwinding || sim_.impl_->stopped)
    return;
  if (date < clock_->now)
    throw SimulationError("time order: a turn moved to " + std::to_string(ticks_to_ns(date)) +
                          " ns, before the clock at " + std::to_string(ticks_to_ns(clock_->now)) +
                          " ns");
  pending_ = date;
  if (date >= impl_->queued) return;  // its live event comes first, and moves to `date`
  impl_->queued = date;
  sim_.impl_->push(Event{date, EventKind::Turn, static_cast<std::uint32_t>(id_)});
}

void Actor::postpone_turn(Tick date) {
  if (!waiting() || observer_ || date <= pending_ || sim_.impl_->unwinding || sim_.impl_->stopped)
    return;
  pending_ = date;  // the live event moves there when it comes out (dispatch())
}

void Actor::no_progress() const {
  throw SimulationError(
      "no progress: simulated time stopped at " + std::to_string(ticks_to_ns(clock_->now)) +
      " ns for " + std::to_string(kNoProgressTurns) +
      " turns (a model cost that rounds to 0 ticks makes a loop that never ends)");
}

void Actor::park() {
  if (impl_->wakes > 0) {
    --impl_->wakes;
    return;
  }
  if (sim_.impl_->unwinding) return;
  if (clock_->ahead)  // a park is a shared step: its turn comes first
    throw SimulationError("time order: a task parked while it was ahead of its turn");
  impl_->state = ActorState::Parked;
  sim_.impl_->hand_off(impl_.get());
}

void Actor::unpark() { unpark_at(sim_.clock_.now); }

void Actor::unpark_at(Tick date) {
  auto& clock = sim_.clock_;
  sim_.impl_->push(
      Event{std::max(date, clock.now), EventKind::Wake, static_cast<std::uint32_t>(id_)});
}

namespace {
bool g_reference_order_default = false;
EngineCounters g_counters;
}  // namespace

EngineCounters engine_counters() { return g_counters; }

void Simulation::set_default_reference_order(bool on) { g_reference_order_default = on; }
bool Simulation::default_reference_order() { return g_reference_order_default; }

Simulation::Simulation() : impl_(std::make_unique<Impl>(clock_)) {
  clock_.reference = g_reference_order_default;
  impl_->sg = make_engine();
}

Simulation::~Simulation() {
  actors_.clear();
  impl_->sg.engine.reset();
}

Actor& Simulation::spawn(const std::string& name, std::function<void(Actor&)> body) {
  (void)name;  // fibers have no name; kept for callers and debugging of call sites
  if (impl_->ran) throw SimulationError("spawn() after run(): every task must exist before");
  auto id = static_cast<int>(actors_.size());
  actors_.push_back(std::unique_ptr<Actor>(new Actor(*this, id, &clock_)));
  Actor& actor = *actors_.back();
  actor.impl_->body = std::move(body);
  impl_->tasks.push_back(actor.impl_.get());
  impl_->push(Event{0, EventKind::Turn, static_cast<std::uint32_t>(id)});
  return actor;
}

Actor& Simulation::spawn_observer(const std::string& name, std::function<void(Actor&)> body) {
  for (const auto& a : actors_)
    if (a->observer_) throw SimulationError("spawn_observer(): a simulation has one observer");
  Actor& actor = spawn(name, std::move(body));
  actor.observer_ = true;
  clock_.barrier = 0;  // its first turn, at date 0
  return actor;
}

void Simulation::at(Tick date, std::function<void()> callback) {
  std::uint32_t slot = 0;
  if (!impl_->free_callbacks.empty()) {
    slot = impl_->free_callbacks.back();
    impl_->free_callbacks.pop_back();
    impl_->callbacks[slot] = std::move(callback);
  } else {
    slot = static_cast<std::uint32_t>(impl_->callbacks.size());
    impl_->callbacks.push_back(std::move(callback));
  }
  impl_->push(Event{std::max(date, clock_.now), EventKind::Callback, slot});
}

void Simulation::run() {
  if (impl_->ran) throw SimulationError("a Simulation can only run once");
  impl_->ran = true;
  // SimGrid hosts the run: one actor whose context runs every task's fiber.
  sg4::Actor::create("tasks", impl_->sg.host, [this] { impl_->run_tasks(actors_); });
  impl_->sg.engine->run();
  g_counters.handoffs += impl_->handoffs;
  g_counters.shortcuts += clock_.shortcuts;
  if (impl_->error) std::rethrow_exception(impl_->error);
  if (impl_->deadlock)
    throw SimulationError("deadlock: every simulated task is blocked and no event is pending");
}

void Simulation::stop_all() {
  impl_->stopped = true;
  clock_.current = nullptr;
}

std::uint64_t Simulation::handoffs() const { return impl_->handoffs; }
std::uint64_t Simulation::shortcuts() const { return clock_.shortcuts; }

}  // namespace semsim::core
