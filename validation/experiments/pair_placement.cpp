// Unpinned SysV ping-pong pairs (sem-scalebench mode 2 without pinning, P pairs of
// threads): when a post wakes the sleeping partner, where does the partner run? On
// the poster's CPU (a same-CPU wake-up: a context switch) or on the other one? Where
// had it gone to sleep, and when does a task change CPU at all?
//   g++ -O2 -pthread -o /tmp/pp validation/experiments/pair_placement.cpp && /tmp/pp P [SECONDS]
#include <sched.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

static long ns() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000L + t.tv_nsec;
}

struct alignas(64) Slot {
  std::atomic<int> post_cpu{-1};  // where the partner posted our semaphore last
};
struct alignas(64) Count {
  long ops = 0, fast = 0, slept = 0, same = 0;
  long prev_same = 0, stayed = 0, prev_other = 0, pulled = 0;
  long moved_in_wait = 0, moved_in_post = 0, moved_between = 0;  // CPU changes
  int first_cpu = -1;
};

int main(int argc, char** argv) {
  const int pairs = argc > 1 ? atoi(argv[1]) : 8;
  const double secs = argc > 2 ? atof(argv[2]) : 0.5;
  const int n = 2 * pairs;
  const int id = semget(IPC_PRIVATE, n, 0600);  // all 0
  if (id < 0) return perror("semget"), 1;
  std::vector<Slot> slot(static_cast<size_t>(n));
  std::vector<Count> cnt(static_cast<size_t>(n));
  std::atomic<bool> go{false}, stop{false};
  std::vector<std::thread> th;
  for (int t = 0; t < n; ++t)
    th.emplace_back([&, t] {
      const int partner = t ^ 1;
      Count& c = cnt[static_cast<size_t>(t)];
      while (!go.load()) {
      }
      if (t & 1) {  // the odd thread posts one token on its own semaphore first
        sembuf v{static_cast<unsigned short>(t), 1, 0};
        semop(id, &v, 1);
      }
      int prev = sched_getcpu();
      c.first_cpu = prev;
      while (!stop.load(std::memory_order_relaxed)) {
        const int before_wait = sched_getcpu();
        c.moved_between += before_wait != prev;
        sembuf p{static_cast<unsigned short>(t), -1, 0};
        const long t0 = ns();
        if (semop(id, &p, 1) != 0) return;  // the array is gone: the run is over
        const long t1 = ns();
        const int cpu = sched_getcpu();
        c.moved_in_wait += cpu != before_wait;
        ++c.ops;
        if (t1 - t0 > 1500) {  // it slept: a post woke it
          ++c.slept;
          const int w = slot[static_cast<size_t>(t)].post_cpu.load();
          c.same += cpu == w;
          if (before_wait == w) {
            ++c.prev_same;
            c.stayed += cpu == w;
          } else {
            ++c.prev_other;
            c.pulled += cpu == w;
          }
        } else {
          ++c.fast;
        }
        const int before_post = sched_getcpu();
        c.moved_between += before_post != cpu;
        slot[static_cast<size_t>(partner)].post_cpu.store(before_post);
        sembuf v{static_cast<unsigned short>(partner), 1, 0};
        semop(id, &v, 1);
        ++c.ops;
        prev = sched_getcpu();
        c.moved_in_post += prev != before_post;
      }
    });
  go = true;
  usleep(static_cast<useconds_t>(secs * 1e6));
  stop = true;
  usleep(20000);
  semctl(id, 0, IPC_RMID);
  for (auto& x : th) x.join();
  Count s;
  int together = 0;
  for (int t = 0; t < n; t += 2)
    together += cnt[static_cast<size_t>(t)].first_cpu == cnt[static_cast<size_t>(t) + 1].first_cpu;
  for (const Count& c : cnt) {
    s.ops += c.ops, s.fast += c.fast, s.slept += c.slept, s.same += c.same;
    s.prev_same += c.prev_same, s.stayed += c.stayed, s.prev_other += c.prev_other,
        s.pulled += c.pulled;
    s.moved_in_wait += c.moved_in_wait, s.moved_in_post += c.moved_in_post,
        s.moved_between += c.moved_between;
  }
  printf(
      "pairs %d: %.0f ops/s; pairs on one CPU when their loops began: %d; waits that slept "
      "%.2f; of the woken: on the poster's CPU %.2f (slept on the poster's CPU %ld: stayed "
      "%.2f; on the other %ld: pulled %.4f); CPU changes: across a wait %ld, inside a post "
      "%ld, between calls %ld\n",
      pairs, static_cast<double>(s.ops) / secs, together,
      static_cast<double>(s.slept) / static_cast<double>(s.slept + s.fast),
      static_cast<double>(s.same) / static_cast<double>(s.slept), s.prev_same,
      s.prev_same ? static_cast<double>(s.stayed) / static_cast<double>(s.prev_same) : 0.0,
      s.prev_other,
      s.prev_other ? static_cast<double>(s.pulled) / static_cast<double>(s.prev_other) : 0.0,
      s.moved_in_wait, s.moved_in_post, s.moved_between);
}
