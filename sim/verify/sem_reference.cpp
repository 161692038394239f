#include "verify/sem_reference.hpp"

#include <algorithm>
#include <cerrno>
#include <iterator>
#include <stdexcept>
#include <string>

#include "core/errors.hpp"
#include "ipc/semantics.hpp"

namespace semsim::ipc {

SemArrayModel::SemArrayModel(int nsems, int semopm) : semopm_(semopm) {
  if (nsems < 1 || nsems > kSemmslDefault) {
    throw InputError("nsems must be in [1, " + std::to_string(kSemmslDefault) + "], got " +
                     std::to_string(nsems));
  }
  if (semopm < 0) throw InputError("semopm must be >= 0, got " + std::to_string(semopm));
  const auto n = static_cast<std::size_t>(nsems);
  semval_.assign(n, 0);
  sempid_.assign(n, 0);
  sem_alter_.resize(n);
  sem_const_.resize(n);
}

void SemArrayModel::set_process(int task, int process) {
  if (task == process) {
    process_of_.erase(task);
  } else {
    process_of_[task] = process;
  }
}

int SemArrayModel::process_of(int task) const {
  const auto it = process_of_.find(task);
  return it == process_of_.end() ? task : it->second;
}

std::vector<int> SemArrayModel::sleeping_tasks() const {
  std::vector<int> tasks;
  tasks.reserve(sleepers_.size());
  for (const auto& entry : sleepers_) tasks.push_back(entry.first);
  return tasks;
}

const std::vector<int>* SemArrayModel::semadj(int process) const {
  const auto it = undo_.find(process);
  return it == undo_.end() ? nullptr : &it->second;
}

// ---------------------------------------------------------------------------
// Queues

SemArrayModel::Queue& SemArrayModel::queue_of(int semnum, bool alter) {
  if (semnum < 0) return alter ? global_alter_ : global_const_;
  const auto i = static_cast<std::size_t>(semnum);
  return alter ? sem_alter_[i] : sem_const_[i];
}

void SemArrayModel::enqueue(Sleeper& q, int semnum, bool alter) {
  q.queue_sem = semnum;
  q.queue_alter = alter;
  queue_of(semnum, alter).push_back(q.task);  // every queue is FIFO since 3.11
}

void SemArrayModel::unlink_queue(Sleeper& q) {
  Queue& queue = queue_of(q.queue_sem, q.queue_alter);
  const auto it = std::find(queue.begin(), queue.end(), q.task);
  if (it == queue.end()) throw SimulationError("SemArrayModel: sleeper not on its queue");
  queue.erase(it);
  if (q.sops.size() > 1) --complex_count_;
}

void SemArrayModel::wake(int task, int status) { woken_.push_back({task, status}); }

void SemArrayModel::end_sleep(int task, int status) {
  Sleeper& q = sleepers_.at(task);
  unlink_queue(q);
  sleepers_.erase(task);
  wake(task, status);
}

// When the first complex operation must sleep, every per-semaphore alter queue
// moves to the array's queue, so alter sleepers are served in one FIFO from
// then on. Each list goes to the FRONT of the array queue (a splice at the
// head), so the merged order is the last semaphore's sleepers first. Only the
// relative order of sleepers on one semaphore is observable: single-sop
// operations on different semaphores never compete.
void SemArrayModel::merge_queues() {
  for (std::size_t i = 0; i < sem_alter_.size(); ++i) {
    for (const int task : sem_alter_[i]) sleepers_.at(task).queue_sem = -1;
    global_alter_.splice(global_alter_.begin(), sem_alter_[i]);
  }
}

// sem_unlock(sma, -1): once no complex operation sleeps, the simple alter
// sleepers go back to their semaphores' queues, keeping their order.
void SemArrayModel::unmerge_queues() {
  if (complex_count_ != 0) return;
  for (const int task : global_alter_) {
    Sleeper& q = sleepers_.at(task);
    const int semnum = q.sops.front().sem_num;
    q.queue_sem = semnum;
    sem_alter_[static_cast<std::size_t>(semnum)].push_back(task);
  }
  global_alter_.clear();
}

void SemArrayModel::end_call() {
  // Every path that can leave complex_count at 0 ends with the array lock
  // dropped through sem_unlock(-1); a simple op holding only its semaphore's
  // lock can only run when nothing is merged. So unmerging after each call is
  // exact.
  unmerge_queues();
}

// ---------------------------------------------------------------------------
// Operations

int SemArrayModel::perform_for(int process, std::span<const Sembuf> sops, bool undo,
                               int* blocking) {
  std::span<int> adj;
  if (undo) adj = undo_.at(process);
  return perform_atomic_semop(semval_, sops, adj, blocking);
}

void SemArrayModel::set_sempid(std::span<const Sembuf> sops, int process) {
  for (const Sembuf& sop : sops) sempid_[static_cast<std::size_t>(sop.sem_num)] = process;
}

int SemArrayModel::perform(Sleeper& q) {
  // The waker performs the sleeper's operation on its behalf, with the
  // sleeper's undo list and pid.
  const int result = perform_for(q.process, q.sops, q.undo, &q.blocking);
  if (result == 0) set_sempid(q.sops, q.process);
  return result;
}

bool SemArrayModel::wake_const_ops(int semnum) {
  Queue& queue = queue_of(semnum, false);
  bool completed = false;
  for (auto it = queue.begin(); it != queue.end();) {
    const auto next = std::next(it);
    const int task = *it;
    Sleeper& q = sleepers_.at(task);
    const int error = perform(q);
    if (error > 0) {
      it = next;
      continue;
    }
    queue.erase(it);
    if (q.sops.size() > 1) --complex_count_;
    sleepers_.erase(task);
    wake(task, error);
    if (error == 0) completed = true;
    it = next;
  }
  return completed;
}

// sops empty: the changed semaphores are unknown (semctl, exit), check all.
bool SemArrayModel::do_smart_wakeup_zero(std::span<const Sembuf> sops) {
  bool completed = false;
  bool got_zero = false;
  if (!sops.empty()) {
    for (const Sembuf& sop : sops) {
      if (semval_[static_cast<std::size_t>(sop.sem_num)] == 0) {
        got_zero = true;
        completed |= wake_const_ops(sop.sem_num);
      }
    }
  } else {
    for (int i = 0; i < nsems(); ++i) {
      if (semval_[static_cast<std::size_t>(i)] == 0) {
        got_zero = true;
        completed |= wake_const_ops(i);
      }
    }
  }
  if (got_zero) completed |= wake_const_ops(-1);
  return completed;
}

bool SemArrayModel::update_queue(int semnum) {
  Queue& queue = queue_of(semnum, true);
  bool completed = false;
  auto it = queue.begin();
  while (it != queue.end()) {
    // A per-semaphore queue holds only single-sop decrements, none of which
    // can proceed once the value is 0.
    if (semnum >= 0 && semval_[static_cast<std::size_t>(semnum)] == 0) break;
    const auto next = std::next(it);
    const int task = *it;
    Sleeper& q = sleepers_.at(task);
    const int error = perform(q);
    if (error > 0) {
      it = next;
      continue;
    }
    queue.erase(it);
    if (q.sops.size() > 1) --complex_count_;
    bool restart = false;
    if (error == 0) {
      completed = true;
      // The wait-for-zero sleepers this operation released are queued for
      // wakeup before the operation's own sleeper.
      do_smart_wakeup_zero(q.sops);
      // check_restart(): a completed complex op, or any complex alter op still
      // sleeping, may have enabled an earlier entry: rescan from the head. A
      // completed simple decrement cannot help an older decrement.
      restart = !global_alter_.empty() || q.sops.size() > 1;
    }
    sleepers_.erase(task);
    wake(task, error);
    it = restart ? queue.begin() : next;
  }
  return completed;
}

void SemArrayModel::do_smart_update(std::span<const Sembuf> sops) {
  do_smart_wakeup_zero(sops);
  if (!global_alter_.empty()) {
    // The array uses the global queue: one FIFO over all alter sleepers.
    update_queue(-1);
  } else if (sops.empty()) {
    for (int i = 0; i < nsems(); ++i) update_queue(i);
  } else {
    // Only simple decrements sleep on per-semaphore queues, so only the
    // semaphores this operation increased can release anybody.
    for (const Sembuf& sop : sops) {
      if (sop.sem_op > 0) update_queue(sop.sem_num);
    }
  }
}

SemArrayModel::SemopOutcome SemArrayModel::semop(int task, std::span<const Sembuf> sops,
                                                 bool has_timeout) {
  if (sleeping(task)) {
    throw std::logic_error("SemArrayModel::semop: task " + std::to_string(task) +
                           " is sleeping in semop");
  }
  begin_call();
  // The checks in the kernel's order: nsops, the array lookup (a removed
  // array's id no longer resolves: EINVAL), the undo list allocation, then
  // sem_num against nsems.
  int error = check_semop_nsops(sops.size(), semopm_);
  if (error == 0 && removed_) error = -EINVAL;
  const int process = process_of(task);
  const bool undo = sops_undo(sops);
  if (error == 0 && undo) undo_.try_emplace(process, semval_.size(), 0);
  if (error == 0) error = check_semop_args(sops, nsems(), semopm_);
  if (error != 0) {
    end_call();
    return {SemopKind::kError, error};
  }

  const bool alter = sops_alter(sops);
  int blocking = 0;
  error = perform_for(process, sops, undo, &blocking);
  if (error == 0) {
    set_sempid(sops, process);
    if (alter) do_smart_update(sops);
    end_call();
    return {SemopKind::kDone, 0};
  }
  if (error < 0) {
    end_call();
    return {SemopKind::kError, error};
  }

  Sleeper& q = sleepers_[task];
  q.task = task;
  q.process = process;
  q.sops.assign(sops.begin(), sops.end());
  q.undo = undo;
  q.has_timeout = has_timeout;
  q.blocking = blocking;
  if (sops.size() == 1) {
    // A simple wait-for-zero always sleeps on its semaphore's const queue; a
    // simple decrement joins the array's alter queue while complex ops sleep.
    if (alter) {
      enqueue(q, complex_count_ != 0 ? -1 : sops.front().sem_num, true);
    } else {
      enqueue(q, sops.front().sem_num, false);
    }
  } else {
    if (complex_count_ == 0) merge_queues();
    enqueue(q, -1, alter);
    ++complex_count_;
  }
  end_call();
  return {SemopKind::kBlocked, 0};
}

// ---------------------------------------------------------------------------
// semctl

int SemArrayModel::setval(int semnum, int value, int caller_process) {
  begin_call();
  // The value is checked before the array is even looked up.
  if (value > kSemvmx || value < 0) return -ERANGE;
  if (removed_) return -EINVAL;
  if (semnum < 0 || semnum >= nsems()) return -EINVAL;
  const auto i = static_cast<std::size_t>(semnum);
  for (auto& entry : undo_) entry.second[i] = 0;
  semval_[i] = value;
  sempid_[i] = caller_process;
  do_smart_update({});
  end_call();
  return 0;
}

int SemArrayModel::setall(std::span<const int> values, int caller_process) {
  begin_call();
  if (removed_) return -EINVAL;
  if (values.size() != semval_.size()) {
    throw InputError("SETALL needs one value per semaphore (" + std::to_string(nsems()) +
                     "), got " + std::to_string(values.size()));
  }
  for (const int v : values) {
    if (v < 0 || v > kSemvmx) return -ERANGE;
  }
  std::copy(values.begin(), values.end(), semval_.begin());
  std::fill(sempid_.begin(), sempid_.end(), caller_process);
  for (auto& entry : undo_) std::fill(entry.second.begin(), entry.second.end(), 0);
  do_smart_update({});
  end_call();
  return 0;
}

int SemArrayModel::getval(int semnum) const {
  if (removed_ || semnum < 0 || semnum >= nsems()) return -EINVAL;
  return semval_[static_cast<std::size_t>(semnum)];
}

int SemArrayModel::getall(std::vector<int>* out) const {
  if (removed_) return -EINVAL;
  out->assign(semval_.begin(), semval_.end());
  return 0;
}

int SemArrayModel::getpid(int semnum) const {
  if (removed_ || semnum < 0 || semnum >= nsems()) return -EINVAL;
  return sempid_[static_cast<std::size_t>(semnum)];
}

// count_semcnt() since 3.16 (SUS): a sleeper counts only on the semaphore of
// the sop that blocked it at its last try, as a decrement (ncnt) or a
// wait-for-zero (zcnt).
int SemArrayModel::count_semcnt(int semnum, bool count_zero) const {
  const auto i = static_cast<std::size_t>(semnum);
  int count = static_cast<int>(count_zero ? sem_const_[i].size() : sem_alter_[i].size());
  const auto check_qop = [&](int task) {
    const Sleeper& q = sleepers_.at(task);
    const Sembuf& sop = q.sops[static_cast<std::size_t>(q.blocking)];
    if (sop.sem_num != semnum) return 0;
    return (count_zero ? sop.sem_op == 0 : sop.sem_op < 0) ? 1 : 0;
  };
  for (const int task : global_alter_) count += check_qop(task);
  if (count_zero) {
    for (const int task : global_const_) count += check_qop(task);
  }
  return count;
}

int SemArrayModel::getncnt(int semnum) const {
  if (removed_ || semnum < 0 || semnum >= nsems()) return -EINVAL;
  return count_semcnt(semnum, false);
}

int SemArrayModel::getzcnt(int semnum) const {
  if (removed_ || semnum < 0 || semnum >= nsems()) return -EINVAL;
  return count_semcnt(semnum, true);
}

// freeary(): the undo lists die first, then every sleeper fails with EIDRM,
// in list order: array const, array alter, then each semaphore's const and
// alter queues.
int SemArrayModel::rmid() {
  begin_call();
  if (removed_) return -EINVAL;
  undo_.clear();
  const auto drain = [&](Queue& queue) {
    while (!queue.empty()) {
      const int task = queue.front();
      Sleeper& q = sleepers_.at(task);
      queue.pop_front();
      if (q.sops.size() > 1) --complex_count_;
      sleepers_.erase(task);
      wake(task, -EIDRM);
    }
  };
  drain(global_const_);
  drain(global_alter_);
  for (std::size_t i = 0; i < semval_.size(); ++i) {
    drain(sem_const_[i]);
    drain(sem_alter_[i]);
  }
  removed_ = true;
  return 0;
}

// ---------------------------------------------------------------------------
// Ends of a sleep that are not wakeups

bool SemArrayModel::timeout(int task) {
  begin_call();
  const auto it = sleepers_.find(task);
  if (it == sleepers_.end()) return false;
  if (!it->second.has_timeout) {
    throw std::logic_error("SemArrayModel::timeout: task " + std::to_string(task) +
                           " sleeps without a timeout");
  }
  // The sleeper unlinks itself; removing a sleeper never releases another
  // one, so there is no wakeup scan.
  end_sleep(task, -EAGAIN);
  end_call();
  return true;
}

bool SemArrayModel::signal(int task) {
  begin_call();
  if (!sleeping(task)) return false;
  end_sleep(task, -EINTR);
  end_call();
  return true;
}

void SemArrayModel::exit_process(int process) {
  begin_call();
  // A dying process's sleeping threads are interrupted and unlink themselves
  // before exit_sem() runs (it runs when the last thread drops the undo list).
  std::vector<int> tasks;
  for (const auto& entry : sleepers_) {
    if (entry.second.process == process) tasks.push_back(entry.first);
  }
  for (const int task : tasks) end_sleep(task, -EINTR);

  const auto it = undo_.find(process);
  if (!removed_ && it != undo_.end()) {
    const std::vector<int> adj = std::move(it->second);
    undo_.erase(it);
    for (std::size_t i = 0; i < semval_.size(); ++i) {
      if (adj[i] == 0) continue;
      // Linux clamps the undone value to [0, SEMVMX] (SUS leaves it open).
      semval_[i] = std::clamp(semval_[i] + adj[i], 0, kSemvmx);
      sempid_[i] = process;
    }
    // Called even when every adjustment is 0: the changed semaphores are not
    // known, so all queues are checked.
    do_smart_update({});
  }
  end_call();
}

}  // namespace semsim::ipc
