#include "config/json_fields.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "core/errors.hpp"

namespace semsim::config {

namespace {
// A field name as a path shows it: as written where it is a plain name, else
// JSON-quoted (escaped, capped as echo() caps values, the quote closed), so that a key with a
// colon, a space, a dot, a control character or nothing in it cannot blur the "path: what" message
// or break it across lines.
std::string key_text(const std::string& key) {
  const bool plain = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return (u >= '0' && u <= '9') || (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || c == '_' ||
           c == '-';
  });
  if (plain && key.size() <= 60) return key;
  // Its JSON text without the quotes, capped, then quoted again: closed even when cut.
  const std::string text = Json(key).dump(-1, ' ', false, Json::error_handler_t::replace);
  std::string shown = echo_text(text.substr(1, text.size() - 2));
  shown.insert(shown.begin(), '"');
  shown.push_back('"');
  return shown;
}
}  // namespace

std::string child_path(const std::string& parent, const std::string& key) {
  const std::string shown = key_text(key);
  if (!parent.empty() && parent.back() == ':') return parent + " " + shown;  // "file: key"
  return parent.empty() ? shown : parent + "." + shown;
}

void fail(const std::string& path, const std::string& what) {
  throw InputError(fmt::format("{}: {}", path.empty() ? "scenario" : path, what));
}

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? sep : "") + items[i];
  return out;
}

std::string echo_text(const std::string& raw, std::size_t cap) {
  // Control characters as JSON writes them: a message stays one line, and a NUL
  // cannot cut it short where it becomes a C string (the Python exception).
  std::string text;
  text.reserve(raw.size());
  for (const char c : raw) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u != 0x7f) {
      text += c;
    } else if (c == '\n') {
      text += "\\n";
    } else if (c == '\t') {
      text += "\\t";
    } else if (c == '\r') {
      text += "\\r";
    } else {
      text += fmt::format("\\u{:04x}", u);
    }
  }
  if (text.size() <= cap) return text;
  std::size_t cut = cap;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // UTF-8
  return text.substr(0, cut) + "...";
}

std::string echo(const Json& v) {
  return echo_text(v.dump(-1, ' ', false, Json::error_handler_t::replace));
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
// What a value is, for "got ...": its kind and its text ("a string \"x\""), or "null".
std::string got(const Json& v) { return v.is_null() ? "null" : type_name(v) + " " + echo(v); }
}  // namespace

void reject_unknown_keys(const Json& obj, const std::string& path,
                         const std::vector<std::string>& allowed) {
  if (!obj.is_object()) fail(path, fmt::format("must be an object, got {}", type_name(obj)));
  for (const auto& [key, value] : obj.items()) {
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
      fail(child_path(path, key),
           fmt::format("unknown field; allowed fields here: {}", join(allowed)));
  }
}

const Json& require(const Json& obj, const std::string& path, const std::string& key) {
  if (!obj.contains(key)) fail(child_path(path, key), "is required");
  return obj.at(key);
}

std::int64_t as_int(const Json& v, const std::string& path, std::int64_t min, std::int64_t max) {
  const auto range = [&] {
    fail(path, fmt::format("must be an integer from {} to {}, got {}", min, max, echo(v)));
  };
  if (v.is_boolean() || !v.is_number())
    fail(path, fmt::format("must be an integer from {} to {}, got {}", min, max, got(v)));
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (max < 0 || u > static_cast<std::uint64_t>(max) || static_cast<std::int64_t>(u) < min)
      range();
    return static_cast<std::int64_t>(u);
  }
  if (v.is_number_integer()) {
    const auto i = v.get<std::int64_t>();
    if (i < min || i > max) range();
    return i;
  }
  const double d = v.get<double>();
  if (!std::isfinite(d) || std::floor(d) != d)
    fail(path, fmt::format("must be an integer from {} to {}, got {}", min, max, got(v)));
  // Beyond 2^53 a double no longer holds every integer: 1e17 may not be what was meant.
  constexpr double kExact = 9007199254740992.0;  // 2^53
  if (d < static_cast<double>(min) || d > static_cast<double>(max) || std::fabs(d) > kExact)
    range();
  return static_cast<std::int64_t>(d);
}

double as_number(const Json& v, const std::string& path, double min, bool exclusive, double max) {
  const std::string bounds = max < 1e300
                                 ? fmt::format("{} {} and <= {}", exclusive ? ">" : ">=", min, max)
                                 : fmt::format("{} {}", exclusive ? ">" : ">=", min);
  if (!v.is_number() || v.is_boolean())
    fail(path, fmt::format("must be a number {}, got {}", bounds, got(v)));
  double d = v.get<double>();
  if (!std::isfinite(d) || (exclusive ? d <= min : d < min) || d > max)
    fail(path, fmt::format("must be a number {}, got {}", bounds, echo(v)));
  return d;
}

