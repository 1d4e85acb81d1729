/* dt_memcheck.c — the up-front memory check of a plan (see dt_memcheck.h). */
#include "dt_memcheck.h"

#include <stdio.h>
#include <string.h>
#include <sys/statvfs.h>

#include "../data/dt_arena.h"
#include "dt_cheat.h"

void dt_case_bytes_of(const dt_case_spec *c, int nimpls, dt_case_bytes *out) {
    dt_case_layout L;
    dt_layout_make_typed(&L, c->op, c->m, c->n, c->k, c->views, c->dtype);
    const dt_buffer_layout *O = &L.buf[dt_layout_output(&L)];
    int64_t ref = 2 * O->rows * O->cols * (int64_t)sizeof(double); /* ref + scale */
    int64_t scratch = 0;
    if (dt_op_get(c->op)->is_gemm) /* dense A, B and |B| */
        scratch = (c->m * c->k + 2 * c->k * c->n) * (int64_t)sizeof(double);
    else /* two rows of doubles per thread, and gamma/beta: small */
        scratch = 4 * c->n * (int64_t)sizeof(double) * 8;
    out->arena_bytes = L.total_bytes;
    /* + the anti-cheat input sets beyond the first: arenas and references */
    out->host_bytes = L.total_bytes + ref + scratch + dt_cheat_extra_host_bytes(&L);
    out->shm_bytes = L.total_bytes * nimpls;
    out->device_bytes = L.total_bytes * nimpls;
}

void dt_mem_free_read(dt_mem_free *f) {
    f->host_bytes = f->shm_bytes = f->device_bytes = -1;
    FILE *fp = fopen("/proc/meminfo", "r");
    if (fp) {
        char line[256];
        long long kb;
        while (fgets(line, sizeof line, fp))
            if (sscanf(line, "MemAvailable: %lld kB", &kb) == 1) f->host_bytes = kb * 1024LL;
        fclose(fp);
    }
    struct statvfs sv;
    if (statvfs("/dev/shm", &sv) == 0) f->shm_bytes = (int64_t)sv.f_bavail * (int64_t)sv.f_frsize;
}

static dt_status refuse(dt_err *err, const dt_case_spec *c, int64_t need, const char *what,
                        int64_t have) {
    return dt_fail(err, DT_EINVAL,
                   "case %s needs %lld bytes of %s, %lld bytes are available (shapes are "
                   "limited by memory: choose smaller --row-shapes/--gemm-shapes)",
                   c->id, (long long)need, what, (long long)have);
}

dt_status dt_memcheck_plan(const dt_plan *plan, int nimpls, const dt_mem_free *f, char *note,
                           size_t note_len, dt_err *err) {
    int64_t max_host = 0, max_shm = 0, max_dev = 0;
    for (int i = 0; i < plan->count; i++) {
        const dt_case_spec *c = &plan->cases[i];
        dt_case_bytes b;
        dt_case_bytes_of(c, nimpls, &b);
        const int64_t host = b.host_bytes + b.shm_bytes;
        if (f->host_bytes >= 0 && host > f->host_bytes)
            return refuse(err, c, host, "host memory (arena, pristine copy, FP64 reference and "
                          "the workers' shared arenas)", f->host_bytes);
        if (f->shm_bytes >= 0 && b.shm_bytes > f->shm_bytes)
            return refuse(err, c, b.shm_bytes, "/dev/shm (one arena per implementation)",
                          f->shm_bytes);
        if (f->device_bytes >= 0 && b.device_bytes > f->device_bytes)
            return refuse(err, c, b.device_bytes, "device memory", f->device_bytes);
        if (host > max_host) max_host = host;
        if (b.shm_bytes > max_shm) max_shm = b.shm_bytes;
        if (b.device_bytes > max_dev) max_dev = b.device_bytes;
    }
    if (note && note_len)
        snprintf(note, note_len,
                 "largest case: %lld host bytes (of %lld available), %lld in /dev/shm (of "
                 "%lld), %lld on the device (%s)",
                 (long long)max_host, (long long)f->host_bytes, (long long)max_shm,
                 (long long)f->shm_bytes, (long long)max_dev,
                 f->device_bytes >= 0 ? "checked against the worker's free memory"
                                      : "not checked: the worker reported no free memory");
    return DT_OK;
}
