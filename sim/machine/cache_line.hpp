// A cache line with MESI-like coherence state and a serialisation point.
//
// State: one owner holding it Modified/Exclusive, or a set of sharers. A miss
// waits until the line's previous transfer is done (the directory / home
// agent serialises requests to one line), then costs a transfer from the
// owner at the topology distance, an invalidation of the farthest sharer, or
// a fetch from memory (at the NUMA distance of the line's home node, if it has one). A store's
// or RMW's invalidation right after the same CPU's read miss of the line (no other miss
// between) costs `write_after_read` of it: x86 issues the request for ownership while the
// read is in flight (machine/params.hpp; the source is in sim/config/machine_decl.cpp). Hot lines
// therefore queue by themselves: that is where most of the scaling story comes from (lock words,
// shared sem_otime, two semaphores false-sharing one line).
//
// Time order: requests reach a line in the order of their dates (the time
// core guarantees it: machine/task.hpp), and access() checks it: a request
// dated before the line's latest one is a SimulationError, never a silent
// queue behind a transfer that has not happened yet. The coherence state
// changes at the request's date.
//
// Read-ahead (machine/task.hpp): the one request that may come before
// requests dated earlier is a read hit on a quiet line (kQuietReads reads
// since its last write), served by read_ahead() without the task's turn.
// The line keeps the latest date it served that way, and a write or RMW
// dated no later than it (one the strict order would have served first, so
// that the read would have missed) throws ReadAheadConflict: the run is
// discarded and done again in strict order. A read-ahead changes nothing a
// later request depends on (a hit moves no coherence state and books no
// transfer), only the line's counters, which no observer reads before the
// read's date (core/simulation.hpp, spawn_observer()).
#pragma once

#include <algorithm>
#include <array>
#include <bitset>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "machine/topology.hpp"

