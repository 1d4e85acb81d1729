/* test_timing_logic.c — host-only test of the timing helper's logic
 * (src/timing/dt_timing_logic.c): every fail-closed rule provoked with constructed
 * launches and records, sum/span on overlapping records from two streams, the
 * calibration arithmetic and persistent mode's discarding of records from outside a
 * region (correlation-id floor). No GPU. Run: ctest -R timing_logic (exit 1 on any failure). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "timing/dt_timing_logic.h"
#include "../dt_check.h"

/* A region under construction: up to 8 launches and records. */
typedef struct fixture {
    dt_tl_launch launches[8];
    dt_timing_kernel records[8];
    dt_tl_region r;
} fixture;

static void fx_init(fixture *f) {
    memset(f, 0, sizeof *f);
    f->r.launches = f->launches;
    f->r.records = f->records;
    f->r.capacity = 8;
    f->r.region_stream_id = 7;
    f->r.window_begin_ns = 0; /* no window check unless a test sets it */
}

static void fx_launch(fixture *f, uint32_t corr, uint32_t alt) {
    f->launches[f->r.launch_total++] = (dt_tl_launch){.corr_id = corr, .alt_id = alt,
                                                      .api = "cuLaunchKernel"};
}

static void fx_record(fixture *f, uint64_t corr, uint64_t start, uint64_t end,
                      uint32_t stream) {
    dt_timing_kernel *k = &f->records[f->r.record_total++];
    memset(k, 0, sizeof *k);
    snprintf(k->name, sizeof k->name, "k%llu", (unsigned long long)corr);
    k->correlation_id = corr;
    k->start_ns = start;
    k->end_ns = end;
    k->stream_id = stream;
}

/* Validates and checks that it fails with a message containing `needle`. */
static void expect_fail(fixture *f, const char *needle, int line) {
    dt_tl_summary s;
    char err[512] = "untouched";
    int ok = dt_tl_validate(&f->r, &s, err, sizeof err);
    CHECK_AT(line, !ok && strstr(err, needle) && s.kernel_count == 0 && s.kernel_sum_ns == 0,
             "expected failure containing \"%s\", got ok=%d err=\"%s\"", needle, ok, err);
}
#define EXPECT_FAIL(f, needle) expect_fail((f), (needle), __LINE__)

static void test_valid_two_streams(void) {
    fixture f;
    fx_init(&f);
    fx_launch(&f, 11, 0);
    fx_launch(&f, 12, 0);
    fx_launch(&f, 13, 0);
    /* Out of order on purpose; 12 on another stream overlaps 11. */
    fx_record(&f, 13, 1000, 1100, 7);
    fx_record(&f, 11, 100, 200, 7);
    fx_record(&f, 12, 150, 300, 8);
    dt_tl_summary s;
    char err[512];
    int ok = dt_tl_validate(&f.r, &s, err, sizeof err);
    CHECK(ok == 1);
    if (!ok) fprintf(stderr, "  err: %s\n", err);
    CHECK(s.kernel_count == 3 && s.launch_count == 3);
    CHECK(s.kernel_sum_ns == 100.0 + 150.0 + 100.0);
    CHECK(s.kernel_span_ns == 1000.0); /* 1100 - 100 */
    CHECK(s.other_stream_kernels == 1);
    /* Sorted by start. */
    CHECK(f.records[0].correlation_id == 11 && f.records[1].correlation_id == 12 &&
          f.records[2].correlation_id == 13);
    /* Span < sum when kernels overlap. */
    fx_init(&f);
    fx_launch(&f, 1, 0);
    fx_launch(&f, 2, 0);
    fx_record(&f, 1, 1000, 2000, 7);
    fx_record(&f, 2, 1000, 2000, 9);
    CHECK(dt_tl_validate(&f.r, &s, err, sizeof err) == 1);
    CHECK(s.kernel_sum_ns == 2000.0 && s.kernel_span_ns == 1000.0);
    /* Unknown region stream: nothing counted as other-stream. */
    f.r.region_stream_id = UINT32_MAX;
    CHECK(dt_tl_validate(&f.r, &s, err, sizeof err) == 1 && s.other_stream_kernels == 0);
}

