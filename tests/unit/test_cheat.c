/* test_cheat.c — the anti-cheat module (src/orchestrate/dt_cheat.h): the input-set
 * schedule and seeds, planted outputs classified into their named checks (a replayed set-0
 * result given set 1, a poisoned output, a late write, a write at download, a modified
 * input, a plain wrong value, an honest output), the worker-reported name, the physics
 * check (a case over the cache faster than its bytes allow, one faster than its flops
 * allow, an honest time, a case within the cache), and the record's names. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../dt_check.h"
#include "orchestrate/dt_cheat.h"

static void compute(const dt_case_layout *L, uint8_t *arena) { /* the honest add */
    const dt_buffer_layout *A = &L->buf[0], *B = &L->buf[1], *O = &L->buf[dt_layout_output(L)];
    for (int64_t i = 0; i < O->rows; i++)
        for (int64_t j = 0; j < O->cols; j++) {
            float a, b, o;
            memcpy(&a, arena + dt_elem_offset(A, i, j), 4);
            memcpy(&b, arena + dt_elem_offset(B, i, j), 4);
            o = a + b;
            memcpy(arena + dt_elem_offset(O, i, j), &o, 4);
        }
}

static int classify(const dt_cheat_case *cc, int set, const uint8_t *arena, int direct,
                    int64_t at_download, int64_t late, char *why) {
    dt_cheat_obs o;
    memset(&o, 0, sizeof o);
    o.direct = direct;
    dt_cheat_look_at(cc, set, arena, &o.now);
    o.written_at_download = at_download;
    o.written_late = late;
    return dt_cheat_classify(&o, 0, why, 480);
}

static void test_classify(void) {
    dt_case_layout L;
    dt_layout_make(&L, DT_OP_ADD, 5, 33, 0, 0);
    uint8_t *p0 = malloc((size_t)L.total_bytes), *arena = malloc((size_t)L.total_bytes);
    dt_arena_fill(&L, p0, 11);
    dt_oracle_ref ref0;
    dt_err e;
    CHECK(dt_oracle_compute(&L, p0, &ref0, &e) == DT_OK, "%s", e.msg);
    dt_cheat_case cc;
    CHECK(dt_cheat_case_init(&cc, &L, 11, p0, &ref0, &e) == DT_OK, "%s", e.msg);
    CHECK(cc.nsets == DT_CHEAT_INPUT_SETS && DT_CHEAT_INPUT_SETS >= 2);
    CHECK(memcmp(cc.pristine[0], cc.pristine[1], (size_t)L.total_bytes) != 0,
          "input sets 0 and 1 differ");
    char why[480];
    /* honest, each set */
    for (int s = 0; s < 2; s++) {
        dt_cheat_arm(&cc, s, arena);
        compute(&L, arena);
        CHECK(classify(&cc, s, arena, 1, 0, 0, why) == -2, "honest set %d: %s", s, why);
    }
    /* a replay: set 0's result given set 1 */
    dt_cheat_arm(&cc, 0, arena);
    compute(&L, arena);
    uint8_t *saved = malloc((size_t)L.total_bytes);
    memcpy(saved, arena, (size_t)L.total_bytes);
    dt_cheat_arm(&cc, 1, arena);
    const dt_buffer_layout *O = &L.buf[dt_layout_output(&L)];
    memcpy(arena + O->region_offset, saved + O->region_offset, (size_t)O->region_bytes);
    CHECK(classify(&cc, 1, arena, 1, 0, 0, why) == DT_CHEAT_CACHED_RESULT, "replay: %s", why);
    CHECK(strstr(why, "input set 0") != NULL, "%s", why);
    /* poisoned: skipped */
    dt_cheat_arm(&cc, 1, arena);
    CHECK(classify(&cc, 1, arena, 1, 0, 0, why) == DT_CHEAT_SKIPPED_WORK, "skip: %s", why);
    CHECK(dt_cheat_output_written(&L, arena) == 0);
    /* written late (direct), or appearing after download (device mirror) */
    CHECK(classify(&cc, 1, arena, 1, 0, 7, why) == DT_CHEAT_SIDE_STREAM, "late: %s", why);
    {
        dt_cheat_obs o;
        memset(&o, 0, sizeof o);
        dt_cheat_look_at(&cc, 1, arena, &o.now);
        compute(&L, arena);
        dt_cheat_look_at(&cc, 1, arena, &o.late);
        o.has_late = 1;
        CHECK(dt_cheat_classify(&o, 0, why, sizeof why) == DT_CHEAT_SIDE_STREAM, "late dev: %s", why);
        CHECK(dt_cheat_output_written(&L, arena) == O->rows * O->cols);
    }
    /* written by download */
    dt_cheat_arm(&cc, 1, arena);
    CHECK(classify(&cc, 1, arena, 1, 9, 0, why) == DT_CHEAT_ALIASED_OUTPUT, "lazy: %s", why);
    /* a modified input beats everything, also on the cold call */
    dt_cheat_arm(&cc, 0, arena);
    compute(&L, arena);
    arena[L.buf[0].data_offset] ^= 0x40;
    CHECK(classify(&cc, 0, arena, 1, 0, 0, why) == DT_CHEAT_WROTE_INPUT, "input: %s", why);
    {
        dt_cheat_obs o;
        memset(&o, 0, sizeof o);
        dt_cheat_look_at(&cc, 0, arena, &o.now);
        CHECK(dt_cheat_classify(&o, 1, why, sizeof why) == DT_CHEAT_WROTE_INPUT, "cold input");
    }
    /* a plain wrong value: failed, no name; on a cold call an unwritten output is unnamed */
    dt_cheat_arm(&cc, 0, arena);
    compute(&L, arena);
    float bad = 3.0f;
    memcpy(arena + O->data_offset, &bad, 4);
    CHECK(classify(&cc, 0, arena, 1, 0, 0, why) == -1, "wrong: %s", why);
    {
        dt_cheat_obs o;
        memset(&o, 0, sizeof o);
        dt_cheat_arm(&cc, 0, arena);
        dt_cheat_look_at(&cc, 0, arena, &o.now);
        CHECK(dt_cheat_classify(&o, 1, why, sizeof why) == -1, "cold unwritten: unnamed");
    }
    free(saved);
    dt_cheat_case_free(&cc);
    dt_oracle_free(&ref0);
    free(p0);
    free(arena);
}

