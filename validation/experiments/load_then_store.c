// validation/locktorture.md: gcc -O2 -pthread load_then_store.c && ./a.out
// Token ping-pong between two CPUs; per hand-off the holder touches a data line D that the
// other CPU wrote last: (0) nothing, (1) store D, (2) load D then store D, (3) load D only,
// then passes the token. The token store becomes visible after D's store (TSO), so D's
// ownership transfer is on the critical path: a load-then-store that takes two transfers
// costs one more transfer than a store alone.
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static volatile uint64_t token __attribute__((aligned(64)));
static volatile uint64_t pad1[7];
static volatile uint64_t D __attribute__((aligned(64)));
static volatile uint64_t pad2[7];
static int mode;
static long iters = 2000000;
static void pin(int c) { cpu_set_t s; CPU_ZERO(&s); CPU_SET(c, &s); pthread_setaffinity_np(pthread_self(), sizeof s, &s); }
static void *run(void *arg) {
  long me = (long)arg; pin((int)me);
  for (long i = 0; i < iters; ++i) {
    while (token != (uint64_t)me) __builtin_ia32_pause();
    if (mode == 1) D = i;
    else if (mode == 2) { uint64_t v = D; D = v + 1; }
    else if (mode == 3) { uint64_t v = D; if (v == 12345678901ULL) abort(); }
    token = 1 - me;
  }
  return 0;
}
int main(int argc, char **argv) {
  for (int rep = 0; rep < 5; ++rep)
  for (mode = 0; mode < 4; ++mode) {
    token = 0; D = 0;
    pthread_t a, b; struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pthread_create(&a, 0, run, (void *)0); pthread_create(&b, 0, run, (void *)1);
    pthread_join(a, 0); pthread_join(b, 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ns = ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / (2.0 * iters);
    printf("rep %d mode %d (%s): %.1f ns per hand-off\n", rep, mode,
           mode == 0 ? "token only" : mode == 1 ? "store D" : mode == 2 ? "load+store D" : "load D", ns);
  }
}
