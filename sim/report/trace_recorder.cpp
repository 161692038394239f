#include "report/trace_recorder.hpp"

#include <algorithm>

#include "machine/scheduler.hpp"
#include "machine/task.hpp"

namespace semsim::report {

void TraceRecorder::name_lock(const void* key, std::string name) {
  lock_ids_[key] = static_cast<int>(lock_names_.size());
  lock_names_.push_back(std::move(name));
}

bool TraceRecorder::count() {
  if (overflowed_) return false;
  if (++events_ > limit_) {
    overflowed_ = true;
    return false;
  }
  return true;
}

void TraceRecorder::close(int task, const Open& s) {
  if (s.func < 0 || !in_window(s.start, s.end) || !count()) return;
  cpu_.cpu.push_back(s.cpu);
  cpu_.task.push_back(task);
  cpu_.func.push_back(s.func);
  cpu_.start.push_back(std::max(s.start, from_));
  cpu_.end.push_back(std::min(s.end, to_));
}

void TraceRecorder::cpu_time(const machine::Task& task, machine::Func f, Tick at, Tick d) {
  if (d <= 0) return;
  const auto id = static_cast<std::size_t>(task.id);
  if (open_.size() <= id) open_.resize(id + 1);
  Open& s = open_[id];
  const int func = static_cast<int>(f);
  if (s.func == func && s.cpu == task.cpu && s.end == at) {
    s.end = at + d;
    return;
  }
  close(task.id, s);
  s = {task.cpu, func, at, at + d};
}

void TraceRecorder::cut_cpu_time(const machine::Task& task, Tick end) {
  const auto id = static_cast<std::size_t>(task.id);
  if (id < open_.size() && open_[id].func >= 0) open_[id].end = std::min(open_[id].end, end);
}

void TraceRecorder::lock_held(const void* lock, const machine::Task& holder, Tick from, Tick to,
                              bool read) {
  auto it = lock_ids_.find(lock);
  if (it == lock_ids_.end() || !in_window(from, to) || !count()) return;
  lock_.lock.push_back(it->second);
  lock_.task.push_back(holder.id);
  lock_.kind.push_back(0);
  lock_.from_task.push_back(-1);
  lock_.read.push_back(read ? 1 : 0);
  lock_.start.push_back(std::max(from, from_));
  lock_.end.push_back(std::min(to, to_));
}

void TraceRecorder::lock_wait(const void* lock, const machine::Task& waiter, Tick from, Tick to,
                              const machine::Task* releaser, bool read) {
  auto it = lock_ids_.find(lock);
  if (it == lock_ids_.end() || !in_window(from, to) || !count()) return;
  lock_.lock.push_back(it->second);
  lock_.task.push_back(waiter.id);
  lock_.kind.push_back(1);
  lock_.from_task.push_back(releaser != nullptr ? releaser->id : -1);
  lock_.read.push_back(read ? 1 : 0);
  lock_.start.push_back(std::max(from, from_));
  lock_.end.push_back(std::min(to, to_));
}

void TraceRecorder::wake(const machine::Task& waker, const machine::Task& wakee, Tick at) {
  if (!in_window(at, at) || !count()) return;
  wake_.waker.push_back(waker.id);
  wake_.wakee.push_back(wakee.id);
  wake_.waker_cpu.push_back(waker.cpu);
  wake_.at.push_back(at);
}

void TraceRecorder::runqueues(const machine::Scheduler& sched, Tick at) {
  if (rq_last_.size() != static_cast<std::size_t>(sched.cpus()))
    rq_last_.assign(static_cast<std::size_t>(sched.cpus()), 0);
  for (int c = 0; c < sched.cpus(); ++c) {
    const int len = static_cast<int>(sched.cpu(c).runqueue.size());
    auto& last = rq_last_[static_cast<std::size_t>(c)];
    if (len == last) continue;
    last = len;
    if (!in_window(at, at) || !count()) continue;
    rq_.cpu.push_back(c);
    rq_.length.push_back(len);
    rq_.at.push_back(std::clamp(at, from_, to_));
  }
}

void TraceRecorder::finish() {
  for (std::size_t t = 0; t < open_.size(); ++t) {
    close(static_cast<int>(t), open_[t]);
    open_[t] = {};
  }
}

Json TraceRecorder::to_json(int cpus, int tasks) const {
  Json funcs = Json::array();
  for (int f = 0; f < machine::kFuncCount; ++f) {
    const auto func = static_cast<machine::Func>(f);
    funcs.push_back({{"name", machine::func_name(func)},
                     {"category", machine::category_name(machine::category_of(func))}});
  }
  Json out;
  out["window_ps"] = {from_, to_};
  out["cpus"] = cpus;
  out["tasks"] = tasks;
  out["events"] = events_;
  out["locks"] = lock_names_;
  out["funcs"] = funcs;
  out["cpu_slices"] = {{"cpu", cpu_.cpu},
                       {"task", cpu_.task},
                       {"func", cpu_.func},
                       {"start", cpu_.start},
                       {"end", cpu_.end}};
  std::vector<int> read(lock_.read.begin(), lock_.read.end());
  out["lock_slices"] = {{"lock", lock_.lock}, {"task", lock_.task},
                        {"kind", lock_.kind}, {"from_task", lock_.from_task},
                        {"read", read},       {"start", lock_.start},
                        {"end", lock_.end}};
  out["wakes"] = {{"waker", wake_.waker},
                  {"wakee", wake_.wakee},
                  {"waker_cpu", wake_.waker_cpu},
                  {"at", wake_.at}};
  out["runqueue"] = {{"cpu", rq_.cpu}, {"length", rq_.length}, {"at", rq_.at}};
  return out;
}

}  // namespace semsim::report
