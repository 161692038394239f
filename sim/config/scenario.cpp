#include "config/scenario.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "config/json_fields.hpp"
#include "config/kernel_config.hpp"
#include "core/errors.hpp"
#include "ipc/sembuf.hpp"
#include "workloads/registry.hpp"

namespace semsim {

using config::as_choice;
using config::as_int;
using config::as_number;
using config::as_string;
using config::fail;

namespace {

constexpr int kMaxThreads = 4096;

const std::vector<std::string> kScenarioFields = {
    "name",      "machine", "kernel",  "workload",    "threads",   "duration_ms",
    "warmup_ms", "seed",    "repeats", "description", "precision", "start_order"};

constexpr int kMaxSops = ipc::kSemopmDefault;  // sops per call a scenario may ask for

int parse_sem_flags(const Json& v, const std::string& path) {
  if (v.is_string()) {
    const std::string text = v.get<std::string>();
    if (text.empty() || text == "0") return 0;
    if (text == "nowait") return ipc::kIpcNowait;
    if (text == "undo") return ipc::kSemUndo;
    if (text == "nowait|undo" || text == "undo|nowait") return ipc::kIpcNowait | ipc::kSemUndo;
    fail(path,
         fmt::format("unknown flags \"{}\"; allowed: 0, \"nowait\", \"undo\", \"nowait|undo\", "
                     "or the integers 0, 2048 (IPC_NOWAIT), 4096 (SEM_UNDO), 6144",
                     config::echo_text(text)));
  }
  const auto flags = as_int(v, path, 0, ipc::kIpcNowait | ipc::kSemUndo);
  if ((flags & ~static_cast<std::int64_t>(ipc::kIpcNowait | ipc::kSemUndo)) != 0)
    fail(path, fmt::format("must be 0, 2048 (IPC_NOWAIT), 4096 (SEM_UNDO) or 6144 (both), or "
                           "\"nowait\", \"undo\", \"nowait|undo\"; got {}",
                           config::echo(v)));
  return static_cast<int>(flags);
}

workloads::CustomScript parse_custom_script(const Json& t, const std::string& path, int nsems) {
  config::reject_unknown_keys(t, path, {"ops", "repeat", "process", "cpu"});
  workloads::CustomScript script;
  const Json& ops = config::require(t, path, "ops");
  if (!ops.is_array() || ops.empty())
    fail(path + ".ops",
         "must be a non-empty list of {\"sops\": [[num, op, flags], ...], "
         "\"think_ns\": N}");
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const std::string op_path = fmt::format("{}.ops[{}]", path, i);
    const Json& o = ops[i];
    config::reject_unknown_keys(o, op_path, {"sops", "setval", "set", "think_ns"});
    workloads::CustomOp op;
    if (o.contains("setval") == o.contains("sops"))
      fail(op_path,
           "needs either \"sops\": [[num, op, flags], ...] (a semop) or \"setval\": "
           "[num, value] (a semctl SETVAL), not both");
    if (o.contains("setval")) {
      const Json& sv = o["setval"];
      const std::string sp = op_path + ".setval";
      if (!sv.is_array() || sv.size() != 2)
        fail(sp, "must be [num, value]: the semaphore number and the value semctl(SETVAL) sets");
      op.setval_sem = static_cast<int>(as_int(sv[0], sp + "[0] (num)", 0, nsems - 1));
      op.setval_value = static_cast<int>(as_int(sv[1], sp + "[1] (value)", 0, ipc::kSemvmx));
    } else {
      const Json& sops = o["sops"];
      if (!sops.is_array() || sops.empty() || sops.size() > static_cast<std::size_t>(kMaxSops))
        fail(op_path + ".sops",
             fmt::format("must be a list of 1 to {} (SEMOPM) operations [num, op, flags]",
                         kMaxSops));
      for (std::size_t k = 0; k < sops.size(); ++k) {
        const std::string sp = fmt::format("{}.sops[{}]", op_path, k);
        const Json& b = sops[k];
        if (!b.is_array() || b.size() < 2 || b.size() > 3)
          fail(sp,
               "must be [num, op] or [num, op, flags]: semaphore number, value to add "
               "(negative: take, 0: wait for zero), flags");
        ipc::Sembuf sb;
        sb.sem_num = static_cast<int>(as_int(b[0], sp + "[0] (num)", 0, nsems - 1));
        sb.sem_op = static_cast<int>(as_int(b[1], sp + "[1] (op)", -ipc::kSemvmx, ipc::kSemvmx));
        sb.sem_flg = b.size() == 3 ? parse_sem_flags(b[2], sp + "[2] (flags)") : 0;
        op.sops.push_back(sb);
      }
    }
    // The set's range is the workload's check (workload.sets is read by then).
    if (o.contains("set")) op.set = static_cast<int>(as_int(o["set"], op_path + ".set", 0, 127));
    if (o.contains("think_ns"))
      op.think_ns = as_int(o["think_ns"], op_path + ".think_ns", 0, 1'000'000'000'000LL);
    script.ops.push_back(std::move(op));
  }
  if (t.contains("repeat"))
    script.repeat = as_int(t["repeat"], path + ".repeat", 0, 1'000'000'000'000LL);
  if (t.contains("process")) {
    const Json& pr = t["process"];
    if (pr.is_string() && pr.get<std::string>() == "own")
      script.process = -1;
    else if (pr.is_string())
      fail(path + ".process", fmt::format("must be an integer id >= 0 (tasks with the same id are "
                                          "threads of one process) or \"own\", got {}",
                                          config::echo(pr)));
    else
      script.process = static_cast<int>(as_int(pr, path + ".process", 0, 1'000'000));
  }
  if (t.contains("cpu")) script.cpu = static_cast<int>(as_int(t["cpu"], path + ".cpu", 0, 4095));
  return script;
}

// custom's `initial`: one value for every semaphore, or a list of one per semaphore.
std::vector<int> parse_initial_values(const Json& init, int nsems) {
  std::vector<int> out;
  if (init.is_array()) {
    if (init.size() != static_cast<std::size_t>(nsems))
      fail("workload.initial",
           fmt::format("must have one value per semaphore ({}), got {}", nsems, init.size()));
    for (std::size_t i = 0; i < init.size(); ++i)
      out.push_back(static_cast<int>(
          as_int(init[i], fmt::format("workload.initial[{}]", i), 0, ipc::kSemvmx)));
  } else {
    const int v = static_cast<int>(as_int(init, "workload.initial", 0, ipc::kSemvmx));
    out.assign(static_cast<std::size_t>(nsems), v);
  }
  return out;
}

std::vector<workloads::CustomScript> parse_task_scripts(const Json& tasks, int nsems) {
  if (!tasks.is_array() || tasks.empty() || tasks.size() > static_cast<std::size_t>(kMaxThreads))
    fail("workload.tasks", fmt::format("must be a list of 1 to {} task scripts {{\"ops\": [...], "
                                       "\"repeat\": N, \"process\": id, \"cpu\": c}}",
                                       kMaxThreads));
  std::vector<workloads::CustomScript> out;
  for (std::size_t i = 0; i < tasks.size(); ++i)
    out.push_back(parse_custom_script(tasks[i], fmt::format("workload.tasks[{}]", i), nsems));
  return out;
}

// One field of a workload object, as its registry entry describes it.
void read_field(const Json& w, const workloads::ParamField& f, WorkloadSpec& spec) {
  using Kind = workloads::ParamField::Kind;
  const std::string path = "workload." + f.key;
  if (!w.contains(f.key)) {
    if (f.required) config::require(w, "workload", f.key);
    return;
  }
  const Json& v = w[f.key];
  switch (f.kind) {
    case Kind::Int:
      f.set_int(spec, as_int(v, path, f.lo, f.hi));
      break;
    case Kind::IntChoice: {
      // Compared as the integer it is: 4294967297 is not 1.
      bool ok = false;
      if (v.is_number_integer() && !v.is_boolean())
        for (const auto c : f.int_choices) ok = ok || v == Json(c);
      if (!ok) fail(path, fmt::format("must be {}, got {}", f.choices_text, config::echo(v)));
      f.set_int(spec, v.get<std::int64_t>());
      break;
    }
    case Kind::Choice:
      f.set_text(spec, as_choice(v, path, f.choices));
      break;
    case Kind::InitialValues:
      f.set_values(spec, parse_initial_values(v, spec.semaphores));
      break;
    case Kind::TaskScripts:
      f.set_scripts(spec, parse_task_scripts(v, spec.semaphores));
      break;
  }
}

std::vector<std::string> workload_types_list() {
  std::vector<std::string> types;
  for (const auto& t : workloads::workload_types()) types.push_back(t.type);
  return types;
}

WorkloadSpec parse_workload(const Json& w) {
  const std::string path = "workload";
  if (!w.is_object()) fail(path, "must be an object such as {\"type\": \"semop-multi\", ...}");
  WorkloadSpec spec;
  spec.type = as_choice(config::require(w, path, "type"), "workload.type", workload_types_list());
  const workloads::WorkloadType& entry = *workloads::find_workload_type(spec.type);
  std::vector<std::string> keys = {"type"};
  for (const auto& f : entry.fields) keys.push_back(f.key);
  keys.push_back("pin");
  config::reject_unknown_keys(w, path, keys);
  spec.pin = entry.default_pin;
  for (const auto& f : entry.fields) read_field(w, f, spec);
  if (const auto problem = entry.make(spec)->check()) fail(problem->field, problem->what);
  if (w.contains("pin")) {
    const auto pin = as_choice(w["pin"], "workload.pin",
                               {"pinned", "unpinned", "compact", "spread", "cores-first"});
    spec.pin = pin == "pinned"        ? Pinning::Pinned
               : pin == "compact"     ? Pinning::Compact
               : pin == "spread"      ? Pinning::Spread
               : pin == "cores-first" ? Pinning::CoresFirst
                                      : Pinning::Unpinned;
    if (spec.pin != Pinning::Pinned && spec.pin != Pinning::Unpinned &&
        spec.type != "lock-stress" && spec.type != "locktorture")
      fail("workload.pin",
           "compact, spread and cores-first are lock-stress and locktorture placements; " +
               spec.type + " allows pinned or unpinned");
  }
  return spec;
}

// Constraints between the workload and the thread counts.
void check_threads_for_workload(const WorkloadSpec& w, const std::vector<int>& threads) {
  const auto workload = workloads::make_workload(w);
  for (std::size_t i = 0; i < threads.size(); ++i) {
    const std::string problem = workload->check_threads(threads[i]);
    if (!problem.empty()) fail(fmt::format("threads[{}]", i), problem);
  }
}

std::vector<int> parse_threads(const Json& v) {
  std::vector<int> out;
  if (v.is_array()) {
    if (v.empty()) fail("threads", "must be a positive integer or a non-empty list of them");
    for (std::size_t i = 0; i < v.size(); ++i)
      out.push_back(static_cast<int>(as_int(v[i], fmt::format("threads[{}]", i), 1, kMaxThreads)));
  } else {
    out.push_back(static_cast<int>(as_int(v, "threads", 1, kMaxThreads)));
  }
  return out;
}

}  // namespace

