// The one JSON type of the project. Only sim/config parses or inspects JSON;
// other layers may name the type (to carry a document through, or to write a
// result) but never read user input with it.
#pragma once

#include <nlohmann/json.hpp>

namespace semsim {

using Json = nlohmann::json;

}  // namespace semsim
