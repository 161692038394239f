#include "core/engine.hpp"

#include <xbt/log.h>

#include <csignal>

namespace sg4 = simgrid::s4u;

namespace semsim::core {

SimGridEngine make_engine() {
  // Silence SimGrid's own logging and pick the fast raw contexts before the
  // engine exists: the factory is read at construction.
  xbt_log_control_set("root.thres:critical root.app:file:/dev/null");
  sg4::Engine::set_config("contexts/factory:raw");
  int argc = 1;
  char prog[] = "semsim";
  char* argv[] = {prog, nullptr};
  // SimGrid's engine installs a SIGINT handler of its own (it ends the process
  // with status 1): keep the caller's, so that Ctrl-C means what the caller says.
  struct sigaction caller_sigint {};
  sigaction(SIGINT, nullptr, &caller_sigint);
  SimGridEngine out;
  out.engine = std::make_unique<sg4::Engine>(&argc, argv);
  sigaction(SIGINT, &caller_sigint, nullptr);
  sg4::Engine::set_config("contexts/stack-size:256");
  auto* zone = sg4::create_full_zone("machine");
  out.host = zone->create_host("cpu", 1.0)->seal();
  zone->seal();
  return out;
}

}  // namespace semsim::core
