// semsim._core: a thin pybind11 layer over the C++ library. Everything
// crosses as JSON text; C++ InputError becomes semsim._core.InputError (a
// ValueError), SimulationError a RuntimeError subclass. The GIL is released
// while a simulation or a measurement runs.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <optional>

#include "calibrate/calibrate.hpp"
#include "calibrate/host_check.hpp"
#include "config/json_fields.hpp"
#include "config/kernel_config.hpp"
#include "config/machine_config.hpp"
#include "config/machine_ranges.hpp"
#include "config/scenario.hpp"
#include "core/errors.hpp"
#include "core/floor.hpp"
#include "core/simulation.hpp"
#include "driver/run_point.hpp"
#include "driver/simulate.hpp"
#include "driver/trace_point.hpp"
#include "ipc/kernel_policy.hpp"
#include "machine/cache_line.hpp"
#include "machine/spinlock.hpp"
#include "machine/topology.hpp"
#include "native/host_error.hpp"
#include "native/native_runner.hpp"

namespace py = pybind11;
using semsim::Json;

namespace {

// A file path, or JSON text (anything starting with '{').
Json load_source(const std::string& source) {
  auto first = source.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && source[first] == '{')
    return semsim::config::parse_json_text(source, "scenario");  // depth-limited, located
  return semsim::load_json_file(source);
}

// The scenario normalised: the defaults the run will use are written out.
std::string normalised(const semsim::Scenario& scenario) {
  Json out = scenario.raw;
  out["name"] = scenario.name;
  out["duration_ms"] = scenario.duration_ms;
  out["warmup_ms"] = scenario.warmup_ms;
  out["seed"] = scenario.seed;
  out["repeats"] = scenario.repeats;
  return out.dump(2);
}

std::string load_scenario(const std::string& source, const std::vector<std::string>& overrides) {
  Json doc = load_source(source);
  for (const auto& o : overrides) semsim::apply_override(doc, o);
  auto scenario = semsim::parse_scenario(doc);
  // An unknown machine is bad input too, and so is a task pinned to a CPU it lacks.
  semsim::driver::check_placement(scenario, semsim::config::load_machine(scenario.machine));
  return normalised(scenario);
}

semsim::Scenario parse(const std::string& scenario_json) {
  return semsim::parse_scenario(load_source(scenario_json));
}

// Every check `run` and `native` make before they start, without running anything:
// the scenario, the machine file (including its matrices, which the topology reads) and
// the native runner's own checks. Returns "" or, when only this host's limits would stop
// `native`, that reason (the scenario itself is fine: `run` takes it).
std::string validate_scenario(const std::string& source,
                              const std::vector<std::string>& overrides) {
  Json doc = load_source(source);
  for (const auto& o : overrides) semsim::apply_override(doc, o);
  const auto scenario = semsim::parse_scenario(doc);
  const auto machine = semsim::config::load_machine(scenario.machine);
  semsim::machine::Topology topology(machine);
  (void)topology;
  semsim::driver::check_placement(scenario, machine);
  try {
    semsim::native::check_host(scenario);
  } catch (const semsim::InputError& e) {
    return e.what();
  }
  return "";
}

// The scenario as the native runner takes it: every check measure() makes before it
// runs (this host's limits included), but no machine lookup: a measurement is of this
// host whatever model the scenario names (machine "host" need not be calibrated).
std::string load_scenario_native(const std::string& source,
                                 const std::vector<std::string>& overrides) {
  Json doc = load_source(source);
  for (const auto& o : overrides) semsim::apply_override(doc, o);
  const auto scenario = semsim::parse_scenario(doc);
  semsim::native::check_host(scenario);
  return normalised(scenario);
}

