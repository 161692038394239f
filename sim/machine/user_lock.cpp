#include "machine/user_lock.hpp"

#include <algorithm>

#include "core/errors.hpp"
#include "machine/store_buffer.hpp"

namespace semsim::machine {

UserLockKind user_lock_kind(const std::string& name, const std::string& field) {
  if (name == "tas") return UserLockKind::Tas;
  if (name == "ttas") return UserLockKind::Ttas;
  if (name == "ticket") return UserLockKind::Ticket;
  if (name == "mcs") return UserLockKind::Mcs;
  throw InputError(field + ": '" + name + "' is not a lock kind (allowed: tas, ttas, ticket, mcs)");
}

const char* user_lock_name(UserLockKind k) {
  switch (k) {
    case UserLockKind::Tas:
      return "tas";
    case UserLockKind::Ttas:
      return "ttas";
    case UserLockKind::Ticket:
      return "ticket";
    case UserLockKind::Mcs:
      return "mcs";
  }
  return "?";
}

void LineWatchers::park(Task& t) {
  parked_.push_back(&t);
  t.actor->park();
}

void LineWatchers::wake_all(Tick date, Rng& rng) {
  std::vector<Task*> woken;
  woken.swap(parked_);
  // Fisher-Yates with our own Rng: the order the home agent serves the re-reads in.
  for (std::size_t i = woken.size(); i > 1; --i)
    std::swap(woken[i - 1], woken[static_cast<std::size_t>(rng.below(i))]);
  for (Task* t : woken) {
    t->advance_to(date);  // spinning on its shared copy until the invalidation
    t->resume_at_cursor();
  }
}

UserLock::UserLock(UserLockKind kind, int cpus, const LineContention& contention,
                   std::uint64_t seed)
    : kind_(kind), rng_(seed) {
  line_.set_contention(contention);
  if (kind_ == UserLockKind::Mcs) {
    for (int c = 0; c < cpus; ++c) {
      auto& n = nodes_.emplace_back();
      n.line.set_name("mcs_node" + std::to_string(c));
      n.line.set_contention(contention);
    }
  }
}

void UserLock::wake(LineWatchers& w, Tick date) {
  if (!w.empty()) w.wake_all(date, rng_);
}

namespace {

// Re-read a watched line until ok() holds (read at the request's date, in
// the line's service order); between reads, spin on the shared copy, i.e.
// park until the next write to the line, unless one came in the meantime.
template <class Ok>
void spin_until(const Topology& topo, Task& task, CacheLine& line, LineWatchers& watchers,
                const std::uint64_t& writes, std::uint64_t& rereads, Ok ok) {
  for (;;) {
    const std::uint64_t seen = writes;
    const Tick done = issue_load(topo, task, line);
    const bool good = ok();
    task.advance_to(done);
    if (good) return;
    if (writes == seen) watchers.park(task);
    ++rereads;
  }
}

}  // namespace

void UserLock::lock(const Topology& topo, Task& task) {
  task.sync();
  InFunc in(task, Func::RawSpinLock);
  switch (kind_) {
    case UserLockKind::Tas:
      lock_tas(topo, task);
      break;
    case UserLockKind::Ttas:
      lock_ttas(topo, task);
      break;
    case UserLockKind::Ticket:
      lock_ticket(topo, task);
      break;
    case UserLockKind::Mcs:
      lock_mcs(topo, task);
      break;
  }
}

// The state a request sees is the state at its issue date: the line serves
// requests in issue order (CacheLine queues a request behind earlier ones),
// so this is also the order in which their effects land.

void UserLock::lock_tas(const Topology& topo, Task& task) {
  for (;;) {
    const Tick done = issue_rmw(topo, task, line_);
    const bool won = !held_;
    held_ = true;
    task.advance_to(done);
    if (won) return;
  }
}

void UserLock::lock_ttas(const Topology& topo, Task& task) {
  for (;;) {
    spin_until(topo, task, line_, watchers_, line_writes_, stats_.rereads, [&] { return !held_; });
    const Tick done = issue_rmw(topo, task, line_);
    const bool won = !held_;
    held_ = true;
    ++line_writes_;
    task.advance_to(done);
    wake(watchers_, done);  // the xchg invalidated the spinners' copies
    if (won) return;
  }
}

void UserLock::lock_ticket(const Topology& topo, Task& task) {
  const Tick done = issue_rmw(topo, task, line_);
  const std::uint64_t mine = next_ticket_++;
  ++line_writes_;
  task.advance_to(done);
  if (reread_every_write_) wake(watchers_, done);
  spin_until(topo, task, line_, watchers_, line_writes_, stats_.rereads,
             [&] { return now_serving_ == mine; });
}

void UserLock::lock_mcs(const Topology& topo, Task& task) {
  Node& me = nodes_[static_cast<std::size_t>(task.cpu)];
  // Initialise our node (its line was last written by whoever handed us the lock).
  const IssuedStore init = issue_store(topo, task, me.line);
  me.waiting = true;
  me.next = -1;
  task.advance_to(init.issued);
  const Tick done = issue_rmw(topo, task, line_);
  const int pred = tail_;
  tail_ = task.cpu;
  task.advance_to(done);
  if (pred < 0) return;
  // Link behind the predecessor: a store into its node (it re-reads: it spins there).
  Node& p = nodes_[static_cast<std::size_t>(pred)];
  const IssuedStore linked = issue_store(topo, task, p.line);
  p.next = task.cpu;
  ++p.writes;
  task.advance_to(linked.issued);
  wake(p.watchers, linked.visible);
  spin_until(topo, task, me.line, me.watchers, me.writes, stats_.rereads,
             [&] { return !me.waiting; });
}

void UserLock::unlock(const Topology& topo, Task& task) {
  InFunc in(task, Func::SemUnlock);
  ++stats_.acquisitions;
  if (kind_ == UserLockKind::Mcs) {
    unlock_mcs(topo, task);
    return;
  }
  // TAS/TTAS: the word = 0; ticket: now_serving + 1. A plain store.
  const IssuedStore release = issue_store(topo, task, line_);
  if (kind_ == UserLockKind::Ticket)
    ++now_serving_;
  else
    held_ = false;
  ++line_writes_;
  task.advance_to(release.issued);
  wake(watchers_, release.visible);
}

void UserLock::unlock_mcs(const Topology& topo, Task& task) {
  Node& me = nodes_[static_cast<std::size_t>(task.cpu)];
  int succ = -1;
  spin_until(topo, task, me.line, me.watchers, me.writes, stats_.rereads, [&] {
    succ = me.next;
    return true;
  });
  if (succ < 0) {
    // Nobody linked: cmpxchg the tail back to empty, unless someone swapped it meanwhile.
    const Tick done = issue_rmw(topo, task, line_);
    const bool alone = tail_ == task.cpu;
    if (alone) tail_ = -1;
    task.advance_to(done);
    if (alone) return;
    // A successor took the tail and is linking: wait for its store into our node.
    spin_until(topo, task, me.line, me.watchers, me.writes, stats_.rereads, [&] {
      succ = me.next;
      return succ >= 0;
    });
  }
  Node& s = nodes_[static_cast<std::size_t>(succ)];
  const IssuedStore handed = issue_store(topo, task, s.line);
  s.waiting = false;
  ++s.writes;
  task.advance_to(handed.issued);
  wake(s.watchers, handed.visible);
}

}  // namespace semsim::machine
