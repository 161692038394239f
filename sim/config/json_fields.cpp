#include "config/json_fields.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "core/errors.hpp"

namespace semsim::config {

std::string child_path(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

void fail(const std::string& path, const std::string& what) {
  throw InputError(fmt::format("{}: {}", path.empty() ? "scenario" : path, what));
}

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? sep : "") + items[i];
  return out;
}

namespace {
std::string type_name(const Json& v) {
  if (v.is_number_integer()) return "an integer";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_boolean()) return "a boolean";
  if (v.is_array()) return "a list";
  if (v.is_object()) return "an object";
  return "null";
}
}  // namespace

void reject_unknown_keys(const Json& obj, const std::string& path,
                         const std::vector<std::string>& allowed) {
  if (!obj.is_object()) fail(path, fmt::format("must be an object, got {}", type_name(obj)));
  for (const auto& [key, value] : obj.items()) {
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
      fail(child_path(path, key), fmt::format("unknown field; allowed fields here: {}", join(allowed)));
  }
}

const Json& require(const Json& obj, const std::string& path, const std::string& key) {
  if (!obj.contains(key)) fail(child_path(path, key), "is required");
  return obj.at(key);
}

std::int64_t as_int(const Json& v, const std::string& path, std::int64_t min, std::int64_t max) {
  bool integral = v.is_number_integer() ||
                  (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>());
  if (!integral || v.is_boolean())
    fail(path, fmt::format("must be an integer from {} to {}, got {} {}", min, max, type_name(v),
                           v.dump()));
  double d = v.get<double>();
  if (d < static_cast<double>(min) || d > static_cast<double>(max))
    fail(path, fmt::format("must be an integer from {} to {}, got {}", min, max, v.dump()));
  return static_cast<std::int64_t>(d);
}

double as_number(const Json& v, const std::string& path, double min, bool exclusive) {
  if (!v.is_number() || v.is_boolean())
    fail(path, fmt::format("must be a number {} {}, got {} {}", exclusive ? ">" : ">=", min,
                           type_name(v), v.dump()));
  double d = v.get<double>();
  if (!std::isfinite(d) || (exclusive ? d <= min : d < min))
    fail(path, fmt::format("must be a number {} {}, got {}", exclusive ? ">" : ">=", min, v.dump()));
  return d;
}

std::string as_string(const Json& v, const std::string& path) {
  if (!v.is_string()) fail(path, fmt::format("must be a string, got {} {}", type_name(v), v.dump()));
  return v.get<std::string>();
}

std::string as_choice(const Json& v, const std::string& path,
                      const std::vector<std::string>& allowed) {
  if (!v.is_string())
    fail(path, fmt::format("must be one of {}, got {} {}", join(allowed), type_name(v), v.dump()));
  auto s = v.get<std::string>();
  if (std::find(allowed.begin(), allowed.end(), s) == allowed.end())
    fail(path, fmt::format("unknown value \"{}\"; allowed: {}", s, join(allowed)));
  return s;
}

bool as_bool(const Json& v, const std::string& path) {
  if (!v.is_boolean()) fail(path, fmt::format("must be true or false, got {}", v.dump()));
  return v.get<bool>();
}

}  // namespace semsim::config
