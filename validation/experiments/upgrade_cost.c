// validation/locktorture.md, "The lead, built": gcc -O2 -pthread upgrade_cost.c && ./a.out
// [REPS [HANDOFFS]]. Token ping-pong between two CPUs (0 and 1), 9 variants of what the
// holder does to a data line before passing the token, REPS repetitions (default 40, at most
// 40) of HANDOFFS hand-offs (default 200,000); prints one row per repetition (ns per
// hand-off, variants 0..8: names[] below). Variants 0-3 are the first probe of
// locktorture.md, "The lead" (5 repetitions of 2,000,000: ./a.out 5 2000000).
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
struct line { volatile uint64_t v; char pad[56]; } __attribute__((aligned(64)));
static struct line token, D, E[2];
static int mode;
static long iters = 200000;
static void pin(int c) { cpu_set_t s; CPU_ZERO(&s); CPU_SET(c, &s); pthread_setaffinity_np(pthread_self(), sizeof s, &s); }
static void *run(void *arg) {
  long me = (long)arg; pin((int)me);
  for (long i = 0; i < iters; ++i) {
    while (token.v != (uint64_t)me) __builtin_ia32_pause();
    switch (mode) {
    case 1: D.v = i; break;                                   /* store, M elsewhere */
    case 2: { uint64_t v = D.v; D.v = v + 1; } break;         /* load then store */
    case 3: { uint64_t v = D.v; if (v == 12345678901ULL) abort(); } break;
    case 4: { uint64_t v = E[1 - me].v; if (v == 12345678901ULL) abort(); E[me].v = i; } break; /* upgrade S->M */
    case 5: { uint64_t v = E[1 - me].v; if (v == 12345678901ULL) abort(); } break; /* its load alone */
    case 6: __sync_fetch_and_add(&D.v, 1); break;             /* RMW, M elsewhere */
    case 7: { uint64_t v = D.v; __sync_fetch_and_add(&D.v, v & 1); } break; /* load then RMW */
    case 8: { uint64_t v = E[1 - me].v; if (v == 12345678901ULL) abort(); __sync_fetch_and_add(&E[me].v, 1); } break; /* RMW upgrade S->M */
    }
    token.v = 1 - me;
  }
  return 0;
}
static const char *names[] = {"token only", "store D (M elsewhere)", "load+store D", "load D",
  "upgrade: store own line the other read", "load other's line only", "RMW D (M elsewhere)", "load+RMW D", "RMW upgrade own line the other read"};
int main(int argc, char **argv) {
  double acc[9][40];
  int reps = argc > 1 ? atoi(argv[1]) : 40;
  if (reps < 1 || reps > 40) { fprintf(stderr, "REPS: 1..40\n"); return 2; }
  if (argc > 2) iters = atol(argv[2]);
  if (iters < 1) { fprintf(stderr, "HANDOFFS: at least 1\n"); return 2; }
  for (int rep = 0; rep < reps; ++rep)
    for (mode = 0; mode < 9; ++mode) {
      token.v = 0; D.v = 0;
      pthread_t a, b; struct timespec t0, t1;
      clock_gettime(CLOCK_MONOTONIC, &t0);
      pthread_create(&a, 0, run, (void *)0); pthread_create(&b, 0, run, (void *)1);
      pthread_join(a, 0); pthread_join(b, 0);
      clock_gettime(CLOCK_MONOTONIC, &t1);
      acc[mode][rep] = ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / (2.0 * iters);
    }
  for (mode = 0; mode < 9; ++mode) fprintf(stderr, "column %d: %s\n", mode, names[mode]);
  for (int rep = 0; rep < reps; ++rep) { for (mode = 0; mode < 9; ++mode) printf("%.1f ", acc[mode][rep]); printf("\n"); }
}
