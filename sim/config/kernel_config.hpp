// Parsing of the scenario's "kernel" field: a generation id, or
// {"base": id, <policy>: value, ...} for what-if kernels.
#pragma once

#include "core/json.hpp"
#include "ipc/kernel_policy.hpp"

namespace semsim::config {

ipc::KernelPolicy parse_kernel(const Json& kernel);

}  // namespace semsim::config
