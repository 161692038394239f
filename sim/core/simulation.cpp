#include "core/simulation.hpp"

#include <cstdint>

#include <simgrid/Exception.hpp>
#include <simgrid/kernel/Timer.hpp>
#include <simgrid/s4u.hpp>
#include <xbt/log.h>

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

double to_sg(Tick t) { return static_cast<double>(t); }

// SimGrid's timer heap is process-global and outlives an engine: a timer still
// pending when a run stops would fire in the next engine of this process.
// Every timer carries the id of the run that set it and does nothing unless
// that run is the live one.
std::uint64_t g_next_run_id = 1;
std::uint64_t g_live_run_id = 0;

}  // namespace

struct Simulation::Impl {
  std::unique_ptr<sg4::Engine> engine;
  sg4::Host* host = nullptr;
  double start_clock = 0;  // SimGrid's clock is never reset between engines
  std::exception_ptr error;
  bool deadlock = false;
  bool stopped = false;
  bool ran = false;
  std::uint64_t run_id = g_next_run_id++;
  std::vector<std::pair<std::string, std::function<void()>>> pending;  // bodies before run()

  Tick now() const { return static_cast<Tick>(sg4::Engine::get_clock() - start_clock); }
};

struct Actor::Impl {
  sg4::SemaphorePtr token = sg4::Semaphore::create(0);
};

Actor::Actor(Simulation& sim, int id) : sim_(sim), id_(id), impl_(std::make_unique<Impl>()) {}
Actor::~Actor() = default;

Tick Actor::now() const { return sim_.now(); }

void Actor::sleep_until(Tick date) {
  const Tick delta = date - sim_.now();
  if (delta > 0) sg4::this_actor::sleep_for(to_sg(delta));
}

void Actor::park() { impl_->token->acquire(); }

void Actor::unpark() { impl_->token->release(); }

void Actor::unpark_at(Tick date) {
  if (date <= sim_.now()) {
    unpark();
    return;
  }
  sim_.at(date, [token = impl_->token] { token->release(); });
}

Simulation::Simulation() : impl_(std::make_unique<Impl>()) {
  // Silence SimGrid's own logging (including its deadlock report, which we
  // turn into an exception) and pick the fast raw contexts before the engine
  // exists: the factory is read at construction.
  xbt_log_control_set("root.thres:critical root.app:file:/dev/null");
  sg4::Engine::set_config("contexts/factory:raw");
  int argc = 1;
  char prog[] = "semsim";
  char* argv[] = {prog, nullptr};
  impl_->engine = std::make_unique<sg4::Engine>(&argc, argv);
  sg4::Engine::set_config("contexts/stack-size:256");
  connect_deadlock_signal_once();
  auto* zone = sg4::create_full_zone("machine");
  impl_->host = zone->create_host("cpu", 1.0)->seal();
  zone->seal();
  impl_->start_clock = sg4::Engine::get_clock();
}

Simulation::~Simulation() {
  // Destroying an engine with runnable actors that never ran aborts: make sure
  // actors only exist once run() is called (they are created there).
  impl_->pending.clear();
  impl_->engine.reset();
}

Actor& Simulation::spawn(const std::string& name, std::function<void(Actor&)> body) {
  auto id = static_cast<int>(actors_.size());
  actors_.push_back(std::unique_ptr<Actor>(new Actor(*this, id)));
  Actor& actor = *actors_.back();
  impl_->pending.emplace_back(name, [this, &actor, body = std::move(body)] {
    try {
      body(actor);
    } catch (const simgrid::ForcefulKillException&) {
      throw;  // stop_all() unwinding: must propagate to SimGrid
    } catch (...) {
      if (!impl_->error) impl_->error = std::current_exception();
      impl_->stopped = true;
      sg4::Actor::kill_all();
    }
  });
  return actor;
}

void Simulation::at(Tick date, std::function<void()> callback) {
  simgrid::kernel::timer::Timer::set(impl_->start_clock + to_sg(date),
                                     [id = impl_->run_id, cb = std::move(callback)] {
                                       if (id == g_live_run_id) cb();
                                     });
}

void Simulation::run() {
  if (impl_->ran) throw SimulationError("a Simulation can only run once");
  impl_->ran = true;
  impl_->start_clock = sg4::Engine::get_clock();
  for (auto& [name, body] : impl_->pending) sg4::Actor::create(name, impl_->host, std::move(body));
  impl_->pending.clear();
  impl_->deadlock = false;
  g_deadlock_flag = &impl_->deadlock;
  g_live_run_id = impl_->run_id;
  impl_->engine->run();
  g_live_run_id = 0;
  g_deadlock_flag = nullptr;
  if (impl_->error) std::rethrow_exception(impl_->error);
  if (impl_->deadlock && !impl_->stopped)
    throw SimulationError("deadlock: every simulated task is blocked and no event is pending");
}

void Simulation::stop_all() {
  impl_->stopped = true;
  sg4::Actor::kill_all();
}

Tick Simulation::now() const { return impl_->now(); }

}  // namespace semsim::core
