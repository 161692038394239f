// Typed reads of JSON fields with error messages that name the field (by its
// dotted path) and what is allowed. Every user-facing JSON read goes through
// these, so bad input always reads the same way.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/scenario.hpp"

namespace semsim::config {

// "workload.semaphores" style path of a child field.
std::string child_path(const std::string& parent, const std::string& key);

[[noreturn]] void fail(const std::string& path, const std::string& what);

// Fails if obj has a key not in `allowed`, naming it and the allowed keys.
void reject_unknown_keys(const Json& obj, const std::string& path,
                         const std::vector<std::string>& allowed);

const Json& require(const Json& obj, const std::string& path, const std::string& key);

std::int64_t as_int(const Json& v, const std::string& path, std::int64_t min, std::int64_t max);
double as_number(const Json& v, const std::string& path, double min_exclusive_or_inclusive,
                 bool exclusive);
std::string as_string(const Json& v, const std::string& path);
std::string as_choice(const Json& v, const std::string& path,
                      const std::vector<std::string>& allowed);
bool as_bool(const Json& v, const std::string& path);

std::string join(const std::vector<std::string>& items, const std::string& sep = ", ");

}  // namespace semsim::config
