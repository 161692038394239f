#include "config/machine_ranges.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "config/json_fields.hpp"
#include "config/machine_config.hpp"
#include "config/machine_decl.hpp"

namespace semsim::config {

namespace {

// The objects of a machine file that hold parameters, with the group name their
// declarations use ("" for the top level).
const std::vector<std::string>& param_groups() {
  static const std::vector<std::string> groups = {"latency_ns", "costs_ns", ""};
  return groups;
}

bool is_number_kind(ParamKind k) {
  return k == ParamKind::Ticks || k == ParamKind::FineNs || k == ParamKind::Number ||
         k == ParamKind::Share;
}

// How the files mark an assumption: their source says so ("assumption: ...",
// "[assumption ...]"), as cpu_models/README.md asks.
bool marked_assumption(const Json& source) {
  if (!source.is_string()) return false;
  std::string text = source.get<std::string>();
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text.find("assumption") != std::string::npos;
}

std::string field(const std::string& where, const std::string& name) { return where + ": " + name; }

std::string topology_text(const Json& t) {
  auto get = [&](const char* k, int fallback) {
    return t.contains(k) && t[k].is_number_integer() ? t[k].get<int>() : fallback;
  };
  return fmt::format("{} sockets x {} dies x {} cores x {} threads", get("sockets", 0),
                     get("dies_per_socket", 1), get("cores_per_die", 0),
                     get("threads_per_core", 0));
}

// The nominal document with one parameter's value replaced.
Json with_value(const Json& nominal, const std::string& group, const std::string& key,
                const Json& value) {
  Json doc = nominal;
  Json& obj = group.empty() ? doc : doc[group];
  obj[key]["value"] = value;
  return doc;
}

// A variant must be a valid machine; its errors say which annotation made it.
void check_variant(const MachineVariant& v, const std::string& where, const std::string& what) {
  parse_machine(v.document, fmt::format("{} ({})", where, what));
}

}  // namespace

bool has_uncertainty(const Json& doc) {
  if (!doc.is_object()) return false;
  if (doc.contains("topology") && doc["topology"].is_object() &&
      doc["topology"].contains("alternatives"))
    return true;
  for (const std::string& group : param_groups()) {
    const Json* obj = group.empty() ? &doc : (doc.contains(group) ? &doc[group] : nullptr);
    if (obj == nullptr || !obj->is_object()) continue;
    for (const auto& [key, p] : obj->items())
      if (p.is_object() && p.contains("range")) return true;
  }
  return false;
}

Json without_uncertainty(const Json& doc) {
  Json out = doc;
  if (!out.is_object()) return out;
  if (out.contains("topology") && out["topology"].is_object())
    out["topology"].erase("alternatives");
  for (const std::string& group : param_groups()) {
    Json* obj = group.empty() ? &out : (out.contains(group) ? &out[group] : nullptr);
    if (obj == nullptr || !obj->is_object()) continue;
    for (auto& [key, p] : obj->items())
      if (p.is_object()) p.erase("range");
  }
  return out;
}

MachineUncertainty machine_uncertainty(const Json& doc, const std::string& where, bool corners) {
  MachineUncertainty out;
  if (!doc.is_object()) return out;
  Json nominal = without_uncertainty(doc);
  // A variant keeps the nominal model's name (a file without one is named by its stem).
  if (!nominal.contains("name")) nominal["name"] = parse_machine(nominal, where).name;
  Json all_low = nominal, all_high = nominal;
  int ranged = 0;

  for (const std::string& group : param_groups()) {
    const Json* obj = group.empty() ? &doc : (doc.contains(group) ? &doc[group] : nullptr);
    if (obj == nullptr || !obj->is_object()) continue;
    for (const auto& [key, p] : obj->items()) {
      if (!p.is_object() || !p.contains("range")) continue;
      const std::string name = group.empty() ? key : group + "." + key;
      const std::string here = field(where, name + ".range");
      const ParamDecl* d = find_param(name);
      if (name == "topology")
        fail(here,
             "a topology has no range; give it \"alternatives\": [{\"name\", \"source\", "
             "\"topology\"}, ...]");
      if (d == nullptr)
        fail(here, fmt::format("\"{}\" is not a machine parameter; a range belongs on one of the "
                               "parameters cpu_models/README.md lists",
                               echo_text(name)));
      if (!is_number_kind(d->kind))
        fail(here, "only a number parameter can have a range (this one is a table or a matrix)");
      if (!marked_assumption(p.value("source", Json())))
        fail(here,
             "only a parameter marked as an assumption (its source says \"assumption\") may have "
             "a range; a published or probed figure has none");
      const Json& r = p["range"];
      const char* shape = R"(must be {"low": number, "high": number, "source": "why this range"})";
      if (!r.is_object() || !r.contains("low") || !r.contains("high") || !r.contains("source"))
        fail(here, shape);
      reject_unknown_keys(r, here, {"low", "high", "source"});
      const double lo = as_number(r["low"], here + ".low", -1e300, false);
      const double hi = as_number(r["high"], here + ".high", -1e300, false);
      if (as_string(r["source"], here + ".source").empty())
        fail(here + ".source", "must not be empty: say why the range is what it is");
      if (lo > hi) fail(here, fmt::format("low ({}) is above high ({})", lo, hi));
      if (!p.contains("value") || !p["value"].is_number())
        fail(field(where, name + ".value"), "must be a number");
      const double v = p["value"].get<double>();
      if (v < lo || v > hi)
        fail(here,
             fmt::format("the value ({}) must lie between low ({}) and high ({})", v, lo, hi));
      out.parameters.push_back(
          {name, std::string(d->unit), r["source"].get<std::string>(), v, lo, hi, {}});
      for (const auto& [setting, end] : {std::pair<const char*, double>{"low", lo}, {"high", hi}}) {
        MachineVariant var{name + "=" + setting, name, setting, end,
                           with_value(nominal, group, key, end)};
        check_variant(var, where, name + ".range." + setting);
        out.variants.push_back(std::move(var));
      }
      all_low = with_value(all_low, group, key, lo);
      all_high = with_value(all_high, group, key, hi);
      ++ranged;
    }
  }

  if (doc.contains("topology") && doc["topology"].is_object() &&
      doc["topology"].contains("alternatives")) {
    const Json& topo = doc["topology"];
    const std::string here = field(where, "topology.alternatives");
    if (!marked_assumption(topo.value("source", Json())))
      fail(here,
           "only a topology marked as an assumption (its source says \"assumption\") may have "
           "alternatives");
    const Json& alts = topo["alternatives"];
    if (!alts.is_array() || alts.empty() || alts.size() > 16)
      fail(here, R"(must be a list of 1 to 16 {"name": "...", "source": "why", "topology": {...}, )"
                 R"("latency_ns": {...}})");
    UncertainParameter param{"topology", "", "", topology_text(topo), nullptr, nullptr, {}};
    std::set<std::string> names;
    for (std::size_t i = 0; i < alts.size(); ++i) {
      const Json& a = alts[i];
      const std::string ap = fmt::format("{}[{}]", here, i);
      if (!a.is_object() || !a.contains("name") || !a.contains("source") || !a.contains("topology"))
        fail(ap, R"(must be {"name": "...", "source": "why", "topology": {...}} (and optionally )"
                 R"("latency_ns": {...} for the classes it adds or changes))");
      reject_unknown_keys(a, ap, {"name", "source", "topology", "latency_ns"});
      const std::string name = as_string(a["name"], ap + ".name");
      if (name.empty() || name.size() > 80) fail(ap + ".name", "must be 1 to 80 characters");
      if (!names.insert(name).second)
        fail(ap + ".name", fmt::format("\"{}\" names another alternative too", echo_text(name)));
      if (as_string(a["source"], ap + ".source").empty())
        fail(ap + ".source", "must not be empty: say why this topology is possible");
      if (!a["topology"].is_object()) fail(ap + ".topology", "must be a topology object");
      if (a.contains("latency_ns") && !a["latency_ns"].is_object())
        fail(ap + ".latency_ns", "must be an object of latency classes");
      if (a["topology"].contains("alternatives"))
        fail(ap + ".topology.alternatives", "an alternative has no alternatives of its own");
      MachineVariant var{"topology=" + name, "topology", name, name, nominal};
      // The alternative replaces the whole topology; its latency classes are added to or
      // replace the nominal ones.
      var.document["topology"] = a["topology"];
      if (!var.document["topology"].contains("source"))
        var.document["topology"]["source"] = a["source"];
      if (a.contains("latency_ns"))
        for (const auto& [cls, value] : a["latency_ns"].items())
          var.document["latency_ns"][cls] = value;
      var.document = without_uncertainty(var.document);
      check_variant(var, where, fmt::format("topology.alternatives[{}]", i));
      param.alternatives.push_back(name);
      out.variants.push_back(std::move(var));
    }
    std::string sources;
    for (const Json& a : alts)
      sources += (sources.empty() ? "" : " | ") + a["source"].get<std::string>();
    param.source = sources;
    out.parameters.push_back(std::move(param));
  }

  if (corners && ranged > 0) {
    for (auto& [setting, d] :
         {std::pair<const char*, Json*>{"low", &all_low}, {"high", &all_high}}) {
      MachineVariant var{std::string("all=") + setting, "all", setting, setting, *d};
      check_variant(var, where, std::string("every range at its ") + setting + " end");
      out.variants.push_back(std::move(var));
    }
  }
  return out;
}

Json machine_uncertainty_json(const std::string& name_or_path, bool corners) {
  const Json doc = machine_document(name_or_path);
  const MachineParams nominal = load_machine(name_or_path);  // every check, annotations included
  const MachineUncertainty u = machine_uncertainty(doc, name_or_path, corners);
  Json out = {{"machine", nominal.name}, {"model_hash", nominal.hash}};
  out["parameters"] = Json::array();
  for (const UncertainParameter& p : u.parameters) {
    Json j = {
        {"parameter", p.parameter}, {"unit", p.unit}, {"source", p.source}, {"nominal", p.nominal}};
    if (p.parameter == "topology")
      j["alternatives"] = p.alternatives;
    else
      j["range"] = {p.low, p.high};
    out["parameters"].push_back(j);
  }
  out["variants"] = Json::array();
  for (const MachineVariant& v : u.variants)
    out["variants"].push_back({{"id", v.id},
                               {"parameter", v.parameter},
                               {"setting", v.setting},
                               {"value", v.value},
                               {"model_hash", parse_machine(v.document, v.id).hash},
                               {"document", v.document}});
  return out;
}

}  // namespace semsim::config
