/* test_plot.c — the SVG charts of dt_format_svg on hand-built runs (no GPU, no
 * browser): fixture JSON (dt_results_fixture.h) decoded by the codec into a typed record
 * and derived by dt_derive_run, then charted. Checks well-formed XML (a small checker
 * below), one row per case, markers only for valid scopes, hollow markers without an
 * interval, x positions monotonic in the ratio and on a log scale, escaping of a case id
 * with '<&>', the roofline chart only with roofline data, the links in results.md, and
 * a run with two candidates (one ratio chart each, every implementation's bar).
 * Writing the files (plots/ next to results.md, atomically) is dt_outputs': those checks
 * run here when src/format/dt_outputs.h exists. The browser check is
 * tests/e2e/test_plots_browser.sh. Run: ctest -R test_plot. */
#define _GNU_SOURCE
#include "dt_results_fixture.h"
#include "dt_fixture_multi.h"

#include "format/dt_format_md.h"
#include "format/dt_format_svg.h"
#include "record/dt_record.h"
#include "record/dt_record_json.h"
#include "stats/dt_derive.h"
#if __has_include("format/dt_outputs.h")
#include "format/dt_outputs.h"
#define HAVE_DT_OUTPUTS 1
#endif

#include <ctype.h>
#include <sys/stat.h>
#include <unistd.h>

static const fx_run CPU_OK = {.backend = "cpu", .samples = 9, .rounds = 2, .complete = 1,
                              .seed = 21};
static const fx_run CUDA_OK = {.backend = "cuda", .samples = 9, .rounds = 2, .complete = 1,
                               .device = 1, .probe_factor = 1.0, .seed = 22};

/* ---- a small XML well-formedness checker ---- */

static int name_char(int c) { return isalnum(c) || c == '_' || c == '-' || c == ':' || c == '.'; }

