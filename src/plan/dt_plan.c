/* dt_plan.c — shapes and the case matrix (see dt_plan.h). */
#include "dt_plan.h"


#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <string.h>

void dt_shape_format(const dt_shape *s, char *buf, size_t len) {
    if (s->k)
        snprintf(buf, len, "%lldx%lldx%lld", (long long)s->m, (long long)s->n, (long long)s->k);
    else
        snprintf(buf, len, "%lldx%lld", (long long)s->m, (long long)s->n);
}

static int parse_dim(const char **p, int64_t *out) {
    if (!isdigit((unsigned char)**p)) return -1;
    errno = 0;
    char *end;
    long long v = strtoll(*p, &end, 10);
    if (errno || end == *p) return -1;
    *p = end;
    *out = v;
    return 0;
}

dt_status dt_shapes_parse(const char *text, int gemm, const char *flag, dt_shape_list *out,
                          dt_err *err) {
    memset(out, 0, sizeof *out);
    const char *want = gemm ? "MxNxK" : "MxN";
    if (!text || !*text) return dt_fail(err, DT_EINVAL, "%s: empty shape list", flag);
    const char *p = text;
    while (*p) {
        const char *start = p;
        int64_t d[3] = {0, 0, 0};
        int nd = gemm ? 3 : 2;
        for (int i = 0; i < nd; i++) {
            if (i > 0) {
                if (*p != 'x' && *p != 'X') goto bad;
                p++;
            }
            if (parse_dim(&p, &d[i]) != 0) goto bad;
        }
        if (*p != ',' && *p != 0) goto bad;
        for (int i = 0; i < nd; i++) {
            if (d[i] <= 0 || d[i] > DT_MAX_DIM)
                return dt_fail(err, DT_EINVAL,
                               "%s: '%.*s': every dimension must be in 1..%lld", flag,
                               (int)(p - start), start, DT_MAX_DIM);
        }
        if (d[0] * d[1] > DT_MAX_ELEMS || d[0] * d[2] > DT_MAX_ELEMS ||
            d[1] * d[2] > DT_MAX_ELEMS)
            return dt_fail(err, DT_EINVAL, "%s: '%.*s' is too large (a matrix over %lld elements)",
                           flag, (int)(p - start), start, (long long)DT_MAX_ELEMS);
        if (out->count == DT_MAX_SHAPES)
            return dt_fail(err, DT_EINVAL, "%s: more than %d shapes", flag, DT_MAX_SHAPES);
        dt_shape s = {d[0], d[1], gemm ? d[2] : 0};
        for (int i = 0; i < out->count; i++)
            if (out->s[i].m == s.m && out->s[i].n == s.n && out->s[i].k == s.k)
                return dt_fail(err, DT_EINVAL, "%s: duplicate shape '%.*s'", flag,
                               (int)(p - start), start);
        out->s[out->count++] = s;
        if (*p == ',') {
            p++;
            if (!*p) return dt_fail(err, DT_EINVAL, "%s: trailing comma in '%s'", flag, text);
        }
        continue;
    bad:;
        const char *e = strchr(start, ',');
        int len = e ? (int)(e - start) : (int)strlen(start);
        return dt_fail(err, DT_EINVAL, "%s: malformed shape '%.*s' (expected %s with positive integers)",
                       flag, len, start, want);
    }
    return DT_OK;
}

dt_status dt_ops_parse(const char *text, int ops[DT_OP_COUNT], dt_err *err) {
    memset(ops, 0, sizeof(int) * DT_OP_COUNT);
    if (!text || !*text) return dt_fail(err, DT_EINVAL, "--operations: empty list");
    char *copy = dt_xstrdup(text);
    int any = 0;
    for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        if (strpbrk(tok, "*?[")) { /* a glob: every operation it matches */
            int matched = 0;
            for (int i = 0; i < DT_OP_COUNT; i++)
                if (fnmatch(tok, dt_op_get((dt_op)i)->name, 0) == 0) ops[i] = matched = any = 1;
            if (matched) continue;
        }
        int op = dt_op_find(tok);
        if (op < 0) {
            char known[256] = "";
            for (int i = 0; i < DT_OP_COUNT; i++) {
                strcat(known, i ? "," : "");
                strcat(known, dt_op_get((dt_op)i)->name);
            }
            dt_status st = strpbrk(tok, "*?[")
                ? dt_fail(err, DT_EINVAL, "--operations: '%s' matches no operation (known: %s)",
                          tok, known)
                : dt_fail(err, DT_EINVAL, "--operations: unknown operation '%s' (known: %s)",
                          tok, known);
            free(copy);
            return st;
        }
        ops[op] = 1;
        any = 1;
    }
    free(copy);
    if (!any) return dt_fail(err, DT_EINVAL, "--operations: empty list");
    return DT_OK;
}

