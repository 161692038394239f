// Shared by the derivation's files: how a value and its source text are written.
#pragma once

#include <string>
#include <vector>

#include "calibrate/probes.hpp"
#include "core/json.hpp"

namespace semsim::calibrate {

std::string fmt_ns(double v);
// "<median> <unit> (repeats <min>..<max>, n=<repeats>)"
std::string stat_text(const probes::Stat& s, const char* unit = "ns");
Json probe_json(const probes::Stat& s, const char* unit = "ns");

// A value derived from probes as sum(coef * probe): the median combination and the
// widest range the repeats allow.
struct ProbeTerm {
  double coef;
  const char* name;
  probes::Stat stat;
};
struct Derived {
  double value = 0, lo = 0, hi = 0;
  std::string formula;
};
Derived derive(const std::vector<ProbeTerm>& terms);

// The place of declared parameter `name` ("costs_ns.l1_hit") in a model
// (config/machine_decl.hpp); a std::logic_error for an undeclared one.
Json& value_at(Json& m, const std::string& name);
Json param(double value, const std::string& source);
// "calibration probe <probe>: <what>; median of repeats <stat>"
Json measured(const probes::Stat& s, const std::string& probe, const std::string& what);
// A derived parameter; a difference below the probes' resolution is floored at
// `floor_ns` and says so.
Json derived_param(const Derived& d, const std::string& probes_named, const std::string& what,
                   double floor_ns);

}  // namespace semsim::calibrate