const std::vector<std::string>& known_workloads() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& t : workloads::workload_types()) n.push_back(t.type + "\t" + t.description);
    return n;
  }();
  return names;
}

Json load_json_file(const std::string& path) {
  using config::echo_text;
  using config::kMaxJsonFileBytes;
  if (path.empty()) throw InputError("file path: must not be empty");
  if (path.size() > 4096) throw InputError("file path: longer than 4096 characters");
  if (path.find('\0') != std::string::npos)
    throw InputError("file path: contains a NUL byte, which no file name can hold");
  // O_NONBLOCK: opening a FIFO must not wait for a writer; only regular files are read.
  const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    throw InputError(fmt::format("{}: cannot open file ({})", echo_text(path, 512),
                                 err == ENOENT ? "missing" : std::strerror(err)));
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    throw InputError(
        fmt::format("{}: not a regular file (a directory, device or FIFO); give a "
                    "JSON file",
                    echo_text(path, 512)));
  }
  if (st.st_size > kMaxJsonFileBytes) {
    close(fd);
    throw InputError(
        fmt::format("{}: {} bytes, more than the {} MiB a scenario or machine file "
                    "may have",
                    echo_text(path, 512), st.st_size, kMaxJsonFileBytes >> 20));
  }
  std::string text;
  char buf[65536];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      close(fd);
      throw InputError(
          fmt::format("{}: cannot read file ({})", echo_text(path, 512), std::strerror(err)));
    }
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (static_cast<long>(text.size()) > kMaxJsonFileBytes) {  // grew while we read
      close(fd);
      throw InputError(fmt::format("{}: more than the {} MiB a scenario or machine file may have",
                                   echo_text(path, 512), kMaxJsonFileBytes >> 20));
    }
  }
  close(fd);
  return config::parse_json_text(text, echo_text(path, 512));
}

