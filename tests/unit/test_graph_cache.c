/* test_graph_cache.c — issue 13 items 1 and 2 without a GPU: the cold-cache arithmetic
 * (orchestrate/dt_cache.h: flush bytes, copies of a rotation, the window check), the
 * codec round trip of the graph scope, its unavailability reason and the cache settings
 * and confirmation, older files without them, malformed ones refused, and the protocol's
 * extended device answers (unavailable graph, cache echo). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../dt_check.h"
#include "orchestrate/dt_cache.h"
#include "record/dt_record.h"
#include "record/dt_record_json.h"
#include "session/dt_protocol.h"

#define MIB ((int64_t)1 << 20)

static void test_flush_bytes(void) {
    CHECK(dt_cache_flush_bytes(50 * MIB) == 104 * MIB, "2 x 50 MiB + 4 MiB");
    CHECK(dt_cache_flush_bytes(50 * MIB) > 2 * 50 * MIB, "more than 2 x L2");
    CHECK(dt_cache_flush_bytes(0) == 0 && dt_cache_flush_bytes(-1) == 0, "unknown L2: none");
}

static void test_copies(void) {
    int64_t l2 = 60 * MIB; /* H200: 60 MiB reported by CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE */
    /* add 512x4096 fp32: three 8 MiB buffers, a 24 MiB arena: 120/24 + 1 = 6 copies */
    CHECK(dt_cache_copies(24 * MIB, l2, 64) == 6, "got %lld", (long long)dt_cache_copies(24 * MIB, l2, 64));
    CHECK(6 * 24 * MIB > 2 * l2 && 5 * 24 * MIB <= 2 * l2, "6 is the fewest whose total > 2 x L2");
    /* an arena that is exactly 2 x L2 / k: k + 1 copies (the total must exceed, not equal) */
    CHECK(dt_cache_copies(40 * MIB, l2, 64) == 4, "120/40 + 1");
    /* larger than 2 x L2: one copy is enough */
    CHECK(dt_cache_copies(768 * MIB, l2, 64) == 1, "8192x8192 add");
    /* capped by the window's calls: each call reads its own flushed copy */
    CHECK(dt_cache_copies(64 * 1024, l2, 64) == 64, "tiny arena, 64 calls");
    CHECK(dt_cache_copies(64 * 1024, l2, 1) == 1, "single call");
    /* capped by DT_CACHE_MAX_COPIES */
    CHECK(dt_cache_copies(1024, l2, 100000) == DT_CACHE_MAX_COPIES, "max copies");
    CHECK(dt_cache_copies(0, l2, 64) == 0 && dt_cache_copies(1024, 0, 64) == 0 &&
              dt_cache_copies(1024, l2, 0) == 0, "non-positive arguments");
}

static void test_window_cold(void) {
    int64_t l2 = 60 * MIB, flush = dt_cache_flush_bytes(l2);
    char why[300];
    /* every copy read once after the flush */
    CHECK(dt_cache_window_cold(64 * 1024, 64, 64, l2, flush, why, sizeof why) == 1 && !why[0]);
    CHECK(dt_cache_window_cold(64 * 1024, 1, 1, l2, flush, why, sizeof why) == 1, "single");
    /* copies reused, but they total more than 2 x L2 */
    CHECK(dt_cache_window_cold(24 * MIB, 6, 64, l2, flush, why, sizeof why) == 1, "%s", why);
    CHECK(dt_cache_window_cold(768 * MIB, 1, 64, l2, flush, why, sizeof why) == 1, "%s", why);
    /* reused copies inside 2 x L2: later calls read L2 (a graph of 64 calls over 5 copies) */
    CHECK(dt_cache_window_cold(24 * MIB, 5, 64, l2, flush, why, sizeof why) == 0);
    CHECK(strstr(why, "a window of 64 calls reuses 5 copies") != NULL, "%s", why);
    CHECK(dt_cache_window_cold(64 * 1024, 32, 64, l2, flush, why, sizeof why) == 0, "32 < 64");
    /* the flush too small or missing */
    CHECK(dt_cache_window_cold(64 * 1024, 64, 64, l2, 2 * l2, why, sizeof why) == 0);
    CHECK(strstr(why, "not more than 2 x L2") != NULL, "%s", why);
    CHECK(dt_cache_window_cold(64 * 1024, 64, 64, l2, 0, why, sizeof why) == 0, "no flush");
    CHECK(dt_cache_window_cold(0, 64, 64, l2, flush, why, sizeof why) == 0 &&
              strstr(why, "must be positive"), "%s", why);
    CHECK(dt_cache_window_cold(24 * MIB, 5, 64, l2, flush, NULL, 0) == 0, "no reason buffer");
    /* the copies the orchestrator asks for always pass the check */
    for (int64_t bytes = 4096; bytes < 400 * MIB; bytes = bytes * 3 + 17)
        for (int64_t calls = 1; calls <= 64; calls *= 2) {
            int64_t k = dt_cache_copies(bytes, l2, calls);
            CHECK(dt_cache_window_cold(bytes, k, calls, l2, flush, why, sizeof why) == 1,
                  "bytes %lld calls %lld copies %lld: %s", (long long)bytes, (long long)calls,
                  (long long)k, why);
        }
}

