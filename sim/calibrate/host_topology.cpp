#include "calibrate/host_topology.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

#include "machine/params.hpp"

namespace semsim::calibrate {

namespace {

int read_int(const std::string& path, int fallback) {
  std::ifstream in(path);
  int v = fallback;
  if (in >> v) return v;
  return fallback;
}

}  // namespace

std::set<int> parse_cpu_list(const std::string& text) {
  std::set<int> out;
  std::stringstream ss(text);
  std::string part;
  while (std::getline(ss, part, ',')) {
    if (part.empty()) continue;
    const auto dash = part.find('-');
    try {
      if (dash == std::string::npos) {
        out.insert(std::stoi(part));
      } else {
        for (int c = std::stoi(part.substr(0, dash)); c <= std::stoi(part.substr(dash + 1)); ++c)
          out.insert(c);
      }
    } catch (const std::exception&) {
    }
  }
  return out;
}

std::vector<CpuInfo> read_cpus(const std::vector<int>& cpus) {
  std::vector<CpuInfo> out;
  for (int c : cpus) {
    const std::string base = "/sys/devices/system/cpu/cpu" + std::to_string(c) + "/topology/";
    CpuInfo info;
    info.cpu = c;
    info.package = read_int(base + "physical_package_id", 0);
    info.die = read_int(base + "die_id", 0);
    info.core = read_int(base + "core_id", c);
    std::ifstream in(base + "thread_siblings_list");
    std::string line;
    if (std::getline(in, line)) info.siblings = parse_cpu_list(line);
    if (info.siblings.empty()) info.siblings = {c};
    out.push_back(info);
  }
  return out;
}

namespace {

Relation host_relation(const CpuInfo& a, const CpuInfo& b) {
  if (a.package == b.package && a.die == b.die && a.core == b.core) return Relation::Smt;
  if (a.package == b.package && a.die == b.die) return Relation::SameDie;
  if (a.package == b.package) return Relation::SameSocket;
  return Relation::OtherSocket;
}

}  // namespace

Relation model_relation(int a, int b, const ModelTopology& t) {
  const bool adjacent = t.numbering == "smt-adjacent";
  const machine::CpuPlace pa =
      machine::cpu_place(a, t.sockets, t.dies, t.cores, t.threads, adjacent);
  const machine::CpuPlace pb =
      machine::cpu_place(b, t.sockets, t.dies, t.cores, t.threads, adjacent);
  if (pa.socket == pb.socket && pa.die == pb.die && pa.core == pb.core) return Relation::Smt;
  if (pa.socket == pb.socket && pa.die == pb.die) return Relation::SameDie;
  if (pa.socket == pb.socket) return Relation::SameSocket;
  return Relation::OtherSocket;
}

ModelTopology infer_topology(const std::vector<CpuInfo>& cpus) {
  ModelTopology t;
  const int n = static_cast<int>(cpus.size());
  std::set<int> packages;
  std::map<int, std::set<int>> dies;                   // package -> dies
  std::map<std::pair<int, int>, std::set<int>> cores;  // (package, die) -> cores
  std::map<std::tuple<int, int, int>, int> threads;    // (package, die, core) -> cpus
  for (const auto& c : cpus) {
    packages.insert(c.package);
    dies[c.package].insert(c.die);
    cores[{c.package, c.die}].insert(c.core);
    ++threads[{c.package, c.die, c.core}];
  }
  t.sockets = static_cast<int>(packages.size());
  for (const auto& [p, d] : dies) t.dies = std::max(t.dies, static_cast<int>(d.size()));
  for (const auto& [k, c] : cores) t.cores = std::max(t.cores, static_cast<int>(c.size()));
  for (const auto& [k, c] : threads) t.threads = std::max(t.threads, c);
  if (t.sockets * t.dies * t.cores * t.threads != n) {
    t.note = fmt::format(
        "sysfs gives {} packages, up to {} dies per package, {} cores per die and {} threads per "
        "core, which do not multiply to the {} CPUs measured (offline or restricted CPUs, or a "
        "hybrid part): modelled as one die of {} cores; latency_matrix_ns keeps every measured "
        "pair",
        t.sockets, t.dies, t.cores, t.threads, n, n);
    t = ModelTopology{1, 1, n, 1, "linux", false, t.note};
    return t;
  }
  for (const char* numbering : {"linux", "smt-adjacent"}) {
    t.numbering = numbering;
    bool ok = true;
    for (int a = 0; a < n && ok; ++a)
      for (int b = a + 1; b < n && ok; ++b)
        ok = model_relation(a, b, t) ==
             host_relation(cpus[static_cast<std::size_t>(a)], cpus[static_cast<std::size_t>(b)]);
    if (ok) return t;
  }
  t.numbering = "linux";
  t.exact = false;
  t.note =
      "the host numbers its CPUs neither as the \"linux\" nor as the \"smt-adjacent\" scheme "
      "of cpu_models/README.md: \"linux\" is written, so pair classes may differ from the "
      "host's; latency_matrix_ns keeps every measured pair";
  return t;
}

const char* class_name(Relation r) {
  switch (r) {
    case Relation::Smt:
      return "smt";
    case Relation::SameDie:
      return "same_die";
    case Relation::SameSocket:
      return "same_socket";
    case Relation::OtherSocket:
      return "one_hop";
  }
  return "same_die";
}

}  // namespace semsim::calibrate
