// A simulated task (thread or process) and where its CPU time goes.
//
// A task carries a time cursor: the date up to which it has been charged.
// Model code charges costs to the cursor (attributed to the kernel function
// currently executing, for the perf-like profile).
//
// Time order: whenever the running task's cursor moves (charge, advance_to,
// idle_until), keep_order() lets every pending event of an earlier date run
// first (core/simulation.hpp). So whatever the task does next -- a cache-line
// request, a lock operation, a look at a run queue or a wait queue -- happens
// at its cursor's date after everything dated earlier: every shared resource
// serves requests in the order of their simulated dates, with no sync() to
// place by hand. Moving another task's cursor (a releaser dating its waiter's
// hand-off, a waker dating its wakee) never yields: that task is parked and
// runs again at that date.
//
// Owed turns (the speed of exact order): the kernel path's own instructions
// (charge_private()) and the issue waits of the kernel's data accesses
// (advance_private()) touch nothing another task reads, so the turn at their end
// is owed instead of taken, and paid (pay_turn()) before the task's next shared
// step: every cache-line request (issue_load/issue_store/issue_rmw), every lock
// and scheduler entry, sync(), and any charge or wait taken the ordinary way. (A
// preemption point of a task alone on its CPU is not a shared step: no other task
// can queue there, so it reads nothing another task writes; machine/scheduler.hpp,
// Scheduler::alone_on(). A spinlock's wait whose outcome is settled at its issue
// is owed too: machine/spinlock.hpp, "Time order".)
// Rules that keep this exact:
//   - Every shared resource is still served at the request's date in date order:
//     a request pays the turn first, so it runs after every earlier event.
//   - Shared model state the task reads or writes between two turns (a
//     semaphore's value, a wait queue) it sees as of its last turn, as every
//     other task does: its last request (the line holding that state) fixed the
//     order, and nothing is dated between that turn and the next one.
//   - What observers count is dated: a completed semop (or a workload's round)
//     is counted with its date when it runs ahead of its turn (count_semop(),
//     count_rounds()), and observers read semops_at(date) and rounds_past(date),
//     which leave out what was counted past their date; time_at(date) does the
//     same for owed work (the window's edges).
//   - With SMT, work reads its siblings' activity: between two turns its pieces
//     are dated from their history as known, and re-dated until the turn comes
//     (machine/smt.hpp); the turn is taken at the run's final date. Work that
//     no sibling can change before its end (each sibling's task waits for a
//     later turn: SmtCores::settled_through()) and waits are final as they are
//     dated while no run is open: they are owed work as without SMT. It dates its
//     own entries into and out of a spin at a turn (note_spin()).
//   - An IPI to the CPU is paid when the task's work reaches it; posted while
//     the task runs ahead, it lands in the task's first charge after its next
//     turn (take_ipis(); a quiet read's turn does not count: machine/ipi_queue.hpp).
// The reference mode (core/simulation.hpp) queues at every turn, owed ones
// included, so it synchronises before every shared access.
//
// Read-ahead (the one shared step that need not pay the turn): a kernel load
// (Turn::Owe) that hits a quiet line (machine/cache_line.hpp) goes before the
// owed turn, with the turn still owed. It is what the strict order would do
// unless an event dated before the load wrote the line, and the line catches
// exactly that (ReadAheadConflict: the run is done again in strict order).
// Until its next turn the task reads nothing else shared (its next shared
// step pays the turn; the IPIs posted to its CPU it pays after that step in
// either order, machine/ipi_queue.hpp), and it schedules nothing
// (core/simulation.cpp checks it),
// and the calendar's ties do not depend on when its next turn was queued; so
// the run is the strict order's, byte for byte. With SMT, where the read's date
// is final (no run is open, or the siblings' history is final through it: each
// sibling's task waits for a later turn, SmtCores::settled_through()), as above.
// Not on an SMT core whose CPU has OS noise or an IPI to pay: the interruptions a
// run's pieces meet are placed at the dates the siblings' history known when the
// piece ran gives (machine/smt.hpp), and a read ahead of its turn leaves that
// history where it was, where the strict order's turn at the read runs every
// earlier event first; after the read the two orders can place an interruption in
// different pieces (a fuzz of 1 ms runs against the reference mode found laptop-4
// with dense noise differing, both with reads ahead inside runs and with reads
// ahead at final dates only). IPIs become payable only at turns (take_ipis()), so
// none payable at the read means none before the run's turn.
// Read-ahead in a run: where a sibling may still re-date the task's run, the read
// is a piece of the run (read_ahead_in_run()): its wait is the hit's latency, a
// piece of fixed length that moves with the read, and its result is the run's
// start, a final date, so no later wait of the task's on it depends on the run's
// dates (LoadWindow reads ahead so only while every load in its window is done
// by the run's start: its comparisons with the cursor then have one answer at
// every date of the run). At the run's turn, its dates final, the read is checked
// (smt_check_reads()): a write to the line dated between its first and its final
// date is a conflict, as is a final date at or past the observer's turn that was
// pending when it read (a run that could stretch that far does not read ahead);
// the line then refuses, as a conflict, a write dated at or before the final date.
// No interruption lands in the hit's wait: on an SMT core with OS noise or an IPI
// to pay nothing reads ahead at all (above).
// Not with a trace (events are recorded as they are made) or a running actor that
// is not this task's.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "core/simulation.hpp"
#include "core/time.hpp"
#include "machine/cpu_noise.hpp"
#include "machine/ipi_queue.hpp"
#include "machine/smt.hpp"
#include "machine/store_buffer.hpp"
#include "report/trace_sink.hpp"

