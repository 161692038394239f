#include "config/kernel_config.hpp"

#include <fmt/format.h>

#include "config/json_fields.hpp"

namespace semsim::config {

namespace {

std::vector<std::string> generation_ids() {
  std::vector<std::string> ids;
  for (const auto& g : ipc::generations()) ids.push_back(g.id);
  return ids;
}

template <class Enum>
Enum pick(const Json& v, const std::string& path,
          const std::vector<std::pair<std::string, Enum>>& table) {
  std::vector<std::string> names;
  for (const auto& [name, value] : table) names.push_back(name);
  auto chosen = as_choice(v, path, names);
  for (const auto& [name, value] : table)
    if (name == chosen) return value;
  return table.front().second;
}

template <class Enum>
using Table = std::vector<std::pair<std::string, Enum>>;

// Each enum policy's names, one table for both directions (parse_kernel, policy_json).
const Table<ipc::SpinlockKind>& spinlock_table() {
  static const Table<ipc::SpinlockKind> t = {{"ticket", ipc::SpinlockKind::Ticket},
                                             {"queued", ipc::SpinlockKind::Queued},
                                             {"cna", ipc::SpinlockKind::Cna}};
  return t;
}
const Table<ipc::LockProtocol>& sem_lock_table() {
  static const Table<ipc::LockProtocol> t = {{"global_lock", ipc::LockProtocol::GlobalLock},
                                             {"rwlock", ipc::LockProtocol::RwLock},
                                             {"per_sem_lock", ipc::LockProtocol::PerSemLock},
                                             {"lock_all", ipc::LockProtocol::LockAll},
                                             {"wait_array", ipc::LockProtocol::WaitArray},
                                             {"complex_mode", ipc::LockProtocol::ComplexMode},
                                             {"hysteresis", ipc::LockProtocol::Hysteresis}};
  return t;
}
const Table<ipc::FastPathFence>& fence_table() {
  static const Table<ipc::FastPathFence> t = {{"none", ipc::FastPathFence::None},
                                              {"full", ipc::FastPathFence::Full},
                                              {"rmb", ipc::FastPathFence::ReadOnly}};
  return t;
}
const Table<ipc::SemLayout>& sem_layout_table() {
  static const Table<ipc::SemLayout> t = {{"packed24", ipc::SemLayout::Packed24},
                                          {"packed32", ipc::SemLayout::Packed32},
                                          {"unaligned48", ipc::SemLayout::Unaligned48},
                                          {"unaligned56", ipc::SemLayout::Unaligned56},
                                          {"aligned64", ipc::SemLayout::Aligned64}};
  return t;
}
const Table<ipc::ArrayLayoutKind>& array_layout_table() {
  static const Table<ipc::ArrayLayoutKind> t = {{"v3_9", ipc::ArrayLayoutKind::V3_9},
                                                {"v3_10_split", ipc::ArrayLayoutKind::V3_10Split},
                                                {"v3_11", ipc::ArrayLayoutKind::V3_11},
                                                {"v4_8", ipc::ArrayLayoutKind::V4_8},
                                                {"current", ipc::ArrayLayoutKind::Current}};
  return t;
}
const Table<ipc::OtimeLocation>& otime_table() {
  static const Table<ipc::OtimeLocation> t = {{"array", ipc::OtimeLocation::Array},
                                              {"per_sem", ipc::OtimeLocation::PerSem}};
  return t;
}
const Table<ipc::QueueScheme>& queues_table() {
  static const Table<ipc::QueueScheme> t = {{"global", ipc::QueueScheme::Global},
                                            {"one_list", ipc::QueueScheme::OneList},
                                            {"merged", ipc::QueueScheme::Merged}};
  return t;
}
const Table<ipc::WakeupDelivery>& wakeup_table() {
  static const Table<ipc::WakeupDelivery> t = {{"in_wakeup", ipc::WakeupDelivery::InWakeup},
                                               {"wake_q", ipc::WakeupDelivery::WakeQ}};
  return t;
}

template <class Enum>
const std::string& name_of(const Table<Enum>& table, Enum value) {
  for (const auto& [name, v] : table)
    if (v == value) return name;
  return table.front().first;  // every enumerator is in its table (KernelConfig.PolicyJson...)
}

// The allocation headers before struct sem_array, by name.
const std::vector<std::pair<std::string, int>>& header_table() {
  static const std::vector<std::pair<std::string, int>> t = {
      {"ipc_rcu16", 16},  // <= 3.9: ipc_rcu_alloc()'s HDRLEN_KMALLOC
      {"ipc_rcu24", 24},  // 3.10: struct ipc_rcu with an atomic refcount, unaligned
      {"ipc_rcu64", 64},  // 3.11-4.12: struct ipc_rcu ____cacheline_aligned_in_smp
      {"none", 0},        // 4.13+: rcu and refcount in kern_ipc_perm
  };
  return t;
}

const std::vector<std::string>& policy_keys() {
  static const std::vector<std::string> k = {"base",
                                             "spinlock",
                                             "sem_lock",
                                             "fence",
                                             "hysteresis",
                                             "sem_layout",
                                             "array_layout",
                                             "otime",
                                             "otime_all_ops",
                                             "queues",
                                             "missed_wakeup_fix",
                                             "wakeup",
                                             "blocking_store",
                                             "two_pass",
                                             "header",
                                             "header_bytes"};
  return k;
}

}  // namespace

ipc::KernelPolicy parse_kernel(const Json& kernel) {
  if (kernel.is_string()) {
    auto id = as_choice(kernel, "kernel", generation_ids());
    return *ipc::find_generation(id);
  }
  if (!kernel.is_object())
    fail("kernel", fmt::format("must be a generation id ({}) or an object {{\"base\": id, ...}}",
                               join(generation_ids())));
  reject_unknown_keys(kernel, "kernel", policy_keys());
  auto base = as_choice(require(kernel, "kernel", "base"), "kernel.base", generation_ids());
  ipc::KernelPolicy p = *ipc::find_generation(base);
  std::string id = base;
  for (const auto& [key, v] : kernel.items()) {
    if (key == "base") continue;
    const std::string path = "kernel." + key;
    id += fmt::format("+{}={}", key, v.is_string() ? v.get<std::string>() : v.dump());
    if (key == "spinlock") {
      p.spinlock = pick(v, path, spinlock_table());
    } else if (key == "sem_lock") {
      p.sem_lock = pick(v, path, sem_lock_table());
    } else if (key == "fence") {
      p.fence = pick(v, path, fence_table());
    } else if (key == "hysteresis") {
      p.hysteresis = static_cast<int>(as_int(v, path, 1, 1000000));
    } else if (key == "sem_layout") {
      p.sem_layout = pick(v, path, sem_layout_table());
    } else if (key == "array_layout") {
      p.array_layout = pick(v, path, array_layout_table());
    } else if (key == "otime") {
      p.otime = pick(v, path, otime_table());
    } else if (key == "otime_all_ops") {
      p.otime_all_ops = as_bool(v, path);
    } else if (key == "queues") {
      p.queues = pick(v, path, queues_table());
    } else if (key == "missed_wakeup_fix") {
      p.missed_wakeup_fix = as_bool(v, path);
    } else if (key == "blocking_store") {
      p.blocking_store = as_bool(v, path);
    } else if (key == "two_pass") {
      p.two_pass = as_bool(v, path);
    } else if (key == "wakeup") {
      p.wakeup = pick(v, path, wakeup_table());
    } else if (key == "header") {
      p.header_bytes = pick<int>(v, path, header_table());
    } else if (key == "header_bytes") {
      p.header_bytes = static_cast<int>(as_int(v, path, 0, 4096));
    }
  }
  if (kernel.contains("header") && kernel.contains("header_bytes"))
    fail("kernel.header_bytes", "give either header (a name) or header_bytes, not both");
  for (const auto& problem : ipc::check_policy(p)) fail("kernel." + problem.field, problem.what);
  p.id = id;
  return p;
}

Json policy_json(const ipc::KernelPolicy& p) {
  return Json{{"spinlock", name_of(spinlock_table(), p.spinlock)},
              {"sem_lock", name_of(sem_lock_table(), p.sem_lock)},
              {"fence", name_of(fence_table(), p.fence)},
              {"hysteresis", p.hysteresis},
              {"sem_layout", name_of(sem_layout_table(), p.sem_layout)},
              {"array_layout", name_of(array_layout_table(), p.array_layout)},
              {"otime", name_of(otime_table(), p.otime)},
              {"otime_all_ops", p.otime_all_ops},
              {"queues", name_of(queues_table(), p.queues)},
              {"missed_wakeup_fix", p.missed_wakeup_fix},
              {"blocking_store", p.blocking_store},
              {"two_pass", p.two_pass},
              {"wakeup", name_of(wakeup_table(), p.wakeup)},
              {"header_bytes", p.header_bytes}};
}

}  // namespace semsim::config
