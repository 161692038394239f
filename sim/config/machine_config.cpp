#include "config/machine_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "config/json_fields.hpp"
#include "config/machine_decl.hpp"
#include "config/machine_ranges.hpp"
#include "core/errors.hpp"

namespace fs = std::filesystem;

namespace semsim::config {

namespace {

std::string g_data_dir;

// The package's model directories, in order of precedence (never the current
// directory's cpu_models/: a file there must not silently replace a preset).
std::vector<std::string> model_dirs() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("SEMSIM_DATA_DIR"))
    dirs.push_back(std::string(env) + "/cpu_models");
  if (!g_data_dir.empty()) dirs.push_back(g_data_dir + "/cpu_models");
  dirs.push_back(std::string(SEMSIM_SOURCE_DIR) + "/cpu_models");
  return dirs;
}

std::string fnv1a64(const std::string& text) {
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return fmt::format("fnv1a64:{:016x}", h);
}

// The value of obj[key] = {"value": ..., "source": "..."}, after checking that
// envelope (a non-empty source); `shape` completes "must be an object " in the error.
const Json& sourced_value(const Json& obj, const std::string& path, const std::string& key,
                          const char* shape) {
  const Json& p = obj.at(key);
  const std::string here = child_path(path, key);
  if (!p.is_object() || !p.contains("value") || !p.contains("source"))
    fail(here, std::string("must be an object ") + shape);
  if (as_string(p["source"], here + ".source").empty()) fail(here + ".source", "must not be empty");
  return p["value"];
}

// A {"value": x, "source": "..."} parameter, in nanoseconds: a finite number from 0 (or
// above 0 when `positive`) to kMaxParamNs.
double param(const Json& obj, const std::string& path, const std::string& key, bool required = true,
             double fallback = 0, bool positive = false, double max = kMaxParamNs) {
  if (!obj.contains(key)) {
    if (required) fail(child_path(path, key), "is required");
    return fallback;
  }
  const Json& v = sourced_value(obj, path, key,
                                R"({"value": number, "source": "where the number comes from"})");
  return as_number(v, child_path(path, key) + ".value", 0, positive, max);
}

// A time parameter in ticks (1 ps). A positive value that rounds to 0 ticks would make
// a step of the simulation take no time at all (and a run never end): refused.
Tick param_ticks(const Json& obj, const std::string& path, const std::string& key,
                 bool required = true, bool positive = true) {
  const double ns = param(obj, path, key, required, -1e-3, positive);
  const Tick t = ns_to_ticks(ns);
  if (obj.contains(key) && ns > 0 && t <= 0)
    fail(child_path(path, key) + ".value",
         fmt::format("{} ns is below the model's resolution of 0.001 ns (1 ps) and would round "
                     "to 0; give at least 0.0005",
                     ns));
  return t;
}

// A per-unit cost kept in ns (a double): positive values at least the model's resolution.
double param_fine(const Json& obj, const std::string& path, const std::string& key,
                  double fallback) {
  const double ns = param(obj, path, key, false, fallback, true);
  if (obj.contains(key) && ns < 1e-6)
    fail(child_path(path, key) + ".value",
         fmt::format("{} ns is below 1e-6 ns; costs that small round to no time", ns));
  return ns;
}

// [[reuse distance, ns], ...] with increasing distances from 1.
std::vector<std::pair<std::int64_t, Tick>> refill_table(const Json& doc, const std::string& path,
                                                        const std::string& key) {
  std::vector<std::pair<std::int64_t, Tick>> out;
  const std::string here = child_path(path, key);
  const std::string shape =
      R"({"value": [[reuse distance, ns], ...] with distances >= 1 increasing and ns >= 0, )"
      R"("source": "where it comes from"})";
  const Json& table = sourced_value(doc, path, key, shape.c_str());
  if (!table.is_array() || table.empty()) fail(here, "must be an object " + shape);
  std::int64_t last = 0;
  for (const Json& row : table) {
    if (!row.is_array() || row.size() != 2 || !row[0].is_number_integer() || !row[1].is_number() ||
        row[0].get<std::int64_t>() <= last || !(row[1].get<double>() >= 0) ||
        row[1].get<double>() > kMaxParamNs)
      fail(here + ".value", "must be an object " + shape);
    last = row[0].get<std::int64_t>();
    out.emplace_back(last, ns_to_ticks(row[1].get<double>()));
  }
  return out;
}

