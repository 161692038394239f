#include "machine/line_spin.hpp"

#include <utility>

namespace semsim::machine {

LineWatchers* LineWatchers::attach(CacheLine& line) {
  if (line.watchers() == nullptr) line.set_watchers(this);
  return line.watchers();
}

void LineWatchers::park(Task& t) {
  t.pay_turn();
  parked_.push_back(&t);
  t.park_spinning();
}

void LineWatchers::wake_all(Tick date) {
  if (parked_.empty()) return;
  std::vector<Task*> woken;
  woken.swap(parked_);
  // Fisher-Yates with our Rng: the order the home agent serves the re-reads in.
  for (std::size_t i = woken.size(); i > 1; --i)
    std::swap(woken[i - 1], woken[static_cast<std::size_t>(rng_.below(i))]);
  for (Task* t : woken) {
    t->advance_to(date);  // spinning on its shared copy until the invalidation
    t->resume_at_cursor();
  }
}

}  // namespace semsim::machine
