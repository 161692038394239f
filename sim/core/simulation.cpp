#include "core/simulation.hpp"

#include <xbt/log.h>

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <simgrid/Exception.hpp>
#include <simgrid/s4u.hpp>

#include "core/errors.hpp"

namespace sg4 = simgrid::s4u;

namespace semsim::core {

namespace {

// SimGrid's deadlock signal is static and accumulates connections across
// engines, so connect it once per process and point it at the live run.
bool* g_deadlock_flag = nullptr;

void connect_deadlock_signal_once() {
  static bool connected = false;
  if (connected) return;
  connected = true;
  sg4::Engine::on_deadlock_cb([] {
    if (g_deadlock_flag != nullptr) *g_deadlock_flag = true;
  });
}

enum class ActorState : std::uint8_t { Waiting, Parked, Running, Exited };
enum class EventKind : std::uint8_t { Turn, Wake, Callback };

// One entry of the calendar. Turn: `actor` waits in wait_turn() for `date`.
// Wake: an unpark of `actor` takes effect at `date`. Callback: callbacks[cb].
struct Event {
  Tick date;
  std::uint64_t seq;
  Actor* actor;
  EventKind kind;
  std::uint32_t cb;
};

// Min-heap order: earlier date first, then the earlier scheduling call.
struct Later {
  bool operator()(const Event& a, const Event& b) const {
    return a.date != b.date ? a.date > b.date : a.seq > b.seq;
  }
};

}  // namespace

struct Actor::Impl {
  sg4::SemaphorePtr token = sg4::Semaphore::create(0);
  ActorState state = ActorState::Waiting;
  int wakes = 0;  // unparks that arrived while it was not parked
};

struct Simulation::Impl {
  std::unique_ptr<sg4::Engine> engine;
  sg4::Host* host = nullptr;
  std::exception_ptr error;
  bool deadlock = false;
  bool stopped = false;
  bool ran = false;
  std::vector<std::pair<std::string, std::function<void()>>> pending;  // bodies before run()

  // The calendar (Later keeps the earliest event at the front).
  std::vector<Event> heap;
  std::uint64_t seq = 0;
  std::vector<std::function<void()>> callbacks;
  std::vector<std::uint32_t> free_callbacks;
  std::uint64_t handoffs = 0;

