// Per-entry cost of the global-queue scan when other work evicts the entries between
// scans: K complex sleepers; the main thread does +1/-1 on semaphore K (each scans the
// K entries), touching B bytes of its own buffer before each pair of calls.
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
static volatile unsigned long sink;
void* sleeper(void* a){ int i=(int)(long)a; sembuf s[2]={{(unsigned short)i,-1,0},{(unsigned short)i,1,0}}; semop(id,s,2); return 0;}
static void touch(std::vector<char>& buf, size_t B){ unsigned long s=0; for(size_t o=0;o<B;o+=64){ buf[o]++; s+=buf[o];} sink+=s; }
int main(int argc,char**argv){
  std::vector<size_t> Bs={0, 32<<10, 256<<10, 1<<20, 2<<20, 4<<20, 16<<20};
  std::vector<char> buf(16<<20);
  for(size_t B: Bs){
    for(int K: {0,128}){
      id=semget(IPC_PRIVATE,K+1,0600);
      std::vector<pthread_t> t(K);
      for(int i=0;i<K;i++) pthread_create(&t[i],0,sleeper,(void*)(long)i);
      for(;;){ int tot=0; for(int i=0;i<K;i++) tot+=semctl(id,i,GETNCNT); if(tot>=K) break; usleep(1000);}
      std::vector<double> med;
      int loops = B >= (4<<20) ? 200 : 1000;
      for(int r=0;r<7;r++){
        sembuf up{(unsigned short)K,1,0}, dn{(unsigned short)K,-1,0};
        long t0=ns(); for(int j=0;j<loops;j++){touch(buf,B); semop(id,&up,1);semop(id,&dn,1);} med.push_back((ns()-t0)/(double)loops);
      }
      std::sort(med.begin(),med.end());
      printf("B=%zu KiB K=%d: %.0f ns per pair (min %.0f max %.0f)\n",B>>10,K,med[3],med[0],med[6]);
      fflush(stdout);
      semctl(id,0,IPC_RMID); for(int i=0;i<K;i++) pthread_join(t[i],0);
    }
  }
}
