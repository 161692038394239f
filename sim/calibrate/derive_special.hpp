// The parameters whose derivation is not a sum of probes (rules.cpp has those): each
// function writes its parameters, with their source texts, into the model `m` (or its
// costs_ns object). Listed, with their probes, in rules.cpp's special_rules().
#pragma once

#include <vector>

#include "calibrate/host_topology.hpp"
#include "calibrate/measurements.hpp"
#include "core/json.hpp"

namespace semsim::calibrate {

// topology (from sysfs), latency_ns (classes: the median over their pairs, kept in
// distance order), latency_matrix_ns (every pair); the pairs into probes_out.
void add_topology_and_latencies(Json& m, const Measurements& x, const ModelTopology& topo,
                                Json& probes_out);
// The same-CPU ping-pong with SCHED_NORMAL: did the wakee run before the waker's
// FUTEX_WAKE returned (preempt it on the way out of the kernel) in most hand-offs?
bool preempts_on_wakeup(const Measurements& x);
// time_slice: the probe's run length, else Linux's default base slice (an assumption).
void add_time_slice(Json& costs, const probes::Stat& slice, int n);
// wakeup_protection and resched_ipi.
void add_wakeup_preemption_costs(Json& costs, bool preempts,
                                 const probes::ProtectionCurve& protection,
                                 const probes::RemoteWake& remote, int n);
// idle_search_share and busy_pull_share: counted where there are two CPUs and enough
// events, else assumptions.
void add_placement_shares(Json& m, const Measurements& x);
// os_noise: every CPU's clock gaps, their rate and lengths; per CPU into probes_out.
Json os_noise_param(const std::vector<probes::NoiseCpu>& noise, Json& probes_out);
// wakeup_jitter (several CPUs only), switch_refill_ns and switch_refill_process_ns,
// wakeup_preemption, clock_ghz.
void add_wakeup_jitter(Json& m, const Measurements& x);
void add_switch_refill(Json& m, const Measurements& x);
// pv_spinlock: the host fact (host_facts.hpp, pv_spinlocks()) with its evidence.
void add_pv_spinlock(Json& m, const Measurements& x);
void add_wakeup_preemption(Json& m, const Measurements& x);
void add_clock(Json& m, const Measurements& x);

}  // namespace semsim::calibrate
