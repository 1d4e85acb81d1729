/* dt_flop_ceilings.h — the run's FLOP ceilings by dtype (issue 18 item 6): every main
 * worker of the session is asked the `flop_ceilings` request (docs/protocol.md); the
 * native worker answers FP32 (an FFMA-chain kernel), the PyTorch worker BF16 and FP16
 * (torch.matmul, i.e. cuBLAS, at large square shapes: a known-good tensor-core kernel).
 * Per dtype the highest answer is kept (a ceiling is the best that known-good code
 * reached); the record's method names which implementation said what, and, when no
 * worker answered, why. A refusal is never fatal (workers that do not offer it answer
 * ok:false). Stored in environment.ceilings.flops (docs/results-format.md); the report's
 * gemm rows show their % of it (dt_derive, roofline).
 * Ownership: out->method is the record's (freed with it). Units: TFLOP/s = 1e12 FLOP/s.
 * Not thread-safe (one request at a time). */
#ifndef DT_FLOP_CEILINGS_H
#define DT_FLOP_CEILINGS_H

#include "record/dt_record.h"
#include "session/dt_session.h"

/* Asks each main worker (each up to timeout_s) and merges the answers into *out (its
 * old contents are freed first). */
void dt_flop_ceilings_measure(dt_session *s, const char *backend, double timeout_s,
                              dt_flop_ceilings_rec *out);

/* Merges one answer of implementation `who` into *into: per dtype the larger value
 * (0: none); the answer's method is appended as "who: method" ("; " between). */
void dt_flop_ceilings_merge(dt_flop_ceilings_rec *into, const dt_flop_ceilings_rec *answer,
                            const char *who);

/* Appends "who: why" to into->method (a refusal, kept only while nothing answered). */
void dt_flop_ceilings_note(dt_flop_ceilings_rec *into, const char *who, const char *why);

#endif
