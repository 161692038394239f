// Token ring of K threads or K processes, all pinned to CPU 0, SCHED_BATCH: ns per hand-off.
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <thread>
#include <vector>
static long ns(){timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1000000000L+t.tv_nsec;}
struct alignas(64) Slot{std::atomic<int> w;};
struct Sh{Slot s[512]; std::atomic<long> left; std::atomic<long> t0,t1;};
static void pin0(){cpu_set_t s;CPU_ZERO(&s);CPU_SET(0,&s);sched_setaffinity(0,sizeof s,&s); sched_param sp{}; sched_setscheduler(0,SCHED_BATCH,&sp);}
static void body(Sh* sh,int i,int k,long total){
  pin0();
  for(;;){
    while(sh->s[i].w.load()==0) syscall(SYS_futex,&sh->s[i].w,FUTEX_WAIT,0,0,0,0);
    sh->s[i].w.store(0);
    long n=sh->left.fetch_sub(1);
    if(n==total) sh->t0=ns();
    if(n==1) sh->t1=ns();
    int nx=(i+1)%k; sh->s[nx].w.store(1); syscall(SYS_futex,&sh->s[nx].w,FUTEX_WAKE,1,0,0,0);
    if(n<=1-k) return;
  }
}
int main(int argc,char**argv){
  int k=atoi(argv[1]); bool procs=atoi(argv[2]); long total=atol(argv[3]);
  Sh* sh=(Sh*)mmap(0,sizeof(Sh),PROT_READ|PROT_WRITE,MAP_SHARED|MAP_ANONYMOUS,-1,0);
  new(sh) Sh(); sh->left=total;
  std::vector<std::thread> th; std::vector<pid_t> pids;
  for(int i=0;i<k;i++){ if(procs){pid_t p=fork(); if(p==0){body(sh,i,k,total);_exit(0);} pids.push_back(p);} else th.emplace_back(body,sh,i,k,total);}
  usleep(20000); sh->s[0].w.store(1); syscall(SYS_futex,&sh->s[0].w,FUTEX_WAKE,1,0,0,0);
  for(auto&t:th)t.join(); for(auto p:pids) waitpid(p,0,0);
  printf("k=%3d %-9s %.0f ns per hand-off\n",k,procs?"processes":"threads",double(sh->t1-sh->t0)/(total-1));
}
