// SIS_UTIL test: W pinned to CPU0 spins (100 % util there); optional duty thread on
// CPU1 runs `duty`% of each 1 ms. S (unpinned, last ran on CPU0 via a short pin) sleeps;
// W wakes it when CPU1 is in its idle phase. Where does S run?
#include <linux/futex.h>
#include <sys/syscall.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>
#include <atomic>
#include <cstdio>
#include <cstdlib>
static long ns(){timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1000000000L+t.tv_nsec;}
static std::atomic<int> word{0}, woke_cpu{-1}, slept{0}, stop{0}, cpu1_busy{0};
static void fwait(std::atomic<int>&w,int v){syscall(SYS_futex,&w,FUTEX_WAIT,v,0,0,0);}
static void fwake(std::atomic<int>&w){syscall(SYS_futex,&w,FUTEX_WAKE,1,0,0,0);}
static void pin(int c){cpu_set_t s;CPU_ZERO(&s);if(c<0){CPU_SET(0,&s);CPU_SET(1,&s);}else CPU_SET(c,&s);pthread_setaffinity_np(pthread_self(),sizeof s,&s);}
static int rounds=300, duty=0;
void* sleeper(void*){
  for(int r=0;r<rounds;r++){
    pin(0); pin(-1);
    slept.store(1); while(word.load()==0) fwait(word,0);
    woke_cpu.store(sched_getcpu()); word.store(0);
  }
  return 0;}
void* duty_thread(void*){
  pin(1);
  while(!stop.load()){
    long t0=ns(); cpu1_busy.store(1); while(ns()-t0<duty*10000L){} cpu1_busy.store(0);
    timespec ts{0,(100-duty)*10000L}; nanosleep(&ts,0);
  }
  return 0;}
int main(int argc,char**argv){
  duty=atoi(argv[1]);
  pthread_t t,d; pthread_create(&t,0,sleeper,0); if(duty>0) pthread_create(&d,0,duty_thread,0);
  pin(0); int stay=0, moved=0;
  for(int r=0;r<rounds;r++){
    while(!slept.load()){}
    long t0=ns(); while(ns()-t0<300000){}       // spin 300 us (CPU0 fully busy)
    if(duty>0){ while(cpu1_busy.load()==1){} }   // wake while CPU1 is idle
    slept.store(0); woke_cpu.store(-1);
    word.store(1); fwake(word);
    while(woke_cpu.load()<0){}
    if(woke_cpu.load()==0) stay++; else moved++;
  }
  stop.store(1); pthread_join(t,0); if(duty>0) pthread_join(d,0);
  printf("duty on CPU1 %d%%: stayed on busy CPU0 %d, moved to idle CPU1 %d\n",duty,stay,moved);
}
