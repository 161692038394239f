// Does a queue entry that the other CPU's scan just stored to (q->blocking, 3.16+)
// cost the next scan a line transfer? K threads sleep in complex ops
// {i,-1},{i,+1} on their own semaphores (every try fails); two scanner threads do
// +1/-1 on semaphores of their own, each call scanning the K entries, pinned to
// CPUs 0 and 1 (or both to CPU 0 with SAME=1). Prints ns per semop and how often
// the next semop came from the other scanner.
//   /tmp/x [K]        SAME=1 /tmp/x [K]
#include <sched.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <vector>
static long ns(){timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1000000000L+t.tv_nsec;}
static int id; static int K=128; static std::atomic<int> go{0};
static const int kPairs = 20000;
static std::vector<long> stamps[2];
void* sleeper(void* a){ int i=(int)(long)a; sembuf s[2]={{(unsigned short)i,-1,0},{(unsigned short)i,1,0}}; semop(id,s,2); return 0;}
void* scanner(void* a){
  int s=(int)(long)a; int cpu = s; if (getenv("SAME")) cpu = 0;
  cpu_set_t c; CPU_ZERO(&c); CPU_SET(cpu,&c); pthread_setaffinity_np(pthread_self(),sizeof c,&c);
  while(!go.load()) {}
  sembuf up{(unsigned short)(K+s),1,0}, dn{(unsigned short)(K+s),-1,0};
  stamps[s].reserve(2*kPairs);
  for(int j=0;j<kPairs;j++){semop(id,&up,1); stamps[s].push_back(ns()); semop(id,&dn,1); stamps[s].push_back(ns());}
  return 0;
}
int main(int argc, char** argv){
  K = argc > 1 ? atoi(argv[1]) : 128;
  id=semget(IPC_PRIVATE,K+2,0600);
  std::vector<pthread_t> t(K);
  for(int i=0;i<K;i++) pthread_create(&t[i],0,sleeper,(void*)(long)i);
  for(;;){ int tot=0; for(int i=0;i<K;i++) tot+=semctl(id,i,GETNCNT); if(tot>=K) break; usleep(1000);}
  pthread_t sc[2];
  for(int s=0;s<2;s++) pthread_create(&sc[s],0,scanner,(void*)(long)s);
  usleep(20000);
  long t0=ns(); go=1;
  for(int s=0;s<2;s++) pthread_join(sc[s],0);
  long t1=ns();
  std::vector<std::pair<long,int>> all;
  for(int s=0;s<2;s++) for(long x: stamps[s]) all.push_back({x,s});
  std::sort(all.begin(),all.end());
  long switches=0; for(size_t i=1;i<all.size();i++) if(all[i].second!=all[i-1].second) ++switches;
  printf("K=%d %s: %.0f ns per semop; the next semop from the other scanner in %.1f %% of %zu\n",K,getenv("SAME")?"same CPU":"CPUs 0,1",(t1-t0)/(double)all.size(),100.0*switches/(all.size()-1),all.size());
  semctl(id,0,IPC_RMID); for(int i=0;i<K;i++) pthread_join(t[i],0);
}
