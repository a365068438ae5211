/* The sender's CPU per reply on a Unix socketpair: writev of a 16-byte
 * header + BS bytes of data (MODE 0) against vmsplice into a pipe then
 * splice pipe -> socket (MODE 1), BATCH replies per call; a reader thread
 * drains the other end. PIN 1: sender on CPU 0, reader on CPU 1 (different
 * cores); PIN 0: both on CPU 0; absent: wherever the scheduler puts them.
 * docs/performance.md, "Zero-copy reply data (session 11)".
 *
 *   gcc -O2 -o /tmp/send_cost bench/send_copy_vs_splice.c -lpthread
 *   /tmp/send_cost N BS MODE BATCH [PIN]     e.g. 200000 4096 1 16 1
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/resource.h>
#include <time.h>
#include <fcntl.h>
#include <sched.h>
static int PIN=-1; static void pin(int c){ if(PIN<0)return; cpu_set_t m; CPU_ZERO(&m); CPU_SET(c,&m); pthread_setaffinity_np(pthread_self(),sizeof m,&m);}
static int sv[2]; static long N; static int BS;
void *rd(void *a){ pin(PIN==0?0:1); char *b=malloc(1<<20); long need=N*(BS+16); while(need>0){ long r=read(sv[1],b,1<<20); if(r<=0)break; need-=r;} return 0;}
static double cpu(void){struct rusage u; getrusage(RUSAGE_THREAD,&u); return u.ru_utime.tv_sec+u.ru_stime.tv_sec+(u.ru_utime.tv_usec+u.ru_stime.tv_usec)/1e6;}
int main(int argc,char**argv){ N=atol(argv[1]); BS=atoi(argv[2]); int mode=atoi(argv[3]); int batch=argc>4?atoi(argv[4]):1; PIN=argc>5?atoi(argv[5]):-1; pin(0);
 socketpair(AF_UNIX,SOCK_STREAM,0,sv); pthread_t t; pthread_create(&t,0,rd,0);
 char *buf; posix_memalign((void**)&buf,4096,BS*64); memset(buf,1,BS*64); char h[16*64]={0};
 int p[2]; pipe(p); fcntl(p[1],F_SETPIPE_SZ,1<<20);
 double c0=cpu(); struct timespec a,b; clock_gettime(CLOCK_MONOTONIC,&a);
 for(long i=0;i<N;i+=batch){ struct iovec iov[128]; int n=0; for(int j=0;j<batch;j++){ iov[n].iov_base=h+16*j; iov[n++].iov_len=16; iov[n].iov_base=buf+BS*((i+j)%64); iov[n++].iov_len=BS;}
   if(mode==0){ ssize_t w=writev(sv[0],iov,n); if(w!=(ssize_t)(batch*(BS+16))){perror("w");return 1;} }
   else { ssize_t w=vmsplice(p[1],iov,n,0); long left=w; while(left>0){ ssize_t s=splice(p[0],0,sv[0],0,left,SPLICE_F_MOVE); if(s<=0){perror("splice");return 1;} left-=s;} }
 }
 double c1=cpu(); clock_gettime(CLOCK_MONOTONIC,&b); pthread_join(t,0);
 printf("mode %d batch %d: sender cpu %.3f us/reply, wall %.3f us/reply\n",mode,batch,(c1-c0)/N*1e6,((b.tv_sec-a.tv_sec)+(b.tv_nsec-a.tv_nsec)/1e9)/N*1e6);
}
