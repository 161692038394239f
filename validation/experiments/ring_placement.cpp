// Futex token ring of N unpinned threads: thread i waits for its turn, then wakes
// thread i+1 and waits again. For each wake: did the wakee run on the waker's CPU
// (and was the wakee's previous CPU the waker's)?
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
struct alignas(64) Slot{std::atomic<int> turn{0}; int last_cpu=-1;};
static Slot slots[64]; static int n; static std::atomic<int> waker_cpu{-1}, stop{0};
static long prev_busy=0, prev_busy_stay=0, prev_idle=0, prev_idle_stay=0;
static void fwait(std::atomic<int>&w,int v){syscall(SYS_futex,&w,FUTEX_WAIT_PRIVATE,v,0,0,0);}
static void fwake(std::atomic<int>&w){syscall(SYS_futex,&w,FUTEX_WAKE_PRIVATE,1,0,0,0);}
void* body(void* a){
  int i=(int)(long)a; Slot&s=slots[i];
  while(!stop.load()){
    while(s.turn.load()==0){ if(stop.load()) return 0; fwait(s.turn,0);}
    s.turn.store(0);
    int c=sched_getcpu(); int wc=waker_cpu.load();
    if(wc>=0 && s.last_cpu>=0){
      if(s.last_cpu==wc){prev_busy++; if(c==wc) prev_busy_stay++;} else {prev_idle++; if(c==wc) prev_idle_stay++;}
    }
    Slot&nx=slots[(i+1)%n];
    waker_cpu.store(c); s.last_cpu=c;
    nx.turn.store(1); fwake(nx.turn);
  }
  return 0;}
int main(int argc,char**argv){
  n=atoi(argv[1]); pthread_t t[64];
  for(int i=0;i<n;i++) pthread_create(&t[i],0,body,(void*)(long)i);
  usleep(20000); slots[0].turn.store(1); fwake(slots[0].turn);
  usleep(300000); stop.store(1);
  for(int i=0;i<n;i++){slots[i].turn.store(1); fwake(slots[i].turn);} for(int i=0;i<n;i++) pthread_join(t[i],0);
  printf("n=%d wakes: prev CPU = waker's: %ld (stayed on it %.2f); prev CPU = other: %ld (ran on waker's %.2f)\n",
    n,prev_busy,prev_busy?(double)prev_busy_stay/prev_busy:0.,prev_idle,prev_idle?(double)prev_idle_stay/prev_idle:0.);
}