static dt_record *record_with_graph_cache(void) {
    dt_record *r = dt_record_new();
    r->complete = 1;
    dt_record_set_str(&r->tool.name, "dualtime");
    dt_record_set_str(&r->settings.backend, "cuda");
    r->settings.graph = 1;
    dt_record_set_str(&r->settings.cache, "cold");
    dt_record_impl_add(r, "torch", DT_ROLE_BASELINE);
    dt_record_impl_add(r, "native", DT_ROLE_CANDIDATE);
    dt_case *c = dt_record_case_add(r, "add_512x4096");
    c->op = DT_OP_ADD;
    c->m = 512, c->n = 4096;
    dt_record_set_str(&c->backend, "cuda");
    for (int i = 0; i < 3; i++) {
        dt_sample s = dt_sample_empty();
        s.us = 10.0 + i;
        s.reps = 64;
        s.index = i;
        s.position = i;
        dt_samples_push(&c->impl[1].samples[DT_SCOPE_GRAPH_BATCH], &s);
    }
    dt_record_set_str(&c->impl[0].graph_unavailable, "capture failed: operation not permitted "
                      "when stream is capturing");
    c->impl[1].cache.present = 1;
    c->impl[1].cache.copies = 6;
    c->impl[1].cache.copy_bytes = 24 * MIB;
    c->impl[1].cache.l2_bytes = 60 * MIB;
    c->impl[1].cache.flush_bytes = dt_cache_flush_bytes(60 * MIB);
    c->impl[0].cache.present = 1;
    c->impl[0].cache.copies = 5;
    c->impl[0].cache.copy_bytes = 24 * MIB;
    c->impl[0].cache.l2_bytes = 60 * MIB;
    c->impl[0].cache.flush_bytes = 0;
    dt_record_set_str(&c->impl[0].cache.warm_reason, "a window of 64 calls reuses 5 copies");
    return r;
}

static void test_codec(void) {
    dt_record *r = record_with_graph_cache(), *b = NULL;
    dt_err err = {{0}};
    char *t1 = NULL, *t2 = NULL;
    size_t n1 = 0, n2 = 0;
    CHECK(dt_record_encode(r, &t1, &n1, &err) == DT_OK, "%s", err.msg);
    CHECK(t1 && strstr(t1, "\"graph\": true") && strstr(t1, "\"cache\": \"cold\"") &&
              strstr(t1, "\"graph_batch\"") && strstr(t1, "\"graph_unavailable\"") &&
              strstr(t1, "\"warm_reason\""), "keys written");
    CHECK(t1 && dt_record_decode(t1, n1, "graph-cache", &b, &err) == DT_OK, "%s", err.msg);
    if (b) {
        CHECK(b->settings.graph == 1 && strcmp(b->settings.cache, "cold") == 0, "settings");
        const dt_case *c = &b->cases[0];
        CHECK(c->impl[1].samples[DT_SCOPE_GRAPH_BATCH].n == 3 &&
                  c->impl[1].samples[DT_SCOPE_GRAPH_BATCH].v[2].us == 12.0 &&
                  c->impl[1].samples[DT_SCOPE_GRAPH_BATCH].v[0].reps == 64, "graph samples");
        CHECK(c->impl[0].graph_unavailable &&
                  strstr(c->impl[0].graph_unavailable, "stream is capturing") &&
                  !c->impl[1].graph_unavailable, "unavailable reason");
        CHECK(c->impl[1].cache.present && c->impl[1].cache.copies == 6 &&
                  c->impl[1].cache.copy_bytes == 24 * MIB && c->impl[1].cache.l2_bytes == 60 * MIB &&
                  c->impl[1].cache.flush_bytes == 124 * MIB && !c->impl[1].cache.warm_reason,
              "cache confirmation");
        CHECK(c->impl[0].cache.present && c->impl[0].cache.warm_reason &&
                  c->impl[0].cache.flush_bytes == 0, "warm reason");
        CHECK(dt_record_encode(b, &t2, &n2, &err) == DT_OK && n1 == n2 && memcmp(t1, t2, n1) == 0,
              "not a fixed point");
    }
    dt_record_free(b);
    b = NULL;
    free(t2);
    t2 = NULL;
    /* an older record: no graph, no cache */
    dt_record *old = dt_record_new();
    dt_record_set_str(&old->settings.backend, "cpu");
    dt_record_impl_add(old, "torch", DT_ROLE_BASELINE);
    dt_record_impl_add(old, "native", DT_ROLE_CANDIDATE);
    dt_case *oc = dt_record_case_add(old, "add_1x1");
    oc->op = DT_OP_ADD;
    oc->m = oc->n = 1;
    CHECK(dt_record_encode(old, &t2, &n2, &err) == DT_OK, "%s", err.msg);
    CHECK(t2 && !strstr(t2, "\"graph\"") && !strstr(t2, "\"cache\""), "absent when unset");
    CHECK(t2 && dt_record_decode(t2, n2, "old", &b, &err) == DT_OK, "%s", err.msg);
    if (b)
        CHECK(b->settings.graph == -1 && !b->settings.cache && !b->cases[0].impl[0].cache.present &&
                  !b->cases[0].impl[1].graph_unavailable, "older file reads as not asked, warm");
    dt_record_free(b);
    b = NULL;
    dt_record_free(old);
    free(t2);
    /* malformed */
    char *bad = t1 ? strdup(t1) : NULL;
    char *at = bad ? strstr(bad, "\"cache\": \"cold\"") : NULL;
    if (at) {
        memcpy(at, "\"cache\": \"cool\"", 15);
        CHECK(dt_record_decode(bad, n1, "bad", &b, &err) != DT_OK &&
                  strstr(err.msg, "settings.cache") && strstr(err.msg, "warm"), "%s", err.msg);
        dt_record_free(b);
        b = NULL;
    }
    free(bad);
    bad = t1 ? strdup(t1) : NULL;
    at = bad ? strstr(bad, "\"copies\": 6") : NULL;
    if (at) {
        memcpy(at, "\"copies\": 0", 11);
        CHECK(dt_record_decode(bad, n1, "bad", &b, &err) != DT_OK && strstr(err.msg, "copies"),
              "%s", err.msg);
        dt_record_free(b);
    }
    free(bad);
    free(t1);
    dt_record_free(r);
}

