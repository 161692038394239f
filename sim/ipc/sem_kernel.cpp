#include "ipc/sem_kernel.hpp"

#include <cerrno>

#include "ipc/semantics.hpp"

namespace semsim::ipc {

using machine::Access;
using machine::Func;
using machine::InFunc;
using machine::Task;

SemKernel::SemKernel(const KernelPolicy& policy, const machine::Topology& topo,
                     machine::Scheduler& sched, int nsems, std::uint64_t seed)
    : topo_(topo),
      sched_(sched),
      sma_(policy, layout_for(policy), topo, nsems, seed),
      gen_(make_generation(policy)) {
  gen_->newary(sma_);
}

SemKernel::TaskState& SemKernel::state_of(Task& t) {
  auto id = static_cast<std::size_t>(t.id);
  if (tasks_.size() <= id) tasks_.resize(id + 1);
  if (!tasks_[id]) tasks_[id] = std::make_unique<TaskState>();
  return *tasks_[id];
}

void SemKernel::read(Task& t, machine::CacheLine& line) {
  t.advance_to(line.access(topo_, t.cpu, Access::Read, t.cursor));
}
void SemKernel::write(Task& t, machine::CacheLine& line) {
  t.advance_to(line.access(topo_, t.cpu, Access::Write, t.cursor));
}
void SemKernel::rmw(Task& t, machine::CacheLine& line) {
  t.advance_to(line.access(topo_, t.cpu, Access::Rmw, t.cursor));
}
void SemKernel::fence(Task& t) { t.charge(topo_.params().full_fence); }

int SemKernel::semop(Task& t, std::span<const Sembuf> sops) {
  const auto& p = topo_.params();
  {
    InFunc in(t, Func::SyscallEntry);
    t.charge(p.syscall / 2);
  }
  int result = do_semtimedop(t, sops);
  {
    InFunc in(t, Func::SyscallEntry);
    t.charge(p.syscall - p.syscall / 2);
  }
  if (result == 0) ++t.semops;
  return result;
}

int SemKernel::do_semtimedop(Task& t, std::span<const Sembuf> sops) {
  InFunc body(t, Func::SysSemtimedop);
  // copy_from_user, the sops scan, security hooks: the lumped kernel path.
  t.charge(topo_.params().semop_kernel_path);
  if (int err = check_semop_nsops(sops.size(), kSemopmDefault); err != 0) return err;
  {
    // ipc_obtain_object_check(): the idr lookup and ipc_checkid() read the
    // header; the EFBIG check reads sem_nsems.
    InFunc in(t, Func::IpcObtain);
    read(t, sma_.line_at(sma_.layout.perm));
    read(t, sma_.line_at(sma_.layout.nsems));
    read(t, sma_.line_at(sma_.layout.security));
  }
  if (int err = check_semop_args(sops, sma_.nsems(), kSemopmDefault); err != 0) return err;

  const int locknum = gen_->sem_lock(*this, t, sops);
  if (sma_.layout.sem_base >= 0) {
    InFunc in(t, Func::PerformAtomic);
    read(t, sma_.line_at(sma_.layout.sem_base));
  }
  int error = perform_atomic_semop(t, sops);
  std::vector<SemQueue*> wake;
  if (error <= 0) {
    if (error == 0) {
      if (sops_alter(sops))
        do_smart_update(t, sops, wake);
      else if (sma_.policy.otime_all_ops)
        set_semotime(t, sops);
    }
    gen_->sem_unlock(*this, t, locknum);
    wake_up_sleepers(t, wake);
    return error;
  }

  // We need to sleep: queue a struct sem_queue on our stack and schedule().
  auto& st = state_of(t);
  SemQueue& q = st.queue;
  q.sleeper = &t;
  q.sops.assign(sops.begin(), sops.end());
  q.alter = sops_alter(sops);
  q.status = SemQueue::kPending;
  q.stack_line = &st.stack_line;
  write(t, st.stack_line);
  if (sops.size() == 1 && sma_.complex_count == 0) {
    auto n = static_cast<std::size_t>(sops[0].sem_num);
    (q.alter ? sma_.pending_alter[n] : sma_.pending_const[n]).push_back(&q);
    read(t, sma_.sem_line(sops[0].sem_num, sma_.layout.sem_pending));
  } else {
    (q.alter ? sma_.global_alter : sma_.global_const).push_back(&q);
    if (sops.size() > 1) ++sma_.complex_count;
    write(t, sma_.line_at(sma_.layout.pending));
  }
  gen_->sem_unlock(*this, t, locknum);
  sched_.block(t);
  // Woken: the waker completed our operation and stored the result in our
  // sem_queue (lock-free return path).
  read(t, st.stack_line);
  return q.status;
}

int SemKernel::perform_atomic_semop(Task& t, std::span<const Sembuf> sops) {
  InFunc in(t, Func::PerformAtomic);
  for (const auto& sop : sops) read(t, sma_.sem_line(sop.sem_num, 0));
  int result = ipc::perform_atomic_semop(sma_.semval, sops, {});
  if (result == 0) {
    for (const auto& sop : sops) {
      write(t, sma_.sem_line(sop.sem_num, 0));  // semval and sempid
      sma_.sempid[static_cast<std::size_t>(sop.sem_num)] = t.process;
    }
  }
  return result;
}

void SemKernel::set_semotime(Task& t, std::span<const Sembuf> sops) {
  InFunc in(t, Func::DoSmartUpdate);
  if (sma_.policy.otime == OtimeLocation::PerSem && sma_.layout.sem_otime >= 0)
    write(t, sma_.sem_line(sops[0].sem_num, sma_.layout.sem_otime));
  else if (sma_.layout.otime >= 0)
    write(t, sma_.line_at(sma_.layout.otime));
}

bool SemKernel::update_queue(Task& t, std::deque<SemQueue*>& queue, std::vector<SemQueue*>& wake) {
  bool progress = false;
  for (auto it = queue.begin(); it != queue.end();) {
    SemQueue* q = *it;
    read(t, *q->stack_line);  // the sleeper's sops live on its stack
    int error = ipc::perform_atomic_semop(sma_.semval, q->sops, {});
    if (error > 0) {
      ++it;
      continue;
    }
    if (error == 0)
      for (const auto& sop : q->sops) write(t, sma_.sem_line(sop.sem_num, 0));
    it = queue.erase(it);
    if (q->sops.size() > 1) --sma_.complex_count;
    q->status = error;
    write(t, *q->stack_line);  // wake_up_sem_queue_prepare(): the result, on the sleeper's stack
    wake.push_back(q);
    if (error == 0 && q->alter) progress = true;
  }
  return progress;
}

void SemKernel::do_smart_update(Task& t, std::span<const Sembuf> sops,
                                std::vector<SemQueue*>& wake) {
  InFunc in(t, Func::DoSmartUpdate);
  read(t, sma_.line_at(sma_.layout.pending));
  // Iterate to a fixed point: a completed operation can enable others (the
  // missed-wakeup fix of 3.10). Wait-for-zero sleepers are tried before alter
  // ones; complex sleepers live on the global queues.
  bool progress = true;
  bool scan_all = false;
  while (progress) {
    progress = false;
    if (!sma_.global_const.empty() || !sma_.global_alter.empty()) {
      progress |= update_queue(t, sma_.global_const, wake);
      if (update_queue(t, sma_.global_alter, wake)) progress = scan_all = true;
    }
    auto scan = [&](int n) {
      read(t, sma_.sem_line(n, sma_.layout.sem_pending));
      auto un = static_cast<std::size_t>(n);
      if (!sma_.pending_const[un].empty() && sma_.semval[un] == 0)
        progress |= update_queue(t, sma_.pending_const[un], wake);
      if (!sma_.pending_alter[un].empty() && update_queue(t, sma_.pending_alter[un], wake)) {
        progress = true;
        scan_all = true;
      }
    };
    if (scan_all) {
      for (int n = 0; n < sma_.nsems(); ++n) scan(n);
    } else {
      for (const auto& sop : sops) scan(sop.sem_num);
    }
  }
  set_semotime(t, sops);
}

void SemKernel::wake_up_sleepers(Task& t, std::vector<SemQueue*>& wake) {
  if (wake.empty()) return;
  InFunc in(t, Func::Wakeup);
  for (SemQueue* q : wake) {
    sched_.wake(t, *q->sleeper);
    // IN_WAKEUP (<= 4.9): the final status is stored after wake_up_process().
    if (sma_.policy.wakeup == WakeupDelivery::InWakeup) write(t, *q->stack_line);
  }
}

}  // namespace semsim::ipc
