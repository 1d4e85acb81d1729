/* test_casehost.c — a case-round's host side and the preparer (src/orchestrate/dt_casehost.h):
 *  - made by the preparer equals made in line, byte for byte: the pristine arena, the FP64
 *    reference and scale, every input set and its reference, the input SHA-256s, and the
 *    shared arenas hold the pristine copy;
 *  - several submitted ahead are taken in order; one asked for out of order is not handed
 *    out (NULL, and the next one still comes);
 *  - a wait interrupted (cfg.interrupted) gives up at once while a make is in progress, and
 *    abandon then returns without waiting for it (the thread frees it all afterwards: the
 *    sanitizer build's leak check sees nothing left);
 *  - a submit beyond DT_CASEHOST_AHEAD_MAX is refused.
 * Run: ctest -R test_casehost. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../dt_check.h"
#include "common/dt_common.h"
#include "orchestrate/dt_casehost.h"

static dt_case_spec spec_of(dt_op op, int64_t m, int64_t n, int64_t k, const char *id) {
    dt_case_spec s;
    memset(&s, 0, sizeof s);
    s.op = op;
    s.m = m;
    s.n = n;
    s.k = k;
    s.dtype = DT_F32;
    snprintf(s.id, sizeof s.id, "%s", id);
    return s;
}

static int same_ref(const dt_oracle_ref *a, const dt_oracle_ref *b) {
    size_t bytes = (size_t)(a->rows * a->cols) * sizeof(double);
    return a->rows == b->rows && a->cols == b->cols && memcmp(a->ref, b->ref, bytes) == 0 &&
           memcmp(a->scale, b->scale, bytes) == 0;
}

static int same_host(const dt_casehost *a, const dt_casehost *b) {
    size_t n = (size_t)a->L.total_bytes;
    if (a->L.total_bytes != b->L.total_bytes || memcmp(a->pristine, b->pristine, n) != 0 ||
        !same_ref(&a->ref, &b->ref) || a->cheat.nsets != b->cheat.nsets ||
        a->n_inputs != b->n_inputs)
        return 0;
    for (int k = 1; k < a->cheat.nsets; k++)
        if (memcmp(a->cheat.pristine[k], b->cheat.pristine[k], n) != 0 ||
            !same_ref(&a->cheat.ref[k], &b->cheat.ref[k]))
            return 0;
    for (int i = 0; i < a->n_inputs; i++)
        if (strcmp(a->input_hex[i], b->input_hex[i]) != 0) return 0;
    return 1;
}

static int g_interrupt;
static int interrupted(void) { return g_interrupt; }

static void test_equal_and_order(dt_casehost_cfg *cfg) {
    dt_case_spec s[3] = {spec_of(DT_OP_SOFTMAX, 17, 257, 0, "softmax_17x257"),
                         spec_of(DT_OP_GEMM, 64, 48, 80, "gemm_64x48x80"),
                         spec_of(DT_OP_CROSS_ENTROPY, 33, 1000, 0, "cross_entropy_33x1000")};
    char why[200];
    dt_casehost_pool *p = dt_casehost_pool_start(cfg, "0-0", NULL, why, sizeof why);
    REQUIRE(p, "pool start: %s", why);
    for (int i = 0; i < 3; i++) CHECK(dt_casehost_pool_submit(p, &s[i], 0, 1, 2) == 0, "submit %d", i);
    usleep(300 * 1000); /* begun (one not begun is handed back to be made in line) */
    for (int i = 0; i < 3; i++) {
        int64_t waited;
        dt_casehost *h = dt_casehost_pool_take(p, &s[i], 0, &waited);
        CHECK(h != NULL, "take %d", i);
        if (!h) continue;
        CHECK(h->ahead == 1 && !h->fail_stage && h->nshm == 2, "%s made ahead, 2 arenas", s[i].id);
        dt_casehost line;
        dt_casehost_make(cfg, &s[i], 0, 1, 0, NULL, NULL, &line);
        CHECK(same_host(h, &line), "%s: ahead == in line", s[i].id);
        for (int k = 0; k < h->nshm; k++)
            CHECK(memcmp(h->shm[k].base, line.pristine, (size_t)line.L.total_bytes) == 0,
                  "%s: arena %d holds the pristine copy", s[i].id, k);
        dt_casehost_free(&line);
        dt_casehost_pool_free(p, h, NULL, 0);
    }
    /* out of order: the first pending is not the one asked for */
    CHECK(dt_casehost_pool_submit(p, &s[0], 0, 0, 0) == 0 &&
          dt_casehost_pool_submit(p, &s[1], 0, 0, 0) == 0);
    usleep(300 * 1000);
    int64_t waited;
    CHECK(dt_casehost_pool_take(p, &s[1], 0, &waited) == NULL, "out of order: not handed out");
    dt_casehost *h = dt_casehost_pool_take(p, &s[1], 0, &waited);
    CHECK(h && h->spec == &s[1], "the next one still comes");
    if (h) dt_casehost_pool_free(p, h, NULL, 0);
    /* at most DT_CASEHOST_AHEAD_MAX pending */
    int ok = 0;
    for (int i = 0; i < DT_CASEHOST_AHEAD_MAX + 2; i++) ok += dt_casehost_pool_submit(p, &s[0], 0, 0, 0) == 0;
    CHECK(ok == DT_CASEHOST_AHEAD_MAX, "%d submitted of %d asked, the cap is %d", ok,
          DT_CASEHOST_AHEAD_MAX + 2, DT_CASEHOST_AHEAD_MAX);
    dt_casehost_pool_stop(p); /* frees the ones never taken */