// An optional parameter whose value is an object of its own: {"value": {...}, "source"}.
const Json& object_value(const Json& doc, const std::string& path, const std::string& key,
                         const std::string& shape) {
  const Json& v = sourced_value(doc, path, key, shape.c_str());
  if (!v.is_object()) fail(child_path(path, key), "must be an object " + shape);
  return v;
}

void wakeup_jitter(const Json& doc, const std::string& path, const std::string& key,
                   MachineParams& m) {
  const std::string here = child_path(path, key);
  const Json& v = object_value(
      doc, path, key,
      R"({"value": {"waker": [multiple of the mean, ...], "wakee": [...]} with 2 to 1000 )"
      R"(positive numbers each, "source": "where it comes from"})");
  auto shape_table = [&](const char* side, std::vector<double>& out) {
    if (!v.contains(side) || !v[side].is_array() || v[side].size() < 2 || v[side].size() > 1000)
      fail(here + ".value." + side, "must be a list of 2 to 1000 positive numbers");
    double sum = 0;
    for (const Json& x : v[side]) {
      if (!x.is_number() || !(x.get<double>() > 0) || x.get<double>() > 1e6)
        fail(here + ".value." + side,
             "must be a list of 2 to 1000 positive numbers (multiples of the mean, at most 1e6)");
      out.push_back(x.get<double>());
      sum += out.back();
    }
    // Multiples of the mean: rescaled so that their mean is exactly 1, so that the
    // draws keep the calibrated mean cost.
    for (double& x : out) x *= static_cast<double>(out.size()) / sum;
  };
  shape_table("waker", m.wakeup_jitter_waker);
  shape_table("wakee", m.wakeup_jitter_wakee);
}

void os_noise(const Json& doc, const std::string& path, const std::string& key, MachineParams& m) {
  const std::string here = child_path(path, key);
  const Json& v = object_value(
      doc, path, key,
      R"({"value": {"per_s": interruptions per second >= 0, "durations_ns": [ns, ...] with 1 )"
      R"(to 1000 positive numbers}, "source": "where it comes from"})");
  if (!v.contains("per_s") || !v["per_s"].is_number() || !(v["per_s"].get<double>() >= 0) ||
      v["per_s"].get<double>() > 1e6)
    fail(here + ".value.per_s", "must be a number of interruptions per second, 0 to 1000000");
  m.noise_per_s = v["per_s"].get<double>();
  const Json* d = v.contains("durations_ns") ? &v["durations_ns"] : nullptr;
  if (d == nullptr || !d->is_array() || d->empty() || d->size() > 1000)
    fail(here + ".value.durations_ns", "must be a list of 1 to 1000 durations in ns, each > 0");
  for (const Json& x : *d) {
    if (!x.is_number() || !(x.get<double>() > 0) || x.get<double>() > 1e9)
      fail(here + ".value.durations_ns",
           "must be a list of 1 to 1000 durations in ns, each > 0 and at most 1 s");
    m.noise_durations.push_back(ns_to_ticks(x.get<double>()));
  }
}

// A {"matrix": [[...] x n] x n, "source": "..."} parameter: rows of numbers, each read
// by `entry` (which checks it) at its path "<path>.matrix[a][b]".
template <class Entry>
void matrix_param(const Json& spec, const std::string& path, int n, const std::string& shape,
                  const char* per_row, Entry entry) {
  if (!spec.is_object() || !spec.contains("matrix") || !spec.contains("source")) fail(path, shape);
  reject_unknown_keys(spec, path, {"matrix", "source"});
  if (as_string(spec["source"], path + ".source").empty())
    fail(path + ".source", "must not be empty");
  const auto& rows = spec["matrix"];
  if (!rows.is_array() || rows.size() != static_cast<std::size_t>(n)) fail(path + ".matrix", shape);
  for (int a = 0; a < n; ++a) {
    const auto& row = rows[static_cast<std::size_t>(a)];
    const std::string rp = fmt::format("{}.matrix[{}]", path, a);
    if (!row.is_array() || row.size() != static_cast<std::size_t>(n))
      fail(rp, fmt::format("must have {} entries (one per {})", n, per_row));
    for (int b = 0; b < n; ++b)
      entry(a, b, row[static_cast<std::size_t>(b)], fmt::format("{}[{}]", rp, b));
  }
}

