#include "calibrate/host_facts.hpp"

#include <sys/klog.h>
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "calibrate/host_topology.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace semsim::calibrate {

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) {
        auto v = line.substr(colon + 1);
        v.erase(0, v.find_first_not_of(' '));
        return v;
      }
    }
  }
  return "unknown CPU";
}

double cpuinfo_mhz() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("cpu MHz", 0) == 0) {
      const auto colon = line.find(':');
      try {
        return std::stod(line.substr(colon + 1));
      } catch (const std::exception&) {
        return 0;
      }
    }
  }
  return 0;
}

std::string utc_now() {
  const time_t now = time(nullptr);
  struct tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

namespace {

// The CPUs the kernel could bring up (/sys/devices/system/cpu/possible, "0-1,4"): how many.
int possible_cpus() {
  std::ifstream in("/sys/devices/system/cpu/possible");
  std::string text;
  if (!std::getline(in, text)) return 0;
  return static_cast<int>(parse_cpu_list(text).size());
}

bool kallsyms_has(const std::string& symbol) {
  std::ifstream in("/proc/kallsyms");
  std::string line;
  while (std::getline(in, line)) {
    const auto space = line.rfind(' ');
    if (space != std::string::npos && line.compare(space + 1, std::string::npos, symbol) == 0)
      return true;
  }
  return false;
}

// The boot message of the hypervisor's spinlock setup in the kernel log ("kvm-guest: PV
// spinlocks enabled", "xen: PV spinlocks disabled", Hyper-V's "PV spinlocks enabled"),
// where the log can be read (dmesg_restrict) and still holds it: 1 enabled, 0 disabled,
// -1 not found; `line` gets the message.
int kernel_log_pv_spinlocks(std::string& line) {
  constexpr int kReadAll = 3, kSizeBuffer = 10;  // SYSLOG_ACTION_READ_ALL, _SIZE_BUFFER
  const int size = klogctl(kSizeBuffer, nullptr, 0);
  if (size <= 0) return -1;
  std::string log(static_cast<std::size_t>(size), '\0');
  const int n = klogctl(kReadAll, log.data(), size);
  if (n <= 0) return -1;
  log.resize(static_cast<std::size_t>(n));
  std::istringstream lines(log);
  for (std::string l; std::getline(lines, l);) {
    const bool on = l.find("PV spinlocks enabled") != std::string::npos;
    if (on || l.find("PV spinlocks disabled") != std::string::npos) {
      // Without the "<6>" priority and the "[    0.103016] " time stamp.
      const auto stamp = l.find("] ");
      const auto text = stamp != std::string::npos ? stamp + 2 : l.find('>') + 1;
      line = l.substr(text);
      return on ? 1 : 0;
    }
  }
  return -1;
}

}  // namespace

std::vector<std::string> kernel_cmdline() {
  std::vector<std::string> out;
  std::ifstream in("/proc/cmdline");
  for (std::string opt; in >> opt && opt != "--";) out.push_back(opt);
  return out;
}

PvSpinlocks pv_spinlocks() {
  PvSpinlocks out;
  // The kernel's own word first: it covers Xen and Hyper-V guests too.
  std::string line;
  if (const int said = kernel_log_pv_spinlocks(line); said >= 0) {
    out.enabled = said == 1;
    out.evidence = "the kernel log says \"" + line +
                   "\": " + (out.enabled ? "paravirt" : "native") + " spinlocks";
    return out;
  }
#if defined(__x86_64__) || defined(__i386__)
  std::uint32_t base = 0;
  for (std::uint32_t leaf = 0x40000000; leaf < 0x40010000; leaf += 0x100) {
    unsigned a = 0, b = 0, c = 0, d = 0;
    __cpuid(leaf, a, b, c, d);
    char sig[13] = {};
    std::memcpy(sig, &b, 4);
    std::memcpy(sig + 4, &c, 4);
    std::memcpy(sig + 8, &d, 4);
    if (std::strcmp(sig, "KVMKVMKVM") == 0) {
      base = leaf;
      break;
    }
  }
  if (base == 0) {
    out.evidence =
        "the kernel log does not say (not readable, or its boot messages are gone) and this is "
        "not a KVM guest (no KVMKVMKVM CPUID leaf; Xen's and Hyper-V's paravirt spinlocks are "
        "only seen in the log): taken as native spinlocks";
    return out;
  }
  unsigned a = 0, b = 0, c = 0, d = 0;
  __cpuid(base + 1, a, b, c, d);
  const bool kick = (a & (1u << 7)) != 0;      // KVM_FEATURE_PV_UNLOCK_KICK
  const bool realtime = (d & (1u << 0)) != 0;  // KVM_HINTS_REALTIME
  const int cpus = possible_cpus();
  const std::vector<std::string> options = kernel_cmdline();
  const bool off = std::find_if(options.begin(), options.end(), [](const std::string& o) {
                     return o == "nopvspin" || o == "nopv";
                   }) != options.end();
  const bool built = kallsyms_has("__pv_queued_spin_lock_slowpath");
  out.enabled = kick && !realtime && cpus > 1 && !off && built;
  std::ostringstream e;
  e << "the kernel log does not say; a KVM guest (CPUID 0x" << std::hex << base << std::dec
    << "): PV_UNLOCK_KICK " << (kick ? "offered" : "not offered") << ", REALTIME hint "
    << (realtime ? "set" : "not set") << ", " << cpus << " possible CPUs, "
    << (off ? "nopvspin/nopv on" : "no nopvspin/nopv") << " on the command line, /proc/kallsyms "
    << (built ? "has" : "lacks")
    << " __pv_queued_spin_lock_slowpath: " << (out.enabled ? "paravirt" : "native")
    << " spinlocks (kvm_spinlock_init())";
  out.evidence = e.str();
#else
  out.evidence = "the kernel log does not say, and this is not x86: taken as native spinlocks";
#endif
  return out;
}

}  // namespace semsim::calibrate