static void test_alt_id(void) {
    /* A runtime launch (id 20) with its nested driver launch (id 21): the record may
     * carry either id. */
    fixture f;
    dt_tl_summary s;
    char err[512];
    fx_init(&f);
    fx_launch(&f, 20, 21);
    fx_record(&f, 21, 10, 20, 7);
    CHECK(dt_tl_validate(&f.r, &s, err, sizeof err) == 1 && s.kernel_count == 1);
    fx_init(&f);
    fx_launch(&f, 20, 21);
    fx_record(&f, 20, 10, 20, 7);
    CHECK(dt_tl_validate(&f.r, &s, err, sizeof err) == 1 && s.launch_count == 1);
    /* Two records, one for each id of the same launch: duplicate. */
    fx_record(&f, 21, 30, 40, 7);
    EXPECT_FAIL(&f, "two kernel records for one launch");
}

static void test_fail_rules(void) {
    fixture f;
    /* Missing record. */
    fx_init(&f);
    fx_launch(&f, 1, 0);
    fx_launch(&f, 2, 0);
    fx_record(&f, 1, 10, 20, 7);
    EXPECT_FAIL(&f, "launch without kernel record");
    /* Extra record. */
    fx_init(&f);
    fx_launch(&f, 1, 0);
    fx_record(&f, 1, 10, 20, 7);
    fx_record(&f, 99, 30, 40, 7);
    EXPECT_FAIL(&f, "kernel record without launch");
    /* Records without any launch at all (e.g. a graph launch): not "empty". */
    fx_init(&f);
    fx_record(&f, 5, 10, 20, 7);
    EXPECT_FAIL(&f, "kernel record without launch");
    /* Duplicate correlation id among records. */
    fx_init(&f);
    fx_launch(&f, 1, 0);
    fx_launch(&f, 2, 0);
    fx_record(&f, 1, 10, 20, 7);
    fx_record(&f, 1, 30, 40, 7);
    EXPECT_FAIL(&f, "two kernel records for one launch");
    /* Duplicate correlation id among launches. */
    fx_init(&f);
    fx_launch(&f, 3, 0);
    fx_launch(&f, 3, 0);
    fx_record(&f, 3, 10, 20, 7);
    fx_record(&f, 4, 30, 40, 7);
    EXPECT_FAIL(&f, "two launches share correlation id 3");
    /* Correlation id 0 on a launch. */
    fx_init(&f);
    fx_launch(&f, 0, 0);
    fx_record(&f, 0, 10, 20, 7);
    EXPECT_FAIL(&f, "correlation id 0");
    /* Zero start, zero end. */
    fx_init(&f);
    fx_launch(&f, 1, 0);
    fx_record(&f, 1, 0, 20, 7);
    EXPECT_FAIL(&f, "zero timestamp");
    fx_init(&f);
    fx_launch(&f, 1, 0);
    fx_record(&f, 1, 10, 0, 7);
    EXPECT_FAIL(&f, "zero timestamp");
    /* Inverted and equal timestamps. */
    fx_init(&f);
    fx_launch(&f, 1, 0);
    fx_record(&f, 1, 30, 20, 7);
    EXPECT_FAIL(&f, "inverted");
    fx_init(&f);
    fx_launch(&f, 1, 0);
    fx_record(&f, 1, 30, 30, 7);
    EXPECT_FAIL(&f, "inverted or equal");
    /* Drops, even when everything else matches. */
    fx_init(&f);
    fx_launch(&f, 1, 0);
    fx_record(&f, 1, 10, 20, 7);
    f.r.dropped = 2;
    EXPECT_FAIL(&f, "dropped 2 activity record");
    /* Capacity: more launches seen than stored. */
    fx_init(&f);
    f.r.capacity = 2;
    fx_launch(&f, 1, 0);
    fx_launch(&f, 2, 0);
    fx_record(&f, 1, 10, 20, 7);
    fx_record(&f, 2, 30, 40, 7);
    f.r.launch_total = 3; /* the third was seen but not stored */
    f.r.record_total = 2;
    EXPECT_FAIL(&f, "capacity exceeded");
    fx_init(&f);
    f.r.capacity = 1;
    fx_launch(&f, 1, 0);
    fx_record(&f, 1, 10, 20, 7);
    f.r.record_total = 2;
    EXPECT_FAIL(&f, "capacity exceeded");
    /* Exactly at capacity is fine. */
    fx_init(&f);
    f.r.capacity = 1;
    fx_launch(&f, 1, 0);
    fx_record(&f, 1, 10, 20, 7);
    {
        dt_tl_summary s;
        char err[512];
        CHECK(dt_tl_validate(&f.r, &s, err, sizeof err) == 1);
    }
    /* Empty region. */
    fx_init(&f);
    EXPECT_FAIL(&f, "empty region");
    /* A launch that returned an error. */
    fx_init(&f);
    fx_launch(&f, 1, 0);
    f.launches[0].status = 700;
    fx_record(&f, 1, 10, 20, 7);
    EXPECT_FAIL(&f, "returned error 700");
    /* Host window: a record before begin, a record after the end sync. */
    fx_init(&f);
    fx_launch(&f, 1, 0);
    fx_record(&f, 1, 500, 600, 7);
    f.r.window_begin_ns = 1000;
    f.r.window_end_ns = 5000;
    f.r.window_slack_ns = 100;
    EXPECT_FAIL(&f, "outside the region's host window");
    f.records[0].start_ns = 950; /* within slack */
    f.records[0].end_ns = 5050;
    {
        dt_tl_summary s;
        char err[512];
        CHECK(dt_tl_validate(&f.r, &s, err, sizeof err) == 1);
    }
    f.records[0].end_ns = 5200;
    EXPECT_FAIL(&f, "outside the region's host window");
}

