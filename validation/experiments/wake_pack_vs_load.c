/* Wake-up packing against the waker CPU's load: a thread pinned to CPU 0 is busy DUTY of
 * every 1 ms and, ROUNDS times, wakes (futex) a thread that last ran SPIN_NS on CPU 1 and
 * then slept there (CPU 1 idle). Prints the busy share it reached and where the wakees ran.
 * Usage: ./wake_pack_vs_load DUTY ROUNDS SPIN_NS
 */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
static long ns(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1000000000L+t.tv_nsec;}
static volatile int word=0, sleeping=0, stop=0; static double duty; static int rounds; static long SLEEPSPIN;
static void spin(long d){long e=ns()+d; while(ns()<e);}
static void pin(int c){cpu_set_t s;CPU_ZERO(&s);if(c<0){CPU_SET(0,&s);CPU_SET(1,&s);}else CPU_SET(c,&s);sched_setaffinity(0,sizeof s,&s);}
static long onwaker=0, onprev=0, other=0;
static void* sleeper(void*p){ pin(1); for(int i=0;i<rounds;i++){ spin(SLEEPSPIN); int prev=sched_getcpu(); if(prev!=1){pin(1); pin(-1); prev=sched_getcpu();} else pin(-1);
   word=0; __sync_synchronize(); sleeping=1;
   while(word==0) syscall(SYS_futex,&word,FUTEX_WAIT_PRIVATE,0,0,0,0);
   int c=sched_getcpu(); if(prev!=1) other++; else if(c==0) onwaker++; else onprev++; pin(1);}
 stop=1; return 0;}
int main(int argc,char**argv){ duty=atof(argv[1]); rounds=atoi(argv[2]); SLEEPSPIN=atol(argv[3]); pin(0); long T0=ns(); pthread_t t; pthread_create(&t,0,sleeper,0);
 long period=1000000; /* 1 ms cycles of busy duty*period then sleep */
 while(!stop){ while(!sleeping && !stop){ spin((long)(duty*period)); if(duty<1) usleep((long)((1-duty)*period/1000)); } if(stop)break;
   spin((long)(duty*period)); sleeping=0; word=1; syscall(SYS_futex,&word,FUTEX_WAKE_PRIVATE,1,0,0,0); if(duty<1) usleep((long)((1-duty)*period/1000)); }
 struct rusage ru; getrusage(RUSAGE_THREAD,&ru); double cpu=ru.ru_utime.tv_sec+ru.ru_utime.tv_usec*1e-6+ru.ru_stime.tv_sec+ru.ru_stime.tv_usec*1e-6; double wall=(ns()-T0)*1e-9;
 pthread_join(t,0); printf("busy share %.2f, waker duty %.2f: on waker's CPU %ld, on prev (idle) CPU %ld, other %ld\n",cpu/wall,duty,onwaker,onprev,other);}