namespace semsim::machine {

constexpr int kMaxCpus = 256;

class LineWatchers;  // machine/line_spin.hpp

enum class Access : std::uint8_t { Read, Write, Rmw };

// Throws the SimulationError of a request that breaks time order.
[[noreturn]] void time_order_violation(const std::string& line, Tick request, Tick latest);

struct LineStats {
  std::uint64_t accesses = 0, hits = 0, from_memory = 0;
  std::array<std::uint64_t, kDistanceClasses> transfers{};  // misses served by a cache, by distance
  Tick queued = 0;  // time requests waited behind earlier transfers of this line
  std::uint64_t misses() const;
};

// Contended-line mechanisms. rmw_conflict is on for every line (its default
// is the calibrated value below); the others are opt-in per line, and a line
// without them behaves as before (the kernel generations' lines do not use
// them unless kernel_line_spinning is on).
//   rmw_conflict: a locked RMW that misses while the home agent is still
//     serving an earlier request for the line (it has to queue: a conflict)
//     costs (1 + rmw_conflict) times its two-party latency. The two-party
//     latencies are CAS ping-pongs between two otherwise idle cores (mctop,
//     nviennot); with other requesters in flight, the home agent resolves the
//     conflict before it forwards the line (on QPI: the requesters' RspCnflt /
//     AckCnflt exchange with the home, which then sends Cmp_Fwd to the owner),
//     about one more latency per conflicting request; it does not grow with
//     the queue (the conflicts are resolved one after another, each once).
//     Reads (served from a shared copy or forwarded) and plain stores (whose
//     RFO leaves the core from the store buffer and does not hold the line
//     locked) keep their latency. See kRmwConflict for the value's source.
//   nearest_sharer: a read of a line others share is answered by the sharer
//     nearest the reader (the forwarding of MESIF's F / MOESI's O state
//     migrates to the latest reader), not always by its last writer.
//   queue_factor: a request for ownership (store, RMW) costs
//     (1 + queue_factor * q) times its two-party latency, q = requests to
//     this line still queued at the home agent ahead of it: invalidating and
//     arbitrating among many requesters takes longer (reads of a shared copy
//     need no invalidation and keep their latency).
//   llc_hit: > 0 on a machine whose last-level cache is inclusive and serves
//     reads of lines its cores share (Intel's core-valid bits): once a copy
//     reached a die's LLC after the last write, a read from that die costs
//     this from the copy's arrival, without the home agent: the LLC serves
//     its die's reads of the line one after another.
//   read_occupancy: < 1 when the home agent pipelines reads of a line: a read
//     miss keeps the line busy for this share of its transfer (the data still
//     takes the whole transfer to arrive); ownership requests keep it busy
//     for the whole transfer.
//   smt_shared_l1: SMT siblings share their core's L1 (machine/smt.hpp): a
//     request while a sibling's request for the line is in flight merges into
//     it (one fill, the core's): it completes right after the sibling's, with
//     no home-agent slot of its own (a read after any request, a store or RMW
//     after a plain store). A store or RMW does not ride a sibling's locked
//     RMW: a LOCK-prefixed op keeps its line locked in the cache until it
//     completes, holding back snoops (Intel SDM vol. 3A, 8.1.4 "Effects of a
//     LOCK Operation on Internal Processor Caches"), and the snoop of the
//     request queued next at the home agent then takes the line, so the
//     sibling's request for ownership queues there like any other core's.
// rmw_conflict's value, the same for every machine: assumption, one more
// two-party latency per conflicting locked RMW (the conflict round above;
// QPI's conflict flow as in Intel, "An Introduction to the Intel QuickPath
// Interconnect", 2009 [recalled, not verified here]). Checked, not fitted, on
// the published lock curves (mctop_locks, both machines; `semsim reproduce
// --only locks`): c = 0 / 0.5 / 1 / 1.5 give a shape median |error| of
// 13.7 / 10.6 / 12.1 / 9.6 % and 23 / 25 / 24 / 24 of the 31 checks passing,
// so the curves favour any c in 0.5-1.5 over none without pinning it; with
// the no-ride rule above in place c = 0.5 / 1 / 1.5 give 13.3 / 12.0 / 15.7 %
// and 24 of 31 each, so c = 1 stays (validation/rwlock-2013.md has both grids).
inline constexpr double kRmwConflict = 1.0;

struct LineContention {
  double rmw_conflict = kRmwConflict;
  bool nearest_sharer = false;
  bool smt_shared_l1 = false;
  double queue_factor = 0;
  double read_occupancy = 1;
  Tick llc_hit = 0;
};

// The contended-line mechanisms of lock-stress's lines and, with
// kernel_line_spinning, of the kernel's lock and semaphore-array lines: the same
// on every machine, calibrated together on the published
// mctop lock curves (shared/reference/data/mctop_locks, no_backoff, both
// machines; SEMSIM_LOCK_BENCH=1 build/dev/semsim_tests
// --gtest_filter=LockCurveBench* prints them; grid in the lock-curve report):
//   spinners re-read after every write to the line (line_spin.hpp:
//     structural, no parameter);
//   nearest_sharer = true: assumption (a shared line is forwarded by a nearby
//     holder, as MESIF's F and MOESI's O states migrate); with the
//     last-writer rule the ticket curves came out 2-3x too steep on the
//     8-socket machine;
//   read_occupancy = 0.5: assumption, calibrated (grid 0.3-1.0): the home
//     agent pipelines reads of one line, each holding it half its transfer;
//     1.0 left every ticket curve 30-45 % too steep, 0.3 made the Opteron's
//     too flat;
//   queue_factor = 0: calibrated (grid 0-0.05): any growth of the ownership
//     transfers with the queue made TAS too steep once reads pipeline;
//   llc_hit = 0 (off): serving shared reads from the Westmere-EX's inclusive
//     LLC (78 cycles, mctop_diassrv8.csv) made its ticket curve 50-120 % too
//     flat;
//   smt_shared_l1 = true: structural, no parameter (the hardware threads of
//     a core share its L1 data cache and its fill buffers: Intel 64 and IA-32
//     Architectures Optimization Reference Manual, Intel Hyper-Threading
//     Technology chapter [recalled, not verified here]); without it two
//     siblings spinning on the lock's line took two home-agent slots per
//     round, and TAS / TTAS on westmere-ex-160 came out 35-55 % too slow
//     from 100 threads on (cores-first placement).
inline LineContention calibrated_line_contention() {
  LineContention c;
  c.nearest_sharer = true;
  c.smt_shared_l1 = true;
  c.read_occupancy = 0.5;
  return c;
}

// Reads since a line's last write after which it counts as quiet, so that a
// hit on it may be served ahead of the clock (read-ahead). Speed only, never
// results: a read-ahead that was wrong is caught and the run done again, so
// any value gives the same bytes. 4,096 (assumption, measured on the bench
// cases: the array header's lines take thousands of reads per write once
// the hysteresis phase is over, the hot semaphore lines a few); the tests set
// it to 1 to read ahead wherever it is allowed.
inline constexpr std::uint32_t kQuietReads = 4096;
void set_quiet_reads(std::uint32_t n);  // for tests (process-wide)
// Reads served ahead of the clock so far in this process (benchmarks, tests).
std::uint64_t read_aheads();
namespace detail {
extern std::uint32_t g_quiet_reads;  // set_quiet_reads()
extern std::uint64_t g_read_aheads;  // read_aheads()
}  // namespace detail

class CacheLine {
 public:
  CacheLine() = default;
  explicit CacheLine(std::string name) : name_(std::move(name)) {}

