// Parsing of the scenario's "kernel" field: a generation id, or
// {"base": id, <policy>: value, ...} for what-if kernels.
#pragma once

#include "core/json.hpp"
#include "ipc/kernel_policy.hpp"

namespace semsim::config {

ipc::KernelPolicy parse_kernel(const Json& kernel);

// Every policy of `p` as the object parse_kernel() reads ({"base": id, ...} without
// the base): parse_kernel() of it over any base gives p's policies back.
Json policy_json(const ipc::KernelPolicy& p);

}  // namespace semsim::config
