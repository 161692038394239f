// W never sleeps: loop { spin R us; wake S }. S (same CPU) sleeps between wakes.
// Share of wakes where S ran before FUTEX_WAKE returned, and W's involuntary switches.
#include <linux/futex.h>
#include <sys/syscall.h>
#include <sys/resource.h>
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
  int Rs[]={1,5,20,100,500,1000,3000};
  for(int R: Rs){ int pre=0,n=atoi(argv[1]); int waited=0;
    rusage u0; getrusage(RUSAGE_THREAD,&u0);
    for(int i=0;i<n;i++){
      long t0=ns(); while(ns()-t0<R*1000L){}
      if(word.load()!=0){waited++; continue;}  // S has not consumed the last one yet
      ran.store(0); word.store(1); syscall(SYS_futex,&word,FUTEX_WAKE,1,0,0,0);
      if(ran.load()) pre++; }
    rusage u1; getrusage(RUSAGE_THREAD,&u1);
    printf("R=%5d us: preempted %4d/%d (S not done %d), W involuntary %ld voluntary %ld\n",R,pre,n-waited,waited,u1.ru_nivcsw-u0.ru_nivcsw,u1.ru_nvcsw-u0.ru_nvcsw); fflush(stdout);}
  stop.store(1); word.store(1); syscall(SYS_futex,&word,FUTEX_WAKE,1,0,0,0); pthread_join(t,0);
}
