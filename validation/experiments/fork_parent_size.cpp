// osim-like start: N forked processes sleep on a start semaphore; the parent releases
// them with SETALL; each then does LOOPS lock/unlock pairs on its own semaphore
// (i % 64) and records the CPU it started and finished on and its finish time.
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/sem.h>
#include <sys/wait.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
static long ns(){timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1000000000L+t.tv_nsec;}
struct Rec{int c0,c1,fork_cpu; long t_end; int migr;};
int main(int argc,char**argv){
  int n=atoi(argv[1]); int loops=atoi(argv[2]);
  long mb=argc>3?atol(argv[3]):0; if(mb){ char* big=(char*)malloc(mb<<20); for(long i=0;i<(mb<<20);i+=4096) big[i]=1; }
  int id=semget(IPC_PRIVATE,65,0600);  // 64 locks + start
  unsigned short init[65]; for(int i=0;i<64;i++) init[i]=1; init[64]=0; semctl(id,0,SETALL,init);
  Rec* r=(Rec*)mmap(0,sizeof(Rec)*n,PROT_READ|PROT_WRITE,MAP_SHARED|MAP_ANONYMOUS,-1,0);
  for(int i=0;i<n;i++) if(fork()==0){
    r[i].fork_cpu=sched_getcpu();
    sembuf st{64,-1,0}; semop(id,&st,1);
    r[i].c0=sched_getcpu(); int last=r[i].c0, m=0;
    sembuf p{(unsigned short)(i%64),-1,0}, v{(unsigned short)(i%64),1,0};
    for(int k=0;k<loops;k++){ semop(id,&p,1); semop(id,&v,1); if((k&63)==0){int c=sched_getcpu(); if(c!=last){m++;last=c;}} }
    r[i].c1=sched_getcpu(); r[i].t_end=ns(); r[i].migr=m; _exit(0);}
  usleep(100000);
  unsigned short go[65]; for(int i=0;i<64;i++) go[i]=1; go[64]=n;
  long t0=ns(); semctl(id,0,SETALL,go);
  for(int i=0;i<n;i++) wait(0);
  long tend=0; int fc[2]={0,0},s0[2]={0,0},e1[2]={0,0}; long mig=0;
  for(int i=0;i<n;i++){ if(r[i].t_end>tend)tend=r[i].t_end; fc[r[i].fork_cpu]++; s0[r[i].c0]++; e1[r[i].c1]++; mig+=r[i].migr; }
  std::vector<long> ends; for(int i=0;i<n;i++) ends.push_back(r[i].t_end-t0);
  std::sort(ends.begin(),ends.end());
  printf("n=%d loops=%d: forked on cpu0/1 %d/%d, started on %d/%d, ended on %d/%d, migrations seen %ld; window %.1f ms (%.2f M ops/s); 50%% done at %.1f ms\n",
    n,loops,fc[0],fc[1],s0[0],s0[1],e1[0],e1[1],mig,(tend-t0)/1e6, 2.0*n*loops/((tend-t0)/1e3)/1e6*1e-3*1e3, ends[n/2]/1e6);
  semctl(id,0,IPC_RMID);
}