  // A request by `cpu` issued at t (no earlier than the line's latest
  // request); returns when it completes. A write or RMW wakes the line's
  // spinners once it is visible: at its completion, or at `visible_after`
  // if later (a store that leaves a store buffer behind earlier ones, TSO).
  // Inline up to a hit (the line here in a state that allows the access, in time
  // order, not a write into a read served ahead): most requests; the rest, and the
  // errors, out of line.
  Tick access(const Topology& topo, int cpu, Access kind, Tick t, Tick visible_after = 0) {
    if (t >= last_request_ && hits(cpu, kind) && (kind == Access::Read || t > read_ahead_until_))
        [[likely]]
      return hit(topo.params(), kind, t, visible_after);
    return access_out_of_line(topo, cpu, kind, t, visible_after);
  }
  Tick last_request() const { return last_request_; }
  // Read-ahead: a read by `cpu` at t that may come before requests dated
  // earlier (see the header). Returns its completion if it is a hit on a
  // quiet line, else -1 (then the reader takes its turn and calls access()).
  // Inline, as quiet_hit(): most of the kernel's reads end here.
  Tick read_ahead(const Topology& topo, int cpu, Tick t) {
    if (!quiet_hit(cpu)) return -1;
    if (t < last_request_) time_order_violation(name_, t, last_request_);
    read_ahead_until_ = std::max(read_ahead_until_, t);
    ++detail::g_read_aheads;
    ++stats_.accesses;
    ++stats_.hits;
    return t + topo.params().l1_hit;  // as access()'s read hit
  }
  // Would a read by `cpu` now be a hit on a quiet line (what read_ahead() serves)?
  bool quiet_hit(int cpu) const {
    return reads_since_write_ >= detail::g_quiet_reads && hits(cpu, Access::Read);
  }
  // A read served ahead is dated t after all (its SMT run was re-dated): a write
  // dated no later than t is a conflict from now on.
  void mark_read_through(Tick t) { read_ahead_until_ = std::max(read_ahead_until_, t); }
  // The line is kept busy until t by traffic the caller accounts for itself
  // (e.g. the re-reads of every ticket-lock spinner after a release).
  void occupy_until(Tick t) {
    if (t > busy_until_) busy_until_ = t;
  }
  // After a release every spinner holds a shared copy again.
  void add_sharer(int cpu) {
    if (owner_ >= 0) {
      sharers_.set(static_cast<std::size_t>(owner_));
      last_writer_ = owner_;
      owner_ = -1;
    }
    sharers_.set(static_cast<std::size_t>(cpu));
  }
  Tick busy_until() const { return busy_until_; }
  // Tasks spinning on a shared copy of this line (machine/line_spin.hpp):
  // every write or RMW to it wakes them at its completion. nullptr: none.
  void set_watchers(LineWatchers* w) { watchers_ = w; }
  LineWatchers* watchers() const { return watchers_; }
  // Writes and RMWs requested so far (a spinner's copy is stale after one).
  std::uint64_t writes() const { return writes_; }
  // The date of the latest write or RMW requested (-1: none).
  Tick last_write() const { return last_write_; }
  // The contended-line mechanisms this line applies (default: none).
  void set_contention(const LineContention& c) { contention_ = c; }
  const LineContention& contention() const { return contention_; }
  // The NUMA node whose memory homes the line (-1: the requester's own node).
  void set_home_node(int node) { home_node_ = node; }
  int home_node() const { return home_node_; }
  const std::string& name() const { return name_; }
  void set_name(std::string n) { name_ = std::move(n); }
  const LineStats& stats() const { return stats_; }
  void reset_stats() { stats_ = {}; }