// latency_matrix_ns: row a, column b is a transfer from CPU a's cache to CPU b's, in ns.
// The diagonal is ignored (0).
std::vector<std::vector<Tick>> latency_matrix(const Json& spec, const std::string& path, int cpus) {
  std::vector<std::vector<Tick>> out(static_cast<std::size_t>(cpus),
                                     std::vector<Tick>(static_cast<std::size_t>(cpus), 0));
  matrix_param(
      spec, path, cpus,
      fmt::format("must be {{\"matrix\": [[ns, ...] x {0}] x {0}, \"source\": \"...\"}}", cpus),
      "CPU", [&](int a, int b, const Json& v, const std::string& here) {
        if (a == b) {  // a CPU's own cache is costs_ns.l1_hit, not a transfer
          if (!v.is_number() || v.get<double>() != 0)
            fail(here, fmt::format("a CPU to itself must be 0, got {}", echo(v)));
          return;
        }
        out[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)] =
            ns_to_ticks(as_number(v, here, 0, true, kMaxParamNs));
      });
  return out;
}

// numa_distance: nodes x nodes, a node being a die; SLIT-like integers, 10 = local.
std::vector<std::vector<int>> numa_distance(const Json& spec, const std::string& path, int nodes,
                                            const ParamDecl& d) {
  std::vector<std::vector<int>> out(static_cast<std::size_t>(nodes),
                                    std::vector<int>(static_cast<std::size_t>(nodes), 0));
  matrix_param(
      spec, path, nodes,
      fmt::format("must be {{\"matrix\": [[distance, ...] x {0}] x {0}, \"source\": \"...\"}} (one "
                  "node per die)",
                  nodes),
      "NUMA node", [&](int a, int b, const Json& v, const std::string& here) {
        // ACPI SLIT: 10 is a node's distance to itself, a remote node is farther.
        const auto lo = static_cast<std::int64_t>(a == b ? d.min : d.min + 1);
        const auto hi = static_cast<std::int64_t>(a == b ? d.min : d.max);
        out[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)] =
            static_cast<int>(as_int(v, here, lo, hi));
      });
  return out;
}

}  // namespace

void set_data_dir(const std::string& dir) { g_data_dir = dir; }
std::string data_dir() { return g_data_dir; }