namespace {
// nlohmann's own check (the one dump() applies): overlong forms and surrogates are
// refused too.
bool valid_utf8(const std::string& s) {
  try {
    (void)Json(s).dump();
    return true;
  } catch (const Json::type_error&) {
    return false;
  }
}
}  // namespace

void apply_override(Json& doc, const std::string& assignment) {
  using config::echo_text;
  auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError(
        fmt::format("--set {}: expected KEY=VALUE with KEY a dotted field path, e.g. "
                    "workload.semaphores=64",
                    echo_text(assignment)));
  std::string key = assignment.substr(0, eq);
  std::string text = assignment.substr(eq + 1);
  if (!valid_utf8(key)) throw InputError("--set: the key is not valid UTF-8");
  if (!valid_utf8(text))
    throw InputError(fmt::format("--set {}: the value is not valid UTF-8", echo_text(key)));
  // A value that starts like a JSON object, list or string must be valid JSON: "{bad" is
  // a mistake, not the kernel id "{bad". Other text that is not JSON is a plain string.
  const auto first = text.find_first_not_of(" \t\r\n");
  const bool json_like = first != std::string::npos &&
                         (text[first] == '{' || text[first] == '[' || text[first] == '"');
  Json value;
  if (json_like) {
    value = config::parse_json_text(text, "--set " + echo_text(key));
  } else {
    try {
      value = Json::parse(text);
    } catch (const Json::parse_error&) {
      value = text;  // not JSON: a plain string such as a kernel id
    } catch (const Json::exception&) {
      throw InputError(
          fmt::format("--set {}: the number {} is out of range (beyond a double, "
                      "about 1.8e308)",
                      echo_text(key), echo_text(text)));
    }
  }
  if (!doc.is_object()) throw InputError("scenario: must be a JSON object");
  Json* node = &doc;
  std::size_t start = 0;
  while (true) {
    auto dot = key.find('.', start);
    std::string part =
        key.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (part.empty())
      throw InputError(fmt::format("--set {}: empty field name in the key", echo_text(key)));
    if (dot == std::string::npos) {
      (*node)[part] = value;
      return;
    }
    Json& child = (*node)[part];
    if (child.is_null()) child = Json::object();
    if (!child.is_object())
      throw InputError(fmt::format("--set {}: {} is not an object, cannot set a field inside it",
                                   echo_text(key), echo_text(key.substr(0, dot))));
    node = &child;
    start = dot + 1;
  }
}

