// Records the trace events of one run inside a time window, for the Perfetto
// trace semsim run --trace writes (python/semsim/trace.py turns them into the
// protobuf). A bounded recorder: past `limit` events it stops recording and
// says so (overflowed()), so that a window too wide fails with a message
// instead of filling the memory.
//
// Slices are kept in picoseconds, clipped to the window; a task's consecutive
// charges to one function on one CPU are merged into one slice.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/json.hpp"
#include "report/trace_sink.hpp"

namespace semsim::report {

class TraceRecorder final : public TraceSink {
 public:
  TraceRecorder(Tick from, Tick to, std::uint64_t limit) : from_(from), to_(to), limit_(limit) {}

  // Names the lock at `key` (a Spinlock or RwLock); its events are dropped otherwise.
  void name_lock(const void* key, std::string name);

  void cpu_time(const machine::Task& task, machine::Func f, Tick at, Tick d) override;
  void cut_cpu_time(const machine::Task& task, Tick end) override;
  void lock_held(const void* lock, const machine::Task& holder, Tick from, Tick to,
                 bool read) override;
  void lock_wait(const void* lock, const machine::Task& waiter, Tick from, Tick to,
                 const machine::Task* releaser, bool read) override;
  void wake(const machine::Task& waker, const machine::Task& wakee, Tick at) override;
  void runqueues(const machine::Scheduler& sched, Tick at) override;

  // Closes the open slices (call once, after the run).
  void finish();
  bool overflowed() const { return overflowed_; }
  std::uint64_t events() const { return events_; }
  // Columnar JSON: {"window_ps", "locks", "funcs", "cpu_slices", "lock_slices", "wakes",
  // "runqueue"}: every array of one table has one entry per event.
  Json to_json(int cpus, int tasks) const;

 private:
  struct Open {
    int cpu = -1;
    int func = -1;
    Tick start = 0, end = 0;
  };
  bool in_window(Tick a, Tick b) const { return b >= from_ && a <= to_; }
  bool count();  // one more event; false once over the limit
  void close(int task, const Open& s);

  Tick from_, to_;
  std::uint64_t limit_, events_ = 0;
  bool overflowed_ = false;
  std::map<const void*, int>
      lock_ids_;  // key -> index in lock_names_ (lookup only; output by index)
  std::vector<std::string> lock_names_;
  std::vector<Open> open_;  // per task id
  struct {
    std::vector<int> cpu, task, func;
    std::vector<Tick> start, end;
  } cpu_;
  struct {
    std::vector<int> lock, task, kind, from_task;  // kind: 0 held, 1 waited
    std::vector<char> read;
    std::vector<Tick> start, end;
  } lock_;
  struct {
    std::vector<int> waker, wakee, waker_cpu;
    std::vector<Tick> at;
  } wake_;
  struct {
    std::vector<int> cpu, length;
    std::vector<Tick> at;
  } rq_;
  std::vector<int> rq_last_;  // per CPU: the last length recorded
};

}  // namespace semsim::report
