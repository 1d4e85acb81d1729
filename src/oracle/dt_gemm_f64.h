/* dt_gemm_f64.h — the oracle's FP64 GEMM: C = A*B and S = |A|*|B| (the magnitude of the
 * terms of every output element) for dense row-major doubles, register-blocked (packed
 * panels, a micro-kernel that keeps a tile of C and of S in registers across a K block,
 * OpenMP over tiles of C).
 *
 * Results: every element is computed as c = 0; for k = 0 .. K-1 ascending: c = c + a*b,
 * one rounded multiply then one rounded add per term (never an FMA: the file is compiled
 * with -ffp-contract=off), the same for s with |a| and |b|. That is the order of the plain
 * triple loop, so C and S are bit-identical to it, and to one another across paths, thread
 * counts and schedules (for finite inputs; the oracle's inputs always are. NaN payloads
 * are not promised). tests/unit/test_gemm_f64.c holds this with memcmp.
 *
 * Paths: a portable one (GCC vector extensions, whatever the build's baseline ISA is) and,
 * on x86-64 with GCC or clang, AVX2 and AVX-512F copies of the same micro-kernel chosen at
 * run time from CPUID (__builtin_cpu_supports). DUALTIME_ORACLE_ISA=portable|avx2|avx512
 * asks for one (granted only where this CPU runs it, else auto); unset or "auto": the widest
 * this CPU runs.
 *
 * Ownership: A and B are read; C and S (M x N each) are written in full (no zeroing
 * needed). Scratch (packed panels) is allocated per OpenMP thread per call and freed.
 * Thread-safety: reentrant; uses the calling thread's OpenMP team (the oracle's pool). */
#ifndef DT_GEMM_F64_H
#define DT_GEMM_F64_H

#include <stdint.h>

typedef enum dt_gemm_f64_path {
    DT_GEMM_F64_AUTO = 0, /* DUALTIME_ORACLE_ISA, else the widest path this CPU runs */
    DT_GEMM_F64_PORTABLE, /* generic vectors at the build's baseline ISA */
    DT_GEMM_F64_AVX2,     /* x86-64 AVX2 (no FMA used) */
    DT_GEMM_F64_AVX512,   /* x86-64 AVX-512F (no FMA used) */
    DT_GEMM_F64_PATHS
} dt_gemm_f64_path;

/* "auto", "portable", "avx2", "avx512"; "?" outside the enum. */
const char *dt_gemm_f64_path_name(dt_gemm_f64_path p);

/* 1 when this build and CPU can run path p (AUTO and PORTABLE always). */
int dt_gemm_f64_path_runs(dt_gemm_f64_path p);

/* The path AUTO resolves to now (reads DUALTIME_ORACLE_ISA). Never AUTO. */
dt_gemm_f64_path dt_gemm_f64_path_auto(void);

/* C = A*B, S = |A|*|B|: A is M x K, B is K x N, C and S M x N, all dense row-major.
 * M, N, K >= 1. A path this CPU cannot run (dt_gemm_f64_path_runs) is replaced by AUTO. */
void dt_gemm_f64(dt_gemm_f64_path p, int64_t M, int64_t N, int64_t K, const double *A,
                 const double *B, double *C, double *S);

#endif