static void test_calibration(void) {
    dt_tl_calib c, a, b;
    char err[256];
    CHECK(dt_tl_calib_bracket(1000, 1600, 2000, &c, err, sizeof err) == 1);
    CHECK(c.offset_ns == 100 && c.uncertainty_ns == 500.0);
    CHECK(dt_tl_calib_bracket(1000, 900, 1200, &c, err, sizeof err) == 1);
    CHECK(c.offset_ns == -200 && c.uncertainty_ns == 100.0);
    CHECK(dt_tl_calib_bracket(2000, 1500, 1000, &c, err, sizeof err) == 0 &&
          strstr(err, "inverted"));
    CHECK(dt_tl_calib_bracket(1000, 0, 2000, &c, err, sizeof err) == 0 &&
          strstr(err, "zero"));
    /* Realistic: CUPTI on CLOCK_REALTIME (~1.8e18 ns), host monotonic ~1e12 ns. Exact
     * to the nanosecond despite the magnitude. */
    uint64_t host0 = 1000000000000ull, real = 1800000000123456789ull;
    CHECK(dt_tl_calib_bracket(host0, real, host0 + 40, &c, err, sizeof err) == 1);
    CHECK(c.offset_ns == (int64_t)(real - host0 - 20) && c.uncertainty_ns == 20.0);
    CHECK(!dt_tl_clock_is_host(c, 10000.0));
    uint64_t ts = real + 5000; /* a record 5 us later on the CUPTI clock */
    uint64_t h = dt_tl_to_host_ns(ts, c.offset_ns);
    CHECK(h == host0 + 20 + 5000);
    /* Combine: mean offset, max half-width plus half the drift. */
    a = (dt_tl_calib){100, 30.0};
    b = (dt_tl_calib){140, 50.0};
    c = dt_tl_calib_combine(a, b);
    CHECK(c.offset_ns == 120 && c.uncertainty_ns == 70.0);
    CHECK(dt_tl_clock_is_host(c, 100.0));  /* |120| <= 70 + 100 */
    CHECK(!dt_tl_clock_is_host(c, 10.0));  /* |120| > 70 + 10 */
    /* Conversion keeps 0 at 0 and maps underflow to 0 (so the zero rule fails it). */
    CHECK(dt_tl_to_host_ns(0, -50) == 0);
    CHECK(dt_tl_to_host_ns(100, 100) == 0);
    CHECK(dt_tl_to_host_ns(100, 200) == 0);
    CHECK(dt_tl_to_host_ns(100, -50) == 150);
    CHECK(dt_tl_to_host_ns(100, 0) == 100);
    /* Negative offsets of realistic size and an odd bracket width (floor of half). */
    CHECK(dt_tl_calib_bracket(5000, 1000, 5003, &c, err, sizeof err) == 1);
    CHECK(c.offset_ns == -4001 && c.uncertainty_ns == 1.5);
    /* The tightest of several brackets: the smallest half-width, the first of equals. */
    dt_tl_calib br[4] = {{300, 200.0}, {120, 45.0}, {-80, 45.0}, {90, 60.0}};
    c = dt_tl_calib_tightest(br, 4);
    CHECK(c.offset_ns == 120 && c.uncertainty_ns == 45.0, "tightest %lld %g",
          (long long)c.offset_ns, c.uncertainty_ns);
    c = dt_tl_calib_tightest(br, 1);
    CHECK(c.offset_ns == 300 && c.uncertainty_ns == 200.0);
}

/* A persistent-mode collector as dt_timing.c drives it: launches are stored only while
 * collecting; every launch raises the max correlation id; records go through
 * dt_tl_record_in_region with the floor taken when collecting starts. */
typedef struct sim {
    fixture f;
    int collecting;
    uint64_t corr_max, floor, discarded;
} sim;

