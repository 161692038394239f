// A scenario's workload as the model sees it: the type and every workload's
// typed parameters, read and validated by sim/config (the only JSON reader).
// `type` says which parameter set applies; the others keep their defaults.
// What each type does with them is its Workload (registry.hpp).
#pragma once

#include <string>

#include "workloads/aim9_shm_def.hpp"
#include "workloads/custom_def.hpp"
#include "workloads/lock_stress_def.hpp"
#include "workloads/locktorture_def.hpp"
#include "workloads/sem_lockunlock_def.hpp"
#include "workloads/sem_scalebench_def.hpp"
#include "workloads/sembench_def.hpp"

namespace semsim {

// How tasks are placed on CPUs.
// Compact / Spread / CoresFirst: lock-stress and locktorture placements in topology order
// (machine/placement.hpp).
enum class Pinning { Pinned, Unpinned, Compact, Spread, CoresFirst };

struct WorkloadSpec {
  std::string type;                          // "semop-multi", "sem-scalebench", ... (registry.hpp)
  int semaphores = 1;                        // semop-multi, sem-lockunlock, custom: semaphores used
  std::string pattern = "stride";            // semop-multi: stride | own | random
  Pinning pin = Pinning::Pinned;             // the benchmark's own default unless workload.pin says
  workloads::ScalebenchParams scalebench;    // sem-scalebench
  workloads::LockunlockParams lockunlock;    // sem-lockunlock (semaphores mirrored above)
  workloads::Aim9Params aim9;                // aim9-shm
  workloads::SembenchParams sembench;        // sembench
  workloads::CustomParams custom;            // custom (semaphores mirrored above)
  workloads::LockStressParams lockstress;    // lock-stress
  workloads::LocktortureParams locktorture;  // locktorture
};

namespace workloads {
// The most semaphores one array may have (SEMMSL's default).
constexpr int kMaxSemaphores = 32000;
}  // namespace workloads

}  // namespace semsim
