// AIM9 `shared_memory` (AIM Independent Resource Benchmark Suite IX, s9110
// pipe_test.c) as a task program. Reference: ../shared/reference/benchmarks.md
// section 5; the size table below is the s9110 one (31 entries, mean 328 bytes).
//
// One PROCESS per task (threads = 1 is the AIM9 single-user run; more tasks are
// independent copies, as AIM7/re-aim run it), unpinned unless the scenario pins them.
// Each repeats the benchmark's call:
//     create a private 1-semaphore array; SETVAL 1
//     `loops` (100) times, with size = the next entry of the size table:
//         semop({0,-1,0}); memcpy(size) into the buffer; semop({0,+1,0})    "writer"
//         semop({0,-1,0}); memcpy(size) out of the buffer; semop({0,+1,0})  "reader"
//     remove the array
// Nothing ever sleeps: the semaphore is the process's own. Flags are 0 (SEM_UNDO is
// commented out in the original).
// Deviation, shared by both sides: the original also creates, attaches, detaches and
// removes a 2 KiB SysV shared memory segment per call; here the buffer is plain memory
// allocated once per task, so only the semaphore array is created and removed per call.
//
// Figures: ops_per_s counts the 4 semop() calls of a loop; shared_memory_ops_per_s is
// AIM9's own "Shared Memory Operations/second" (loops per second; AIM counts 100 per
// call).
#pragma once

#include <cstdint>

#include "workloads/step_def.hpp"

namespace semsim::workloads {

struct Aim9Params {
  int loops = 100;  // loops per call (AIM9: 100)
};

// s9110 pipe_test.c `sizes[]`, used as sizes[count++ % 31] (count persists across calls).
inline constexpr int kAim9Sizes[] = {1,  3,  5,  7,  16,  32,  64,  512,  1024, 2048, 1,
                                     3,  5,  7,  16, 32,  64,  512, 1024, 2048, 32,   32,
                                     32, 32, 32, 32, 512, 512, 512, 512,  512};
inline constexpr int kAim9SizeCount = static_cast<int>(sizeof(kAim9Sizes) / sizeof(int));
inline constexpr int kAim9MaxBlock = 2048;  // MAXBLK

class Aim9Program {
 public:
  explicit Aim9Program(const Aim9Params& p) : p_(p) {}

  bool next(Step& s) {
    s.clear();
    switch (stage_) {
      case Stage::Create:
        s.kind = StepKind::CreateArray;
        s.value = 1;
        stage_ = Stage::SetVal;
        return true;
      case Stage::SetVal:
        s.kind = StepKind::SetVal;
        s.sem = 0;
        s.value = 1;
        stage_ = Stage::Loop;
        loop_ = 0;
        call_in_loop_ = 0;
        return true;
      case Stage::Loop:
        break;
      case Stage::Remove:
        s.kind = StepKind::RemoveArray;
        stage_ = Stage::Create;
        return true;
    }
    // Four semops per loop: -1 (memcpy), +1, -1 (memcpy), +1.
    if (call_in_loop_ == 0) size_ = kAim9Sizes[count_++ % kAim9SizeCount];
    const bool down = call_in_loop_ % 2 == 0;
    op_ = ipc::Sembuf{0, down ? -1 : +1, 0};
    s.sops = &op_;
    s.nsops = 1;
    if (down) s.memcpy_bytes = size_;
    if (++call_in_loop_ == 4) {
      call_in_loop_ = 0;
      s.rounds = 1;
      if (++loop_ == p_.loops) stage_ = Stage::Remove;
    }
    return true;
  }

 private:
  enum class Stage { Create, SetVal, Loop, Remove };
  Aim9Params p_;
  Stage stage_ = Stage::Create;
  int loop_ = 0;
  int call_in_loop_ = 0;
  int size_ = 0;
  std::uint64_t count_ = 0;
  ipc::Sembuf op_{};
};

}  // namespace semsim::workloads
