// Cost per pending entry of the global-queue scan: K threads sleep in complex ops
// {i,-1},{i,+1} on their own semaphore (0: they never complete); the main thread
// times +1/-1 on semaphore K, each of which scans the K entries.
#include <sys/ipc.h>
#include <sys/sem.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <vector>
static long ns(){timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1000000000L+t.tv_nsec;}
static int id;
void* sleeper(void* a){ int i=(int)(long)a; sembuf s[2]={{(unsigned short)i,-1,0},{(unsigned short)i,1,0}}; semop(id,s,2); return 0;}
int main(){
  for(int K: {0,16,64,256}){
    id=semget(IPC_PRIVATE,K+1,0600);
    std::vector<pthread_t> t(K);
    for(int i=0;i<K;i++) pthread_create(&t[i],0,sleeper,(void*)(long)i);
    for(;;){ int n=semctl(id,0,GETNCNT); int tot=0; for(int i=0;i<K;i++) tot+=semctl(id,i,GETNCNT); if(tot>=K) break; usleep(1000);} 
    std::vector<double> med;
    for(int r=0;r<7;r++){
      sembuf up{(unsigned short)K,1,0}, dn{(unsigned short)K,-1,0};
      long t0=ns(); for(int j=0;j<2000;j++){semop(id,&up,1);semop(id,&dn,1);} med.push_back((ns()-t0)/4000.0);
    }
    std::sort(med.begin(),med.end());
    printf("K=%d: %.1f ns per op\n",K,med[3]);
    semctl(id,0,IPC_RMID); for(int i=0;i<K;i++) pthread_join(t[i],0);
  }
}