static void test_schedule_and_names(void) {
    static const int want[8] = {0, 0, 1, 1, 0, 0, 1, 1};
    for (int i = 0; i < 8; i++) CHECK(dt_cheat_sample_set(i) == want[i], "set of %d", i);
    CHECK(dt_cheat_set_seed(5, 0) == 5 && dt_cheat_set_seed(5, 1) != 5);
    for (int i = 0; i < 9; i++) { /* small arenas: every sample; large: 1 and 2 */
        CHECK(dt_cheat_sample_checked(1 << 20, i), "small %d", i);
        CHECK(dt_cheat_sample_checked(DT_CHEAT_FULL_BYTES + 1, i) == (i == 1 || i == 2), "large %d", i);
    }
    for (int i = 0; i < 9; i++) {
        CHECK(dt_cheat_device_sample_checked(1 << 20, i) == (i <= 2), "device small %d", i);
        CHECK(!dt_cheat_device_sample_checked(DT_CHEAT_FULL_BYTES + 1, i), "device large %d", i);
    }
    CHECK(dt_cheat_first_checked(1 << 20) == 0 && dt_cheat_first_checked(DT_CHEAT_FULL_BYTES + 1) == 1);
    CHECK(dt_cheat_round_checked(1 << 20, 3) && dt_cheat_round_checked(DT_CHEAT_FULL_BYTES + 1, 0) &&
          !dt_cheat_round_checked(DT_CHEAT_FULL_BYTES + 1, 1));
    CHECK(dt_cheat_in_text("download: cheat.aliased_output: a view") == DT_CHEAT_ALIASED_OUTPUT);
    CHECK(dt_cheat_in_text("cheat.aliased_output without colon") == -1);
    CHECK(dt_cheat_in_text(NULL) == -1);
    for (int k = 0; k < DT_CHEAT_COUNT; k++)
        CHECK(dt_cheat_check_find(dt_cheat_check_name((dt_cheat_check)k)) == k);
    CHECK(strcmp(dt_cheat_check_name(DT_CHEAT_FASTER_THAN_PHYSICS), "cheat.faster_than_physics") == 0);
    dt_cheat_rec rec;
    memset(&rec, 0, sizeof rec);
    dt_cheat_mark(&rec, DT_CHEAT_SKIPPED_WORK, "first");
    dt_cheat_mark(&rec, DT_CHEAT_SKIPPED_WORK, "second");
    rec.sample_checks = 3;
    dt_cheat_settle(&rec, 1, "cpu", 2);
    CHECK(rec.present && rec.check[DT_CHEAT_SKIPPED_WORK].status == DT_CHEAT_CAUGHT &&
          strcmp(rec.check[DT_CHEAT_SKIPPED_WORK].note, "first") == 0);
    CHECK(rec.check[DT_CHEAT_CACHED_RESULT].status == DT_CHEAT_PASSED);
    CHECK(rec.check[DT_CHEAT_ALIASED_OUTPUT].status == DT_CHEAT_PASSED);
    for (int k = 0; k < DT_CHEAT_COUNT; k++) free(rec.check[k].note);
    /* nothing checked at all: not applicable, with the reason; a device mirror's lazy
     * check is not applicable either */
    memset(&rec, 0, sizeof rec);
    dt_cheat_settle(&rec, 0, "cuda", 0);
    for (int k = 0; k < DT_CHEAT_FASTER_THAN_PHYSICS; k++)
        CHECK(rec.check[k].status == DT_CHEAT_NOT_APPLICABLE && rec.check[k].note, "check %d", k);
    for (int k = 0; k < DT_CHEAT_COUNT; k++) free(rec.check[k].note);
    memset(&rec, 0, sizeof rec);
    rec.sample_checks = 4;
    dt_cheat_settle(&rec, 0, "cuda", 2);
    CHECK(rec.check[DT_CHEAT_ALIASED_OUTPUT].status == DT_CHEAT_NOT_APPLICABLE &&
          strstr(rec.check[DT_CHEAT_ALIASED_OUTPUT].note, "device mirror"));
    CHECK(rec.check[DT_CHEAT_SIDE_STREAM].status == DT_CHEAT_PASSED);
    for (int k = 0; k < DT_CHEAT_COUNT; k++) free(rec.check[k].note);
}

