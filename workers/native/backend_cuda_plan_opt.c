/* backend_cuda_plan_opt.c — dt_cuda_plan_add_opt and dt_cuda_plan_int_knob
 * (dt_cuda_plan_struct.h). */
#include "dt_cuda_plan_struct.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "../../src/common/dt_common.h"

void dt_cuda_plan_add_opt(dt_cuda_plan *p, const char *fmt, ...) {
    DT_ASSERT(p->nopts < DT_CUDA_MAX_OPTS);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(p->opts[p->nopts], DT_CUDA_OPT_LEN, fmt, ap);
    va_end(ap);
    DT_ASSERT(n > 0 && n < DT_CUDA_OPT_LEN);
    p->nopts++;
}

dt_status dt_cuda_plan_int_knob(const char *name, int lo, int hi, int pow2, int *v, dt_err *err) {
    const char *s = getenv(name);
    if (!s || !*s) return DT_OK;
    char *end = NULL;
    long t = strtol(s, &end, 10);
    if (*end || t < lo || t > hi || (pow2 && (t & (t - 1))))
        return dt_fail(err, DT_EINVAL, "%s=%s: expected %s in %d..%d", name, s,
                       pow2 ? "a power of two" : "an integer", lo, hi);
    *v = (int)t;
    return DT_OK;
}