namespace semsim::machine {

// Kernel/user functions time is attributed to, named as perf would show them.
enum class Func : std::uint8_t {
  User,           // benchmark loop in user space
  SyscallEntry,   // entry_SYSCALL_64 / system_call + exit
  SysSemtimedop,  // the lumped semtimedop body (copies, checks, security hooks)
  IpcObtain,      // ipc_lock / ipc_obtain_object_check: the idr lookup and array header reads
  SemLock,        // sem_lock() outside the spinlock itself (flag reads, fences)
  RawSpinLock,    // _raw_spin_lock: the atomic and the spinning
  PerformAtomic,  // perform_atomic_semop / try_atomic_semop
  DoSmartUpdate,  // do_smart_update / set_semotime
  // Kernel functions of the per-function kernel path (sim/ipc/kernel_path.hpp):
  UpdateQueue,        // update_queue
  DoSmartWakeupZero,  // do_smart_wakeup_zero (3.11+ queues)
  WakeConstOps,       // wake_const_ops (3.11+ queues)
  IpcPerms,           // ipcperms (with security_ipc_permission)
  SecuritySemop,      // security_sem_semop (the LSM hook)
  SemUnlock,          // spin_unlock
  Wakeup,             // try_to_wake_up and the wake queue
  Schedule,           // schedule(): context switch, going to sleep
  RawReadLock,        // _raw_read_lock: the reader's atomic and its spinning (rwlock)
  RawWriteLock,       // _raw_write_lock: the writer's atomic and its spinning (rwlock)
  RawRwUnlock,        // _raw_read_unlock / _raw_write_unlock
  Interrupt,          // OS noise: ticks, interrupts, the hypervisor (no task's own work)
  // Functions the syscall body calls that perf lists as rows of their own:
  CopyFromUser,      // copy_user_enhanced_fast_string: copy_from_user() of the sops
  IpcHasPerm,        // ipc_has_perm: SELinux's check of the array (its security field)
  AvcHasPerm,        // avc_has_perm_flags: the access vector cache lookup
  AuditSyscallExit,  // __audit_syscall_exit: the audit hook on the syscall's return
  // A kernel thread's own code (workloads/locktorture_def.hpp):
  LockTortureWriter,  // lock_torture_writer and what it inlines (the delay's draws)
  DelayTsc,           // delay_tsc: udelay() / mdelay(), a TSC busy-wait
  Count
};
constexpr int kFuncCount = static_cast<int>(Func::Count);
const char* func_name(Func f);

// Coarse CPU-time categories of the breakdown (user, syscall, kernel, spin,
// context switch; idle is what is left of elapsed time).
enum class CpuCategory : std::uint8_t { User, Syscall, Kernel, Spin, ContextSwitch, Count };
constexpr int kCategoryCount = static_cast<int>(CpuCategory::Count);
// Inline: a hot path asks it (InFunc, at every entry and exit).
constexpr CpuCategory category_of(Func f) {
  switch (f) {
    case Func::User:
      return CpuCategory::User;
    case Func::SyscallEntry:
      return CpuCategory::Syscall;
    case Func::RawSpinLock:
    case Func::RawReadLock:
    case Func::RawWriteLock:
      return CpuCategory::Spin;
    case Func::Schedule:
      return CpuCategory::ContextSwitch;
    default:
      return CpuCategory::Kernel;
  }
}
const char* category_name(CpuCategory c);

using FuncTimes = std::array<Tick, kFuncCount>;

// CPU time by category over some elapsed time (of one task or one CPU).
struct CpuBreakdown {
  std::array<Tick, kCategoryCount> busy{};
  Tick idle = 0;  // elapsed - busy (for a task: time off-CPU, runnable or blocked)
  Tick of(CpuCategory c) const { return busy[static_cast<std::size_t>(c)]; }
  Tick busy_total() const;
  // Share of elapsed time (busy + idle) spent in c.
  double share(CpuCategory c) const;
  double idle_share() const;
};
// Folds per-function times into categories; idle = elapsed - busy (>= 0).
CpuBreakdown breakdown_of(const FuncTimes& times, Tick elapsed);

// Where a task is, for the scheduler.
enum class TaskState : std::uint8_t { New, Running, Runnable, Blocked, Exited };

struct Task {
  int id = 0;
  int process = 0;  // tasks of one process share SEM_UNDO lists
  core::Actor* actor = nullptr;
  int cpu = 0;         // where it runs (or last ran)
  int home_cpu = 0;    // pinned: its CPU; unpinned: where it would like to start
  bool pinned = true;  // unpinned tasks are placed, woken and pulled anywhere