  void push(ClockState& clock, Event e) {
    e.seq = seq++;
    heap.push_back(e);
    std::push_heap(heap.begin(), heap.end(), Later{});
    clock.horizon = heap.front().date;
  }
  Event pop(ClockState& clock) {
    std::pop_heap(heap.begin(), heap.end(), Later{});
    Event e = heap.back();
    heap.pop_back();
    clock.horizon = heap.empty() ? ClockState::kNever : heap.front().date;
    return e;
  }
  // Every event passes here: the clock advances to its date.
  static void advance(ClockState& clock, Tick date, const Actor& who) {
    if (date > clock.now) {
      clock.now = date;
      clock.at_now = 0;
    } else if (++clock.at_now > Actor::kNoProgressTurns) {
      who.no_progress();
    }
  }
  // The running actor `self` (nullptr: none, at start) gives up the CPU: run
  // events until one lets an actor run. If that is `self`, return at once;
  // else release the other one and, unless `self` is leaving, block until
  // someone releases us. With nothing pending, `self` blocks and SimGrid sees
  // the deadlock (every actor blocked, no activity).
  void hand_off(ClockState& clock, Actor* self, bool leaving) {
    for (;;) {
      if (heap.empty() || stopped) {
        clock.current = nullptr;
        break;
      }
      const Event e = pop(clock);
      if (self != nullptr)
        advance(clock, e.date, *self);
      else
        clock.now = std::max(clock.now, e.date);
      if (e.kind == EventKind::Callback) {
        auto cb = std::move(callbacks[e.cb]);
        callbacks[e.cb] = nullptr;
        free_callbacks.push_back(e.cb);
        clock.current = nullptr;
        cb();
        continue;
      }
      auto& a = *e.actor->impl_;
      if (e.kind == EventKind::Wake && a.state != ActorState::Parked) {
        if (a.state != ActorState::Exited) ++a.wakes;  // its next park() returns at once
        continue;
      }
      a.state = ActorState::Running;
      clock.current = e.actor;
      if (e.actor == self) return;
      ++handoffs;
      a.token->release();
      break;
    }
    if (!leaving && self != nullptr) self->impl_->token->acquire();
  }
};

Actor::Actor(Simulation& sim, int id, ClockState* clock)
    : sim_(sim), id_(id), clock_(clock), impl_(std::make_unique<Impl>()) {}
Actor::~Actor() = default;

void Actor::queue_turn(Tick date) {
  auto& clock = sim_.clock_;
  impl_->state = ActorState::Waiting;
  sim_.impl_->push(clock, Event{std::max(date, clock.now), 0, this, EventKind::Turn, 0});
  sim_.impl_->hand_off(clock, this, false);
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
  impl_->state = ActorState::Parked;
  sim_.impl_->hand_off(sim_.clock_, this, false);
}

void Actor::unpark() { unpark_at(sim_.clock_.now); }

void Actor::unpark_at(Tick date) {
  auto& clock = sim_.clock_;
  sim_.impl_->push(clock, Event{std::max(date, clock.now), 0, this, EventKind::Wake, 0});
}

namespace {
bool g_reference_order_default = false;
EngineCounters g_counters;
}  // namespace

EngineCounters engine_counters() { return g_counters; }

void Simulation::set_default_reference_order(bool on) { g_reference_order_default = on; }
bool Simulation::default_reference_order() { return g_reference_order_default; }

Simulation::Simulation() : impl_(std::make_unique<Impl>()) {
  clock_.reference = g_reference_order_default;
  // Silence SimGrid's own logging (including its deadlock report, which we
  // turn into an exception) and pick the fast raw contexts before the engine
  // exists: the factory is read at construction.
  xbt_log_control_set("root.thres:critical root.app:file:/dev/null");
  sg4::Engine::set_config("contexts/factory:raw");
  int argc = 1;
  char prog[] = "semsim";
  char* argv[] = {prog, nullptr};
  // SimGrid's engine installs a SIGINT handler of its own (it ends the process
  // with status 1): keep the caller's, so that Ctrl-C means what the caller says.
  struct sigaction caller_sigint {};
  sigaction(SIGINT, nullptr, &caller_sigint);
  impl_->engine = std::make_unique<sg4::Engine>(&argc, argv);
  sigaction(SIGINT, &caller_sigint, nullptr);
  sg4::Engine::set_config("contexts/stack-size:256");
  connect_deadlock_signal_once();
  auto* zone = sg4::create_full_zone("machine");
  impl_->host = zone->create_host("cpu", 1.0)->seal();
  zone->seal();
}

Simulation::~Simulation() {
  // Destroying an engine with runnable actors that never ran aborts: make sure
  // actors only exist once run() is called (they are created there).
  impl_->pending.clear();
  impl_->engine.reset();
}

Actor& Simulation::spawn(const std::string& name, std::function<void(Actor&)> body) {
  auto id = static_cast<int>(actors_.size());
  actors_.push_back(std::unique_ptr<Actor>(new Actor(*this, id, &clock_)));
  Actor& actor = *actors_.back();
  impl_->pending.emplace_back(name, [this, &actor, body = std::move(body)] {
    // Every actor starts blocked; the calendar's first turn releases it.
    actor.impl_->token->acquire();
    try {
      body(actor);
    } catch (const simgrid::ForcefulKillException&) {
      throw;  // stop_all() unwinding: must propagate to SimGrid
    } catch (...) {
      if (!impl_->error) impl_->error = std::current_exception();
      impl_->stopped = true;
      sg4::Actor::kill_all();
      return;
    }
    actor.impl_->state = ActorState::Exited;
    impl_->hand_off(clock_, &actor, true);
  });
  impl_->push(clock_, Event{0, 0, &actor, EventKind::Turn, 0});
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
  impl_->push(clock_, Event{std::max(date, clock_.now), 0, nullptr, EventKind::Callback, slot});
}

void Simulation::run() {
  if (impl_->ran) throw SimulationError("a Simulation can only run once");
  impl_->ran = true;
  for (auto& [name, body] : impl_->pending) sg4::Actor::create(name, impl_->host, std::move(body));
  impl_->pending.clear();
  // The starter runs after every task has blocked on its token (SimGrid runs
  // new actors in creation order) and hands the CPU to the first event.
  sg4::Actor::create("starter", impl_->host, [this] {
    try {
      impl_->hand_off(clock_, nullptr, true);
    } catch (...) {
      if (!impl_->error) impl_->error = std::current_exception();
      impl_->stopped = true;
      sg4::Actor::kill_all();
    }
  });
  impl_->deadlock = false;
  g_deadlock_flag = &impl_->deadlock;
  impl_->engine->run();
  g_deadlock_flag = nullptr;
  g_counters.handoffs += impl_->handoffs;
  g_counters.shortcuts += clock_.shortcuts;
  if (impl_->error) std::rethrow_exception(impl_->error);
  if (impl_->deadlock && !impl_->stopped)
    throw SimulationError("deadlock: every simulated task is blocked and no event is pending");
}

void Simulation::stop_all() {
  impl_->stopped = true;
  clock_.current = nullptr;
  sg4::Actor::kill_all();
}

std::uint64_t Simulation::handoffs() const { return impl_->handoffs; }
std::uint64_t Simulation::shortcuts() const { return clock_.shortcuts; }

}  // namespace semsim::core