MachineParams parse_machine(const Json& doc, const std::string& where) {
  const std::string path = where;
  const std::string top = where + ":";  // the parent of a top-level field: "file: cpus"
  if (!doc.is_object()) fail(path, "a machine model must be a JSON object");
  if (doc.contains("workload") && !doc.contains("cpus"))
    fail(path,
         "is a scenario (it has \"workload\"), not a machine model; give a preset name or "
         "a machine file");
  // Ranges and topology alternatives (machine_ranges.hpp) are not part of the nominal
  // model: it is read, and hashed, without them; then they are checked.
  if (has_uncertainty(doc)) {
    MachineParams nominal = parse_machine(without_uncertainty(doc), where);
    machine_uncertainty(doc, where);
    return nominal;
  }
  MachineParams m;
  m.hash = fnv1a64(doc.dump());
  m.name = doc.contains("name") ? as_string(doc["name"], path + ": name")
                                : fs::path(where).stem().string();
  if (m.name.empty() || m.name.size() > 255) fail(path + ": name", "must be 1 to 255 characters");
  m.description =
      doc.contains("description") ? as_string(doc["description"], path + ": description") : "";
  m.cpus = static_cast<int>(as_int(require(doc, top, "cpus"), path + ": cpus", 1, 256));
  const Json& topo = require(doc, top, "topology");
  const std::string tp = path + ": topology";
  m.sockets = static_cast<int>(as_int(require(topo, tp, "sockets"), tp + ".sockets", 1, 64));
  m.dies_per_socket =
      topo.contains("dies_per_socket")
          ? static_cast<int>(as_int(topo["dies_per_socket"], tp + ".dies_per_socket", 1, 64))
          : 1;
  m.cores_per_die =
      static_cast<int>(as_int(require(topo, tp, "cores_per_die"), tp + ".cores_per_die", 1, 256));
  m.threads_per_core = static_cast<int>(
      as_int(require(topo, tp, "threads_per_core"), tp + ".threads_per_core", 1, 8));
  if (m.sockets * m.dies_per_socket * m.cores_per_die * m.threads_per_core != m.cpus)
    fail(path + ": cpus",
         fmt::format("is {} but the topology has sockets*dies_per_socket*cores_per_die*"
                     "threads_per_core = {}",
                     m.cpus, m.sockets * m.dies_per_socket * m.cores_per_die * m.threads_per_core));
  std::string numbering =
      topo.contains("numbering")
          ? as_choice(topo["numbering"], tp + ".numbering", {"linux", "smt-adjacent"})
          : "linux";
  m.smt_adjacent = numbering == "smt-adjacent";
  m.socket_hops.assign(static_cast<std::size_t>(m.sockets),
                       std::vector<int>(static_cast<std::size_t>(m.sockets), 1));
  for (int s = 0; s < m.sockets; ++s)
    m.socket_hops[static_cast<std::size_t>(s)][static_cast<std::size_t>(s)] = 0;
  if (topo.contains("socket_hops")) {
    const Json& hops = topo["socket_hops"];
    if (!hops.is_array() || hops.size() != static_cast<std::size_t>(m.sockets))
      fail(tp + ".socket_hops",
           fmt::format("must be a {}x{} matrix of hop counts", m.sockets, m.sockets));
    for (std::size_t a = 0; a < hops.size(); ++a) {
      if (!hops[a].is_array() || hops[a].size() != static_cast<std::size_t>(m.sockets))
        fail(tp + ".socket_hops",
             fmt::format("must be a {}x{} matrix of hop counts", m.sockets, m.sockets));
      for (std::size_t b = 0; b < hops[a].size(); ++b)
        m.socket_hops[a][b] = static_cast<int>(
            as_int(hops[a][b], fmt::format("{}.socket_hops[{}][{}]", tp, a, b), a == b ? 0 : 1,
                   a == b ? 0 : 16));  // 0 to itself, at least one hop to another socket
    }
    for (std::size_t a = 0; a < hops.size(); ++a)
      for (std::size_t b = 0; b < a; ++b)
        if (m.socket_hops[a][b] != m.socket_hops[b][a])
          fail(fmt::format("{}.socket_hops[{}][{}]", tp, a, b),
               fmt::format("must equal [{}][{}] ({}): a hop count is the same both ways, got {}", b,
                           a, m.socket_hops[b][a], m.socket_hops[a][b]));
  }
  const Json& lat = require(doc, top, "latency_ns");
  const std::string lp = path + ": latency_ns";
  const Json& c = require(doc, top, "costs_ns");
  const std::string cp = path + ": costs_ns";
  // Every key is a declared parameter or part of the file's structure: a
  // misspelt name is an error, never a parameter left at its default.
  {
    std::vector<std::string> classes, costs,
        top_keys = {"name",       "description", "cpus",       "topology",
                    "latency_ns", "costs_ns",    "provenance", "latency_matrix_ns"};
    for (const ParamDecl& d : machine_params())
      (d.group == "latency_ns" ? classes
       : d.group == "costs_ns" ? costs
                               : top_keys)
          .emplace_back(d.key);
    reject_unknown_keys(lat, lp, classes);
    reject_unknown_keys(c, cp, costs);
    reject_unknown_keys(doc, top, top_keys);
    reject_unknown_keys(topo, tp,
                        {"sockets", "dies_per_socket", "cores_per_die", "threads_per_core",
                         "numbering", "socket_hops", "source", "alternatives"});
  }
  for (const ParamDecl& d : machine_params()) {
    const Json& obj = d.group == "latency_ns" ? lat : d.group == "costs_ns" ? c : doc;
    const std::string here = d.group == "latency_ns" ? lp : d.group == "costs_ns" ? cp : top;
    const std::string key(d.key);
    switch (d.kind) {
      case ParamKind::Ticks:
        // semop_kernel_path may be 0: the lumped path closed on a probe (the calibration
        // simulates the call without it); the syscall and the modelled accesses still
        // cost time.
        m.*d.ticks = param_ticks(obj, here, key, d.required, d.min_exclusive);
        if (!obj.contains(key)) m.*d.ticks = d.fallback < 0 ? -1 : ns_to_ticks(d.fallback);
        break;
      case ParamKind::FineNs:
        m.*d.number = param_fine(obj, here, key, d.fallback);
        break;
      case ParamKind::Number:
        m.*d.number =
            obj.contains(key) ? param(obj, here, key, true, 0, d.min_exclusive, d.max) : d.fallback;
        if (m.*d.number < d.min)
          fail(child_path(here, key) + ".value", fmt::format("must be at least {:g}", d.min));
        break;
      case ParamKind::Share:
        m.*d.number = d.fallback;
        if (!obj.contains(key)) break;
        m.*d.number = param(obj, here, key);
        if (m.*d.number < d.min || m.*d.number > d.max)
          fail(child_path(here, key) + ".value", "must be between 0 and 1");
        break;
      case ParamKind::Flag: {
        if (!obj.contains(key)) break;
        const char* shape = R"({"value": true or false, "source": "where it comes from"})";
        const Json& v = sourced_value(obj, here, key, shape);
        if (!v.is_boolean()) fail(child_path(here, key), std::string("must be an object ") + shape);
        m.*d.flag = v.get<bool>();
        break;
      }
      case ParamKind::RefillTable:
        if (obj.contains(key)) m.*d.table = refill_table(obj, here, key);
        break;
      case ParamKind::Jitter:
        if (obj.contains(key)) wakeup_jitter(obj, here, key, m);
        break;
      case ParamKind::Noise:
        if (obj.contains(key)) os_noise(obj, here, key, m);
        break;
      case ParamKind::Matrix:
        break;  // after the topology checks below: their shape depends on it
    }
  }
  if (m.time_slice <= 0) fail(cp + ".time_slice", "must be > 0");
  if (m.busy_loop_iteration_ns < 0)
    m.busy_loop_iteration_ns = m.clock_ghz > 0 ? 1.0 / m.clock_ghz : 0.5;
  // Every distance class that can occur on this topology needs a latency.
  auto need = [&](bool occurs, Tick v, const char* key) {
    if (occurs && v < 0)
      fail(lp + "." + key, "is required: this topology has CPU pairs at that distance");
  };
  int max_hops = 0;
  for (const auto& row : m.socket_hops)
    for (int h : row) max_hops = std::max(max_hops, h);
  need(m.threads_per_core > 1, m.lat_smt, "smt");
  need(m.cores_per_die > 1, m.lat_same_die, "same_die");
  need(m.dies_per_socket > 1, m.lat_same_socket, "same_socket");
  need(m.sockets > 1, m.lat_one_hop, "one_hop");
  need(max_hops >= 2, m.lat_two_hops, "two_hops");
  if (doc.contains("latency_matrix_ns"))
    m.latency_matrix =
        latency_matrix(doc["latency_matrix_ns"], path + ": latency_matrix_ns", m.cpus);
  // A line from another CPU's cache cannot arrive sooner than a hit in the
  // requester's own L1: the model dates a store's visibility from its issue
  // (machine/store_buffer.cpp) and a hand-over from that visibility.
  auto not_below_l1 = [&](Tick v, const std::string& where_) {
    if (v >= 0 && v < m.l1_hit)
      fail(where_, fmt::format("must be at least costs_ns.l1_hit ({:g} ns): a transfer from "
                               "another CPU's cache is never faster than an L1 hit, got {:g}",
                               ticks_to_ns(m.l1_hit), ticks_to_ns(v)));
  };
  not_below_l1(m.lat_smt, lp + ".smt.value");
  not_below_l1(m.lat_same_die, lp + ".same_die.value");
  not_below_l1(m.lat_same_socket, lp + ".same_socket.value");
  not_below_l1(m.lat_one_hop, lp + ".one_hop.value");
  not_below_l1(m.lat_two_hops, lp + ".two_hops.value");
  for (std::size_t a = 0; a < m.latency_matrix.size(); ++a)
    for (std::size_t b = 0; b < m.latency_matrix[a].size(); ++b)
      if (a != b)
        not_below_l1(m.latency_matrix[a][b],
                     fmt::format("{}: latency_matrix_ns.matrix[{}][{}]", path, a, b));
  if (doc.contains("numa_distance"))
    m.numa_distance = numa_distance(doc["numa_distance"], path + ": numa_distance",
                                    m.sockets * m.dies_per_socket, *find_param("numa_distance"));
  return m;
}

