#include "machine/cache_line.hpp"

#include <algorithm>
#include <string>

#include "core/errors.hpp"
#include "machine/line_spin.hpp"

namespace semsim::machine {

std::uint64_t LineStats::misses() const {
  std::uint64_t n = from_memory;
  for (auto t : transfers) n += t;
  return n;
}

void time_order_violation(const std::string& line, Tick request, Tick latest) {
  throw SimulationError("time order: line '" + line + "' got a request dated " +
                        std::to_string(ticks_to_ns(request)) + " ns after one dated " +
                        std::to_string(ticks_to_ns(latest)) + " ns");
}

namespace detail {
std::uint32_t g_quiet_reads = kQuietReads;
std::uint64_t g_read_aheads = 0;
}  // namespace detail

std::uint64_t read_aheads() { return detail::g_read_aheads; }

void set_quiet_reads(std::uint32_t n) { detail::g_quiet_reads = std::max<std::uint32_t>(n, 1); }

Tick CacheLine::wrote(Tick completed, Tick visible_after) {
  ++writes_;
  if (watchers_ != nullptr) watchers_->wake_all(std::max(completed, visible_after));
  return completed;
}

Tick CacheLine::access_out_of_line(const Topology& topo, int cpu, Access kind, Tick t,
                                   Tick visible_after) {
  const auto& costs = topo.params();
  const auto ucpu = static_cast<std::size_t>(cpu);
  if (t < last_request_) time_order_violation(name_, t, last_request_);
  // The strict order serves this write before a read dated as late or later.
  if (kind != Access::Read && t <= read_ahead_until_)
    throw ReadAheadConflict("read-ahead: line '" + name_ + "' written at " +
                            std::to_string(ticks_to_ns(t)) + " ns, after a read at " +
                            std::to_string(ticks_to_ns(read_ahead_until_)) + " ns");
  note_request(kind, t);
  auto wrote = [&](Tick completed) {
    return kind == Access::Read ? completed : this->wrote(completed, visible_after);
  };
  // smt_shared_l1: the line in (or on its way to) this CPU's core serves it too.
  if (contention_.smt_shared_l1) {
    if (const Tick merged = shared_l1(topo, cpu, kind, t); merged >= 0) {
      ++stats_.hits;
      return wrote(merged);
    }
  }
  // A read the reader's inclusive LLC can serve: it has held a copy since
  // the last write, from the date it arrived; the home agent is not involved.
  const auto die = static_cast<std::size_t>(topo.coords(cpu).die);
  if (contention_.llc_hit > 0) {
    if (llc_ready_.size() <= die) llc_ready_.resize(die + 1, -1), llc_busy_.resize(die + 1, 0);
    if (kind == Access::Read && owner_ < 0 && llc_ready_[die] >= 0) {
      ++stats_.hits;
      sharers_.set(ucpu);
      last_read_miss_ = cpu;
      // The LLC serves one read of the line after another.
      llc_busy_[die] = std::max({t, llc_ready_[die], llc_busy_[die]}) + contention_.llc_hit;
      return llc_busy_[die];
    }
  }
  const Tick start = std::max(t, busy_until_);
  stats_.queued += start - t;
  Tick cost = 0;
  auto record = [&](int from) {
    ++stats_.transfers[static_cast<std::size_t>(topo.distance(from, cpu))];
    return topo.transfer(from, cpu);
  };
  // Requests still queued at the home agent when this one is issued.
  std::size_t queued_ahead = 0;
  if (contention_.queue_factor > 0) {
    while (!queued_done_.empty() && queued_done_.front() <= t) queued_done_.pop_front();
    queued_ahead = queued_done_.size();
  }
  if (owner_ >= 0) {
    cost = record(owner_);  // fetch the modified copy from its owner
  } else if (sharers_.any()) {
    if (kind == Access::Read) {
      int from = last_writer_ >= 0 ? last_writer_ : static_cast<int>(sharers_._Find_first());
      if (contention_.nearest_sharer) {
        Tick best = topo.transfer(from, cpu);
        for (std::size_t s = sharers_._Find_first(); s < sharers_.size();
             s = sharers_._Find_next(s)) {
          const Tick c = topo.transfer(static_cast<int>(s), cpu);
          if (c < best) best = c, from = static_cast<int>(s);
        }
      }
      cost = record(from);
    } else {
      // Read-for-ownership: invalidate every other sharer; the farthest one decides.
      int farthest = -1;
      Tick worst = -1;
      for (std::size_t s = sharers_._Find_first(); s < sharers_.size();
           s = sharers_._Find_next(s)) {
        if (s == ucpu) continue;
        Tick c = topo.transfer(static_cast<int>(s), cpu);
        if (c > worst) worst = c, farthest = static_cast<int>(s);
      }
      cost = farthest < 0 ? costs.l1_hit : record(farthest);  // sole sharer: silent upgrade
      // Right after this CPU's own read miss: its request left with the read.
      if (farthest >= 0 && last_read_miss_ == cpu)
        cost = static_cast<Tick>(static_cast<double>(cost) * costs.write_after_read);
    }
  } else {
    ++stats_.from_memory;
    cost = topo.memory_latency(cpu, home_node_);
  }
  // No miss is served sooner than an L1 hit (write_after_read may scale a
  // transfer below it): the store buffer dates a store's visibility from its
  // issue, one L1 hit after the request (machine/store_buffer.cpp).
  cost = std::max(cost, costs.l1_hit);
  // rmw_conflict: a locked RMW that had to queue behind another request.
  if (kind == Access::Rmw && start > t && contention_.rmw_conflict > 0)
    cost = static_cast<Tick>(static_cast<double>(cost) * (1.0 + contention_.rmw_conflict));
  if (queued_ahead > 0 && kind != Access::Read)
    cost = static_cast<Tick>(static_cast<double>(cost) *
                             (1.0 + contention_.queue_factor * static_cast<double>(queued_ahead)));
  const Tick done = start + cost;
  // The line is serialised until this request is done with it: a transfer,
  // plus the atomic for an RMW (the core holds the line locked meanwhile).
  busy_until_ = done + (kind == Access::Rmw ? costs.atomic_rmw : 0);
  if (kind == Access::Read && contention_.read_occupancy < 1)
    busy_until_ = start + static_cast<Tick>(static_cast<double>(cost) * contention_.read_occupancy);
  if (contention_.queue_factor > 0) queued_done_.push_back(busy_until_);
  if (contention_.llc_hit > 0) {
    if (kind == Access::Read)
      llc_ready_[die] = done;
    else
      std::fill(llc_ready_.begin(), llc_ready_.end(), Tick{-1});
  }
  last_read_miss_ = kind == Access::Read ? cpu : -1;
  if (kind == Access::Read) {
    if (owner_ >= 0) {
      sharers_.set(static_cast<std::size_t>(owner_));
      last_writer_ = owner_;
      owner_ = -1;
    }
    sharers_.set(ucpu);
  } else {
    sharers_.reset();
    owner_ = cpu;
    last_writer_ = cpu;
  }
  const Tick completed = done + (kind == Access::Rmw ? costs.atomic_rmw : 0);
  if (contention_.smt_shared_l1)
    core_fill_[static_cast<std::size_t>(topo.coords(cpu).core)] = {
        completed, cpu, kind != Access::Read, kind == Access::Rmw};  // locked
  return wrote(completed);
}

// smt_shared_l1 (cache_line.hpp): a request rides its sibling's fill in flight
// once: the fill serves the requests present when it arrives, and the line
// leaves for the requests queued meanwhile, so the next one queues (a fill a
// sibling already rode keeps its requester as -2 - cpu). With nothing queued,
// a line the core owns or shares is a hit for either thread. A store or RMW
// never rides a sibling's locked RMW (cache_line.hpp): it queues.
Tick CacheLine::shared_l1(const Topology& topo, int cpu, Access kind, Tick t) {
  const int core = topo.coords(cpu).core;
  const auto ucore = static_cast<std::size_t>(core);
  if (core_fill_.size() <= ucore) core_fill_.resize(ucore + 1);
  CoreFill& f = core_fill_[ucore];
  const bool ridden = f.cpu < -1;
  const int by = ridden ? -2 - f.cpu : f.cpu;  // whose request the core's latest fill was
  const bool sibling_fill = by >= 0 && by != cpu;
  Tick from = -1;
  int src = -1;
  bool ride = false;
  // A store or RMW does not share a sibling's locked RMW in flight: the locked
  // op keeps the line to itself until it completes, and the snoop of the next
  // request queued at the home agent, held back meanwhile, then takes it away.
  if (sibling_fill && f.done > t && !ridden && (kind == Access::Read || (f.owns && !f.locked))) {
    from = f.done, src = by, ride = true;  // in flight: ride the core's fill
  } else if (busy_until_ > t) {
    return -1;  // others' requests are queued: the line leaves the core for them first
  } else if (owner_ >= 0 && owner_ != cpu && topo.coords(owner_).core == core) {
    from = t, src = owner_;  // the core owns it: no home agent
  } else if (kind == Access::Read && owner_ < 0 && sibling_fill &&
             sharers_.test(static_cast<std::size_t>(by))) {
    from = t, src = by;  // the core shares it: an L1 hit
  } else {
    return -1;
  }
  // A read or store hits the core's L1; an RMW takes the SMT latency (mctop's
  // CAS ping-pong between siblings, the locked op included).
  const Tick done = from + (kind == Access::Rmw ? topo.transfer(src, cpu) : topo.params().l1_hit);
  if (kind != Access::Read) {
    last_read_miss_ = -1;
    if (owner_ >= 0 && topo.coords(owner_).core == core) owner_ = cpu, last_writer_ = cpu;
  } else if (owner_ < 0) {
    sharers_.set(static_cast<std::size_t>(cpu));
  }
  // A ride takes no home-agent time of its own; a local RMW holds the line locked.
  if (!ride && kind == Access::Rmw) busy_until_ = std::max(busy_until_, done);
  const bool core_owns = owner_ >= 0 && topo.coords(owner_).core == core;
  f = {done, ride ? -2 - cpu : cpu, kind != Access::Read || core_owns || (f.owns && f.done > t),
       kind == Access::Rmw};  // locked
  return done;
}

}  // namespace semsim::machine
