// The calendar of a Simulation (core/simulation.cpp): pending events in date
// order, and at one date:
//   1. callbacks, then wakes, each in the order they were made (seq counts
//      the at() and unpark calls: a wake order drawn at random, e.g. the
//      arbitration among a line's spinners, machine/line_spin.hpp, is kept);
//   2. then the tasks' turns, by task id: an order that does not depend on
//      when they were queued (and at date 0 the spawn order).
// Why turns are not FIFO: a task that reads a quiet line ahead of the clock
// (machine/task.hpp, "Read-ahead") queues its next turn earlier, in wall
// time, than the strict order would; with FIFO it would win ties it loses in
// the strict order, and the run would differ. Such a task schedules nothing
// else (core/simulation.cpp checks it), so the callbacks and wakes others
// make keep their order either way. By id, not by a hash of (date, task)
// that would let no task win every tie: the id order is the tasks' start
// order, which the model's results depend on where tasks tie at the start.
// Measured (validation/lock-rotation.md): a hash moves seed 001's xeon-24
// global_lock (20 threads) from 372 k to 479 k ops/s, all of it from the ties
// of the first 10 us (hashing only those gives 479 k, hashing only later ones
// changes nothing), with or without SMT. The tasks' first arrivals at the
// array lock tie; a saturated FIFO lock then keeps that order for the whole
// run (a releaser re-queues behind every other task), and with thread t
// pinned to CPU t on linux numbering the id order makes every hand-off cross
// the socket (tests/cpp/test_lock_rotation.cpp). That is the benchmark's own
// start order (threads created in order, started by one broadcast), and the
// published 341 k agrees with it (the hashed start would be +40 %); a real
// machine's interrupts would mix the rotation over time, which the presets
// (no os_noise) do not model: Scenario::start_order shows the other order.
//
// A binary min-heap of 16-byte nodes: each node is ONE 128-bit number,
// (date << 64) | (class << 62) | (seq << 24) | (ref << 2) | kind, class 0 / 1
// / 2 for a callback / wake / turn and seq 0 for a turn, so an order
// test is one comparison and the node is its own payload (ref
// names the task or the callback; the Simulation resolves it). A task has at
// most one live turn pending (a turn moved earlier, Actor::advance_turn(),
// leaves its old key behind, stale, and the Simulation skips it), so two equal
// keys are the same task's turn at one date, and which event comes out is a
// function of the keys alone, as with any priority queue (so the heap's shape
// changes no result). Every slot past the end holds the largest key and there
// are always two of them, so a node's missing right child needs no special case.
// It is the simulator's hottest path after the fiber switch (every hand-off is
// one push_pop()). Binary, not 4-ary: on the AMD EPYC guest of 2026-12-06, which
// runs the simulator at about 7 G instructions a second (bound by instructions,
// not misses), the 4-ary heap's cache-line groups of children and branch-free
// tournament cost more instructions than the binary heap's extra levels:
// ping-pong 1.55 -> 1.41 us of CPU per semop, hysteresis 1.27 -> 1.14, the
// 256-task osim row 2.13 -> 1.97 (validation/bench-speed.md).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/errors.hpp"
#include "core/time.hpp"

namespace semsim::core {

enum class EventKind : std::uint8_t { Turn, Wake, Callback };

// Turn: task `ref` waits in wait_turn() for `date`. Wake: an unpark of task
// `ref` takes effect at `date`. Callback: the simulation's callbacks[ref].
struct Event {
  Tick date;
  EventKind kind;
  std::uint32_t ref;
};

class Calendar {
 public:
  static constexpr Tick kNever = std::numeric_limits<Tick>::max();
  // refs are below this (4,096 tasks at most; callbacks are pending timers).
  static constexpr std::uint32_t kRefLimit = 1u << 22;

