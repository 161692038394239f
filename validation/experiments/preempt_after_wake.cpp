// Wakeup preemption vs how long the waker has run since it woke: W and S pinned
// to CPU 0 (SCHED_NORMAL). Per round: W sleeps 300 us (timer), spins R us, wakes S
// with FUTEX_WAKE; did S run before FUTEX_WAKE returned?
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
static std::atomic<int> word{0}, ran{0}, stop{0};
static void pin(int c){cpu_set_t s;CPU_ZERO(&s);CPU_SET(c,&s);pthread_setaffinity_np(pthread_self(),sizeof s,&s);}
void* sleeper(void*){ pin(0);
  while(!stop.load()){ while(word.load()==0 && !stop.load()) syscall(SYS_futex,&word,FUTEX_WAIT,0,0,0,0); ran.store(1); word.store(0);} return 0;}
int main(int argc,char**argv){
  pin(0); pthread_t t; pthread_create(&t,0,sleeper,0); usleep(10000);
  int Rs[]={0,2,5,10,20,50,100,200,500,1000,2000,4000};
  for(int R: Rs){ int pre=0,n=argc>1?atoi(argv[1]):200;
    for(int i=0;i<n;i++){ timespec ts{0,300000}; nanosleep(&ts,0);
      long t0=ns(); while(ns()-t0<R*1000L){}
      ran.store(0); word.store(1); syscall(SYS_futex,&word,FUTEX_WAKE,1,0,0,0);
      if(ran.load()) pre++;
      while(word.load()!=0) sched_yield(); }
    printf("R=%5d us: S ran before FUTEX_WAKE returned in %3d/%d\n",R,pre,n); fflush(stdout);}
  stop.store(1); word.store(1); syscall(SYS_futex,&word,FUTEX_WAKE,1,0,0,0); pthread_join(t,0);
}
