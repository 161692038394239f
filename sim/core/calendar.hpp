// The calendar of a Simulation (core/simulation.cpp): pending events in
// (date, seq) order, seq counting the scheduling calls so that events of one
// date come out in the order they were made.
//
// A 4-ary min-heap over one 128-bit key per event: (date, seq) compared as a
// single unsigned number (dates are never negative), so an order test is one
// branch-free comparison, and a heap of a few hundred events is 3-4 levels
// deep with each node's children in two cache lines. It is the simulator's
// second-hottest path after the fiber switch: every hand-off is one
// push_pop(). Which event comes out is a function of the set of (date, seq)
// keys alone (seq is unique), never of the heap's layout, so the order is the
// same as with any other priority queue.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "core/time.hpp"

namespace semsim::core {

enum class EventKind : std::uint8_t { Turn, Wake, Callback };

// Turn: `task` waits in wait_turn() for `date`. Wake: an unpark of `task`
// takes effect at `date`. Callback: the simulation's callbacks[cb].
template <class Task>
struct Event {
  Tick date;
  Task* task;
  EventKind kind;
  std::uint32_t cb;
};

template <class Task>
class Calendar {
 public:
  using Event = core::Event<Task>;

  static constexpr Tick kNever = std::numeric_limits<Tick>::max();

  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  // Date of the earliest event (kNever if none).
  Tick earliest() const { return heap_.empty() ? kNever : date_of(heap_.front().key); }
  void push(const Event& e) {
    heap_.push_back(node(e));
    sift_up(heap_.size() - 1);
  }
  Event pop() {
    const Event out = event(heap_.front());
    const Node last = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) sift_down(last);
    return out;
  }
  // push(e) then pop() in one pass: e itself if it is the earliest, else the
  // earliest event, with e taking its place (one sift instead of two).
  Event push_pop(const Event& e) {
    const Node n = node(e);
    if (heap_.empty() || n.key < heap_.front().key) return e;
    const Event out = event(heap_.front());
    sift_down(n);
    return out;
  }

 private:
  __extension__ typedef unsigned __int128 Key;  // (date << 64) | seq
  struct Node {  // 32 bytes: a node's 4 children fill two cache lines
    Key key;
    Task* task;
    std::uint32_t cb;
    EventKind kind;
  };
  static constexpr std::size_t kArity = 4;

  static Tick date_of(Key k) { return static_cast<Tick>(static_cast<std::uint64_t>(k >> 64)); }
  Node node(const Event& e) {
    const Key k = (static_cast<Key>(static_cast<std::uint64_t>(e.date)) << 64) | seq_++;
    return Node{k, e.task, e.cb, e.kind};
  }
  static Event event(const Node& n) { return Event{date_of(n.key), n.task, n.kind, n.cb}; }
  void sift_up(std::size_t i) {
    const Node n = heap_[i];
    while (i > 0) {
      const std::size_t parent = (i - 1) / kArity;
      if (!(n.key < heap_[parent].key)) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = n;
  }
  // Place n from the root down (the root's old node is overwritten). The
  // smallest of four children is picked by a tournament of selects, not by
  // branches: which child wins is data, and a mispredicted branch per child
  // cost more than the whole comparison.
  void sift_down(const Node& n) {
    const std::size_t size = heap_.size();
    std::size_t i = 0;
    for (;;) {
      const std::size_t first = kArity * i + 1;
      if (first >= size) break;
      std::size_t best = first;
      Key best_key = heap_[first].key;
      if (first + kArity <= size) {
        const Key k1 = heap_[first + 1].key, k2 = heap_[first + 2].key, k3 = heap_[first + 3].key;
        const bool a = k1 < best_key, b = k3 < k2;
        const std::size_t i01 = a ? first + 1 : first, i23 = b ? first + 3 : first + 2;
        const Key m01 = a ? k1 : best_key, m23 = b ? k3 : k2;
        const bool c = m23 < m01;
        best = c ? i23 : i01;
        best_key = c ? m23 : m01;
      } else {
        for (std::size_t j = first + 1; j < size; ++j)
          if (heap_[j].key < best_key) {
            best = j;
            best_key = heap_[j].key;
          }
      }
      if (!(best_key < n.key)) break;
      heap_[i] = heap_[best];
      i = best;
    }
    heap_[i] = n;
  }

  std::vector<Node> heap_;
  std::uint64_t seq_ = 0;
};

}  // namespace semsim::core