Scenario parse_scenario(const Json& doc) {
  if (!doc.is_object()) throw InputError("scenario: must be a JSON object");
  config::reject_unknown_keys(doc, "", kScenarioFields);
  Scenario s;
  s.name = doc.contains("name") ? as_string(doc["name"], "name") : "scenario";
  if (s.name.empty()) fail("name", "must not be empty (leave the field out for \"scenario\")");
  if (s.name.size() > 255)
    fail("name",
         fmt::format("at most 255 characters (it names output files), got {}", s.name.size()));
  s.machine = as_string(config::require(doc, "", "machine"), "machine");
  if (s.machine.empty())
    fail("machine", "must name a preset (see `semsim list`) or a machine file");
  if (s.machine.size() > 4096) fail("machine", "a name or path of at most 4096 characters");
  s.kernel = config::parse_kernel(config::require(doc, "", "kernel"));
  s.workload = parse_workload(config::require(doc, "", "workload"));
  s.threads = parse_threads(config::require(doc, "", "threads"));
  check_threads_for_workload(s.workload, s.threads);
  if (doc.contains("duration_ms"))
    s.duration_ms = as_number(doc["duration_ms"], "duration_ms", 0, true);
  if (doc.contains("warmup_ms")) s.warmup_ms = as_number(doc["warmup_ms"], "warmup_ms", 0, false);
  if (doc.contains("seed"))
    s.seed = static_cast<std::uint64_t>(as_int(doc["seed"], "seed", 0, (1LL << 53)));
  if (doc.contains("repeats"))
    s.repeats = static_cast<int>(as_int(doc["repeats"], "repeats", 1, 1000));
  if (doc.contains("description")) as_string(doc["description"], "description");
  if (doc.contains("precision")) {
    const Json& p = doc["precision"];
    if (!p.is_number() || p.is_boolean() || !(p.get<double>() >= 0 && p.get<double>() < 1))
      fail("precision",
           fmt::format("must be a relative half-width > 0 and < 1 (e.g. 0.01 for 1 %), or 0 to "
                       "run the full duration; got {}",
                       p.dump()));
    s.precision = p.get<double>();
  }
  if (doc.contains("start_order")) {
    const Json& o = doc["start_order"];
    const std::string v = o.is_string() ? o.get<std::string>() : std::string();
    if (v == "spawn")
      s.start_order = StartOrder::Spawn;
    else if (v == "shuffled")
      s.start_order = StartOrder::Shuffled;
    else
      fail("start_order", fmt::format("must be \"spawn\" or \"shuffled\"; got {}", o.dump()));
  }
  if (s.duration_ms + s.warmup_ms > 3.6e6)
    fail("duration_ms", "warmup_ms + duration_ms must be at most one hour");
  s.raw = doc;
  return s;
}

}  // namespace semsim
