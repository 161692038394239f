// Facts about the host the model's description and provenance name.
#pragma once

#include <string>
#include <vector>

namespace semsim::calibrate {

std::string cpu_model_name();  // /proc/cpuinfo "model name" of the first CPU
double cpuinfo_mhz();          // its "cpu MHz"; 0 when absent
std::string utc_now();         // ISO 8601, seconds
// The kernel's command-line options, up to a "--" (what follows it goes to init).
std::vector<std::string> kernel_cmdline();

// Whether the running kernel's spinlocks are paravirt qspinlocks, whose spin_unlock is
// a locked cmpxchg of the locked byte (__pv_queued_spin_unlock) instead of a store.
// The kernel log's boot message ("PV spinlocks enabled" / "disabled", printed by the
// KVM, Xen and Hyper-V guest setups) decides where it can be read; else the KVM facts:
// Linux enables them in kvm_spinlock_init() when it runs on KVM (a CPUID leaf
// 0x40000000 + k * 0x100 says "KVMKVMKVM"), the hypervisor offers PV_UNLOCK_KICK
// (that base + 1, EAX bit 7) without the REALTIME hint (EDX bit 0), more than one CPU
// is possible, and the command line has neither nopvspin nor nopv; the kernel must
// have been built with them (/proc/kallsyms lists __pv_queued_spin_lock_slowpath).
// `evidence` says what was found, for the parameter's source.
struct PvSpinlocks {
  bool enabled = false;
  std::string evidence;
};
PvSpinlocks pv_spinlocks();

}  // namespace semsim::calibrate