// A Python callable told the progress of the runs while a simulation runs without the
// GIL: progress(run, done_ns, target_ns, adaptive, finished) (driver::RunProgress), at
// most once per `interval_s` of wall time, so that the engine takes the GIL a few times a
// second at most. The hook only reads the clock: results are the same bytes with it.
// An exception the callable raises stops the calls and is raised once the run is over.
class ProgressScope {
 public:
  ProgressScope(py::object callback, double interval_s) : callback_(std::move(callback)) {
    if (callback_.is_none()) return;
    interval_ = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(std::max(0.0, interval_s)));
    next_ = std::chrono::steady_clock::now() + interval_;
    semsim::driver::set_progress_hook([this](const semsim::driver::RunProgress& p) { report(p); });
    active_ = true;
  }
  ~ProgressScope() {
    if (active_) semsim::driver::set_progress_hook({});
  }
  ProgressScope(const ProgressScope&) = delete;
  ProgressScope& operator=(const ProgressScope&) = delete;
  // After the run, with the GIL: the callable's exception, if it raised one.
  void rethrow() {
    if (error_) {
      auto error = std::move(*error_);
      error_.reset();
      throw error;
    }
  }

 private:
  void report(const semsim::driver::RunProgress& p) {
    if (error_) return;
    const auto now = std::chrono::steady_clock::now();
    if (now < next_) return;
    next_ = now + interval_;
    py::gil_scoped_acquire gil;
    try {
      callback_(p.run, p.done / semsim::kTicksPerNs, p.target / semsim::kTicksPerNs, p.adaptive,
                p.finished);
    } catch (py::error_already_set& e) {
      error_.emplace(std::move(e));
    }
  }

  py::object callback_;
  std::chrono::steady_clock::duration interval_{};
  std::chrono::steady_clock::time_point next_{};
  std::optional<py::error_already_set> error_;
  bool active_ = false;
};

// An interrupt (Ctrl-C in Python's main thread) seen while runs go on in other
// processes: poll() checks Python's signals now and then; the exception Python
// raises ends the runs (driver::run_pool ends its children) and is raised here.
struct Interrupted {};
class Interrupts {
 public:
  std::function<void()> poll() {
    return [this] {
      py::gil_scoped_acquire gil;
      if (PyErr_CheckSignals() == 0) return;
      error_.emplace();  // takes the pending Python exception
      throw Interrupted{};
    };
  }
  void rethrow() {
    if (error_) {
      auto error = std::move(*error_);
      error_.reset();
      throw error;
    }
  }

 private:
  std::optional<py::error_already_set> error_;
};

