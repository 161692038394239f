/* A wakee whose previous CPU is the waker's (CPU 0, busy DUTY of every 1 ms) while CPU 1
 * is idle: does the wake-up's idle-CPU search move it? Usage: ./wake_prev_busy_vs_load DUTY ROUNDS
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
static long ns(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1000000000L+t.tv_nsec;}
static volatile int word=0, sleeping=0, stop=0; static double duty; static int rounds;
static void spin(long d){long e=ns()+d; while(ns()<e);}
static void pin(int c){cpu_set_t s;CPU_ZERO(&s);if(c<0){CPU_SET(0,&s);CPU_SET(1,&s);}else CPU_SET(c,&s);sched_setaffinity(0,sizeof s,&s);}
static long onwaker=0, onother=0, bad=0;
/* The sleeper last runs on CPU 0, the waker's; CPU 1 idle. */
static void* sleeper(void*p){ for(int i=0;i<rounds;i++){ pin(0); spin(2000); pin(-1); int prev=sched_getcpu();
   word=0; __sync_synchronize(); sleeping=1;
   while(word==0) syscall(SYS_futex,&word,FUTEX_WAIT_PRIVATE,0,0,0,0);
   int c=sched_getcpu(); if(prev!=0) bad++; else if(c==0) onwaker++; else onother++; }
 stop=1; return 0;}
int main(int argc,char**argv){ duty=atof(argv[1]); rounds=atoi(argv[2]); pin(0); pthread_t t; pthread_create(&t,0,sleeper,0);
 long period=1000000;
 while(!stop){ while(!sleeping && !stop){ spin((long)(duty*period)); usleep((long)((1-duty)*period/1000)+1); } if(stop)break;
   spin(20000); sleeping=0; word=1; syscall(SYS_futex,&word,FUTEX_WAKE_PRIVATE,1,0,0,0); usleep((long)((1-duty)*period/1000)+1); }
 pthread_join(t,0); printf("duty %.2f: prev = waker's CPU: stayed %ld, went to the idle CPU %ld (bad %ld)\n",duty,onwaker,onother,bad);}
