/* backend_cuda_plan_opt.c — dt_cuda_plan_add_opt (dt_cuda_plan_struct.h). */
#include "dt_cuda_plan_struct.h"

#include <stdarg.h>
#include <stdio.h>

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
