// What does FUTEX_WAKE cost the waker (CPU 0) when the sleeper's CPU (1) is busy
// running a spinner, against when CPU 1 is idle? Sleeper Z pinned to CPU 1.
#include <linux/futex.h>
#include <sys/syscall.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <vector>
static long ns(){timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1000000000L+t.tv_nsec;}
static std::atomic<int> word{0}, stop{0}, spin_on{0};
static void pin(int c){cpu_set_t s;CPU_ZERO(&s);CPU_SET(c,&s);pthread_setaffinity_np(pthread_self(),sizeof s,&s);}
void* sleeper(void* arg){ pin(1); if(arg){sched_param sp{};sched_setscheduler(0,SCHED_BATCH,&sp);}
  while(!stop.load()){ while(word.load()==0 && !stop.load()) syscall(SYS_futex,&word,FUTEX_WAIT,0,0,0,0); word.store(0);} return 0;}
void* spinner(void*){ pin(1); while(!stop.load()){ if(!spin_on.load()) usleep(100); } return 0;}
static void run(const char* what, int n){
  std::vector<long> d;
  for(int i=0;i<n;i++){ usleep(200);
    word.store(1); long t0=ns(); syscall(SYS_futex,&word,FUTEX_WAKE,1,0,0,0); d.push_back(ns()-t0);
    long w0=ns(); while(word.load()!=0 && ns()-w0<20000000){} }
  std::sort(d.begin(),d.end());
  printf("%-40s wake call p10 %6.2f  p50 %6.2f  p90 %6.2f us\n",what,d[n/10]/1e3,d[n/2]/1e3,d[n*9/10]/1e3); fflush(stdout);
}
int main(int argc,char**argv){
  int n=argc>1?atoi(argv[1]):500; int batch=argc>2?atoi(argv[2]):0;
  pin(0); pthread_t z,s; pthread_create(&z,0,sleeper,batch?(void*)1:0); pthread_create(&s,0,spinner,0); usleep(20000);
  run("CPU 1 idle", n);
  spin_on.store(1); usleep(20000);
  run("CPU 1 running a spinner", n);
  spin_on.store(0); usleep(20000);
  run("CPU 1 idle again", n);
  stop.store(1); word.store(1); syscall(SYS_futex,&word,FUTEX_WAKE,1,0,0,0); pthread_join(z,0); pthread_join(s,0);
}
