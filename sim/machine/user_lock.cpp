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

UserLock::UserLock(UserLockKind kind, int cpus, const LineContention& contention,
                   std::uint64_t seed)
    : kind_(kind), watchers_(seed) {
  line_.set_contention(contention);
  watchers_.attach(line_);
  if (kind_ == UserLockKind::Mcs) {
    for (int c = 0; c < cpus; ++c) {
      // A deque: the node stays where it is. Its wake order: its own seed.
      auto& n = nodes_.emplace_back(seed + 1 + static_cast<std::uint64_t>(c));
      n.line.set_name("mcs_node" + std::to_string(c));
      n.line.set_contention(contention);
      n.watchers.attach(n.line);
    }
  }
}

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
  acquired(topo, task);
}

void UserLock::acquired(const Topology& topo, const Task& task) {
  acquired_at_ = task.cursor;
  if (released_by_ < 0) return;
  ++stats_.handovers;
  stats_.handover += std::max<Tick>(0, task.cursor - released_visible_);
  ++stats_.winner[static_cast<std::size_t>(topo.distance(released_by_, task.cpu))];
  released_by_ = -1;
}

void UserLock::released(const Task& task, Tick visible) {
  stats_.hold += task.cursor - acquired_at_;
  released_visible_ = visible;
  released_by_ = task.cpu;
}

// The state a request sees is the state at its issue date: the line serves
// requests in issue order (CacheLine queues a request behind earlier ones),
// so this is also the order in which their effects land.

void UserLock::lock_tas(const Topology& topo, Task& task) {
  for (;;) {
    const Tick done = issue_rmw(topo, task, line_);
    ++stats_.rmws;
    const bool won = !held_;
    held_ = true;
    task.advance_to(done);
    if (won) return;
  }
}

void UserLock::lock_ttas(const Topology& topo, Task& task) {
  for (;;) {
    spin_on_line(topo, task, line_, stats_.rereads, [&] { return !held_; });
    // The xchg invalidates the other spinners' copies (the line wakes them).
    const Tick done = issue_rmw(topo, task, line_);
    ++stats_.rmws;
    const bool won = !held_;
    held_ = true;
    task.advance_to(done);
    if (won) return;
  }
}

void UserLock::lock_ticket(const Topology& topo, Task& task) {
  // The xadd, like every write to the line, makes the spinners re-read it.
  const Tick done = issue_rmw(topo, task, line_);
  const std::uint64_t mine = next_ticket_++;
  task.advance_to(done);
  spin_on_line(topo, task, line_, stats_.rereads, [&] { return now_serving_ == mine; });
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
  task.advance_to(linked.issued);  // the line wakes our predecessor once it is visible
  spin_on_line(topo, task, me.line, stats_.rereads, [&] { return !me.waiting; });
}

void UserLock::unlock(const Topology& topo, Task& task) {
  task.pay_turn();
  InFunc in(task, Func::SemUnlock);
  ++stats_.acquisitions;
  if (kind_ == UserLockKind::Mcs) {
    unlock_mcs(topo, task);
    return;
  }
  // TAS/TTAS: the word = 0; ticket: now_serving + 1. A plain store.
  const IssuedStore release = issue_store(topo, task, line_);
  released(task, release.visible);
  if (kind_ == UserLockKind::Ticket)
    ++now_serving_;
  else
    held_ = false;
  task.advance_to(release.issued);  // the line wakes the spinners once it is visible
}

void UserLock::unlock_mcs(const Topology& topo, Task& task) {
  Node& me = nodes_[static_cast<std::size_t>(task.cpu)];
  int succ = -1;
  spin_on_line(topo, task, me.line, stats_.rereads, [&] {
    succ = me.next;
    return true;
  });
  if (succ < 0) {
    // Nobody linked: cmpxchg the tail back to empty, unless someone swapped it meanwhile.
    const Tick done = issue_rmw(topo, task, line_);
    const bool alone = tail_ == task.cpu;
    if (alone) tail_ = -1;
    if (alone) released(task, done);
    task.advance_to(done);
    if (alone) return;
    // A successor took the tail and is linking: wait for its store into our node.
    spin_on_line(topo, task, me.line, stats_.rereads, [&] {
      succ = me.next;
      return succ >= 0;
    });
  }
  Node& s = nodes_[static_cast<std::size_t>(succ)];
  const IssuedStore handed = issue_store(topo, task, s.line);
  released(task, handed.visible);
  s.waiting = false;
  task.advance_to(handed.issued);  // the line wakes the successor once it is visible
}

}  // namespace semsim::machine
