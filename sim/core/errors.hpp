// Error types shared by every layer of semsim.
//
// InputError: the user gave us something wrong (scenario JSON, CLI flag, Python
// argument, missing file). The CLI turns it into a one-line message and exit 2;
// the Python binding turns it into semsim.InputError (a ValueError).
// SimulationError: the model reached a state it must never reach (deadlock, an
// invariant violated). It is a bug or an impossible scenario, never an abort.
// ReadAheadConflict: a read served ahead of the clock turned out to be ordered
// wrongly (machine/task.hpp, "Read-ahead"). Not an error of the user or of the
// model: the run that threw it is discarded and run again in strict order
// (driver/run_point.cpp), so it never reaches a user.
#pragma once

#include <stdexcept>
#include <string>

namespace semsim {

class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class SimulationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ReadAheadConflict : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace semsim