std::string host_model_path() {
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg != nullptr && xdg[0] == '/')
    return std::string(xdg) + "/semsim/host.json";
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr && home[0] == '/' ? home : "/tmp") +
         "/.local/share/semsim/host.json";
}

namespace {

bool regular_file(const fs::path& p) {
  std::error_code ec;  // a name too long, a permission: not found, never an exception
  return fs::is_regular_file(p, ec);
}

// A preset name as the schema allows it: [a-z0-9][a-z0-9._-]*, at most 255 characters.
bool preset_name(const std::string& name) {
  if (name.empty() || name.size() > 255) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    (i > 0 && (c == '.' || c == '_' || c == '-'));
    if (!ok) return false;
  }
  return true;
}

// Is a model directory's file stem a preset's name? Not the schema of the format
// (machine.schema.json), and not "host" (the calibrated model lives elsewhere):
// what list_machines() lists is exactly what a name resolves to.
bool preset_stem(const std::string& stem) {
  return stem.find("schema") == std::string::npos && stem != "host";
}

// The file `name_or_path` means and how errors name it.
struct MachineFile {
  std::string file, where;
};

MachineFile resolve_machine(const std::string& name_or_path) {
  bool is_path =
      name_or_path.find('/') != std::string::npos ||
      (name_or_path.size() > 5 && name_or_path.substr(name_or_path.size() - 5) == ".json");
  if (is_path) return {name_or_path, name_or_path};
  // "host": the calibrated model of this machine, in one per-user place (semsim
  // calibrate writes it), or an error saying how to make it: never a stand-in.
  if (name_or_path == "host") {
    const std::string file = host_model_path();
    std::error_code ec;
    if (fs::exists(file, ec) && !regular_file(file))
      fail("machine", fmt::format("\"host\" is this host's calibrated model, {}, which is not a "
                                  "regular file (a directory?): remove it and run `semsim "
                                  "calibrate`",
                                  file));
    if (!regular_file(file))
      fail("machine",
           fmt::format("\"host\" is this host's calibrated model, {}, which does not exist yet: "
                       "run `semsim calibrate` (or `semsim calibrate --quick`, a few seconds), or "
                       "name a preset (host-default is the Intel guest semsim was first developed "
                       "on) or a machine file",
                       file));
    return {file, "host"};
  }
  // Presets come from the package's own models only: a cpu_models/ directory where the
  // command runs does not shadow them (give its files by path).
  if (preset_name(name_or_path) && preset_stem(name_or_path)) {
    for (const auto& dir : model_dirs()) {
      const fs::path candidate = fs::path(dir) / (name_or_path + ".json");
      if (regular_file(candidate)) return {candidate.string(), name_or_path};
    }
  }
  std::vector<std::string> names;
  for (const auto& e : list_machines()) names.push_back(e.name);
  fail("machine",
       fmt::format("unknown machine \"{}\"; presets: {}; or give a path to a machine file",
                   echo_text(name_or_path), join(names)));
}

}  // namespace

