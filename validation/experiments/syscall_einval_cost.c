// Per-call cost of getppid, of a semop() the kernel refuses at entry (semid -1), and of an
// uncontended -1/+1 semop(), pinned to CPU 0 (validation/host-accuracy.md, 2026-12-06).
// gcc -O2 -o /tmp/q syscall_einval_cost.c && /tmp/q
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/sem.h>
#include <time.h>
static long ns(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1000000000L+t.tv_nsec;}
int main(){
  cpu_set_t s; CPU_ZERO(&s); CPU_SET(0,&s); sched_setaffinity(0,sizeof s,&s);
  struct sembuf b={0,1,0};
  int id=semget(IPC_PRIVATE,1,0600|IPC_CREAT);
  struct sembuf m={0,-1,0},p={0,1,0};
  long n=1000000;
  for(int r=0;r<3;r++){
    long t0=ns(); for(long i=0;i<n;i++) syscall(SYS_getppid); long a=ns()-t0;
    t0=ns(); for(long i=0;i<n;i++) semop(-1,&b,1); long e=ns()-t0;
    t0=ns(); for(long i=0;i<n;i+=2){semop(id,&p,1);semop(id,&m,1);} long v=ns()-t0;
    printf("getppid %.1f  semop-EINVAL %.1f  semop %.1f ns\n",(double)a/n,(double)e/n,(double)v/n);
  }
  semctl(id,0,IPC_RMID); return 0;}