/* Text between tags: no '<', every '&' starts a known or numeric entity. */
static const char *check_text(const char *p, const char *end, char *why) {
    for (; p < end; p++) {
        if (*p == '&') {
            static const char *const ents[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"};
            int ok = 0;
            for (int e = 0; e < 5; e++)
                ok |= strncmp(p, ents[e], strlen(ents[e])) == 0;
            if (!ok && p[1] == '#') {
                const char *q = p + 2;
                while (isalnum((unsigned char)*q))
                    q++;
                ok = *q == ';' && q > p + 2;
            }
            if (!ok) {
                sprintf(why, "bare '&' at ...%.20s", p);
                return NULL;
            }
        }
    }
    return end;
}

/* 1 when doc is well-formed: one root element, balanced and matching tags, quoted
 * attributes without '<' and with valid entities, valid text. why says what failed. */
static int xml_well_formed(const char *doc, char *why) {
    const char *stack[256];
    size_t lens[256];
    int depth = 0, roots = 0;
    const char *p = doc;
    why[0] = 0;
    while (*p) {
        const char *lt = strchr(p, '<');
        if (!lt)
            lt = p + strlen(p);
        if (!check_text(p, lt, why))
            return 0;
        if (depth == 0) /* outside the root only white space */
            for (const char *q = p; q < lt; q++)
                if (!isspace((unsigned char)*q)) {
                    sprintf(why, "text outside the root at ...%.20s", q);
                    return 0;
                }
        if (!*lt)
            break;
        p = lt;
        if (strncmp(p, "<?", 2) == 0) {
            const char *e = strstr(p, "?>");
            if (!e || depth || roots) {
                strcpy(why, "bad processing instruction");
                return 0;
            }
            p = e + 2;
        } else if (strncmp(p, "<!--", 4) == 0) {
            const char *e = strstr(p, "-->");
            if (!e) {
                strcpy(why, "unterminated comment");
                return 0;
            }
            p = e + 3;
        } else if (p[1] == '/') {
            const char *n = p + 2, *q = n;
            while (name_char((unsigned char)*q))
                q++;
            if (depth == 0 || (size_t)(q - n) != lens[depth - 1] ||
                strncmp(n, stack[depth - 1], lens[depth - 1]) != 0) {
                sprintf(why, "unmatched end tag at ...%.30s", p);
                return 0;
            }
            while (isspace((unsigned char)*q))
                q++;
            if (*q != '>') {
                strcpy(why, "malformed end tag");
                return 0;
            }
            depth--;
            p = q + 1;
        } else {
            const char *n = p + 1, *q = n;
            while (name_char((unsigned char)*q))
                q++;
            if (q == n) {
                sprintf(why, "bad tag name at ...%.20s", p);
                return 0;
            }
            size_t nlen = (size_t)(q - n);
            for (;;) { /* attributes */
                while (isspace((unsigned char)*q))
                    q++;
                if (*q == '>' || (q[0] == '/' && q[1] == '>'))
                    break;
                const char *an = q;
                while (name_char((unsigned char)*q))
                    q++;
                if (q == an || *q != '=' || (q[1] != '"' && q[1] != '\'')) {
                    sprintf(why, "bad attribute at ...%.30s", an);
                    return 0;
                }
                char quote = q[1];
                const char *vs = q + 2, *ve = strchr(vs, quote);
                if (!ve || memchr(vs, '<', (size_t)(ve - vs))) {
                    sprintf(why, "bad attribute value at ...%.30s", an);
                    return 0;
                }
                if (!check_text(vs, ve, why))
                    return 0;
                q = ve + 1;
                if (!isspace((unsigned char)*q) && *q != '>' && *q != '/') {
                    sprintf(why, "no space between attributes at ...%.30s", an);
                    return 0;
                }
            }
            if (depth == 0 && ++roots > 1) {
                strcpy(why, "more than one root element");
                return 0;
            }
            if (*q == '>') {
                if (depth == 256) {
                    strcpy(why, "too deep");
                    return 0;
                }
                stack[depth] = n;
                lens[depth++] = nlen;
                p = q + 1;
            } else {
                p = q + 2;
            }
        }
    }
    if (depth) {
        sprintf(why, "%d unclosed element(s), innermost %.*s", depth, (int)lens[depth - 1],
                stack[depth - 1]);
        return 0;
    }
    if (roots != 1) {
        strcpy(why, "no root element");
        return 0;
    }
    return 1;
}

static void test_checker(void) {
    char why[256];
    CHECK(xml_well_formed("<?xml version=\"1.0\"?>\n<a x=\"1\"><b/>t &amp; u</a>\n", why));
    CHECK(!xml_well_formed("<a><b></a></b>", why));
    CHECK(!xml_well_formed("<a>x < y</a>", why));
    CHECK(!xml_well_formed("<a>x & y</a>", why));
    CHECK(!xml_well_formed("<a t=\"<\"/>", why));
    CHECK(!xml_well_formed("<a>", why));
    CHECK(!xml_well_formed("<a/><b/>", why));
}

/* ---- helpers ---- */

static size_t count(const char *hay, const char *needle) {
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

static char *ratios_of(const dt_record *r) {
    char *svg = NULL;
    size_t len = 0;
    dt_err err = {{0}};
    dt_status st = dt_format_svg_ratios(r, &svg, &len, &err);
    CHECK_MSG(st == DT_OK, err.msg);
    CHECK(svg == NULL || strlen(svg) == len);
    return svg ? svg : dt_xstrdup("");
}

/* The fixture JSON as a typed record through the codec, derived. NULL (a failed check)
 * when either step fails. */
static dt_record *derived(dt_record *r) {
    CHECK(r != NULL);
    if (!r)
        return NULL;
    dt_err err = {{0}};
    dt_status st = dt_derive_run(r, &err);
    CHECK_MSG(st == DT_OK, err.msg);
    return r;
}

static dt_record *derive(const json_t *j) { return derived(fx_record(j)); }

static double median_of(const dt_record *r, const dt_case *c, dt_scope s) {
    const dt_scope_derived *sd = &c->derived.scopes[s];
    size_t cand = 1;
    return sd->present && sd->vs && r->n_impls > 1 && sd->vs[cand].has_ratio
               ? sd->vs[cand].ratio.median
               : NAN;
}

/* The x of the first marker of `scope` after p (NAN when none before the case ends). */
static double marker_x(const char *p, const char *scope) {
    char key[64];
    snprintf(key, sizeof key, "class=\"marker s-%s", scope);
    const char *end = strstr(p + 1, "<g class=\"case\">");
    const char *m = strstr(p, key);
    if (!m || (end && m > end))
        return NAN;
    const char *t = strstr(m, "translate(");
    return t ? strtod(t + 10, NULL) : NAN;
}

/* ---- tests ---- */

static void test_ratios_cpu(void) {
    json_t *j = fx_results(&CPU_OK);
    /* candidate/baseline ratios about 0.6, 1.0, 0.3, 2.0 and 0.12 */
    fx_add_case(j, &CPU_OK, "add_17x257", 6.0, 10.0, 0.02, 1);
    fx_add_case(j, &CPU_OK, "softmax_1x127", 10.0, 10.0, 0.02, 1);
    fx_add_case(j, &CPU_OK, "sum_127x193", 3.0, 10.0, 0.02, 1);
    fx_add_case(j, &CPU_OK, "gemm_fail", 5.0, 10.0, 0.02, 0);
    fx_add_case(j, &CPU_OK, "odd <&> \"id\"", 20.0, 10.0, 0.02, 1);
    fx_add_case(j, &CPU_OK, "layernorm_64x4096", 1.2, 10.0, 0.02, 1);
    dt_record *r = derive(j);
    json_decref(j);
    if (!r)
        return;
    char *svg = ratios_of(r);
    char why[256];
    CHECK_MSG(xml_well_formed(svg, why), why);
    CHECK(strncmp(svg, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg ", 44) == 0);
    CHECK(strstr(svg, "xmlns=\"http://www.w3.org/2000/svg\"") != NULL);
    CHECK(strstr(svg, "width=\"960\"") && strstr(svg, "viewBox=\"0 0 960 "));
    CHECK(strstr(svg, "font-family=\"sans-serif\"") != NULL);
    CHECK(strstr(svg, "<script") == NULL && strstr(svg, "href") == NULL &&
          strstr(svg, "@font-face") == NULL);
    /* one row per case; the invalid case has the word and no marker */
    CHECK(count(svg, "<g class=\"case\">") == 6);
    CHECK(count(svg, "class=\"invalid\"") == 1);
    const char *inv = strstr(svg, "gemm_fail");
    CHECK(inv && strstr(inv, ">invalid") && strstr(inv, "<g class=\"case\">"));
    if (inv) {
        const char *next = strstr(inv, "<g class=\"case\">");
        const char *m = strstr(inv, "class=\"marker");
        CHECK(m == NULL || (next && m > next));
    }
    /* cpu: two scopes, 5 valid cases: 10 markers (+ legend) and 10 whiskers */
    CHECK(count(svg, "class=\"marker s-e2e_batch\"") == 5);
    CHECK(count(svg, "class=\"marker s-e2e_single\"") == 5);
    CHECK(count(svg, "class=\"whisker\"") == 10);
    CHECK(count(svg, "s-control_batch") == 0);
    CHECK(strstr(svg, "host E2E batch") && strstr(svg, "host E2E single") &&
          !strstr(svg, "device control batch"));
    /* titles name the frameworks; direction labels */
    CHECK(strstr(svg, "candidate native = dualtime-native 0.1.0; baseline torch = pytorch "
                      "1.13.1") != NULL);
    CHECK(strstr(svg, "← candidate faster") && strstr(svg, "slower →"));
    /* ticks: 1-2-5 over 0.1 .. 2 at least, and the line at 1 */
    CHECK(strstr(svg, ">0.1</text>") && strstr(svg, ">0.2</text>") &&
          strstr(svg, ">0.5</text>") && strstr(svg, ">1</text>") && strstr(svg, ">2</text>"));
    CHECK(count(svg, "class=\"one\"") == 1);
    /* escaping */
    CHECK(strstr(svg, "odd &lt;&amp;&gt; &quot;id&quot;") != NULL);
    CHECK(strstr(svg, "<&>") == NULL);

    /* x monotonic in the ratio, and on a log scale: (x - x1) / log(ratio) constant */
    const char *one = strstr(svg, "class=\"one\" x1=\"");
    double x1 = one ? strtod(one + strlen("class=\"one\" x1=\""), NULL) : NAN;
    CHECK(isfinite(x1));
    double xs[8], ms[8];
    int n = 0;
    const char *p = svg;
    for (size_t i = 0; i < r->n_cases; i++) {
        const dt_case *c = &r->cases[i];
        p = strstr(p + 1, "<g class=\"case\">");
        CHECK(p != NULL);
        if (!p)
            break;
        if (!c->valid)
            continue;
        xs[n] = marker_x(p, "e2e_batch");
        ms[n] = median_of(r, c, DT_SCOPE_E2E_BATCH);
        CHECK(isfinite(xs[n]) && ms[n] > 0);
        n++;
    }
    CHECK(n == 5);
    double scale = NAN;
    for (int a = 0; a < n; a++) {
        for (int b = 0; b < n; b++)
            if (ms[a] < ms[b])
                CHECK_MSG(xs[a] < xs[b], "x not monotonic in the ratio");
        if (fabs(log(ms[a])) > 0.05) {
            double s = (xs[a] - x1) / log(ms[a]);
            if (!isfinite(scale))
                scale = s;
            CHECK_MSG(s > 0 && fabs(s - scale) < 0.02 * scale, "x not on a log scale");
        }
    }
    free(svg);

    /* no roofline data: no roofline chart */
    char *rs = NULL;
    size_t rl = 1;
    dt_err err = {{0}};
    CHECK(dt_format_svg_roofline(r, &rs, &rl, &err) == DT_OK && rs == NULL && rl == 0);
    CHECK(!dt_format_svg_has_roofline(r));
    dt_record_free(r);
}

static void test_ratios_device_and_insufficient(void) {
    json_t *j = fx_results(&CUDA_OK);
    fx_add_case(j, &CUDA_OK, "add_17x257", 6.0, 10.0, 0.02, 1);
    fx_add_case(j, &CUDA_OK, "softmax_1x127", 12.0, 10.0, 0.02, 1);
    dt_record *r = derive(j);
    json_decref(j);
    char *svg = r ? ratios_of(r) : dt_xstrdup("");
    char why[256];
    CHECK_MSG(xml_well_formed(svg, why), why);
    const char *scopes[4] = {"e2e_batch", "e2e_single", "control_batch", "control_single"};
    for (int s = 0; s < 4; s++) {
        char key[64];
        snprintf(key, sizeof key, "class=\"marker s-%s\"", scopes[s]);
        CHECK_MSG(count(svg, key) == 2, scopes[s]);
    }
    CHECK(strstr(svg, "device control batch") && strstr(svg, "device control single"));
    CHECK(count(svg, "probe_") == 0); /* probes are diagnostics, not plotted */
    CHECK(count(svg, " hollow\"") == 0);
    free(svg);
    dt_record_free(r);

    /* 2 samples, 1 round: 2 pairs, a median without an interval: hollow, no whisker */
    fx_run o = CPU_OK;
    o.samples = 2;
    o.rounds = 1;
    j = fx_results(&o);
    fx_add_case(j, &o, "add_17x257", 6.0, 10.0, 0.02, 1);
    r = derive(j);
    json_decref(j);
    svg = r ? ratios_of(r) : dt_xstrdup("");
    CHECK_MSG(xml_well_formed(svg, why), why);
    CHECK(count(svg, "class=\"marker s-e2e_batch hollow\"") == 1);
    CHECK(count(svg, "class=\"whisker\"") == 0);
    CHECK(strstr(svg, "no interval: 2 pairs") != NULL);
    free(svg);
    dt_record_free(r);

    /* no cases at all: still a well-formed chart */
    j = fx_results(&CPU_OK);
    r = derive(j);
    json_decref(j);
    svg = r ? ratios_of(r) : dt_xstrdup("");
    CHECK_MSG(xml_well_formed(svg, why), why);
    CHECK(strstr(svg, "no cases") != NULL);
    free(svg);
    dt_record_free(r);
}

/* A CUDA run with a copy ceiling: two valid cases (one with '<&>' in its id) and an
 * invalid one. */
static dt_record *roofline_run(void) {
    json_t *j = fx_results(&CUDA_OK);
    json_object_set_new(json_object_get(j, "environment"), "ceilings",
                        json_pack("{s:f,s:f}", "copy_gbps", 3000.0, "launch_sync_floor_us", 8.0));
    fx_add_case(j, &CUDA_OK, "add_17x257", 6.0, 10.0, 0.02, 1);
    fx_add_case(j, &CUDA_OK, "a<&>b", 9.0, 10.0, 0.02, 1);
    fx_add_case(j, &CUDA_OK, "gemm_fail", 5.0, 10.0, 0.02, 0);
    dt_record *r = derive(j);
    json_decref(j);
    return r;
}

/* Issue 15: a bar past 100% (a copy ceiling far below what a cached case reaches) gets
 * the in-cache note; tick labels never overlap (their estimated widths, 0.6 em per
 * character at 12 px, leave a gap); a long case id is wrapped onto two lines, not cut. */
static void test_roofline_layout(void) {
    json_t *j = fx_results(&CUDA_OK);
    json_object_set_new(json_object_get(j, "environment"), "ceilings",
                        json_pack("{s:f,s:f,s:f}", "copy_gbps", 2.0, "launch_sync_floor_us", 8.0,
                                  "copy_gbps_iqr", 0.5));
    fx_add_case(j, &CUDA_OK, "add_17x257", 6.0, 10.0, 0.02, 1);
    fx_add_case(j, &CUDA_OK, "residual_layernorm_17x257_view_with_a_long_tail", 600.0, 900.0,
                0.02, 1);
    dt_record *r = derive(j);
    json_decref(j);
    if (!r)
        return;
    dt_err err = {{0}};
    char *roof = NULL, why[256];
    size_t len = 0;
    CHECK_MSG(dt_format_svg_roofline(r, &roof, &len, &err) == DT_OK, err.msg);
    if (roof) {
        CHECK_MSG(xml_well_formed(roof, why), why);
        CHECK(count(roof, "class=\"incache\"") == 2); /* the small case, both sides */
        CHECK(strstr(roof, "in cache: above the copy ceiling") != NULL);
        /* the top tick labels: x increasing, gaps wider than the labels */
        double prev_x = -1e9, prev_w = 0;
        size_t labels = 0;
        for (const char *p = roof; (p = strstr(p, "class=\"ticklabel\" x=\"")); p++) {
            double x = strtod(p + strlen("class=\"ticklabel\" x=\""), NULL);
            const char *t = strchr(p, '>') + 1;
            size_t chars = (size_t)(strchr(t, '<') - t);
            if (labels % 2 == 0) { /* top row; the bottom row repeats it */
                double w = 0.6 * 12 * (double)chars;
                snprintf(why, sizeof why, "tick label at %.1f collides with %.1f", x, prev_x);
                CHECK_MSG(x - prev_x >= (w + prev_w) / 2, why);
                prev_x = x;
                prev_w = w;
            }
            labels++;
        }
        CHECK(labels >= 4);
        CHECK(strstr(roof, ">residual_layernorm_</tspan>") != NULL &&
              strstr(roof, "dy=\"12\">17x257_view_with_a_long_tail</tspan>") != NULL);
        CHECK(strstr(roof, "…") == NULL);
        /* the ceiling's own IQR is 25% of it (> the 10% noise bound): said under the chart */
        CHECK(strstr(roof, "class=\"noisyceiling\"") != NULL &&
              strstr(roof, "spread by 25% (IQR / median, above the 10% noise bound)") != NULL);
    }
    free(roof);
    /* results.md's roofline table says it too */
    char *md = NULL;
    size_t mdlen = 0;
    CHECK_MSG(dt_format_md(r, &md, &mdlen, &err) == DT_OK, err.msg);
    CHECK(md && strstr(md, "% (in cache: above the copy ceiling) |") != NULL);
    free(md);
    dt_record_free(r);
}

/* The roofline chart's contents, the ratio chart beside it, and results.md's links. */
static void test_roofline(void) {
    dt_record *r = roofline_run();
    if (!r)
        return;
    CHECK(dt_format_svg_has_roofline(r));
    dt_err err = {{0}};
    char *roof = NULL, why[256];
    size_t len = 0;
    CHECK_MSG(dt_format_svg_roofline(r, &roof, &len, &err) == DT_OK, err.msg);
    CHECK(roof != NULL && strlen(roof) == len);
    if (roof) {
        CHECK_MSG(xml_well_formed(roof, why), why);
        CHECK(count(roof, "class=\"bar\"") == 4); /* 2 valid cases x 2 frameworks */
        CHECK(strstr(roof, "a&lt;&amp;&gt;b") != NULL && strstr(roof, "<&>") == NULL);
        CHECK(strstr(roof, "gemm_fail") == NULL);
        CHECK(strstr(roof, ">100%</text>") != NULL);
        CHECK(strstr(roof, "incache") == NULL && strstr(roof, "noisyceiling") == NULL);
    }
    free(roof);
    char *rat = ratios_of(r);
    CHECK_MSG(xml_well_formed(rat, why), why);
    free(rat);
    /* the Markdown links both */
    char *md = NULL;
    size_t mdlen = 0;
    CHECK_MSG(dt_format_md(r, &md, &mdlen, &err) == DT_OK, err.msg);
    CHECK(md && strstr(md, "## Plots\n") && strstr(md, "![ratios](plots/ratios.svg)") &&
          strstr(md, "![roofline](plots/roofline.svg)"));
    free(md);
    dt_record_free(r);
}


/* Two candidates: a ratio chart per candidate (the first one's equal to the chart of the
 * same run without the second), a roofline bar per implementation. */
static void test_two_candidates(void) {
    json_t *j = fx_results(&CUDA_OK);
    json_object_set_new(json_object_get(j, "environment"), "ceilings",
                        json_pack("{s:f,s:f}", "copy_gbps", 3000.0, "launch_sync_floor_us", 8.0));
    fx_add_case(j, &CUDA_OK, "add_17x257", 6.0, 10.0, 0.02, 1);
    fx_add_case(j, &CUDA_OK, "softmax_1x127", 12.0, 10.0, 0.02, 1);
    fx_add_case(j, &CUDA_OK, "gemm_fail", 5.0, 10.0, 0.02, 0);
    dt_record *one = derive(j);
    dt_record *two = derived(fxm_with_candidate(j, "native2", "other-native", 0.5));
    json_decref(j);
    if (!one || !two) {
        dt_record_free(one);
        dt_record_free(two);
        return;
    }
    CHECK(two->n_impls == 3 && strcmp(two->impls[2].id, "native2") == 0);
    char *a = ratios_of(one), *b = ratios_of(two), *c = NULL, why[256];
    CHECK_MSG(strcmp(a, b) == 0, "first candidate's chart changed by a second candidate");
    size_t len = 0;
    dt_err err = {{0}};
    CHECK_MSG(dt_format_svg_ratios_vs(two, 2, &c, &len, &err) == DT_OK, err.msg);
    if (c) {
        CHECK_MSG(xml_well_formed(c, why), why);
        CHECK(strstr(c, "<title>native2 / torch time ratio per case</title>") != NULL);
        CHECK(strstr(c, "candidate native2 = other-native 0.2.0; baseline torch = pytorch") !=
              NULL);
        CHECK(count(c, "class=\"marker s-e2e_batch\"") == 2);
        CHECK(count(c, "class=\"invalid\"") == 1);
        /* native2 runs at half native's time: half the ratio in the tooltip */
        const char *key = "<title>add_17x257 e2e_batch: ";
        const char *ta = strstr(a, key), *tc = strstr(c, key);
        double ma = ta ? strtod(ta + strlen(key), NULL) : NAN;
        double mc = tc ? strtod(tc + strlen(key), NULL) : NAN;
        CHECK_MSG(fabs(mc / ma - 0.5) < 0.01, "second candidate's ratio is not its own");
    }
    free(c);
    c = NULL;
    CHECK(dt_format_svg_ratios_vs(two, 0, &c, &len, &err) == DT_EINVAL && c == NULL);
    CHECK(dt_format_svg_ratios_vs(two, 3, &c, &len, &err) == DT_EINVAL && c == NULL);
    free(a);
    free(b);
    char *roof = NULL;
    CHECK_MSG(dt_format_svg_roofline(two, &roof, &len, &err) == DT_OK, err.msg);
    if (roof) {
        CHECK_MSG(xml_well_formed(roof, why), why);
        CHECK(count(roof, "class=\"bar\"") == 6); /* 2 valid cases x 3 implementations */
        CHECK(count(roof, " (candidate)</text>") == 2 && count(roof, " (baseline)</text>") == 1);
        CHECK(strstr(roof, "ceiling: native, native2 vs torch</text>") != NULL);
        /* bars in display order: native, native2, torch */
        const char *n1 = strstr(roof, "add_17x257 native:"), *n2 = strstr(roof, "add_17x257 native2:"),
                   *t = strstr(roof, "add_17x257 torch:");
        CHECK(n1 && n2 && t && n1 < n2 && n2 < t);
    }
    free(roof);
    /* chart names: ratios.svg for the first candidate, ratios-ID.svg for the others (an
     * id that is no safe file name: by index) */
    char name[128];
    dt_format_svg_ratios_name(two, 1, name, sizeof name);
    CHECK(strcmp(name, "plots/ratios.svg") == 0);
    dt_format_svg_ratios_name(two, 2, name, sizeof name);
    CHECK(strcmp(name, "plots/ratios-native2.svg") == 0);
    dt_record_set_str(&two->impls[2].id, "../x y");
    dt_format_svg_ratios_name(two, 2, name, sizeof name);
    CHECK(strcmp(name, "plots/ratios-impl2.svg") == 0);
    dt_record_free(one);
    dt_record_free(two);
}

#ifdef HAVE_DT_OUTPUTS
static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = dt_xmalloc((size_t)n + 1);
    size_t got = fread(b, 1, (size_t)n, f);
    b[got] = 0;
    fclose(f);
    return b;
}

/* dt_outputs_write puts both charts into DIR/plots/ (atomically, again over existing
 * files), a report regenerated from the written results.json gets its own plots, and
 * an unwritable place fails with a message. */
static void test_write_all(const char *dir) {
    dt_record *r = roofline_run();
    if (!r)
        return;
    dt_err err = {{0}};
    CHECK_MSG(dt_outputs_write(r, dir, &err) == DT_OK, err.msg);
    /* again over existing files: fine */
    CHECK_MSG(dt_outputs_write(r, dir, &err) == DT_OK, err.msg);
    char path[800], why[256];
    snprintf(path, sizeof path, "%s/" DT_FORMAT_SVG_ROOFLINE, dir);
    char *roof = slurp(path);
    CHECK(roof != NULL);
    if (roof) {
        CHECK_MSG(xml_well_formed(roof, why), why);
        CHECK(count(roof, "class=\"bar\"") == 4); /* 2 valid cases x 2 frameworks */
        CHECK(strstr(roof, "a&lt;&amp;&gt;b") != NULL && strstr(roof, "<&>") == NULL);
        CHECK(strstr(roof, "gemm_fail") == NULL);
        CHECK(strstr(roof, ">100%</text>") != NULL);
    }
    free(roof);
    snprintf(path, sizeof path, "%s/" DT_FORMAT_SVG_RATIOS, dir);
    char *rat = slurp(path);
    CHECK(rat != NULL);
    if (rat)
        CHECK_MSG(xml_well_formed(rat, why), why);
    free(rat);

    /* regenerating from the written results.json writes the plots next to its md */
    char sub[600], jpath[700];
    snprintf(sub, sizeof sub, "%s/regen", dir);
    CHECK(mkdir(sub, 0755) == 0);
    snprintf(jpath, sizeof jpath, "%s/results.json", dir);
    dt_record *back = NULL;
    CHECK_MSG(dt_record_load(jpath, &back, &err) == DT_OK, err.msg);
    if (back) {
        CHECK_MSG(dt_derive_run(back, &err) == DT_OK, err.msg);
        CHECK_MSG(dt_outputs_write(back, sub, &err) == DT_OK, err.msg);
    }
    dt_record_free(back);
    snprintf(path, sizeof path, "%s/" DT_FORMAT_SVG_RATIOS, sub);
    CHECK(access(path, R_OK) == 0);
    snprintf(path, sizeof path, "%s/" DT_FORMAT_SVG_ROOFLINE, sub);
    CHECK(access(path, R_OK) == 0);
    /* no temporary files left behind */
    char cmd[800];
    snprintf(cmd, sizeof cmd, "ls %s/plots %s/plots | grep -q '[.]tmp[.]'", dir, sub);
    CHECK(system(cmd) != 0);
    dt_record_free(r);

    /* an unwritable place fails with a message */
    json_t *j = fx_results(&CPU_OK);
    r = derive(j);
    json_decref(j);
    if (r) {
        CHECK(dt_outputs_write(r, "/nonexistent/dir", &err) == DT_EIO);
        CHECK(strstr(err.msg, "/nonexistent/dir") != NULL);
    }
    dt_record_free(r);
}
#endif

/* Issue 12: the ratio chart plots the dispatch scopes (a file before held windows shows
 * its control as dispatch; a run with both shows all six scopes, the legend on two rows,
 * still within the chart). */
static void test_ratios_dispatch(void) {
    json_t *j = fx_results(&CUDA_OK);
    fx_add_case(j, &CUDA_OK, "add_17x257", 6.0, 10.0, 0.02, 1);
    fx_add_case(j, &CUDA_OK, "softmax_1x127", 12.0, 10.0, 0.02, 1);
    dt_record *r = derived(fx_record_unheld(j));
    char *svg = r ? ratios_of(r) : dt_xstrdup("");
    char why[256];
    CHECK_MSG(xml_well_formed(svg, why), why);
    CHECK(count(svg, "class=\"marker s-dispatch_batch\"") == 2);
    CHECK(count(svg, "class=\"marker s-dispatch_single\"") == 2);
    CHECK(count(svg, "s-control_") == 0);
    CHECK(strstr(svg, "device dispatch batch") && strstr(svg, "device dispatch single") &&
          !strstr(svg, "device control batch"));
    free(svg);
    dt_record_free(r);
    /* held control and dispatch in one run */
    r = fx_record(j);
    for (size_t c = 0; r && c < r->n_cases; c++)
        for (size_t i = 0; i < r->n_impls; i++)
            for (int q = 0; q < 2; q++) {
                dt_case_impl *ci = &r->cases[c].impl[i];
                for (size_t k = 0; k < ci->samples[DT_SCOPE_CONTROL_BATCH + q].n; k++) {
                    dt_sample x = ci->samples[DT_SCOPE_CONTROL_BATCH + q].v[k];
                    x.us *= 2;
                    dt_samples_push(&ci->samples[DT_SCOPE_DISPATCH_BATCH + q], &x);
                }
            }
    r = derived(r);
    svg = r ? ratios_of(r) : dt_xstrdup("");
    CHECK_MSG(xml_well_formed(svg, why), why);
    const char *scopes[6] = {"e2e_batch", "e2e_single", "control_batch", "control_single",
                             "dispatch_batch", "dispatch_single"};
    for (int s = 0; s < 6; s++) {
        char key[64];
        snprintf(key, sizeof key, "class=\"marker s-%s\"", scopes[s]);
        CHECK_MSG(count(svg, key) == 2, scopes[s]);
        snprintf(key, sizeof key, "class=\"marker s-%s legend\"", scopes[s]);
        CHECK_MSG(count(svg, key) == (s == 0 ? 2 : 1), scopes[s]); /* + the hollow sample */
    }
    /* the legend wrapped: a marker on a second row (y 84), none beyond the width */
    CHECK(strstr(svg, ",84.00)") != NULL);
    free(svg);
    dt_record_free(r);
    json_decref(j);
}

int main(void) {
    char dir[] = "/tmp/dt_test_plot.XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_checker();
    test_ratios_dispatch();
    test_ratios_cpu();
    test_ratios_device_and_insufficient();
    test_roofline();
    test_roofline_layout();
    test_two_candidates();
#ifdef HAVE_DT_OUTPUTS
    test_write_all(dir);
#endif
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return fx_summary();
}
