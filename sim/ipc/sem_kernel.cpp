#include "ipc/sem_kernel.hpp"

#include <algorithm>
#include <cerrno>
#include <limits>
#include <optional>
#include <string>

#include "core/errors.hpp"
#include "ipc/semantics.hpp"
#include "machine/store_buffer.hpp"

namespace semsim::ipc {

using machine::Func;
using machine::InFunc;
using machine::Task;

namespace {

constexpr Tick kNotFinal = std::numeric_limits<Tick>::max();  // IN_WAKEUP: result not stored yet

// How long a spinning reader waits before it looks again (spin_unlock_wait,
// get_queue_result): about one line transfer, the earliest it could see a change.
Tick poll_interval(const config::MachineParams& m) {
  for (Tick t : {m.lat_same_die, m.lat_same_socket, m.lat_smt, m.lat_one_hop, m.lat_two_hops})
    if (t > 0) return t;
  return std::max<Tick>(m.memory_latency, 1);
}

}  // namespace

const char* access_kind_name(AccessKind k) {
  switch (k) {
    case AccessKind::Read:
      return "R";
    case AccessKind::Write:
      return "W";
    case AccessKind::Rmw:
      return "A";
    case AccessKind::Fence:
      return "F";
    case AccessKind::ReadBarrier:
      return "rmb";
  }
  return "?";
}

SemKernel::SemKernel(const KernelPolicy& policy, const machine::Topology& topo,
                     machine::Scheduler& sched, int nsems, std::uint64_t seed)
    : topo_(topo),
      sched_(sched),
      sma_(policy, layout_for(policy), topo, nsems, seed),
      gen_(make_generation(policy)),
      queues_(make_queue_ops(policy)) {
  if (const auto problems = check_policy(policy); !problems.empty())
    throw InputError("kernel." + problems.front().field + ": " + problems.front().what);
  gen_->newary(*this);
  for (int f = 0; f < kPathFnCount; ++f)
    path_ticks_[static_cast<std::size_t>(f)] =
        path_ticks(topo_.params().semop_kernel_path, static_cast<PathFn>(f));
}

SemKernel::~SemKernel() = default;

void SemKernel::set_jitter(std::uint64_t seed, double probability, Tick max_delay, Tick min_delay) {
  jitter_rng_.reseed(seed);
  jitter_p_ = probability;
  jitter_min_ = std::max<Tick>(min_delay, 1);
  jitter_max_ = std::max<Tick>(max_delay, jitter_min_);
  precise_ = true;
}

SemKernel::TaskState& SemKernel::new_state_of(Task& t) {
  const auto id = static_cast<std::size_t>(t.id);
  if (tasks_.size() <= id) tasks_.resize(id + 1);
  if (!tasks_[id]) tasks_[id] = std::make_unique<TaskState>();
  return *tasks_[id];
}

// ---------------------------------------------------------------------------
// Memory accesses, barriers, locks

void SemKernel::trace(const Task& t, Field f, int sem, int line, AccessKind kind) {
  if (observer_ != nullptr) observer_->on_access(t, AccessEvent{f, sem, line, kind});
}

namespace {
machine::Access to_machine(AccessKind k) {
  switch (k) {
    case AccessKind::Write:
      return machine::Access::Write;
    case AccessKind::Rmw:
      return machine::Access::Rmw;
    default:
      return machine::Access::Read;
  }
}
}  // namespace

void SemKernel::read(Task& t, Field f, int sem) {
  const int off = sma_.offset_of(f, sem);
  if (off < 0) return;
  auto& st = state_of(t);
  if (st.loads_open)
    st.loads.load(topo_, t, sma_.line_at(off));  // end_loads() waits for it
  else
    machine::load(topo_, t, sma_.line_at(off), machine::Turn::Owe);
  trace(t, f, sem, ArrayLayout::line_of(off), AccessKind::Read);
}

void SemKernel::begin_loads(Task& t) { state_of(t).loads_open = true; }

void SemKernel::end_loads(Task& t) {
  auto& st = state_of(t);
  if (!st.loads_open) return;
  st.loads_open = false;
  st.loads.drain(t);
}

void SemKernel::write(Task& t, Field f, int sem) {
  const int off = sma_.offset_of(f, sem);
  if (off < 0) return;
  machine::store(topo_, t, sma_.line_at(off), machine::Turn::Owe);  // through the store buffer
  trace(t, f, sem, ArrayLayout::line_of(off), AccessKind::Write);
}

void SemKernel::rmw(Task& t, Field f, int sem) {
  const int off = sma_.offset_of(f, sem);
  if (off < 0) return;
  machine::rmw(topo_, t, sma_.line_at(off), machine::Turn::Owe);
  trace(t, f, sem, ArrayLayout::line_of(off), AccessKind::Rmw);
}

Tick SemKernel::access(Task& t, Field f, machine::CacheLine& line, AccessKind kind) {
  Tick visible = 0;
  switch (to_machine(kind)) {
    case machine::Access::Write:
      visible = machine::store(topo_, t, line, machine::Turn::Owe);
      break;
    case machine::Access::Rmw:
      machine::rmw(topo_, t, line, machine::Turn::Owe);
      visible = t.cursor;
      break;
    case machine::Access::Read:
      machine::load(topo_, t, line, machine::Turn::Owe);
      visible = t.cursor;
      break;
  }
  trace(t, f, -1, -1, kind);
  return visible;
}

void SemKernel::path(Task& t, PathFn f) {
  t.charge_private(path_ticks_[static_cast<std::size_t>(f)]);
  if (observer_ != nullptr) observer_->on_path(t, f);
}

void SemKernel::fence(Task& t) {
  machine::full_fence(topo_, t);  // waits for the store buffer, then smp_mb() itself
  trace(t, Field::Barrier, -1, -1, AccessKind::Fence);
}

void SemKernel::rmb(Task& t) { trace(t, Field::Barrier, -1, -1, AccessKind::ReadBarrier); }

void SemKernel::fast_path_fence(Task& t) {
  switch (sma_.policy.fence) {
    case FastPathFence::Full:
      fence(t);
      break;
    case FastPathFence::ReadOnly:
      rmb(t);
      break;
    case FastPathFence::None:
      break;
  }
}

machine::Spinlock& SemKernel::lock_of(int n) {
  return n < 0 ? *sma_.array_lock : *sma_.sem_locks[static_cast<std::size_t>(n)];
}

void SemKernel::sched_point(Task& t, const char* point) {
  if (!precise_) return;
  if (hook_) t.charge(std::max<Tick>(hook_(t, point), 0));
  if (jitter_p_ > 0 && jitter_rng_.uniform() < jitter_p_) {
    // Log-uniform in [min, max]: a scale 2^k, then uniform within it, so that
    // windows of a few ns and of microseconds are opened alike.
    const auto log2 = [](Tick v) {
      int bits = 0;
      while ((v >> (bits + 1)) > 0) ++bits;
      return bits;
    };
    const int lo_bits = log2(jitter_min_);
    const int hi_bits = std::max(lo_bits, log2(jitter_max_));
    const auto k =
        lo_bits +
        static_cast<int>(jitter_rng_.below(static_cast<std::uint64_t>(hi_bits - lo_bits) + 1));
    const Tick lo = Tick{1} << k;
    const Tick d = std::min(
        jitter_max_, lo + static_cast<Tick>(jitter_rng_.below(static_cast<std::uint64_t>(lo))));
    t.charge(d);
  }
  t.sync();
}

namespace {
int lock_line(const SemArray& sma, int n) {
  return ArrayLayout::line_of(n < 0 ? sma.layout.lock : sma.offset_of(Field::SemLock, n));
}
}  // namespace

void SemKernel::spin_lock(Task& t, int n) {
  sched_point(t, "spin_lock");
  lock_of(n).lock(topo_, t, settle());
  trace(t, n < 0 ? Field::Lock : Field::SemLock, n, lock_line(sma_, n), AccessKind::Rmw);
}

void SemKernel::spin_unlock(Task& t, int n) {
  lock_of(n).unlock(topo_, t, settle());
  trace(t, n < 0 ? Field::Lock : Field::SemLock, n, lock_line(sma_, n), AccessKind::Write);
  cs_released(t);
}

bool SemKernel::spin_is_locked(Task& t, int n) {
  sched_point(t, "spin_is_locked");
  const bool locked = lock_of(n).is_locked(topo_, t);
  trace(t, n < 0 ? Field::Lock : Field::SemLock, n, lock_line(sma_, n), AccessKind::Read);
  return locked;
}

void SemKernel::spin_unlock_wait(Task& t, int n) {
  sched_point(t, "spin_unlock_wait");
  auto& l = lock_of(n);
  trace(t, n < 0 ? Field::Lock : Field::SemLock, n, lock_line(sma_, n), AccessKind::Read);
  // Spin reading the lock word until it is seen unlocked. Simplification: a
  // queued lock handed from waiter to waiter is seen locked throughout.
  while (l.is_locked(topo_, t)) {
    {
      InFunc spin(t, Func::RawSpinLock);
      t.charge(poll_interval(topo_.params()));
    }
    t.sync();
  }
}

void SemKernel::read_lock(Task& t) {
  sched_point(t, "read_lock");
  sma_.rwlock->read_lock(topo_, t);
  trace(t, Field::Lock, -1, ArrayLayout::line_of(sma_.layout.lock), AccessKind::Rmw);
}

void SemKernel::read_unlock(Task& t) {
  sma_.rwlock->read_unlock(topo_, t);
  trace(t, Field::Lock, -1, ArrayLayout::line_of(sma_.layout.lock), AccessKind::Rmw);
  cs_released(t);
}

void SemKernel::write_lock(Task& t) {
  sched_point(t, "write_lock");
  sma_.rwlock->write_lock(topo_, t);
  trace(t, Field::Lock, -1, ArrayLayout::line_of(sma_.layout.lock), AccessKind::Rmw);
}

void SemKernel::write_unlock(Task& t) {
  sma_.rwlock->write_unlock(topo_, t);
  trace(t, Field::Lock, -1, ArrayLayout::line_of(sma_.layout.lock), AccessKind::Rmw);
  cs_released(t);
}

void SemKernel::modified(Task& t, int object) {
  if (observer_ != nullptr) observer_->on_modify(t, object);
}

void SemKernel::complex_count_add(Task& t, int delta) {
  sched_point(t, "write complex_count");
  write(t, Field::ComplexCount);
  sma_.complex_count += delta;
  modified(t, KernelObserver::kArrayObject);
}

// ---------------------------------------------------------------------------
// Queues

namespace {
Field list_field(int owner) { return owner < 0 ? Field::Pending : Field::SemPending; }
}  // namespace

void SemKernel::list_add_tail(Task& t, SemList& list, int owner, SemQueue& q, bool simple_list) {
  const auto it = list.insert(list.end(), &q);
  if (simple_list) {
    q.simple = &list, q.simple_pos = it, q.simple_owner = owner;
  } else {
    q.list = &list, q.pos = it, q.list_owner = owner;
  }
  write(t, list_field(owner), std::max(owner, 0));
  modified(t, owner);
}

void SemKernel::list_add(Task& t, SemList& list, int owner, SemQueue& q, bool simple_list) {
  const auto it = list.insert(list.begin(), &q);
  if (simple_list) {
    q.simple = &list, q.simple_pos = it, q.simple_owner = owner;
  } else {
    q.list = &list, q.pos = it, q.list_owner = owner;
  }
  write(t, list_field(owner), std::max(owner, 0));
  modified(t, owner);
}

void SemKernel::list_del(Task& t, SemQueue& q, bool simple_list) {
  SemList*& list = simple_list ? q.simple : q.list;
  if (list == nullptr) throw SimulationError("list_del: sem_queue is not on that list");
  const int owner = simple_list ? q.simple_owner : q.list_owner;
  list->erase(simple_list ? q.simple_pos : q.pos);
  list = nullptr;
  write(t, list_field(owner), std::max(owner, 0));
  modified(t, owner);
}

void SemKernel::list_splice(Task& t, SemList& from, int from_owner, SemList& to, int to_owner,
                            bool to_front) {
  if (from.empty()) return;
  for (SemQueue* q : from) {
    q->list = &to;
    q->list_owner = to_owner;
  }
  to.splice(to_front ? to.begin() : to.end(), from);
  write(t, list_field(from_owner), std::max(from_owner, 0));
  write(t, list_field(to_owner), std::max(to_owner, 0));
  modified(t, from_owner);
  modified(t, to_owner);
}

std::span<int> SemKernel::semadj_span(int process, bool undo) {
  if (!undo) return {};
  auto& ps = processes_[process];
  if (!ps.has_undo) {
    ps.has_undo = true;
    ps.semadj.assign(static_cast<std::size_t>(sma_.nsems()), 0);
  }
  return ps.semadj;
}

namespace {
// do_semtimedop()'s dupsop (4.10+): a sop whose semaphore (modulo BITS_PER_LONG,
// as the kernel checks it) an earlier altering sop of the call changes. Such a
// call takes perform_atomic_semop_slow(), the one-pass algorithm.
bool dupsop(std::span<const Sembuf> sops) {
  std::uint64_t dup = 0;
  for (const auto& sop : sops) {
    const std::uint64_t mask = std::uint64_t{1} << (static_cast<unsigned>(sop.sem_num) % 64);
    if ((dup & mask) != 0) return true;
    if (sop.sem_op != 0) dup |= mask;
  }
  return false;
}
}  // namespace

// perform_atomic_semop() (try_atomic_semop() before 3.11): q's operation, by
// the task holding the lock, with q's undo list and pid. semtimedop() passes
// its own sem_queue: its sops are on the caller's stack, and the attempt is
// charged to perform_atomic_semop. A sleeper's, tried from do_smart_update(),
// is first read from the sleeper's stack and is charged to do_smart_update().
int SemKernel::perform_atomic_semop(Task& t, SemQueue& q) {
  sched_point(t, "perform_atomic_semop");
  const bool own = &q == &state_of(t).queue;
  std::optional<InFunc> in;
  if (own)
    in.emplace(t, Func::PerformAtomic);
  else
    access(t, Field::SleeperStack, *q.stack_line, AccessKind::Read);
  path(t, PathFn::PerformAtomicSemop);
  for (const auto& sop : q.sops) read(t, Field::SemVal, sop.sem_num);
  const int result =
      ipc::perform_atomic_semop(sma_.semval, q.sops, semadj_span(q.process, q.undo), &q.blocking);
  if (result == 0) {
    for (const auto& sop : q.sops) {
      write(t, Field::SemVal, sop.sem_num);  // semval and sempid
      sma_.sempid[static_cast<std::size_t>(sop.sem_num)] = q.process;
      modified(t, sop.sem_num);
    }
    if (q.undo) access(t, Field::UndoList, processes_[q.process].undo_line, AccessKind::Write);
  } else {
    // Before 4.10 (and for a dupsop call since) one pass applied each sop in turn:
    // those before the one that blocked or failed were written, then undone (and
    // their semadj).
    const int applied = sma_.policy.two_pass && !dupsop(q.sops) ? 0 : q.blocking;
    for (int i = 0; i < applied; ++i)
      write(t, Field::SemVal, q.sops[static_cast<std::size_t>(i)].sem_num);
    if (applied > 0 && q.undo)
      access(t, Field::UndoList, processes_[q.process].undo_line, AccessKind::Write);
    // would_block: q->blocking = sop (3.16+). Every failed try of a sleeper stores
    // to its sem_queue, so scans from two CPUs move each entry's line between them.
    // (The caller's own entry was filled just before; its store is not modelled.)
    if (result > 0 && !own && sma_.policy.blocking_store)
      access(t, Field::SleeperStack, *q.stack_line, AccessKind::Write);
    for (int i = applied - 1; i >= 0; --i)
      write(t, Field::SemVal, q.sops[static_cast<std::size_t>(i)].sem_num);
    if (applied > 0 && q.undo)
      access(t, Field::UndoList, processes_[q.process].undo_line, AccessKind::Write);
  }
  return result;
}

void SemKernel::set_semotime(Task& t, std::span<const Sembuf> sops) {
  path(t, PathFn::SetSemotime);
  if (sma_.policy.otime == OtimeLocation::PerSem)
    write(t, Field::SemOtime, sops.empty() ? 0 : sops[0].sem_num);
  else
    write(t, Field::Otime);
}

void SemKernel::wake_up_sem_queue_prepare(Task& t, SemQueue& q, int error, WakeList& wake) {
  sched_point(t, "wake_up_sem_queue_prepare");
  q.status = error;
  if (sma_.policy.wakeup == WakeupDelivery::WakeQ) {
    // get_task_struct(), wake_q_add() (cmpxchg on task->wake_q.next), then the status.
    access(t, Field::TaskStruct, *q.task_line, AccessKind::Rmw);
    access(t, Field::TaskStruct, *q.task_line, AccessKind::Rmw);
    q.status_at = access(t, Field::SleeperStack, *q.stack_line, AccessKind::Write);
  } else {
    // q->status = IN_WAKEUP; q->pid = error: the final store comes after the wakeup.
    access(t, Field::SleeperStack, *q.stack_line, AccessKind::Write);
    q.status_at = kNotFinal;
  }
  wake.push_back({&q, q.sleeper, q.seq});
  if (observer_ != nullptr) observer_->on_wake(t, *q.sleeper, error);
}

void SemKernel::wake_up_sem_queue_do(Task& t, WakeList& wake) {
  if (wake.empty()) return;
  InFunc in(t, Func::Wakeup);
  for (const PendingWake& w : wake) {
    auto& st = state_of(*w.sleeper);
    const bool current = st.sleep_seq == w.seq;
    if (current && st.asleep) {
      st.asleep = false;
      sched_.wake(t, *w.sleeper);
    }
    if (sma_.policy.wakeup == WakeupDelivery::InWakeup) {
      // smp_wmb(); q->status = q->pid: now the sleeper may return.
      if (current) {
        w.q->status_at = access(t, Field::SleeperStack, *w.q->stack_line, AccessKind::Write);
      }
    } else {
      access(t, Field::TaskStruct, *w.q->task_line, AccessKind::Rmw);  // put_task_struct()
    }
  }
  wake.clear();
}

void SemKernel::wait_final_status(Task& t, const SemQueue& q) {
  // get_queue_result(): spin while the waker has not stored the result yet.
  InFunc spin(t, Func::RawSpinLock);
  while (q.status_at == kNotFinal) {
    t.charge(poll_interval(topo_.params()));
    t.sync();
  }
  t.advance_to(q.status_at);
}

// ---------------------------------------------------------------------------
// semtimedop()

namespace {
// entry_SYSCALL_64 / system_call and the return to user space, with the audit
// hook of the return (__audit_syscall_exit: audit enabled, as on seed 000's laptop).
template <class Body>
int in_syscall(Task& t, SemKernel& k, const config::MachineParams& p, Body body) {
  {
    InFunc in(t, Func::SyscallEntry);
    t.charge_private(p.syscall / 2);
  }
  const int result = body();
  {
    InFunc in(t, Func::AuditSyscallExit);
    k.path(t, PathFn::AuditSyscallExit);
  }
  {
    InFunc in(t, Func::SyscallEntry);
    t.charge_private(p.syscall - p.syscall / 2);
  }
  return result;
}

// A semop() that returns: a completed call is what the timekeeper counts, so it
// is counted at its own date (Task::count_semop(): dated while its turn is owed).
// The turn is owed on into the user loop, except on a CPU that IPIs reach: an
// IPI posted while a task runs ahead is paid at its next charge after the turn
// (machine/ipi_queue.hpp), and the turn here keeps that lateness where it was.
int counted(Task& t, int result) {
  if (t.ipis != nullptr && t.ipis->posted() > 0) t.pay_turn();
  if (result == 0) t.count_semop();
  return result;
}
}  // namespace

int SemKernel::semop(Task& t, std::span<const Sembuf> sops) {
  const int result =
      in_syscall(t, *this, topo_.params(), [&] { return do_semtimedop(t, sops, nullptr); });
  return counted(t, result);
}

int SemKernel::semtimedop(Task& t, std::span<const Sembuf> sops, Tick timeout) {
  const int result = in_syscall(t, *this, topo_.params(), [&] {
    if (timeout < 0) return -EINVAL;
    return do_semtimedop(t, sops, &timeout);
  });
  return counted(t, result);
}

void SemKernel::ipc_obtain_object_check(Task& t) {
  // idr_find() + ipc_checkid(): sem_perm.seq (in 3.10 on the line of sem_otime).
  InFunc in(t, Func::IpcObtain);
  path(t, PathFn::IpcObtainObjectCheck);
  read(t, Field::Seq);
}

void SemKernel::ipcperms(Task& t) {
  // uid/gid/mode, and security_ipc_permission().
  InFunc in(t, Func::IpcPerms);
  path(t, PathFn::Ipcperms);
  read(t, Field::Perm);
  ipc_has_perm(t);
}

void SemKernel::security_sem_semop(Task& t) {
  InFunc in(t, Func::SecuritySemop);
  path(t, PathFn::SecuritySemSemop);
  ipc_has_perm(t);
}

void SemKernel::ipc_has_perm(Task& t) {
  // SELinux: the array's isec (sem_perm.security), then the access vector cache.
  InFunc in(t, Func::IpcHasPerm);
  path(t, PathFn::IpcHasPerm);
  read(t, Field::Security);
  InFunc avc(t, Func::AvcHasPerm);
  path(t, PathFn::AvcHasPerm);
}

SemKernel::ProcessState& SemKernel::find_alloc_undo(Task& t) {
  auto& ps = processes_[t.process];
  // spin_lock(&ulp->lock), the lookup, spin_unlock(): the process's own line.
  access(t, Field::UndoList, ps.undo_line, AccessKind::Rmw);
  access(t, Field::UndoList, ps.undo_line, AccessKind::Write);
  if (!ps.has_undo) {
    ps.has_undo = true;
    ps.semadj.assign(static_cast<std::size_t>(sma_.nsems()), 0);
  }
  return ps;
}

int SemKernel::sem_lock(Task& t, std::span<const Sembuf> sops) {
  int locknum = 0;
  {
    InFunc in(t, Func::SemLock);
    locknum = gen_->sem_lock(*this, t, sops);
  }
  if (observer_ != nullptr) observer_->on_cs_begin(t, locknum);
  return locknum;
}

void SemKernel::sem_unlock(Task& t, int locknum) {
  sched_point(t, "sem_unlock");
  path(t, PathFn::SemUnlock);
  if (locknum == Generation::kGlobalLock) queues_->unmerge_queues(*this, t);
  // The section ends when the release store of the lock that gave the
  // exclusion (the first lock sem_unlock() drops) has landed: until then the
  // other CPUs see it held.
  auto& st = state_of(t);
  st.cs_locknum = locknum;
  st.cs_ending = true;
  gen_->sem_unlock(*this, t, locknum);
  cs_released(t);
}

void SemKernel::cs_released(Task& t) {
  auto& st = state_of(t);
  if (!st.cs_ending) return;
  st.cs_ending = false;
  if (observer_ != nullptr) observer_->on_cs_end(t, st.cs_locknum);
}

// The lookup and the permission checks of semtimedop() and semctl().
void SemKernel::lookup_and_checks(Task& t) {
  // ipc_checkid()'s load of sem_perm.seq, the sem_nsems test, ipcperms()'s
  // and the two ipc_has_perm()s' loads (the permissions, sem_perm.security)
  // feed only branches (-EIDRM, -EFBIG, -EACCES), which the core predicts:
  // the instructions after each load do not wait for its value, so a miss
  // (3.10: seq and security on line 1, which every semop's sem_otime store
  // takes away) overlaps with the checks after it (machine/mlp.hpp). The
  // core waits for the values at the end of the checks (sem_lock()'s locked
  // RMW, or under the lock its use of the array, would wait for them too).
  begin_loads(t);
  ipc_obtain_object_check(t);
  read(t, Field::Nsems);  // max >= sma->sem_nsems: EFBIG
  ipcperms(t);
  security_sem_semop(t);
  end_loads(t);
}

int SemKernel::do_semtimedop(Task& t, std::span<const Sembuf> sops, const Tick* timeout) {
  InFunc body(t, Func::SysSemtimedop);
  sched_point(t, "syscall");
  // The body's own code: the scan of the sops, the checks; the copy of the sops.
  path(t, PathFn::SyscallBody);
  {
    InFunc in(t, Func::CopyFromUser);
    path(t, PathFn::CopyFromUser);
  }
  if (const int err = check_semop_nsops(sops.size(), kSemopmDefault); err != 0) return err;
  if (sma_.deleted) return -EINVAL;  // the id no longer resolves
  const bool undo = sops_undo(sops);
  const bool alter = sops_alter(sops);
  if (undo) find_alloc_undo(t);
  // The lookup and the permission checks: before the lock from 3.10, under
  // ipc_lock_check() before.
  if (!gen_->lookup_under_lock()) lookup_and_checks(t);
  if (const int err = check_semop_args(sops, sma_.nsems(), kSemopmDefault); err != 0) return err;

  int locknum = sem_lock(t, sops);
  if (gen_->lookup_under_lock())
    lookup_and_checks(t);
  else if (gen_->valid_object_after_lock())
    read(t, Field::Perm);  // ipc_valid_object(): sem_perm.deleted
  if (sma_.deleted) {
    sem_unlock(t, locknum);
    return -EIDRM;
  }
  if (sma_.layout.sem_base >= 0) {
    InFunc in(t, Func::PerformAtomic);
    read(t, Field::SemBase);
  }
  // The caller's struct sem_queue, on its stack: filled before the attempt,
  // queued only if the operation must sleep.
  auto& st = state_of(t);
  SemQueue& q = st.queue;
  q.process = t.process;
  q.sops.assign(sops.begin(), sops.end());
  q.undo = undo;
  q.alter = alter;
  const int error = perform_atomic_semop(t, q);
  WakeList& wake = st.wake;  // the kernel's on-stack wake_q: the task's own, reused
  wake.clear();
  if (error <= 0) {
    if (error == 0) {
      InFunc in(t, Func::DoSmartUpdate);
      if (alter)
        queues_->do_smart_update(*this, t, sops, true, wake);
      else if (sma_.policy.otime_all_ops)
        set_semotime(t, sops);
    }
    sem_unlock(t, locknum);
    wake_up_sem_queue_do(t, wake);
    return error;
  }

  // We need to sleep: the sem_queue is queued, then schedule().
  q.sleeper = &t;
  q.status = SemQueue::kPending;
  q.status_at = 0;
  q.stack_line = &st.stack_line;
  q.task_line = &st.task_line;
  q.seq = ++st.sleep_seq;
  queues_->enqueue(*this, t, q);
  access(t, Field::SleeperStack, st.stack_line, AccessKind::Write);  // queue.status = -EINTR
  st.in_sleep = true;
  st.asleep = true;
  st.timed_out = st.signalled = false;
  if (timeout != nullptr) arm_timeout(t, st, t.cursor + *timeout);
  sem_unlock(t, locknum);
  sched_.block(t);

  // Woken (by the waker that completed our operation, the timer or a signal).
  int result = 0;
  access(t, Field::SleeperStack, st.stack_line, AccessKind::Read);  // READ_ONCE(queue.status)
  if (q.completed()) {
    wait_final_status(t, q);  // lock-free return
    result = q.status;
  } else {
    locknum = sem_lock(t, sops);
    access(t, Field::SleeperStack, st.stack_line, AccessKind::Read);
    if (q.completed()) {
      wait_final_status(t, q);
      result = q.status;
    } else if (st.timed_out) {
      result = -EAGAIN;
    } else if (st.signalled) {
      result = -EINTR;
    } else {
      throw SimulationError("semtimedop: task " + std::to_string(t.id) +
                            " woke up with its operation pending, no timeout and no signal");
    }
    if (!q.completed()) queues_->unlink_queue(*this, t, q);
    sem_unlock(t, locknum);
  }
  st.in_sleep = false;
  return result;
}

void SemKernel::arm_timeout(Task& t, TaskState& st, Tick date) {
  std::weak_ptr<int> alive = alive_;
  Task* task = &t;
  TaskState* s = &st;
  const std::uint64_t seq = st.sleep_seq;
  t.actor->simulation().at(date, [this, alive, task, s, seq, date] {
    if (alive.expired() || !s->asleep || s->sleep_seq != seq) return;
    s->asleep = false;
    s->timed_out = true;
    // The timer interrupt on the sleeper's CPU does the wakeup.
    Task timer;
    timer.id = -1;
    timer.cpu = task->cpu;
    timer.cursor = date;
    sched_.wake(timer, *task);
  });
}

bool SemKernel::signal(Task& sender, Task& target) {
  auto& st = state_of(target);
  if (!st.in_sleep) return false;
  st.signalled = true;
  if (st.asleep) {
    st.asleep = false;
    sched_.wake(sender, target);
  }
  return true;
}

// ---------------------------------------------------------------------------
// semctl()

int SemKernel::lock_array_for_semctl(Task& t) {
  sched_point(t, "syscall");
  path(t, PathFn::SyscallBody);
  lookup_and_checks(t);  // security_sem_semctl(): the same hook's cost
  return sem_lock(t, {});
}

// count_semcnt() (3.16+, SUS): a sleeper counts on the semaphore of the sop
// that blocked it at its last try, as a decrement (ncnt) or a wait-for-zero (zcnt).
int SemKernel::count_semcnt(int semnum, bool count_zero) const {
  int count = 0;
  for (const SemQueue* q : sleepers()) {
    const Sembuf& sop = q->sops[static_cast<std::size_t>(q->blocking)];
    if (sop.sem_num != semnum) continue;
    if (count_zero ? sop.sem_op == 0 : sop.sem_op < 0) ++count;
  }
  return count;
}

// semctl(2)'s dispatch (ksys_semctl() in current kernels) to semctl_main(),
// semctl_setval() and semctl_down(). The checks before the lock are in the
// order of 3.10 and later for every generation (3.9 took the lock first).
int SemKernel::semctl(Task& t, int semnum, SemctlCmd cmd, const Semun& arg) {
  return in_syscall(t, *this, topo_.params(), [&] {
    InFunc body(t, Func::SysSemtimedop);
    switch (cmd) {
      case SemctlCmd::GetAll:
      case SemctlCmd::GetVal:
      case SemctlCmd::GetPid:
      case SemctlCmd::GetNcnt:
      case SemctlCmd::GetZcnt:
      case SemctlCmd::SetAll:
        return semctl_main(t, semnum, cmd, arg);
      case SemctlCmd::SetVal:
        return semctl_setval(t, semnum, arg.val);
      case SemctlCmd::Rmid:
        return semctl_down(t);
    }
    return -EINVAL;
  });
}

int SemKernel::semctl_setval(Task& t, int semnum, int val) {
  if (val > kSemvmx || val < 0) return -ERANGE;
  if (sma_.deleted) return -EINVAL;  // sem_obtain_object_check()
  if (semnum < 0 || semnum >= sma_.nsems()) return -EINVAL;
  const int locknum = lock_array_for_semctl(t);
  if (sma_.deleted) {  // !ipc_valid_object()
    sem_unlock(t, locknum);
    return -EIDRM;
  }
  const auto n = static_cast<std::size_t>(semnum);
  // Every undo list forgets its adjustment of this semaphore.
  for (auto& [process, ps] : processes_)
    if (ps.has_undo) ps.semadj[n] = 0;
  write(t, Field::SemVal, semnum);
  sma_.semval[n] = val;
  sma_.sempid[n] = t.process;
  modified(t, semnum);
  WakeList wake;
  {
    InFunc in(t, Func::DoSmartUpdate);
    queues_->do_smart_update(*this, t, {}, false, wake);
  }
  sem_unlock(t, locknum);
  wake_up_sem_queue_do(t, wake);
  return 0;
}

// GETALL and SETALL, then the commands on one semaphore. The model charges a
// reading command's line reads before the ipc_valid_object() test: a removed
// array's answer is -EIDRM all the same.
int SemKernel::semctl_main(Task& t, int semnum, SemctlCmd cmd, const Semun& arg) {
  if (sma_.deleted) return -EINVAL;  // sem_obtain_object_check()
  const int nsems = sma_.nsems();
  WakeList wake;
  const auto out_unlock = [&](int locknum, int err) {
    sem_unlock(t, locknum);
    wake_up_sem_queue_do(t, wake);
    return err;
  };

  switch (cmd) {
    case SemctlCmd::GetAll: {
      const int locknum = lock_array_for_semctl(t);
      for (int i = 0; i < nsems; ++i) read(t, Field::SemVal, i);
      if (sma_.deleted) return out_unlock(locknum, -EIDRM);
      arg.getall->assign(sma_.semval.begin(), sma_.semval.end());
      return out_unlock(locknum, 0);
    }
    case SemctlCmd::SetAll: {
      for (const int v : arg.setall)
        if (v < 0 || v > kSemvmx) return -ERANGE;
      const int locknum = lock_array_for_semctl(t);
      if (sma_.deleted) return out_unlock(locknum, -EIDRM);
      for (int i = 0; i < nsems; ++i) {
        const auto n = static_cast<std::size_t>(i);
        write(t, Field::SemVal, i);
        sma_.semval[n] = arg.setall[n];
        sma_.sempid[n] = t.process;
        modified(t, i);
      }
      for (auto& [process, ps] : processes_)
        if (ps.has_undo) std::fill(ps.semadj.begin(), ps.semadj.end(), 0);
      {
        InFunc in(t, Func::DoSmartUpdate);
        queues_->do_smart_update(*this, t, {}, false, wake);
      }
      return out_unlock(locknum, 0);
    }
    default:  // GETVAL, GETPID, GETNCNT, GETZCNT: one semaphore
      break;
  }
  if (semnum < 0 || semnum >= nsems) return -EINVAL;
  const int locknum = lock_array_for_semctl(t);
  const auto n = static_cast<std::size_t>(semnum);
  const bool counts = cmd == SemctlCmd::GetNcnt || cmd == SemctlCmd::GetZcnt;
  if (counts) {
    read(t, Field::SemPending, semnum);
    read(t, Field::Pending);
  } else {
    read(t, Field::SemVal, semnum);  // semval and sempid share it
  }
  if (sma_.deleted) return out_unlock(locknum, -EIDRM);
  switch (cmd) {
    case SemctlCmd::GetVal:
      return out_unlock(locknum, sma_.semval[n]);
    case SemctlCmd::GetPid:
      return out_unlock(locknum, sma_.sempid[n]);
    case SemctlCmd::GetNcnt:
      return out_unlock(locknum, count_semcnt(semnum, false));
    case SemctlCmd::GetZcnt:
      return out_unlock(locknum, count_semcnt(semnum, true));
    default:
      return out_unlock(locknum, -EINVAL);
  }
}

// IPC_RMID. The kernel serialises semctl_down() on the ids rwsem, which the
// model does not have: a second IPC_RMID that waited for the array lock
// sees the array removed and fails with EIDRM.
int SemKernel::semctl_down(Task& t) {
  if (sma_.deleted) return -EINVAL;  // ipcctl_obtain_check()
  const int locknum = lock_array_for_semctl(t);
  if (sma_.deleted) {
    sem_unlock(t, locknum);
    return -EIDRM;
  }
  // freeary(): the undo structures are invalidated, then every sleeper
  // fails with EIDRM, then the id is removed.
  for (auto& [process, ps] : processes_) {
    ps.has_undo = false;
    ps.semadj.clear();
  }
  WakeList wake;
  queues_->freeary(*this, t, wake);
  write(t, Field::Perm);
  sma_.deleted = true;
  modified(t, KernelObserver::kArrayObject);
  sem_unlock(t, locknum);
  wake_up_sem_queue_do(t, wake);
  return 0;
}

int SemKernel::setval(Task& t, int semnum, int value) {
  Semun arg;
  arg.val = value;
  return semctl(t, semnum, SemctlCmd::SetVal, arg);
}

int SemKernel::setall(Task& t, std::span<const int> values) {
  if (values.size() != static_cast<std::size_t>(sma_.nsems()))
    throw InputError("SETALL needs one value per semaphore (" + std::to_string(sma_.nsems()) +
                     "), got " + std::to_string(values.size()));
  Semun arg;
  arg.setall = values;
  return semctl(t, 0, SemctlCmd::SetAll, arg);
}

int SemKernel::getval(Task& t, int semnum) { return semctl(t, semnum, SemctlCmd::GetVal, {}); }

int SemKernel::getall(Task& t, std::vector<int>* out) {
  Semun arg;
  arg.getall = out;
  return semctl(t, 0, SemctlCmd::GetAll, arg);
}

int SemKernel::getpid(Task& t, int semnum) { return semctl(t, semnum, SemctlCmd::GetPid, {}); }

int SemKernel::getncnt(Task& t, int semnum) { return semctl(t, semnum, SemctlCmd::GetNcnt, {}); }

int SemKernel::getzcnt(Task& t, int semnum) { return semctl(t, semnum, SemctlCmd::GetZcnt, {}); }

int SemKernel::rmid(Task& t) { return semctl(t, 0, SemctlCmd::Rmid, {}); }

void SemKernel::exit_process(Task& t) {
  InFunc body(t, Func::SysSemtimedop);
  std::vector<TaskState*> dying;
  for (auto& st : tasks_) {
    if (st && st->in_sleep && st->queue.list != nullptr && !st->queue.completed() &&
        st->queue.process == t.process && st->queue.sleeper != &t)
      dying.push_back(st.get());
  }
  auto it = processes_.find(t.process);
  const bool has_undo = it != processes_.end() && it->second.has_undo && !sma_.deleted;
  if (!has_undo && dying.empty()) {
    if (it != processes_.end()) processes_.erase(it);
    return;
  }
  path(t, PathFn::SyscallBody);  // exit_sem()'s own code
  const int locknum = sem_lock(t, {});
  WakeList wake;
  // The process's other threads were killed in their sleep: they unlink
  // themselves with EINTR before the undo list goes (done here for them).
  for (TaskState* st : dying) {
    queues_->unlink_queue(*this, t, st->queue);
    wake_up_sem_queue_prepare(t, st->queue, -EINTR, wake);
  }
  if (has_undo) {
    const std::vector<int> adj = std::move(it->second.semadj);
    processes_.erase(it);
    for (int i = 0; i < sma_.nsems(); ++i) {
      const auto n = static_cast<std::size_t>(i);
      if (adj[n] == 0) continue;
      write(t, Field::SemVal, i);
      // Linux clamps the undone value to [0, SEMVMX].
      sma_.semval[n] = std::clamp(sma_.semval[n] + adj[n], 0, kSemvmx);
      sma_.sempid[n] = t.process;
      modified(t, i);
    }
    InFunc in(t, Func::DoSmartUpdate);
    queues_->do_smart_update(*this, t, {}, true, wake);
  } else if (it != processes_.end()) {
    processes_.erase(it);
  }
  sem_unlock(t, locknum);
  wake_up_sem_queue_do(t, wake);
}

// ---------------------------------------------------------------------------
// Inspection

const std::vector<int>* SemKernel::semadj(int process) const {
  const auto it = processes_.find(process);
  if (it == processes_.end() || !it->second.has_undo) return nullptr;
  return &it->second.semadj;
}

bool SemKernel::sleeping(const Task& t) const {
  const auto id = static_cast<std::size_t>(t.id);
  if (id >= tasks_.size() || !tasks_[id]) return false;
  const auto& st = *tasks_[id];
  return st.in_sleep && st.queue.list != nullptr && !st.queue.completed();
}

std::vector<const SemQueue*> SemKernel::sleepers() const {
  std::vector<const SemQueue*> out;
  for (const auto& st : tasks_)
    if (st && st->in_sleep && st->queue.list != nullptr && !st->queue.completed())
      out.push_back(&st->queue);
  return out;
}

}  // namespace semsim::ipc
