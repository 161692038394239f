// Cross-CPU hand-off: futex vs SysV semaphore, two threads pinned to CPU 0 and 1.
#include <linux/futex.h>
#include <sys/syscall.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>
#include <atomic>
#include <cstdio>
#include <vector>
#include <algorithm>
static long ns(){timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1000000000L+t.tv_nsec;}
static std::atomic<int> w[2]; static std::atomic<long> tsend[2]; static int semid; static int use_sem;
static std::vector<long> lat[2];
static void pin(int c){cpu_set_t s;CPU_ZERO(&s);CPU_SET(c,&s);pthread_setaffinity_np(pthread_self(),sizeof s,&s);}
static void post(int k){ tsend[k].store(ns()); if(use_sem){sembuf b{(unsigned short)k,1,0}; semop(semid,&b,1);} else {w[k].store(1); syscall(SYS_futex,&w[k],FUTEX_WAKE_PRIVATE,1,0,0,0);} }
static void wait_(int k){ if(use_sem){sembuf b{(unsigned short)k,-1,0}; semop(semid,&b,1);} else { while(w[k].load()==0) syscall(SYS_futex,&w[k],FUTEX_WAIT_PRIVATE,0,0,0,0); w[k].store(0);} lat[k].push_back(ns()-tsend[k].load()); }
static const int N=3000;
void* b(void*){ pin(1); for(int i=0;i<N;i++){ wait_(0); post(1);} return 0;}
int main(){
  semid=semget(IPC_PRIVATE,2,0600);
  for(use_sem=0;use_sem<2;use_sem++) for(int rep=0;rep<2;rep++){
    lat[0].clear(); lat[1].clear(); w[0]=w[1]=0;
    pthread_t t; pthread_create(&t,0,b,0); pin(0); usleep(1000);
    long t0=ns(); for(int i=0;i<N;i++){ post(0); wait_(1);} long t1=ns(); pthread_join(t,0);
    std::vector<long> all=lat[0]; all.insert(all.end(),lat[1].begin(),lat[1].end()); std::sort(all.begin(),all.end());
    printf("%s: round trip %.1f us; hand-off median %.1f us p10 %.1f p90 %.1f\n", use_sem?"semop":"futex", (t1-t0)/1e3/N, all[all.size()/2]/1e3, all[all.size()/10]/1e3, all[all.size()*9/10]/1e3);
  }
  semctl(semid,0,IPC_RMID);
}