MachineParams load_machine(const std::string& name_or_path) {
  const MachineFile f = resolve_machine(name_or_path);
  MachineParams m = parse_machine(load_json_file(f.file), f.where);
  m.file = fs::absolute(f.file).lexically_normal().string();
  return m;
}

Json machine_document(const std::string& name_or_path) {
  return load_json_file(resolve_machine(name_or_path).file);
}

std::vector<MachineEntry> list_machines() {
  // Every model directory of the package contributes; a name found earlier wins. A
  // calibrated host model adds "host".
  std::map<std::string, MachineEntry> by_name;
  if (regular_file(host_model_path())) {
    try {
      auto m = parse_machine(load_json_file(host_model_path()), "host");
      by_name["host"] = {"host", "this host, calibrated: " + host_model_path(), m.cpus};
    } catch (const InputError& e) {
      by_name["host"] = {"host", std::string("INVALID: ") + e.what(), 0};
    }
  }
  for (const auto& dir : model_dirs()) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      const auto& f = entry.path();
      const std::string stem = f.stem().string();
      if (f.extension() != ".json" || !preset_stem(stem) || by_name.count(stem)) continue;
      try {
        auto m = parse_machine(load_json_file(f.string()), stem);
        by_name[stem] = {stem, m.description, m.cpus};
      } catch (const InputError& e) {
        by_name[stem] = {stem, std::string("INVALID: ") + e.what(), 0};
      }
    }
  }
  std::vector<MachineEntry> out;
  for (auto& [name, e] : by_name) out.push_back(e);
  return out;
}

}  // namespace semsim::config