std::string catalog() {
  Json out;
  out["machines"] = Json::array();
  for (const auto& m : semsim::config::list_machines())
    out["machines"].push_back({{"name", m.name}, {"description", m.description}, {"cpus", m.cpus}});
  out["kernels"] = Json::array();
  for (const auto& g : semsim::ipc::generations())
    out["kernels"].push_back({{"id", g.id},
                              {"kernels", g.kernels},
                              {"description", g.description},
                              {"policy", semsim::config::policy_json(g)}});
  out["workloads"] = Json::array();
  for (const auto& w : semsim::known_workloads()) {
    auto tab = w.find('\t');
    out["workloads"].push_back({{"type", w.substr(0, tab)}, {"description", w.substr(tab + 1)}});
  }
  return out.dump(2);
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "semsim C++ core: simulator, native runner, configuration";
  auto input_error = py::register_exception<semsim::InputError>(m, "InputError", PyExc_ValueError);
  auto simulation_error =
      py::register_exception<semsim::SimulationError>(m, "SimulationError", PyExc_RuntimeError);
  // Registered after SimulationError, so tried first: the host stopped a run.
  py::register_exception<semsim::native::HostError>(m, "HostError", simulation_error.ptr());
  (void)input_error;

  m.def("version", [] { return std::string(SEMSIM_VERSION); });
  // How the extension was built: "use" for a profile-guided build (setup.sh), "generate"
  // for its instrumented first step, "off" otherwise (CMake's SEMSIM_PGO).
  m.def("pgo_mode", [] { return std::string(SEMSIM_PGO_MODE); });
  m.def("set_data_dir", &semsim::config::set_data_dir, py::arg("path"));
  m.def("load_scenario", &load_scenario, py::arg("source"),
        py::arg("overrides") = std::vector<std::string>{});
  m.def(
      "simulate",
      [](const std::string& scenario_json, py::object progress, double progress_interval_s,
         int jobs) {
        if (jobs < 1) throw semsim::InputError("jobs: expected an integer >= 1, got " +
                                               std::to_string(jobs));
        auto scenario = parse(scenario_json);
        Json result;
        ProgressScope scope(std::move(progress), progress_interval_s);
        Interrupts interrupts;
        try {
          py::gil_scoped_release release;
          result = semsim::driver::simulate(scenario, {jobs, interrupts.poll()});
        } catch (const Interrupted&) {
        }
        interrupts.rethrow();
        scope.rethrow();
        return result.dump(2);
      },
      py::arg("scenario_json"), py::arg("progress") = py::none(),
      py::arg("progress_interval_s") = 0.25, py::arg("jobs") = 1,
      "Simulates a normalised scenario; returns the result document. progress, if given, is "
      "called as progress(run, done_ns, target_ns, adaptive, finished) at most every "
      "progress_interval_s of wall time (run counts the runs from 1, one per thread count and "
      "seed; target_ns 0: a run to completion). jobs > 1 runs that many of the runs at once, "
      "in that many forked worker processes: the same bytes.");
  m.def(
      "simulate_batch",
      [](const std::vector<std::string>& scenario_jsons, int jobs, py::object done) {
        if (jobs < 1) throw semsim::InputError("jobs: expected an integer >= 1, got " +
                                               std::to_string(jobs));
        std::vector<semsim::Scenario> scenarios;
        for (const auto& text : scenario_jsons) scenarios.push_back(parse(text));
        std::vector<semsim::driver::TaskOutcome> outcomes;
        Interrupts interrupts;
        std::optional<py::error_already_set> callback_error;
        auto told = [&](std::size_t index) {
          if (done.is_none() || callback_error) return;
          py::gil_scoped_acquire gil;
          try {
            done(index);
          } catch (py::error_already_set& e) {
            callback_error.emplace(std::move(e));
          }
        };
        try {
          py::gil_scoped_release release;
          outcomes = semsim::driver::simulate_batch(scenarios, {jobs, interrupts.poll()}, told);
        } catch (const Interrupted&) {
        }
        interrupts.rethrow();
        if (callback_error) throw std::move(*callback_error);
        py::list out;
        for (const auto& o : outcomes)
          out.append(o.ok ? py::tuple(py::make_tuple(true, o.value.dump(), std::string()))
                          : py::tuple(py::make_tuple(false, o.error_type, o.message)));
        return out;
      },
      py::arg("scenario_jsons"), py::arg("jobs"), py::arg("done") = py::none(),
      "Simulates several normalised scenarios, their runs sharing `jobs` forked processes "
      "(the longest first); returns one (True, document as compact JSON) or (False, error_type, "
      "message) per scenario, in order. done(i), if given, is called when scenario i's outcome "
      "is known.");
  m.def(
      "trace",
      [](const std::string& scenario_json, double from_ms, double to_ms, std::uint64_t limit) {
        auto scenario = parse(scenario_json);
        Json result;
        {
          py::gil_scoped_release release;
          result = semsim::driver::trace_point(scenario, from_ms, to_ms, limit);
        }
        return result.dump();
      },
      py::arg("scenario_json"), py::arg("from_ms"), py::arg("to_ms"), py::arg("limit"),
      "One run of the scenario's single thread count at its first seed, recording trace events "
      "between from_ms and to_ms of simulated time (at most `limit`): {point, trace, overflowed}.");
  m.def(
      "measure",
      [](const std::string& scenario_json) {
        auto scenario = parse(scenario_json);
        Json result;
        try {
          py::gil_scoped_release release;
          result = semsim::native::measure(scenario);
        } catch (const semsim::SimulationError&) {
          // An interrupted measurement re-raised the signal: let Python's own
          // KeyboardInterrupt surface instead of a chained error.
          if (PyErr_CheckSignals() != 0) throw py::error_already_set();
          throw;
        }
        result["scenario"] = scenario.raw;
        return result.dump(2);
      },
      py::arg("scenario_json"));
  m.def("catalog", &catalog);
  m.def("validate_scenario", &validate_scenario, py::arg("source"),
        py::arg("overrides") = std::vector<std::string>{});
  m.def(
      "sigint_default",
      [] {
        // SimGrid's engine installs a SIGINT handler that exits with status 1: while a
        // simulation runs, the CLI puts the default action back (Ctrl-C ends the process
        // as SIGINT does, status 130 in a shell). An ignored SIGINT stays ignored.
        struct sigaction now {};
        if (sigaction(SIGINT, nullptr, &now) != 0) return false;
        if (now.sa_handler == SIG_IGN || now.sa_handler == SIG_DFL) return false;
        struct sigaction dfl {};
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        return sigaction(SIGINT, &dfl, nullptr) == 0;
      },
      "Restores SIGINT's default action if a handler (SimGrid's) replaced it; True if it did.");
  m.def("load_scenario_native", &load_scenario_native, py::arg("source"),
        py::arg("overrides") = std::vector<std::string>{});
  m.def("host_model_path", &semsim::config::host_model_path,
        "Where machine \"host\" is read from and `semsim calibrate` writes.");
  m.def(
      "machine_info",
      [](const std::string& name) {
        const auto model = semsim::config::load_machine(name);
        return Json{{"name", model.name}, {"file", model.file}, {"hash", model.hash}}.dump();
      },
      py::arg("name"), "The model a machine name or path resolves to: name, file and hash.");
  m.def(
      "machine_uncertainty",
      [](const std::string& name, bool corners) {
        return semsim::config::machine_uncertainty_json(name, corners).dump();
      },
      py::arg("name"), py::arg("corners") = false,
      "A machine's ranged parameters and topology alternatives, and a machine file per variant.");
  m.def(
      "engine_counters",
      [] {
        const auto c = semsim::core::engine_counters();
        return py::make_tuple(c.handoffs, c.shortcuts, semsim::machine::read_aheads(),
                              semsim::driver::read_ahead_reruns());
      },
      "Cumulative (hand-offs, shortcut turns, reads ahead, runs done again after a read-ahead "
      "conflict) of every simulation in this process.");
  m.def(
      "settled_lock_steps", [] { return semsim::machine::settled_lock_steps(); },
      "Cumulative spinlock waits whose turn was owed because their outcome was settled at "
      "their issue (machine/spinlock.hpp, \"Time order\") in this process.");
  m.def(
      "set_reference_order",
      [](bool on) { semsim::core::Simulation::set_default_reference_order(on); }, py::arg("on"),
      "Reference mode for later simulations: every turn through the calendar (no shortcut).");
  m.def(
      "sleep_floor",
      [](int actors, int iterations) {
        if (actors < 1 || iterations < 1)
          throw semsim::InputError("sleep_floor: actors and iterations must be >= 1");
        py::gil_scoped_release release;
        return semsim::core::measure_sleep_floor(actors, iterations);
      },
      py::arg("actors") = 64, py::arg("iterations") = 20000,
      "Wall seconds per sleep_for() of a bare SimGrid actor loop (the speed floor).");
  m.def("cleanup_native", [] { return semsim::native::cleanup_leftovers(); });
  m.def(
      "host_check",
      [] {
        semsim::Json out;
        {
          py::gil_scoped_release release;
          out = semsim::calibrate::host_check();
        }
        return out.dump();
      },
      "The host check (sim/calibrate/host_check.hpp): the quick line_pingpong and uncontended "
      "semop probes, reduced as the calibration reduces them, as JSON text: {\"latency_ns\": {class: ns}, "
      "\"semop_ns\"} (no latency_ns on a host of one CPU).");
  m.def(
      "calibrate",
      [](const std::string& out_path, bool quick, py::object progress, double progress_interval_s) {
        std::string text;
        ProgressScope scope(std::move(progress), progress_interval_s);
        {
          py::gil_scoped_release release;
          text = semsim::calibrate::run_to_file(out_path, quick);
        }
        scope.rethrow();
        return text;
      },
      py::arg("out_path") = "", py::arg("quick") = false, py::arg("progress") = py::none(),
      py::arg("progress_interval_s") = 0.25,
      "Measures this host with the calibration probes (sim/calibrate/calibrate.hpp) and returns "
      "the "
      "machine model (cpu_models format) as JSON text; writes it to out_path too unless it is \"\" "
      "(the model's name is the file's stem, else \"host\"). quick: fewer, shorter repeats (a few "
      "seconds). progress: as simulate's, for the simulated runs the calibration makes.");
}
