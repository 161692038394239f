/* A SysV mutex of N threads (sem-lockunlock's loop: semop -1, semop +1), unpinned:
 * prints "ns task cpu event" for every lock call (L), grant (G), unlock call (U) and
 * unlock return (R) over 200 ms, sorted by time. mutex_chain_trace.py classes the
 * hand-offs. Usage: ./mutex_chain_trace N > trace.txt; python3 mutex_chain_trace.py trace.txt
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <time.h>
#include <unistd.h>
static long ns(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1000000000L+t.tv_nsec;}
static int id; static volatile int stop=0, measuring=0; static int N;
struct ev{long t; int task, cpu; char what;}; static struct ev E[200000]; static int ne=0;
static void rec(int k,char w){ if(!measuring) return; int i=__sync_fetch_and_add(&ne,1); if(i<200000){E[i].t=ns();E[i].task=k;E[i].cpu=sched_getcpu();E[i].what=w;} }
static void* run(void* p){ int k=(long)p; struct sembuf up={0,1,0},dn={0,-1,0};
 while(!stop){ rec(k,'L'); semop(id,&dn,1); rec(k,'G'); rec(k,'U'); semop(id,&up,1); rec(k,'R'); }
 return 0;}
int main(int argc,char**argv){ N=atoi(argv[1]); id=semget(IPC_PRIVATE,1,0600); semctl(id,0,SETVAL,1);
 pthread_t th[256]; for(long i=0;i<N;i++) pthread_create(&th[i],0,run,(void*)i);
 usleep(50000); measuring=1; usleep(200000); measuring=0; stop=1; semctl(id,0,IPC_RMID); for(int i=0;i<N;i++) pthread_join(th[i],0);
 int n=ne<200000?ne:200000; /* sort by time (insertion order is nearly sorted) */
 for(int i=1;i<n;i++){ struct ev x=E[i]; int j=i-1; while(j>=0&&E[j].t>x.t){E[j+1]=E[j];j--;} E[j+1]=x; }
 for(int i=0;i<n;i++) printf("%ld %d %d %c\n",E[i].t,E[i].task,E[i].cpu,E[i].what); }