 private:
  std::string name_;
  int owner_ = -1;           // CPU holding it Modified/Exclusive, or -1
  int last_writer_ = -1;     // where a shared copy is cheapest to fetch from
  int last_read_miss_ = -1;  // whose read the latest miss was (write_after_read), -1: a write's
  int home_node_ = -1;
  std::bitset<kMaxCpus> sharers_;
  Tick busy_until_ = 0;
  Tick last_request_ = 0;
  LineStats stats_;
  LineContention contention_;
  LineWatchers* watchers_ = nullptr;
  std::uint64_t writes_ = 0;
  Tick last_write_ = -1;
  std::uint32_t reads_since_write_ = 0;  // saturates at kQuietReads's setting
  Tick read_ahead_until_ = -1;           // the latest date read_ahead() served
  std::deque<Tick> queued_done_;  // completion dates of requests still queued (queue_factor > 0)
  std::vector<Tick> llc_busy_;    // per die: until when its LLC is serving reads of the line
  std::vector<Tick> llc_ready_;  // per die: when its LLC got a copy since the last write (-1: none)
  struct CoreFill {              // smt_shared_l1: the core's latest request for the line
    Tick done = -1;              // when it completes
    int cpu = -1;                // whose
    bool owns = false;           // it gets the line for ownership (a store or RMW)
    bool locked = false;         // it is a locked RMW (keeps the line until it completes)
  };
  std::vector<CoreFill> core_fill_;  // per core (global core index)
  // The request's mark on the line's history, hit or not (access()).
  void note_request(Access kind, Tick t) {
    last_request_ = t;
    if (kind == Access::Read) {
      if (reads_since_write_ < detail::g_quiet_reads) ++reads_since_write_;
    } else {
      reads_since_write_ = 0;
      last_write_ = t;
    }
    ++stats_.accesses;
  }
  // A hit: done after the L1's latency, or the atomic's for an RMW.
  Tick hit(const MachineParams& costs, Access kind, Tick t, Tick visible_after) {
    note_request(kind, t);
    ++stats_.hits;
    const Tick done = t + (kind == Access::Rmw ? costs.atomic_rmw : costs.l1_hit);
    // A locked RMW keeps the line until it completes: others' requests wait.
    if (kind == Access::Rmw) busy_until_ = std::max(busy_until_, done);
    return kind == Access::Read ? done : wrote(done, visible_after);
  }
  // A write or RMW invalidates the spinners' copies: they re-read once it is visible.
  Tick wrote(Tick completed, Tick visible_after);
  // access() past its inline hit: a request out of time order or into a read served
  // ahead (errors), the sibling's fill, the LLC, a transfer or memory.
  Tick access_out_of_line(const Topology& topo, int cpu, Access kind, Tick t, Tick visible_after);
  // The line is here in a state that allows the access (a hit in access(),
  // and the only reads read_ahead() serves).
  bool hits(int cpu, Access kind) const {
    return owner_ == cpu || (kind == Access::Read && sharers_.test(static_cast<std::size_t>(cpu)));
  }
  // smt_shared_l1's access through a sibling's fill or copy: its completion, or -1.
  Tick shared_l1(const Topology& topo, int cpu, Access kind, Tick t);
};

}  // namespace semsim::machine