  Tick cursor = 0;           // charged up to here
  Tick slice_start = 0;      // when it last got its CPU
  Func func = Func::User;    // what is executing now, for attribution
  FuncTimes time{};          // CPU time by function
  bool spin_parked = false;  // in park_spinning(), since spin_since
  Tick spin_since = 0;
  std::uint64_t semops = 0;  // completed semop() calls
  std::uint64_t voluntary_switches = 0, involuntary_switches = 0;
  std::uint64_t migrations = 0;  // unpinned: times it was placed on another CPU than it last ran on
  // Wake-ups this task made of sleeping tasks, by where the wakee went: the waker's
  // own CPU, another CPU that was running a task, another CPU that was idle (a kick).
  std::uint64_t wakes_same_cpu = 0, wakes_remote_busy = 0, wakes_remote_idle = 0;
  int lock_depth = 0;  // spinlocks held: never preempted while > 0
  TaskState state = TaskState::New;
  bool wake_pending = false;  // woken while still running: its next block() returns at once
  Tick switched_out_at = 0;   // when its CPU last finished switching it out (it sleeps from then)
  bool woken = false;         // queued by a wake-up (not by a preemption): protected when it runs
  Tick protected_until = 0;   // a wake-up cannot preempt it before this (wakeup_protection)
  // Per CPU: the CPU's switch-in count when this task last switched in there (-1:
  // never), for the refill cost of its next switch-in (empty until it first runs).
  std::vector<std::int64_t> last_switch_in;
  FuncTimes* cpu_time =
      nullptr;                // the CPU it is on also accounts its charges (set by the Scheduler)
  CpuNoise* noise = nullptr;  // the interruptions of the CPU it is on (none: no noise)
  IpiQueue* ipis = nullptr;   // the IPIs sent to the CPU it is on (set by the Scheduler)
  Tick last_ran = -1;         // when it last left a CPU (-1: never ran), for cache-hotness
  SmtCores* smt = nullptr;    // its CPU's core, when busy siblings slow its work (machine/smt.hpp)
  report::TraceSink* trace = nullptr;  // where its events are recorded (none: tracing off)
  StoreBuffer stores;                  // its stores not yet visible (x86 TSO)
  bool owe_turns = false;              // inside charge_private() / advance_private()
  struct OwedWork {
    Func func;
    Tick start, d;
  };
  std::vector<OwedWork> owed_work;  // the charges since its last turn (for time_at())
  // Counts made since its last turn, with their dates (for semops_at() and
  // rounds_past()): a completed call is counted at its own date without a turn.
  std::vector<Tick> owed_semops;
  struct OwedRounds {
    Tick date;
    std::uint64_t n;
  };
  std::vector<OwedRounds> owed_rounds;
  // SMT (machine/smt.hpp): its work since its last turn, as pieces dated from the
  // siblings' history, re-dated until the turn (smt_redate()).
  enum class PieceKind : std::uint8_t {
    Stretch,  // work: `amount` on a core of its own, stretched by busy siblings
    Fixed,    // a wait or an interruption of length `amount`
    Until,    // a wait until the date `amount` (an access's completion)
  };
  struct SmtPiece {
    Func func;
    PieceKind kind;
    Tick amount;
    Tick start, d;  // its dates as they stand (its CPU time counted at them: smt_account())
  };
  std::vector<SmtPiece> smt_pieces;
  Tick smt_from = 0;              // the run's start: its last turn
  std::uint64_t smt_changes = 0;  // SmtCores::sibling_changes() its dates rest on
  // A count made during the run: its entry in owed_semops (owed_rounds), and
  // the pieces before it (its date is the end of the last of them).
  struct SmtCount {
    std::uint32_t index, pieces;
  };
  std::vector<SmtCount> smt_semop_pieces;
  std::vector<SmtCount> smt_rounds_pieces;

