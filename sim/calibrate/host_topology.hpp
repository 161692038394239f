// The host's CPUs as sysfs describes them, and the machine-file topology that
// reproduces them: sockets, dies, cores, threads and the numbering (one of the two
// of cpu_models/README.md, machine::cpu_place) under which every pair of CPUs has the
// relation sysfs gives it.
#pragma once

#include <set>
#include <string>
#include <vector>

namespace semsim::calibrate {

struct CpuInfo {
  int cpu = 0;  // host CPU number
  int package = 0;
  int die = 0;
  int core = 0;
  std::set<int> siblings;  // thread_siblings_list
};

// A sysfs CPU list, "0-3,8,10-11" -> {0, 1, 2, 3, 8, 10, 11} (unreadable parts left out).
std::set<int> parse_cpu_list(const std::string& text);

// /sys/devices/system/cpu/cpu<N>/topology/ of each of `cpus`.
std::vector<CpuInfo> read_cpus(const std::vector<int>& cpus);

enum class Relation { Smt, SameDie, SameSocket, OtherSocket };

struct ModelTopology {
  int sockets = 1, dies = 1, cores = 1, threads = 1;
  std::string numbering = "linux";
  bool exact = true;  // the model's numbering reproduces every pair's relation
  std::string note;
};

ModelTopology infer_topology(const std::vector<CpuInfo>& cpus);
// The relation of model CPUs a and b under the topology's numbering.
Relation model_relation(int a, int b, const ModelTopology& t);
// The latency class a relation is written as ("smt", "same_die", ...).
const char* class_name(Relation r);

}  // namespace semsim::calibrate