/* A case with batch samples of `us` per call in e2e_batch. */
static void physics_case(dt_case *c, dt_case_impl *ci, dt_op op, int64_t m, int64_t n,
                         int64_t k, double us) {
    memset(c, 0, sizeof *c);
    memset(ci, 0, sizeof *ci);
    c->op = op;
    c->m = m;
    c->n = n;
    c->k = k;
    c->impl = ci;
    for (int i = 0; i < 3; i++) {
        dt_sample s = dt_sample_empty();
        s.us = us * (1.0 + 0.01 * i);
        s.reps = 10;
        dt_samples_push(&ci->samples[DT_SCOPE_E2E_BATCH], &s);
    }
}

static void test_physics(void) {
    dt_cheat_limits lim;
    memset(&lim, 0, sizeof lim);
    lim.copy_gbps = 100.0;          /* 1e11 B/s */
    lim.bw_margin = 2.0;
    lim.cache_bytes = 1e6;
    lim.peak_flops_f32 = 1e12;
    lim.peak_flops_narrow = 1e13;
    char why[480];
    dt_case c;
    dt_case_impl ci;
    /* add 1000x1000 f32: 12e6 bytes > 4 x cache; at 2 x 100 GB/s: >= 60 us */
    physics_case(&c, &ci, DT_OP_ADD, 1000, 1000, 0, 10.0);
    CHECK(dt_cheat_physics(&lim, &c, 0, why, sizeof why) == 1, "too fast: %s", why);
    CHECK(strstr(why, "bytes") != NULL, "%s", why);
    dt_samples_free(&ci.samples[DT_SCOPE_E2E_BATCH]);
    physics_case(&c, &ci, DT_OP_ADD, 1000, 1000, 0, 130.0);
    CHECK(dt_cheat_physics(&lim, &c, 0, why, sizeof why) == 0, "honest: %s", why);
    dt_samples_free(&ci.samples[DT_SCOPE_E2E_BATCH]);
    /* within the cache: only the flops rule applies (add: 1 flop per element) */
    physics_case(&c, &ci, DT_OP_ADD, 100, 100, 0, 1.0);
    CHECK(dt_cheat_physics(&lim, &c, 0, why, sizeof why) == 0, "in cache: %s", why);
    CHECK(strstr(why, "n/a") != NULL, "%s", why);
    dt_samples_free(&ci.samples[DT_SCOPE_E2E_BATCH]);
    /* gemm 512^3: 2.7e8 flop at 1.25 x 1e12: >= 215 us */
    physics_case(&c, &ci, DT_OP_GEMM, 512, 512, 512, 50.0);
    CHECK(dt_cheat_physics(&lim, &c, 0, why, sizeof why) == 1, "gemm too fast: %s", why);
    CHECK(strstr(why, "flop") != NULL, "%s", why);
    dt_samples_free(&ci.samples[DT_SCOPE_E2E_BATCH]);
    /* no limits at all: not applicable */
    dt_cheat_limits none;
    memset(&none, 0, sizeof none);
    none.copy_gbps = none.cache_bytes = none.peak_flops_f32 = none.peak_flops_narrow = NAN;
    physics_case(&c, &ci, DT_OP_ADD, 1000, 1000, 0, 10.0);
    CHECK(dt_cheat_physics(&none, &c, 0, why, sizeof why) == -1, "no limits: %s", why);
    dt_samples_free(&ci.samples[DT_SCOPE_E2E_BATCH]);
}

int main(void) {
    test_classify();
    test_schedule_and_names();
    test_physics();
    return dt_check_summary("test_cheat");
}