static void test_protocol_answers(void) {
    dt_protocol_device_opts graph = {DT_PROTOCOL_DEVICE_GRAPH, 1, 64, NULL, 1, 0, 0, 0};
    dt_protocol_device_opts ctl = {DT_PROTOCOL_DEVICE_CONTROL, 1, 64, NULL, 1, 1, 6, 124 * MIB};
    dt_sample s;
    dt_protocol_device_extra x;
    dt_err err = {{0}};
    const char *un = "{\"ok\":true,\"unavailable\":\"capture failed: op not capturable\"}";
    CHECK(dt_protocol_device_ex_parse(un, strlen(un), &graph, &s, &x, &err) == DT_OK, "%s", err.msg);
    CHECK(x.unavailable && strcmp(x.unavailable, "capture failed: op not capturable") == 0 &&
              s.reps == 0 && isnan(s.probe.kernel_sum_us), "unavailable graph");
    dt_protocol_device_extra_free(&x);
    /* "unavailable" is for graphs only, and must be a non-empty string */
    CHECK(dt_protocol_device_ex_parse(un, strlen(un), &ctl, &s, &x, &err) == DT_EWORKER &&
              strstr(err.msg, "unavailable") && !x.unavailable, "%s", err.msg);
    const char *empty = "{\"ok\":true,\"unavailable\":\"\"}";
    CHECK(dt_protocol_device_ex_parse(empty, strlen(empty), &graph, &s, &x, &err) == DT_EWORKER);
    const char *meas = "{\"ok\":true,\"result\":{\"stream_ns\":64000.0,\"held\":true,"
                       "\"graph\":true}}";
    CHECK(dt_protocol_device_ex_parse(meas, strlen(meas), &graph, &s, &x, &err) == DT_OK &&
              !x.unavailable && s.us == 1.0 && s.reps == 64 && !x.cache_cold, "graph sample");
    const char *unheld = "{\"ok\":true,\"result\":{\"stream_ns\":64000.0,\"held\":false}}";
    CHECK(dt_protocol_device_ex_parse(unheld, strlen(unheld), &graph, &s, &x, &err) == DT_EWORKER &&
              strstr(err.msg, "held:true"), "a graph replay is a held window: %s", err.msg);
    const char *cold = "{\"ok\":true,\"result\":{\"stream_ns\":6400000.0,\"held\":true,\"cache\":"
                       "{\"state\":\"cold\",\"copies\":6,\"flush_bytes\":130023424}}}";
    CHECK(dt_protocol_device_ex_parse(cold, strlen(cold), &ctl, &s, &x, &err) == DT_OK &&
              x.cache_cold && x.copies == 6 && x.flushed_bytes == 130023424 && s.us == 100.0,
          "cache echo");
}

int main(void) {
    test_flush_bytes();
    test_copies();
    test_window_cold();
    test_codec();
    test_protocol_answers();
    return dt_check_summary("test_graph_cache");
}
