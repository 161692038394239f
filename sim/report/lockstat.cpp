#include "report/lockstat.hpp"

#include <algorithm>

namespace semsim::report {

namespace {

// lock_stat averages wait time over contentions and hold time over acquisitions.
Json row(const std::string& name, const char* kind, const machine::LockStats& s) {
  auto avg = [](Tick total, std::uint64_t n) {
    return n ? ticks_to_ns(total) / static_cast<double>(n) : 0.0;
  };
  return {{"name", name},
          {"kind", kind},
          {"acquisitions", s.acquisitions},
          {"contentions", s.contended},
          {"contended_share",
           s.acquisitions ? static_cast<double>(s.contended) / static_cast<double>(s.acquisitions)
                          : 0.0},
          {"acq_bounces", s.acq_bounces},
          {"con_bounces", s.con_bounces},
          {"wait_total_ns", ticks_to_ns(s.wait)},
          {"wait_avg_ns", avg(s.wait, s.contended)},
          {"wait_max_ns", ticks_to_ns(s.wait_max)},
          {"hold_total_ns", ticks_to_ns(s.hold)},
          {"hold_avg_ns", avg(s.hold, s.acquisitions)},
          {"hold_max_ns", ticks_to_ns(s.hold_max)}};
}

void merge(machine::LockStats& into, const machine::LockStats& s) {
  into.acquisitions += s.acquisitions;
  into.contended += s.contended;
  into.wait += s.wait;
  into.hold += s.hold;
  into.wait_max = std::max(into.wait_max, s.wait_max);
  into.hold_max = std::max(into.hold_max, s.hold_max);
  into.acq_bounces += s.acq_bounces;
  into.con_bounces += s.con_bounces;
}

void add(Json& rows, Json r) {
  if (r["acquisitions"].get<std::uint64_t>() > 0 || r["contentions"].get<std::uint64_t>() > 0)
    rows.push_back(std::move(r));
}

}  // namespace

Json lockstat_table(const ipc::SemArray& sma, const machine::Scheduler* sched,
                    const std::vector<machine::LineStats>& rq_at_start,
                    const std::vector<NamedLock>& workload_locks) {
  Json rows = Json::array();
  add(rows, row("sma->sem_perm.lock", "spinlock", sma.array_lock->stats()));
  if (sma.rwlock) {
    add(rows, row("sma->sem_perm.lock-W", "rwlock-write", sma.rwlock->stats().write));
    add(rows, row("sma->sem_perm.lock-R", "rwlock-read", sma.rwlock->stats().read));
  }
  if (!sma.sem_locks.empty()) {
    machine::LockStats all;
    for (const auto& l : sma.sem_locks) merge(all, l->stats());
    add(rows, row("sem->lock", "spinlock", all));
  }
  for (const auto& l : workload_locks) add(rows, row(l.name, "spinlock", l.lock->stats()));
  if (sched != nullptr && rq_at_start.size() == static_cast<std::size_t>(sched->cpus())) {
    // One atomic on the line per schedule() or wake-up: the acquisitions; the
    // line's misses are its bounces; the time requests queued behind earlier
    // transfers of the line is the wait. No hold time, no contention count.
    std::uint64_t acq = 0, bounces = 0;
    Tick queued = 0;
    for (int c = 0; c < sched->cpus(); ++c) {
      const auto& now = sched->cpu(c).rq_lock.stats();
      const auto& then = rq_at_start[static_cast<std::size_t>(c)];
      acq += now.accesses - then.accesses;
      bounces += now.misses() - then.misses();
      queued += now.queued - then.queued;
    }
    if (acq > 0)
      rows.push_back({{"name", "rq->lock"},
                      {"kind", "rq-lock"},
                      {"acquisitions", acq},
                      {"contentions", nullptr},
                      {"contended_share", nullptr},
                      {"acq_bounces", bounces},
                      {"con_bounces", nullptr},
                      {"wait_total_ns", ticks_to_ns(queued)},
                      {"wait_avg_ns", nullptr},
                      {"wait_max_ns", nullptr},
                      {"hold_total_ns", nullptr},
                      {"hold_avg_ns", nullptr},
                      {"hold_max_ns", nullptr}});
  }
  return rows;
}

}  // namespace semsim::report
