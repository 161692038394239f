// Futex token ring of K threads pinned to one CPU: per hand-off time vs K.
#include <linux/futex.h>
#include <sys/syscall.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
static long ns(){timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1000000000L+t.tv_nsec;}
struct alignas(64) Slot{std::atomic<int> turn{0};};
static Slot* slots; static int K; static std::atomic<long> hand{0}; static std::atomic<int> stop{0};
static void fwait(std::atomic<int>&w,int v){syscall(SYS_futex,&w,FUTEX_WAIT_PRIVATE,v,0,0,0);}
static void fwake(std::atomic<int>&w){syscall(SYS_futex,&w,FUTEX_WAKE_PRIVATE,1,0,0,0);}
void* body(void* a){
  int i=(int)(long)a; { struct sched_param sp{}; sched_setscheduler(0, SCHED_BATCH, &sp); } cpu_set_t s;CPU_ZERO(&s);CPU_SET(0,&s);pthread_setaffinity_np(pthread_self(),sizeof s,&s);
  
  for(;;){
    while(slots[i].turn.load()==0) fwait(slots[i].turn,0);
    slots[i].turn.store(0); if(stop.load()) { Slot&nx=slots[(i+1)%K]; nx.turn.store(1); fwake(nx.turn); return 0; }

    hand.fetch_add(1,std::memory_order_relaxed);
    Slot&nx=slots[(i+1)%K]; nx.turn.store(1); fwake(nx.turn);
  }
}
int main(int argc,char**argv){
  for(int k: {2,4,8,16,32,64,128,256}){
    K=k; slots=new Slot[K]; stop=0; hand=0; std::vector<pthread_t> t(K);
    for(int i=0;i<K;i++) pthread_create(&t[i],0,body,(void*)(long)i);
    usleep(20000); slots[0].turn.store(1); fwake(slots[0].turn);
    usleep(50000); long h0=hand.load(), t0=ns(); usleep(200000); long h1=hand.load(), t1=ns();
    stop=1; for(int i=0;i<K;i++) pthread_join(t[i],0); delete[] slots;
    printf("K=%3d: %.0f ns per hand-off\n",K,(double)(t1-t0)/(h1-h0));
  }
}
