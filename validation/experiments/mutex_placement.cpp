// Mutex of N processes on one SysV semaphore (SEM_UNDO). Before each V the holder
// records (cpu, time) in shared memory; a P that returns after sleeping reads it:
// did it run on the waker's CPU, and how long after the waker's V started?
#include <sys/ipc.h>
#include <sys/sem.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>
#include <cstdio>
#include <cstdlib>
static long ns(){timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1000000000L+t.tv_nsec;}
struct Sh{volatile long v_time; volatile int v_cpu; volatile int oth_busy_at_v; volatile int run[2]; int pad[13]; long same,other,fast,lat_same,lat_other; long vdur_sum, vn; long hist_same[10], hist_other[10];};
int main(int argc,char**argv){
  int n=atoi(argv[1]);
  int id=semget(IPC_PRIVATE,1,0600); semctl(id,0,SETVAL,1);
  Sh* sh=(Sh*)mmap(0,sizeof(Sh)*(n+1),PROT_READ|PROT_WRITE,MAP_SHARED|MAP_ANONYMOUS,-1,0);
  volatile int* go=(int*)mmap(0,4096,PROT_READ|PROT_WRITE,MAP_SHARED|MAP_ANONYMOUS,-1,0);
  for(int i=0;i<n;i++) if(fork()==0){
    Sh&s=sh[i+1]; sembuf p{0,-1,SEM_UNDO}, v{0,1,SEM_UNDO};
    while(!*go){}
    long end=ns()+300000000L;
    while(ns()<end){
      int prevc=sched_getcpu(); sh->run[prevc]=0; long t0=ns(); semop(id,&p,1); long t1=ns(); int c=sched_getcpu(); sh->run[c]=1;
      if(t1-t0<3000) s.fast++; else {
        long lat=t1-sh->v_time; int b=0; long x=lat/1000; while(x>0&&b<9){b++;x/=2;}
        if(sh->oth_busy_at_v) s.pad[0]++;
        { int w=sh->v_cpu; if(prevc==w){ s.pad[2]++; if(c==w) s.pad[3]++; } else { s.pad[4]++; if(c==w) s.pad[5]++; } }
        if(c==sh->v_cpu){if(sh->oth_busy_at_v) s.pad[1]++; s.same++;s.lat_same+=lat;s.hist_same[b]++;} else {s.other++;s.lat_other+=lat;s.hist_other[b]++;}
      }
      int mc=sched_getcpu(); sh->v_cpu=mc; sh->oth_busy_at_v=sh->run[1-mc]; long tv=ns(); sh->v_time=tv;
      semop(id,&v,1); s.vdur_sum+=ns()-tv; s.vn++;
    }
    _exit(0);}
  usleep(50000); *go=1; for(int i=0;i<n;i++) wait(0); semctl(id,0,IPC_RMID);
  Sh t{}; for(int i=1;i<=n;i++){t.same+=sh[i].same;t.other+=sh[i].other;t.fast+=sh[i].fast;t.lat_same+=sh[i].lat_same;t.lat_other+=sh[i].lat_other;t.vdur_sum+=sh[i].vdur_sum;t.vn+=sh[i].vn;for(int b=0;b<10;b++){t.hist_same[b]+=sh[i].hist_same[b];t.hist_other[b]+=sh[i].hist_other[b];}}
  long ob=0,obs=0; for(int i=1;i<=n;i++){ob+=sh[i].pad[0];obs+=sh[i].pad[1];}
  long a2=0,a3=0,a4=0,a5=0; for(int i=1;i<=n;i++){a2+=sh[i].pad[2];a3+=sh[i].pad[3];a4+=sh[i].pad[4];a5+=sh[i].pad[5];}
  printf("wakee prev CPU == waker's: %ld, of which stayed there %.2f; prev == other: %ld, of which pulled to waker's %.2f\n",a2,a2?(double)a3/a2:0.,a4,a4?(double)a5/a4:0.);
  printf("other CPU marked busy at V: %ld of slept P's; of the same-CPU wakes %ld\n",ob,obs);
  printf("n=%d ops/s=%.0f  P fast %ld; slept+woke on waker's CPU %ld (%.1f us after V start), on the other CPU %ld (%.1f us); V call mean %.1f us\n",
    n,t.vn*2/0.3,t.fast,t.same,t.same?t.lat_same/1e3/t.same:0.,t.other,t.other?t.lat_other/1e3/t.other:0.,t.vdur_sum/1e3/t.vn);
  printf("  same-CPU latency hist (us log2):"); for(int b=0;b<10;b++) printf(" %ld",t.hist_same[b]); printf("\n  other-CPU latency hist:         "); for(int b=0;b<10;b++) printf(" %ld",t.hist_other[b]); printf("\n");
}
