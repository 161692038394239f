// What does reading a line "at rest" in another CPU's cache cost (written there,
// nobody touching it since), against the line_pingpong probe's transfer? Thread W
// (CPU 0) stores to N lines that form a random cycle of pointers; once it is done,
// thread R (CPU 1; or W itself with READER_CPU 0) chases the cycle: ns per line.
//   /tmp/x N READER_CPU
#include <sched.h>
#include <pthread.h>
#include <time.h>
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <vector>
static long ns(){timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1000000000L+t.tv_nsec;}
struct alignas(64) Line { Line* next; long pad[7]; };
static int N;
static Line* lines;
static std::atomic<int> phase{0};
static std::vector<double> res;
static void pin(int c){cpu_set_t s;CPU_ZERO(&s);CPU_SET(c,&s);pthread_setaffinity_np(pthread_self(),sizeof s,&s);}
static int rcpu;
void* writer(void*){ pin(0);
  for(int r=0;r<2000;r++){ while(phase.load()!=0){}
    for(int i=0;i<N;i++) lines[i].pad[0]+=1;  // a store to every line
    phase.store(1); }
  return 0;}
void* reader(void*){ pin(rcpu);
  for(int r=0;r<2000;r++){ while(phase.load()!=1){}
    long t0=ns(); Line* p=&lines[0]; for(int i=0;i<N;i++) p=p->next; long t1=ns();
    if(p==nullptr) puts("x");
    res.push_back((t1-t0)/(double)N);
    phase.store(0);}
  return 0;}
int main(int argc,char**argv){ N=atoi(argv[1]); rcpu=atoi(argv[2]);
  lines=(Line*)aligned_alloc(4096,sizeof(Line)*N);
  std::vector<int> o(N); std::iota(o.begin(),o.end(),0); std::shuffle(o.begin()+1,o.end(),std::mt19937(1));
  for(int i=0;i<N;i++) lines[o[i]].next=&lines[o[(i+1)%N]];
  if (rcpu==0) { // one thread does both in turn
    pin(0); for(int r=0;r<2000;r++){ for(int i=0;i<N;i++) lines[i].pad[0]+=1;
      long t0=ns(); Line* p=&lines[0]; for(int i=0;i<N;i++) p=p->next; long t1=ns(); if(!p) puts("x"); res.push_back((t1-t0)/(double)N);} }
  else { pthread_t a,b; pthread_create(&a,0,writer,0); pthread_create(&b,0,reader,0); pthread_join(a,0); pthread_join(b,0);}
  std::sort(res.begin(),res.end());
  printf("N=%d reader on CPU %d (writer on 0): %.1f ns per line (p10 %.1f p90 %.1f)\n",N,rcpu,res[res.size()/2],res[res.size()/10],res[res.size()*9/10]);
}
