// How the calibration sets the parameters that probes measure or that arithmetic on
// probes gives: one rule per parameter (and kind of host), naming the parameter (as
// declared in config/machine_decl.hpp), the probes, the formula over their medians and
// the source text written beside the value. derive.cpp applies them; the parameters
// whose derivation is not a sum of probes (the latency classes, the time slice, the
// wake-up preemption curve, the shares, the noise and refill tables, the clock and the
// closing of semop_kernel_path on a simulated call) are functions there, named in
// special_rules().
#pragma once

#include <cmath>
#include <limits>
#include <string_view>
#include <vector>

namespace semsim::calibrate {

// coef x the median of probe `probe` (a key of the model's provenance.probes).
struct Term {
  double coef;
  std::string_view probe;
};

enum class Hosts { Any, OneCpu, SeveralCpus };

constexpr double kMeasured = std::numeric_limits<double>::quiet_NaN();

struct Rule {
  std::string_view param;  // "costs_ns.context_switch"
  Hosts hosts;
  // The value: one term and floor kMeasured: that probe's median, as measured. Several
  // terms: their sum, floored at floor_ns (a difference below what the probes resolve).
  // No terms: an assumption, the value `assumed` or, when `copy_of` names a parameter,
  // that parameter's value.
  std::vector<Term> formula = {};
  double floor_ns = kMeasured;
  // The probes as the source names them (derived values), in the source's order.
  std::string_view probes = {};
  // What the value is. Placeholders: {same_normal_preempted_pct}, {same_normal_handoff},
  // {cross_preempted_pct}, {mfence}, {mfence_in_context} (derive.cpp fills them from the
  // measurements).
  std::string_view text = {};
  double assumed = 0;
  std::string_view copy_of = {};
};

const std::vector<Rule>& cost_rules();

// The parameters derive.cpp sets by a function of its own, with the probe each uses.
struct SpecialRule {
  std::string_view param;
  std::string_view probe;
};
const std::vector<SpecialRule>& special_rules();

}  // namespace semsim::calibrate