static void sim_launch(sim *m, uint32_t id) {
    dt_tl_note_corr(&m->corr_max, id);
    if (m->collecting) fx_launch(&m->f, id, 0);
}
static void sim_record(sim *m, uint32_t id, uint64_t start, uint64_t end) {
    if (!dt_tl_record_in_region(m->collecting, m->floor, id)) {
        if (m->collecting) m->discarded++;
        return;
    }
    fx_record(&m->f, id, start, end, 7);
}
static void sim_begin(sim *m) {
    fx_init(&m->f);
    m->discarded = 0;
    m->floor = dt_tl_corr_floor(m->corr_max);
    m->collecting = 1;
}

static void test_persistent_discard(void) {
    /* The primitives. */
    uint64_t mx = 0;
    dt_tl_note_corr(&mx, 5);
    dt_tl_note_corr(&mx, 3); /* never lowers */
    CHECK(mx == 5);
    CHECK(dt_tl_corr_floor(0) == 1 && dt_tl_corr_floor(5) == 6);
    CHECK(dt_tl_corr_floor(UINT64_MAX) == UINT64_MAX);
    CHECK(!dt_tl_record_in_region(0, 1, 100)); /* no region: discard */
    CHECK(!dt_tl_record_in_region(1, 6, 5));   /* below the floor: discard */
    CHECK(dt_tl_record_in_region(1, 6, 6) && dt_tl_record_in_region(1, 6, 7));
    CHECK(!dt_tl_record_in_region(1, 1, 0));   /* id 0 never belongs */

    /* A session: untimed work (ids 1-3), region 1 (warm-up 4, launches 5-6), untimed
     * work between regions (7-8, one record delivered late), region 2 (warm-up 9,
     * launches 10-11). */
    sim m;
    memset(&m, 0, sizeof m);
    dt_tl_summary s;
    char err[512];
    for (uint32_t id = 1; id <= 3; id++) sim_launch(&m, id);
    sim_record(&m, 1, 10, 20); /* delivered outside any region: discarded */
    sim_launch(&m, 4);         /* the begin's warm-up, before collecting */
    sim_begin(&m);
    CHECK(m.floor == 5);
    sim_launch(&m, 5);
    sim_launch(&m, 6);
    sim_record(&m, 2, 30, 40); /* untimed work before the region, delivered late */
    sim_record(&m, 3, 35, 45);
    sim_record(&m, 4, 50, 55); /* the warm-up */
    sim_record(&m, 5, 60, 70);
    sim_record(&m, 6, 70, 80);
    CHECK(m.discarded == 3);
    CHECK(dt_tl_validate(&m.f.r, &s, err, sizeof err) == 1 && s.kernel_count == 2 &&
          s.launch_count == 2 && s.kernel_sum_ns == 20.0);
    m.collecting = 0;
    sim_launch(&m, 7);
    sim_launch(&m, 8);
    sim_record(&m, 7, 100, 110); /* between regions: discarded, not stored */
    sim_launch(&m, 9);
    sim_begin(&m);
    CHECK(m.floor == 10);
    sim_launch(&m, 10);
    sim_launch(&m, 11);
    sim_record(&m, 8, 120, 130); /* late record of work between regions */
    sim_record(&m, 9, 140, 141);
    sim_record(&m, 10, 150, 160);
    sim_record(&m, 11, 160, 175);
    CHECK(m.discarded == 2 && m.f.r.record_total == 2);
    CHECK(dt_tl_validate(&m.f.r, &s, err, sizeof err) == 1 && s.kernel_count == 2 &&
          s.kernel_sum_ns == 25.0);
    for (uint64_t i = 0; i < m.f.r.record_total; i++)
        CHECK(m.f.records[i].correlation_id >= 10);
    /* A record at or above the floor without a launch (a graph launch inside the region)
     * is kept and still fails the region. */
    sim_record(&m, 12, 180, 190);
    EXPECT_FAIL(&m.f, "kernel record without launch");
    /* A launch inside the region whose record came with an id below the floor (another
     * thread launching exactly at begin): its record is discarded, the region fails. */
    m.collecting = 0;
    sim_begin(&m);
    fx_launch(&m.f, 3, 0); /* stored by a callback that saw collecting, id from before */
    sim_record(&m, 3, 200, 210);
    CHECK(m.discarded == 1);
    EXPECT_FAIL(&m.f, "launch without kernel record");
}

int main(void) {
    test_persistent_discard();
    test_valid_two_streams();
    test_alt_id();
    test_fail_rules();
    test_calibration();
    return dt_check_summary("test_timing_logic");
}