std::string as_string(const Json& v, const std::string& path) {
  if (!v.is_string()) fail(path, fmt::format("must be a string, got {}", got(v)));
  return v.get<std::string>();
}

std::string as_choice(const Json& v, const std::string& path,
                      const std::vector<std::string>& allowed) {
  if (!v.is_string()) fail(path, fmt::format("must be one of {}, got {}", join(allowed), got(v)));
  auto s = v.get<std::string>();
  if (std::find(allowed.begin(), allowed.end(), s) == allowed.end())
    fail(path, fmt::format("unknown value {}; allowed: {}", echo(v), join(allowed)));
  return s;
}

bool as_bool(const Json& v, const std::string& path) {
  if (!v.is_boolean()) fail(path, fmt::format("must be true or false, got {}", echo(v)));
  return v.get<bool>();
}

namespace {

// Tracks where the parser is (the field path) and how deep, from nlohmann's callback.
struct ParseTracker {
  struct Frame {
    bool array;
    std::string key;             // objects: the current member
    std::size_t index;           // arrays: the current element
    std::set<std::string> keys;  // objects: the members so far
  };
  std::vector<Frame> stack;
  std::string where;

  std::string path() const {
    std::string out;
    for (const Frame& f : stack) {
      if (f.array)
        out += fmt::format("[{}]", f.index);
      else if (!f.key.empty())
        out += (out.empty() ? "" : ".") + f.key;
    }
    return out;
  }
  void element_done() {
    if (!stack.empty() && stack.back().array) ++stack.back().index;
  }
  bool on(int /*depth*/, Json::parse_event_t event, Json& parsed) {
    switch (event) {
      case Json::parse_event_t::object_start:
      case Json::parse_event_t::array_start:
        if (static_cast<int>(stack.size()) >= kMaxJsonDepth)
          throw InputError(fmt::format(
              "{}: JSON nested deeper than {} levels{}; scenario and machine files need far "
              "fewer",
              where, kMaxJsonDepth, stack.empty() ? "" : " at " + echo_text(path())));
        stack.push_back({event == Json::parse_event_t::array_start, "", 0, {}});
        break;
      case Json::parse_event_t::key:
        if (!stack.empty()) {
          // A repeated member: nlohmann keeps the last one, so a value the
          // reader sees first would be silently replaced.
          Frame& f = stack.back();
          f.key = parsed.get<std::string>();
          if (!f.keys.insert(f.key).second)
            throw InputError(
                fmt::format("{}: {}: the field appears twice in one object; give it once", where,
                            echo_text(path())));
        }
        break;
      case Json::parse_event_t::object_end:
      case Json::parse_event_t::array_end:
        if (!stack.empty()) stack.pop_back();
        element_done();
        break;
      case Json::parse_event_t::value:
        element_done();
        break;
    }
    return true;
  }
};

// Line and column (1-based) of byte `offset` of `text`.
std::pair<std::size_t, std::size_t> line_column(const std::string& text, std::size_t offset) {
  std::size_t line = 1, column = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
      ++column;
    }
  }
  return {line, column};
}

// nlohmann's reason without its prefix and its "last read" echo (which may be long or
// not UTF-8).
std::string parse_reason(const std::string& what) {
  std::string r = what;
  const auto colon = r.find(": ");
  if (r.rfind("[json.exception", 0) == 0 && colon != std::string::npos) r = r.substr(colon + 2);
  const auto last = r.find("; last read:");
  if (last != std::string::npos) r = r.substr(0, last);
  return echo_text(r, 200);
}

}  // namespace

Json parse_json_text(const std::string& text, const std::string& where) {
  ParseTracker tracker;
  tracker.where = where;
  try {
    return Json::parse(text, [&tracker](int depth, Json::parse_event_t event, Json& parsed) {
      return tracker.on(depth, event, parsed);
    });
  } catch (const Json::parse_error& e) {
    const auto [line, column] = line_column(text, e.byte > 0 ? e.byte - 1 : 0);
    const std::string at = tracker.path();
    throw InputError(fmt::format("{}: malformed JSON at line {}, column {}{}: {}", where, line,
                                 column, at.empty() ? "" : " (in " + echo_text(at) + ")",
                                 parse_reason(e.what())));
  } catch (const Json::out_of_range& e) {
    // 1e309, a 400-digit integer: beyond a double.
    const std::string at = tracker.path();
    (void)e;
    throw InputError(fmt::format("{}: a number is out of range (beyond a double, about 1.8e308)",
                                 at.empty() ? where : where + ": " + echo_text(at)));
  } catch (const Json::exception& e) {
    throw InputError(fmt::format("{}: not valid JSON: {}", where, parse_reason(e.what())));
  }
}

}  // namespace semsim::config