done:;
}

static void test_interrupt(dt_casehost_cfg *cfg) {
    /* a make that takes a while: gemm 768^3's references (3 input sets) */
    dt_case_spec big = spec_of(DT_OP_GEMM, 768, 768, 768, "gemm_768x768x768");
    dt_casehost line; /* how long the make takes here, in line */
    int64_t m0 = dt_now_ns();
    dt_casehost_make(cfg, &big, 0, 1, 0, NULL, NULL, &line);
    double make_ms = (double)(dt_now_ns() - m0) / 1e6;
    dt_casehost_free(&line);
    char why[200];
    dt_casehost_pool *p = dt_casehost_pool_start(cfg, "0-0", NULL, why, sizeof why);
    REQUIRE(p, "pool start: %s", why);
    CHECK(dt_casehost_pool_submit(p, &big, 0, 1, 0) == 0);
    usleep(50 * 1000); /* begun (else take would hand it back to be made in line) */
    int64_t t0 = dt_now_ns(), waited;
    g_interrupt = 1;
    CHECK(dt_casehost_pool_take(p, &big, 0, &waited) == NULL, "interrupted: no case-round");
    double ms = (double)(dt_now_ns() - t0) / 1e6;
    /* the make takes make_ms (on all CPUs; longer on the preparer's one): an interrupted
     * wait comes back within a few 50 ms polls */
    CHECK(ms < 200 && ms < make_ms / 2, "interrupted take came back in %.0f ms (a make: %.0f ms)",
          ms, make_ms);
    t0 = dt_now_ns();
    dt_casehost_pool_abandon(p);
    ms = (double)(dt_now_ns() - t0) / 1e6;
    CHECK(ms < 200 && ms < make_ms / 2, "abandon took %.0f ms (a make: %.0f ms)", ms, make_ms);
    g_interrupt = 0;
    /* the abandoned thread finishes the make (on one CPU) and frees it and the pool */
    usleep((useconds_t)(3 * make_ms * 1000) + 200000);
done:;
}

int main(void) {
    setenv("DUALTIME_PREFETCH", "", 1); /* the list given is used, not the environment's */
    dt_refcache rc;
    dt_refcache_init(&rc, "/nonexistent", "0");
    dt_casehost_cfg cfg = {5, 0, 1, &rc, interrupted};
    test_equal_and_order(&cfg);
    test_interrupt(&cfg);
    return dt_check_summary("test_casehost");
}