  Calendar() = default;
  // For tests: seq (callbacks' and wakes') starts `left` short of its limit,
  // so renumber() runs soon.
  static Calendar near_seq_limit(std::uint64_t left) {
    Calendar c;
    c.seq_ = kSeqLimit - left;
    return c;
  }

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  // Date of the earliest event (kNever if none).
  Tick earliest() const { return size_ == 0 ? kNever : date_of(keys_[0]); }
  void push(const Event& e) {
    if (size_ + 2 >= keys_.size()) grow();  // two empty slots stay past the end
    sift_up(size_++, key(e));
  }
  Event pop() {
    const Key out = keys_[0];
    const Key last = keys_[--size_];
    keys_[size_] = kEmpty;
    if (size_ > 0) sift_down(last);
    return event(out);
  }
  // The earliest event (the calendar must not be empty).
  Event top() const { return event(keys_[0]); }
  // push(e) then pop() in one pass: e itself if it is the earliest, else the
  // earliest event, with e taking its place (one sift instead of two).
  Event push_pop(const Event& e) {
    const Key k = key(e);
    if (size_ == 0 || k < keys_[0]) return event(k);
    const Key out = keys_[0];
    sift_down(k);
    return event(out);
  }

 private:
  __extension__ typedef unsigned __int128 Key;
  static constexpr Key kEmpty = ~Key{0};  // above every real key: dates are < 2^63
  static constexpr unsigned kRefShift = 2, kSeqShift = 24, kClassShift = 62;
  static constexpr std::uint64_t kSeqLimit = std::uint64_t{1} << (kClassShift - kSeqShift);
  static constexpr std::uint64_t kTurnClass = std::uint64_t{2} << kClassShift;
  static constexpr std::uint64_t kWakeClass = std::uint64_t{1} << kClassShift;
  static Tick date_of(Key k) { return static_cast<Tick>(static_cast<std::uint64_t>(k >> 64)); }
  static Event event(Key k) {
    const auto low = static_cast<std::uint64_t>(k);
    return Event{date_of(k), static_cast<EventKind>(low & 3),
                 static_cast<std::uint32_t>((low >> kRefShift) & (kRefLimit - 1))};
  }
  Key key(const Event& e) {
    if (e.ref >= kRefLimit) throw SimulationError("calendar: more than 4 M tasks or timers");
    std::uint64_t low =
        (static_cast<std::uint64_t>(e.ref) << kRefShift) | static_cast<std::uint64_t>(e.kind);
    if (e.kind == EventKind::Turn) {
      low |= kTurnClass;
    } else {
      if (seq_ == kSeqLimit) renumber();
      low |= (e.kind == EventKind::Wake ? kWakeClass : 0) | (seq_++ << kSeqShift);
    }
    return (static_cast<Key>(static_cast<std::uint64_t>(e.date)) << 64) | low;
  }
  // 2^38 callbacks and wakes scheduled: give the pending ones seqs 0..n-1 in
  // their order (a sorted array is a heap), which keeps every order the heap
  // will decide; the turns' keys do not change.
  void renumber() {
    std::vector<Key> keys;
    keys.reserve(size_);
    for (std::size_t j = 0; j < size_; ++j) keys.push_back(keys_[j]);
    std::sort(keys.begin(), keys.end());
    constexpr std::uint64_t kPayload = (std::uint64_t{1} << kSeqShift) - 1;
    std::uint64_t seq = 0;
    for (std::size_t j = 0; j < size_; ++j) {
      const auto low = static_cast<std::uint64_t>(keys[j]);
      if ((low & kTurnClass) != 0) {
        keys_[j] = keys[j];
        continue;
      }
      keys_[j] =
          (keys[j] >> 64 << 64) | (low & kWakeClass) | (seq++ << kSeqShift) | (low & kPayload);
    }
    seq_ = seq;
  }
  void grow() { keys_.resize(2 * keys_.size(), kEmpty); }
  void sift_up(std::size_t i, Key n) {
    while (i > 0) {
      const std::size_t parent = (i - 1) / 2;
      if (!(n < keys_[parent])) break;
      keys_[i] = keys_[parent];
      i = parent;
    }
    keys_[i] = n;
  }
  void sift_down(Key n) {
    std::size_t i = 0;
    for (;;) {
      std::size_t c = 2 * i + 1;
      if (c >= size_) break;
      const Key a = keys_[c], b = keys_[c + 1];
      const bool right = b < a;
      const Key best = right ? b : a;
      c += right;
      if (!(best < n)) break;
      keys_[i] = best;
      i = c;
    }
    keys_[i] = n;
  }

  // Node j at keys_[j], its children at 2j + 1 and 2j + 2; past size_: kEmpty.
  std::vector<Key> keys_ = std::vector<Key>(64, kEmpty);
  std::size_t size_ = 0;
  std::uint64_t seq_ = 0;
};

}  // namespace semsim::core
