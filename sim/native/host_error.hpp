// HostError: the host, not the input and not the model, stopped a native run or a
// calibration: a task process killed from outside, kernel limits (SEMMNI, SEMMNS, the
// process limit) used up by other programs at run time, a record directory that
// cannot be made safe. The CLI reports it as "semsim: host error: ..." with exit
// status 3; Python sees semsim.HostError (a SimulationError).
#pragma once

#include "core/errors.hpp"

namespace semsim::native {

class HostError : public SimulationError {
 public:
  using SimulationError::SimulationError;
};

}  // namespace semsim::native
