#include "calibrate/derive_text.hpp"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "config/machine_decl.hpp"

namespace semsim::calibrate {

using probes::Stat;

std::string fmt_ns(double v) { return fmt::format("{:.4g}", v); }

std::string stat_text(const Stat& s, const char* unit) {
  return fmt::format("{} {} (repeats {}..{}, n={})", fmt_ns(s.median), unit, fmt_ns(s.min),
                     fmt_ns(s.max), s.repeats);
}

Json probe_json(const Stat& s, const char* unit) {
  return {
      {"median", s.median}, {"min", s.min}, {"max", s.max}, {"repeats", s.repeats}, {"unit", unit}};
}

Derived derive(const std::vector<ProbeTerm>& terms) {
  Derived d;
  for (const auto& t : terms) {
    d.value += t.coef * t.stat.median;
    d.lo += t.coef * (t.coef > 0 ? t.stat.min : t.stat.max);
    d.hi += t.coef * (t.coef > 0 ? t.stat.max : t.stat.min);
    std::string c;
    if (std::abs(t.coef) != 1.0) c = fmt::format("{:g} x ", std::abs(t.coef));
    d.formula += fmt::format(
        "{}{}{} {}", d.formula.empty() ? (t.coef < 0 ? "- " : "") : (t.coef < 0 ? " - " : " + "), c,
        t.name, fmt_ns(t.stat.median));
  }
  return d;
}

Json& value_at(Json& m, const std::string& name) {
  const config::ParamDecl* d = config::find_param(name);
  if (d == nullptr) throw std::logic_error("calibration rule for undeclared parameter " + name);
  return d->group.empty() ? m[std::string(d->key)] : m[std::string(d->group)][std::string(d->key)];
}

Json param(double value, const std::string& source) {
  return {{"value", value}, {"source", source}};
}

Json measured(const Stat& s, const std::string& probe, const std::string& what) {
  return param(s.median, fmt::format("calibration probe {}: {}; median of repeats {}", probe, what,
                                     stat_text(s)));
}

Json derived_param(const Derived& d, const std::string& probes_named, const std::string& what,
                   double floor_ns) {
  std::string src =
      fmt::format("calibration probes {}: {}; {} = {} ns (range over repeats {}..{})", probes_named,
                  what, d.formula, fmt_ns(d.value), fmt_ns(d.lo), fmt_ns(d.hi));
  double v = d.value;
  if (!(v >= floor_ns)) {
    src += fmt::format("; the difference is below what the probes resolve, floored at {} ns",
                       fmt_ns(floor_ns));
    v = floor_ns;
  }
  return param(v, src);
}

}  // namespace semsim::calibrate
