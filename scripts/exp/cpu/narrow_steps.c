/* narrow_steps.c — the CPU backend's bf16 narrow-op steps alone at 1024x4096 (session 14, docs/perf.md
 * "CPU bf16 / f16 row ops"): mode bits 1 widen a and b, 2 the FP32 add, 4 round (auto-vectorized),
 * 8 round (SSE2 intrinsics); 16 checks the SSE2 rounding against the rule over all 2^32 floats.
 * build: gcc -O2 -fopenmp -Ikernels/cpu -Isrc -Iinclude scripts/exp/cpu/narrow_steps.c
 *        build/workers/native/libdt_cpu_kernels.a -lm -lpthread; run: OMP_NUM_THREADS=1 ./a.out MODE */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "dt_cpu_kernels.h"
static inline uint16_t bfr(uint32_t u) {
    const uint32_t r = (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16, q = (u >> 16) | 0x0040u;
    return (uint16_t)((u & 0x7FFFFFFFu) > 0x7F800000u ? q : r);
}
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e6+t.tv_nsec/1e3;}
__attribute__((noinline)) void widen(const uint16_t *src, float *dst, int64_t n){
    _Pragma("omp simd") for(int64_t j=0;j<n;j++){uint32_t u=(uint32_t)src[j]<<16; __builtin_memcpy(&dst[j],&u,4);} }
__attribute__((noinline)) void narrow(const float *src, uint16_t *dst, int64_t n){
    _Pragma("omp simd") for(int64_t j=0;j<n;j++){uint32_t u; __builtin_memcpy(&u,&src[j],4); dst[j]=bfr(u);} }
#include <emmintrin.h>
__attribute__((noinline)) void narrow2(const float *src, uint16_t *dst, int64_t n){
  int64_t j=0;
  const __m128i k7f=_mm_set1_epi32(0x7FFF), one=_mm_set1_epi32(1), abs=_mm_set1_epi32(0x7FFFFFFF), inf=_mm_set1_epi32(0x7F800000), qb=_mm_set1_epi32(0x40);
  for(;j+8<=n;j+=8){
    __m128i r[2];
    for(int h=0;h<2;h++){
      __m128i u=_mm_loadu_si128((const __m128i*)(src+j+4*h));
      __m128i hi=_mm_srli_epi32(u,16);
      __m128i rn=_mm_srli_epi32(_mm_add_epi32(_mm_add_epi32(u,k7f),_mm_and_si128(hi,one)),16);
      __m128i nan=_mm_cmpgt_epi32(_mm_and_si128(u,abs),inf);
      __m128i q=_mm_or_si128(hi,qb);
      __m128i v=_mm_or_si128(_mm_and_si128(nan,q),_mm_andnot_si128(nan,rn));
      r[h]=_mm_srai_epi32(_mm_slli_epi32(v,16),16);
    }
    _mm_storeu_si128((__m128i*)(dst+j),_mm_packs_epi32(r[0],r[1]));
  }
  for(;j<n;j++){uint32_t u; __builtin_memcpy(&u,&src[j],4); dst[j]=bfr(u);}
}
int main(int argc,char**argv){
  int64_t m=1024,n=4096,step=2; int mode=atoi(argv[1]);
  uint16_t *A=malloc(m*n*2),*B=malloc(m*n*2),*O=malloc(m*n*2);
  for(int64_t i=0;i<m*n;i++){A[i]=0x3f80+(i&7);B[i]=0x3f80;}
  float *fa=malloc(step*n*4),*fb=malloc(step*n*4),*fo=malloc(step*n*4);
  double best=1e30;
  for(int it=0;it<30;it++){double t0=now();
    for(int64_t r=0;r<m;r+=step){
      if(mode&1){widen(A+r*n,fa,step*n);widen(B+r*n,fb,step*n);}
      if(mode&2) dt_cpu_add(step,n,fa,n,fb,n,fo);
      if(mode&4) narrow(fo,O+r*n,step*n); if(mode&8) narrow2(fo,O+r*n,step*n);
    }
    double t=now()-t0; if(t<best)best=t;}
  printf("mode %d: %.0f us (1 thread)\n",mode,best);
  /* exhaustive check narrow2 == bfr over all float bit patterns (strided) */
  if(mode==16){ float *f=malloc(4096*4); uint16_t *o=malloc(4096*2); long bad=0;
    for(uint64_t base=0; base<(1ull<<32); base+=4096){ for(int k=0;k<4096;k++){uint32_t u=(uint32_t)(base+k); __builtin_memcpy(&f[k],&u,4);} narrow2(f,o,4096);
      for(int k=0;k<4096;k++){uint32_t u=(uint32_t)(base+k); if(o[k]!=bfr(u)) bad++;} }
    printf("exhaustive mismatches: %ld\n",bad);}
}
