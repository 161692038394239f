// Typed reads of JSON fields with error messages that name the field (by its
// dotted path) and what is allowed. Every user-facing JSON read goes through
// these, so bad input always reads the same way.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/json.hpp"

namespace semsim::config {

// "workload.semaphores" style path of a child field.
std::string child_path(const std::string& parent, const std::string& key);

[[noreturn]] void fail(const std::string& path, const std::string& what);

// Fails if obj has a key not in `allowed`, naming it and the allowed keys.
void reject_unknown_keys(const Json& obj, const std::string& path,
                         const std::vector<std::string>& allowed);

const Json& require(const Json& obj, const std::string& path, const std::string& key);

// An integer from min to max, exactly: an integer beyond the range (even beyond 64 bits)
// or a float that is not a whole number representable exactly (above 2^53) is refused,
// never truncated or rounded.
std::int64_t as_int(const Json& v, const std::string& path, std::int64_t min, std::int64_t max);
// A finite number > min (exclusive) or >= min, and at most `max`.
double as_number(const Json& v, const std::string& path, double min_exclusive_or_inclusive,
                 bool exclusive, double max = 1e300);
std::string as_string(const Json& v, const std::string& path);
std::string as_choice(const Json& v, const std::string& path,
                      const std::vector<std::string>& allowed);
bool as_bool(const Json& v, const std::string& path);

std::string join(const std::vector<std::string>& items, const std::string& sep = ", ");

// A value as it may appear in a message: compact JSON, invalid UTF-8 replaced, at most
// about 60 characters (longer ones end in "..."); echo_text caps text at `cap` (file
// paths get 512).
std::string echo(const Json& v);
std::string echo_text(const std::string& text, std::size_t cap = 60);

// The deepest nesting of arrays and objects a JSON document may have; the scenario and
// machine formats need under 10.
constexpr int kMaxJsonDepth = 64;
// The largest scenario or machine file read (a 256-CPU latency matrix is under 1 MiB).
constexpr long kMaxJsonFileBytes = 16L << 20;

// Parses JSON text (the one JSON reader of semsim). `where` names the source in errors
// ("scenario", a file path, "--set workload"). Malformed JSON is an InputError with the
// line, column and, where known, the field path; nesting deeper than kMaxJsonDepth and
// numbers beyond a double are InputErrors too.
Json parse_json_text(const std::string& text, const std::string& where);

}  // namespace semsim::config