void dt_shapes_default(const char *backend, int quick, int gemm, dt_shape_list *out) {
    static const dt_shape cuda_rows[] = {{1, 127, 0},    {17, 257, 0},  {128, 1024, 0},
                                         {64, 4096, 0},  {1024, 4096, 0}, {8192, 8192, 0}};
    /* vocabulary rows (GPT-2, Llama 3): rows of logits, after cuda_rows, logits_only */
    static const dt_shape cuda_logits_rows[] = {{4096, 50257, 0}, {2048, 128256, 0}};
    static const dt_shape cpu_rows[] = {{1, 127, 0}, {17, 257, 0}, {128, 1024, 0},
                                        {1024, 4096, 0}};
    static const dt_shape cuda_gemm[] = {{127, 193, 61},      {513, 257, 129}, {128, 128, 128},
                                         {1024, 1024, 1024}, {4096, 4096, 4096},
                                         /* skinny: a matrix-vector product and a small K */
                                         {4096, 1, 4096},     {4096, 4096, 64}};
    static const dt_shape cpu_gemm[] = {{32, 32, 32}, {127, 193, 61}, {128, 128, 128},
                                        {513, 257, 129}, {512, 512, 512}};
    static const dt_shape quick_rows[] = {{1, 127, 0}, {17, 257, 0}};
    static const dt_shape quick_gemm[] = {{32, 32, 32}, {128, 128, 128}, {127, 193, 61}};
    const dt_shape *src;
    int n;
    int cuda = strcmp(backend, "cuda") == 0;
    if (quick) {
        src = gemm ? quick_gemm : quick_rows;
        n = gemm ? 3 : 2;
    } else if (gemm) {
        src = cuda ? cuda_gemm : cpu_gemm;
        n = cuda ? 7 : 5;
    } else {
        src = cuda ? cuda_rows : cpu_rows;
        n = cuda ? 6 : 4;
    }
    memset(out, 0, sizeof *out);
    for (int i = 0; i < n; i++) out->s[out->count++] = src[i];
    if (cuda && !quick && !gemm)
        for (int i = 0; i < 2; i++) {
            out->logits_only[out->count] = 1;
            out->s[out->count++] = cuda_logits_rows[i];
        }
}

int dt_op_rows_are_logits(dt_op op) {
    return op == DT_OP_SOFTMAX || op == DT_OP_CROSS_ENTROPY;
}

/* Whether shape i of op's list makes a case. */
static int shape_applies(dt_op op, const dt_shape_list *sl, int i) {
    return !sl->logits_only[i] || dt_op_rows_are_logits(op);
}

void dt_plan_build(dt_plan *plan, const int ops[DT_OP_COUNT], const dt_shape_list *rows,
                   const dt_shape_list *gemms, int views) {
    const dt_dtype f32 = DT_F32;
    dt_plan_build_typed(plan, ops, rows, gemms, views, &f32, 1);
}

void dt_plan_build_typed(dt_plan *plan, const int ops[DT_OP_COUNT], const dt_shape_list *rows,
                         const dt_shape_list *gemms, int views, const dt_dtype *dtypes,
                         int ndtypes) {
    int total = 0;
    for (int op = 0; op < DT_OP_COUNT; op++)
        if (ops[op])
            for (int i = 0, g = dt_op_get((dt_op)op)->is_gemm; i < (g ? gemms : rows)->count; i++)
                total += shape_applies((dt_op)op, g ? gemms : rows, i) * ndtypes;
    plan->count = 0;
    plan->cases = dt_xcalloc((size_t)total, sizeof *plan->cases);
    for (int op = 0; op < DT_OP_COUNT; op++) {
        if (!ops[op]) continue;
        const dt_op_info *info = dt_op_get((dt_op)op);
        const dt_shape_list *sl = info->is_gemm ? gemms : rows;
        for (int i = 0; i < sl->count; i++) {
            if (!shape_applies((dt_op)op, sl, i)) continue;
            for (int d = 0; d < ndtypes; d++) {
                dt_case_spec *c = &plan->cases[plan->count++];
                c->op = (dt_op)op;
                c->m = sl->s[i].m;
                c->n = sl->s[i].n;
                c->k = info->is_gemm ? sl->s[i].k : 0;
                c->views = views;
                c->dtype = dtypes[d];
                char shape[64], ty[16] = "";
                dt_shape_format(&sl->s[i], shape, sizeof shape);
                /* fp32 ids stay as they were, so older runs compare */
                if (c->dtype != DT_F32) snprintf(ty, sizeof ty, "_%s", dt_dtype_name(c->dtype));
                snprintf(c->id, sizeof c->id, "%s_%s%s%s", info->name, shape, ty,
                         views ? "_view" : "");
            }
        }
    }
}

dt_status dt_dtypes_parse(const char *text, dt_dtype out[DT_MAX_DTYPES], int *count,
                          dt_err *err) {
    *count = 0;
    if (!text || !*text) return dt_fail(err, DT_EINVAL, "--dtypes: empty list");
    const char *p = text;
    while (1) {
        size_t len = strcspn(p, ",");
        char name[32];
        int d = -1;
        if (len > 0 && len < sizeof name) {
            memcpy(name, p, len);
            name[len] = 0;
            d = dt_dtype_find(name);
        }
        if (d < 0 || !dt_dtype_is_float((dt_dtype)d))
            return dt_fail(err, DT_EINVAL,
                           "--dtypes: unknown dtype '%.*s' (known: fp32, bf16, fp16; also f32, "
                           "f16, bfloat16)", (int)len, p);
        for (int i = 0; i < *count; i++)
            if (out[i] == (dt_dtype)d)
                return dt_fail(err, DT_EINVAL, "--dtypes: duplicate dtype '%.*s'", (int)len, p);
        out[(*count)++] = (dt_dtype)d;
        if (!p[len]) break;
        p += len + 1;
        if (!*p) return dt_fail(err, DT_EINVAL, "--dtypes: trailing comma in '%s'", text);
    }
    return DT_OK;
}


void dt_plan_free(dt_plan *plan) {
    free(plan->cases);
    plan->cases = NULL;
    plan->count = 0;
}