  // Work of length d (on a core of its own): the CPU's interruptions that land
  // in it delay it, and busy SMT siblings stretch it.
  void charge(Tick d) {
    if (smt != nullptr)
      smt_work(d);
    else
      work(d);
  }
  // Work on the task's own state (the kernel path's instructions, the user loop):
  // the same as charge(), but the turn at its end is owed, not taken: the task
  // goes on ahead of the clock and pays the turn before its next shared step
  // (pay_turn(): every cache-line request, lock, scheduler call and sync() pays
  // it). What the task reads of shared state in between it reads as of its last
  // turn, as every other task sees it (see "Owed turns" above). With SMT its
  // dates become final at that turn (machine/smt.hpp).
  void charge_private(Tick d) {
    owe_turns = true;
    charge(d);
    owe_turns = false;
  }
  // advance_to() for a wait on the task's own pending access (a load's issue,
  // a store's issue): the turn at its end is owed, as in charge_private().
  void advance_private(Tick t) {
    owe_turns = true;
    advance_to(t);
    owe_turns = false;
  }
  // Take the turn owed by charge_private() / advance_private(), if any: from
  // here the task's next step is at its cursor, after every earlier event.
  // Every shared step calls it: the IPIs posted to its CPU so far are its to pay
  // (machine/ipi_queue.hpp), those a quiet read's turn left too.
  void pay_turn() {
    if (turn_owed())
      keep_order();
    else
      take_ipis();
  }
  // The turn a read of a quiet line pays (machine/store_buffer.cpp,
  // issue_private_load()): as pay_turn(), but the IPIs posted meanwhile are left
  // for its next turn or shared step, as when the read goes ahead of the turn.
  void pay_turn_for_quiet_read() {
    if (!turn_owed()) return;
    if (actor != nullptr && actor->running()) take_turn();
    clear_owed();
  }
  // Its cursor moved past its last turn: some owed work is not yet in order.
  bool turn_owed() const { return !owed_work.empty() || !smt_pieces.empty(); }
  // May its next load, a turn owed, go ahead of that turn (read-ahead, above): not
  // traced, not on an SMT core with OS noise or an IPI to pay, run by its own actor,
  // where the turn would queue and before the observer's turn?
  bool may_read_ahead() const {
    return trace == nullptr && (smt == nullptr || !interruptible()) && actor != nullptr &&
           actor->running() && actor->may_read_ahead(cursor);
  }
  // Could an interruption land in its work at all: OS noise on its CPU, or an IPI to pay?
  bool interruptible() const { return noise != nullptr || ipi_to_pay(); }
  bool ipi_to_pay() const { return ipis != nullptr && ipis->payable() > 0; }
  // Are its dates up to the read final? Without SMT; with SMT where no run is open
  // (its owed work is final as dated) or the run cannot be re-dated before the read
  // (SmtCores::settled_through()). Else the read may go ahead only inside the run
  // (read-ahead in a run, above: may_read_ahead_in_run()).
  bool read_date_final() const {
    return smt == nullptr || smt_pieces.empty() || smt->settled_through(cpu, cursor);
  }
  // Inside its SMT run (read_date_final() says no): not where a re-dating could move
  // the read past the observer's pending turn (which would count it): the run since
  // its start, stretched by the most any history gives, ends before it. (No
  // interruption can land in the hit's wait: may_read_ahead() leaves out CPUs that
  // have OS noise or an IPI to pay.)
  bool may_read_ahead_in_run() const {
    const double stretched = static_cast<double>(smt_from) +
                             static_cast<double>(cursor - smt_from) * smt->max_slowdown();
    return stretched < static_cast<double>(actor->read_ahead_barrier());
  }
  // A quiet hit on `line` read ahead inside the run, done `hit` after the read: the
  // read is listed (checked at the run's turn, smt_check_reads()) and the task waits
  // the hit's latency as a piece of fixed length, which the run's re-dating moves
  // with the read, as the strict order's wait from the read's final date.
  void read_ahead_in_run(CacheLine& line, Tick hit);
  struct RunRead {
    CacheLine* line;
    std::uint64_t writes;  // the line's writes when it was read
    Tick date;             // the read's date then
    Tick barrier;          // the observer's pending turn then (the read came before it)
    std::uint32_t pieces;  // the run's pieces before it (its final date: smt_date_after())
  };
  std::vector<RunRead> smt_reads;  // the reads ahead in the run, until its turn
  // Work that takes d whatever the siblings do (with SMT: smt_work()).
  void work(Tick d) {
    interrupts_in(d);
    account(func, d);
  }
  // The interruptions that land in work of length d from the cursor: charged first.
  void interrupts_in(Tick d) {
    if (noise != nullptr) {
      const Tick irq = noise->during_work(cursor, d);
      if (irq > 0) account(Func::Interrupt, irq);
    }
    if (ipis != nullptr) {
      const Tick irq = ipis->during_work(cursor, d);
      if (irq > 0) account(Func::Interrupt, irq);
    }
  }
  // This task's CPU time by category; idle = off-CPU share of `elapsed`.
  CpuBreakdown breakdown(Tick elapsed) const { return breakdown_of(time, elapsed); }
  // Wait until t (if later: spinning, a cache-line stall), the gap counted as the
  // current function; an interruption in the wait delays only what runs past t.
  void advance_to(Tick t) {
    const Tick from = cursor;
    wait_until(t);
    interrupts_after_wait(from);
  }
  // advance_to() in two steps, for a wait whose end the caller acts on (a release
  // seen at its date hands the lock on): wait_until(t) ends exactly at t, with
  // every event dated before t run and none after; interrupts_after_wait(from),
  // called once the caller has acted at t, pays the interruptions that landed in
  // the wait [from, t) and run past t. They delay this task's next steps, not the
  // event it waited for: a hand-off dated from t stays at t, never behind the
  // clock that the interruption moved on (Task::resume_at_cursor's check).
  // Always inline: every load, store and RMW ends in it (GCC kept it out of line;
  // inlined, the ping-pong bench case ran 2 % faster: validation/bench-speed.md).
  [[gnu::always_inline]] void wait_until(Tick t) {
    if (t > cursor)
      account(func, t - cursor, PieceKind::Until, t);
    else if (!smt_pieces.empty() &&
             t > smt_from)  // over at these dates, maybe not at the final ones
      smt_pieces.push_back({func, PieceKind::Until, t, cursor, 0});
  }
  // Inline up to its usual answer, none: no noise due and no IPI to pay.
  void interrupts_after_wait(Tick from) {
    if (cursor > from && interrupts_due(cursor)) interrupts_past(from);
  }
  // May an interruption land before `until` (else interrupts_in() and
  // interrupts_past() up to it charge nothing)?
  bool interrupts_due(Tick until) const {
    return (noise != nullptr && noise->due_before(until)) || ipi_to_pay();
  }
  [[gnu::noinline]] void interrupts_past(Tick from) {
    const Tick until = cursor;
    if (noise != nullptr) {
      const Tick over = noise->past_wait(from, until);
      if (over > 0) account(Func::Interrupt, over);
    }
    if (ipis != nullptr) {
      const Tick over = ipis->past_wait(from, until);
      if (over > 0) account(Func::Interrupt, over);
    }
  }
  // SMT (machine/smt.hpp): work dated from the siblings' history, as a piece of
  // the task's run (on another task's behalf: dated as the history stands).
  // Inline: every kernel function's charge comes here on an SMT core.
  void smt_work(Tick d) {
    Tick end = smt->end_of_work(cpu, cursor, d);
    const Tick start = cursor;
    if (interrupts_due(end)) {
      interrupts_in(end - start);
      if (cursor != start) end = smt->end_of_work(cpu, cursor, d);
    }
    // Dated as the history stands: on another task's behalf, or where no sibling
    // can change state before its end (no run open: its start is final too).
    if (actor == nullptr || !actor->running() ||
        (smt_pieces.empty() && smt->settled_through(cpu, end)))
      account_final(func, end - cursor);
    else
      smt_account(func, end - cursor, PieceKind::Stretch, d);
  }
  void smt_account(Func f, Tick d, PieceKind kind, Tick amount) {  // account() of a run's piece
    if (smt_pieces.empty()) smt_open();
    smt_pieces.push_back({f, kind, kind == PieceKind::Fixed ? d : amount, cursor, d});
    // Its CPU time is counted as its dates stand, and the difference again when it
    // is re-dated (smt_redate(), smt_hold_until()): time_at() leaves out the part
    // past an observer's date, as for owed work; the trace gets it once final
    // (smt_close()).
    count_time(f, d);
    cursor += d;
    if (!owe_turns) smt_keep_order();
  }
  void smt_keep_order();
  // smt_account() out of line: account() stays small enough to inline without SMT.
  void smt_account_out(Func f, Tick d, PieceKind kind, Tick amount);
  void smt_open() {  // a run starts at the cursor
    smt_from = cursor;
    smt_changes = smt->sibling_changes(cpu);
    smt->reading(cpu, cursor);
  }
  // machine/smt.cpp: the run re-dated from the history (a sibling's state changed
  // at `changed`); the date after its first `pieces` pieces; the run held to end
  // no sooner than t; the turn at the run's final date.
  void smt_redate(Tick changed);
  // At the run's turn, its dates final: each read ahead in the run (smt_reads) is
  // what the strict order reads at its final date, or the run is done again.
  void smt_check_reads();
  Tick smt_date_after(std::uint32_t pieces) const;
  void smt_hold_until(Tick t);
  void smt_settle();
  // Its function starts or stops being a spin (InFunc): its core's history dates it.
  void note_spin(bool spin);
  // Every charge is listed in owed_work until its turn is taken, owed or not:
  // an observer that runs while the task waits for that turn reads time_at()
  // of its own date, which leaves out the part past it.
  // With SMT a running task lists it as a piece of its run (`kind`, `amount`:
  // SmtPiece), its CPU time counted at its dates as they stand (smt_account()).
  // Outside a run, with SMT too, a wait (kind Fixed or Until) is final as it is
  // dated: its start is (nothing before it can move) and its length does not
  // depend on the siblings; work is, where no sibling can change state before
  // its end (smt_work()).
  void account(Func f, Tick d, PieceKind kind = PieceKind::Fixed, Tick amount = 0) {
    if (smt != nullptr && !smt_pieces.empty() && actor != nullptr && actor->running()) {
      smt_account_out(f, d, kind, amount);
      return;
    }
    account_final(f, d);
  }
  void account_final(Func f, Tick d) {
    record(f, d);
    // Work that continues the last piece, in the same function, extends it:
    // time_at() cuts one piece at any date exactly as it cuts the two.
    if (!owed_work.empty() && owed_work.back().func == f &&
        owed_work.back().start + owed_work.back().d == cursor)
      owed_work.back().d += d;
    else
      owed_work.push_back({f, cursor, d});
    cursor += d;
    if (!owe_turns) keep_order();
  }
  // Its CPU time by function as of `date` (an observer's, e.g. the window's
  // edge): without the part of its owed work that lies past it.
  // A spinner parked on its CPU (park_spinning()) spins from the date it parked
  // until its cursor, which whoever ends the wait moves in one piece, possibly past
  // `date` (a release seen a transfer later): the wait counts up to `date`, so a
  // window's edge splits a wait that spans it.
  FuncTimes time_at(Tick date) const {
    FuncTimes t = time;
    for (const OwedWork& w : owed_work) {
      const Tick past = std::min(w.d, std::max<Tick>(0, w.start + w.d - date));
      t[static_cast<std::size_t>(w.func)] -= past;
    }
    for (const SmtPiece& p : smt_pieces)  // counted at its dates as they stand: not past the date
      t[static_cast<std::size_t>(p.func)] -= std::min(p.d, std::max<Tick>(0, p.start + p.d - date));
    if (spin_parked && date >= spin_since) t[static_cast<std::size_t>(func)] += date - cursor;
    return t;
  }
  // Wait on this CPU, spinning, until another task's step (a release, a write to the
  // line) sets the cursor and unparks it: the CPU stays busy meanwhile (time_at()).
  void park_spinning() {
    spin_parked = true;
    spin_since = cursor;
    park();
    spin_parked = false;
  }
  // A completed semop() call, at its cursor's date.
  void count_semop() {
    ++semops;
    if (!turn_owed()) return;
    owed_semops.push_back(cursor);
    if (!smt_pieces.empty())
      smt_semop_pieces.push_back({static_cast<std::uint32_t>(owed_semops.size() - 1),
                                  static_cast<std::uint32_t>(smt_pieces.size())});
  }
  // Takes back the calls counted since `before` (a step that counts no op).
  void uncount_semops(std::uint64_t before) {
    const std::uint64_t n = semops - before;
    owed_semops.resize(owed_semops.size() - std::min<std::size_t>(owed_semops.size(), n));
    while (!smt_semop_pieces.empty() && smt_semop_pieces.back().index >= owed_semops.size())
      smt_semop_pieces.pop_back();
    semops = before;
  }
  // n rounds of the workload's own figure onto `counter`, at its cursor's date.
  void count_rounds(std::uint64_t& counter, std::uint64_t n) {
    counter += n;
    if (n == 0 || !turn_owed()) return;
    owed_rounds.push_back({cursor, n});
    if (!smt_pieces.empty())
      smt_rounds_pieces.push_back({static_cast<std::uint32_t>(owed_rounds.size() - 1),
                                   static_cast<std::uint32_t>(smt_pieces.size())});
  }
  // Its completed calls as of `date` (an observer's): without those counted
  // past it while it ran ahead of its turn; and the rounds so counted.
  std::uint64_t semops_at(Tick date) const {
    std::uint64_t n = semops;
    for (Tick d : owed_semops) n -= d > date ? 1 : 0;
    return n;
  }
  std::uint64_t rounds_past(Tick date) const {
    std::uint64_t n = 0;
    for (const OwedRounds& r : owed_rounds) n += r.date > date ? r.n : 0;
    return n;
  }
  // CPU time d of f from the cursor on, which does not move (a sleeper's CPU still
  // switching it out after it left the run queue).
  void record(Func f, Tick d) {
    if (trace != nullptr) trace->cpu_time(*this, f, cursor, d);
    count_time(f, d);
  }
  // CPU time d of f onto the task's and its CPU's totals (no trace event).
  void count_time(Func f, Tick d) {
    time[static_cast<std::size_t>(f)] += d;
    if (cpu_time != nullptr) (*cpu_time)[static_cast<std::size_t>(f)] += d;
  }
  // Move the cursor to t without charging CPU time (the task was off-CPU).
  void idle_until(Tick t) {
    if (t > cursor) {
      cursor = t;
      keep_order();
    }
  }
  // The running task never executes past the earliest pending event.
  // What it owes (work, counts) stays listed until the turn is taken: an
  // observer that runs first (dated earlier) must not see what is dated after it.
  void keep_order() {
    if (actor != nullptr && actor->running()) {
      take_turn();
      take_ipis();
    }
    clear_owed();
  }
  // The running task's turn at its cursor; with SMT, at its run's final date.
  void take_turn() {
    if (smt_pieces.empty())
      actor->wait_turn(cursor);
    else
      smt_settle();
  }
  // The run's dates are final: the trace records its CPU time.
  void smt_close() {
    smt->reading(cpu, -1);
    if (trace != nullptr)
      for (const SmtPiece& piece : smt_pieces)
        if (piece.d > 0) trace->cpu_time(*this, piece.func, piece.start, piece.d);
    smt_pieces.clear();
    smt_semop_pieces.clear();
    smt_rounds_pieces.clear();
  }
  // After a turn or a park: the IPIs posted to its CPU meanwhile are its to pay.
  void take_ipis() {
    if (ipis != nullptr) ipis->take();
  }
  // Block until another task's step unparks it (a waker, a releaser, a dispatch):
  // that step has set its cursor.
  void park() {
    actor->park();
    take_ipis();
  }
  void clear_owed() {
    owed_work.clear();
    owed_semops.clear();
    owed_rounds.clear();
  }
  // A parked task runs again at its cursor (dated by whoever wakes it, after
  // any interruption that landed in its wait): never earlier, or its next
  // request would be dated after others it has not seen yet. A cursor behind
  // the clock is a bug of the caller (it dated the task from a date it waited
  // past, e.g. with advance_to() instead of wait_until()): a time-order error
  // here, not a line's fault later or a silently wrong date.
  void resume_at_cursor() {
    if (cursor < actor->now()) resumed_in_the_past();
    actor->unpark_at(cursor);
  }
  [[noreturn]] void resumed_in_the_past() const;  // machine/task.cpp
  // An explicit point of order (e.g. before publishing a flag).
  void sync() {
    if (actor != nullptr) {
      if (actor->running())
        take_turn();
      else
        actor->wait_turn(cursor);
      take_ipis();
    }
    clear_owed();
  }
};

// Reads served ahead inside an SMT run so far in this process (Task::read_ahead_in_run(),
// also counted by read_aheads()): for benchmarks and tests.
std::uint64_t run_read_aheads();

// Attributes the charges in a scope to one function (restores the caller's on exit).
class InFunc {
 public:
  // Whether it enters or leaves a spin is the same at both ends: the functions
  // entered in its scope have restored t.func by its end.
  InFunc(Task& t, Func f)
      : task_(t), saved_(t.func), flips_(t.smt != nullptr && spins(f) != spins(saved_)) {
    if (flips_) t.note_spin(spins(f));
    t.func = f;
  }
  ~InFunc() {
    if (flips_ && task_.smt != nullptr) task_.note_spin(spins(saved_));
    task_.func = saved_;
  }
  InFunc(const InFunc&) = delete;
  InFunc& operator=(const InFunc&) = delete;

 private:
  static bool spins(Func f) { return category_of(f) == CpuCategory::Spin; }
  Task& task_;
  Func saved_;
  bool flips_;
};

}  // namespace semsim::machine
