/* dt_plot.c — the SVG charts of results.md (ratios per case and scope on a log axis,
 * roofline bars). Reads only; see dt_plot.h for the contract. Layout is computed in
 * pixels from the data: a label column sized to the longest case id (capped, longer
 * ids are shortened with an ellipsis and given in full in a <title>), one row per case
 * with one sub-row per scope present in the run. */
#define _GNU_SOURCE
#include "report/dt_plot.h"
#include "report/dt_report_util.h"

#include "report/dt_derive.h"
#include "report/dt_results_io.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>

/* ---- SVG text ---- */

/* Length in bytes of a valid UTF-8 sequence at s, 0 when invalid. */
static size_t utf8_len(const unsigned char *s) {
    size_t n;
    if (s[0] < 0x80)
        return 1;
    else if ((s[0] & 0xE0) == 0xC0 && s[0] >= 0xC2)
        n = 2;
    else if ((s[0] & 0xF0) == 0xE0)
        n = 3;
    else if ((s[0] & 0xF8) == 0xF0 && s[0] <= 0xF4)
        n = 4;
    else
        return 0;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    return n;
}

/* Writes at most max_chars characters of s escaped for XML text and attributes (&amp;
 * &lt; &gt; &quot;); control characters and invalid UTF-8 become '?', so the document
 * stays well-formed whatever a case id holds. A shortened text ends in "…". */
static void xml_text_n(FILE *o, const char *s, size_t max_chars) {
    if (!s)
        return;
    const unsigned char *p = (const unsigned char *)s;
    size_t chars = 0;
    while (*p) {
        if (chars == max_chars) {
            fputs("…", o);
            return;
        }
        size_t n = utf8_len(p);
        if (n == 0) {
            fputc('?', o);
            p++;
        } else if (n > 1) {
            fwrite(p, 1, n, o);
            p += n;
        } else {
            switch (*p) {
            case '&': fputs("&amp;", o); break;
            case '<': fputs("&lt;", o); break;
            case '>': fputs("&gt;", o); break;
            case '"': fputs("&quot;", o); break;
            default: fputc(*p < 0x20 || *p == 0x7f ? '?' : *p, o);
            }
            p++;
        }
        chars++;
    }
}

static void xml_text(FILE *o, const char *s) { xml_text_n(o, s, (size_t)-1); }

static size_t utf8_chars(const char *s) {
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        n += (*p & 0xC0) != 0x80;
    return n;
}

typedef char numbuf[48];

/* Three significant digits for tooltips and labels. */
static const char *fnum3(numbuf b, double x) {
    if (!isfinite(x))
        snprintf(b, sizeof(numbuf), "—");
    else if (fabs(x) >= 0.001 && fabs(x) < 10)
        snprintf(b, sizeof(numbuf), "%.3f", x);
    else
        snprintf(b, sizeof(numbuf), "%.3g", x);
    return b;
}

static void svg_open(FILE *o, int w, int h) {
    fprintf(o,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" "
            "height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" "
            "font-size=\"12\">\n"
            "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n",
            w, h, w, h, w, h);
}

/* A memory stream; *buf is the caller's after a successful finish. */
typedef struct svgbuf {
    char *text;
    size_t len;
    FILE *f;
} svgbuf;

static dt_status sb_open(svgbuf *b, const char *what, dt_err *err) {
    b->text = NULL;
    b->len = 0;
    b->f = open_memstream(&b->text, &b->len);
    if (!b->f)
        return dt_fail(err, DT_EIO, "%s: cannot open a memory stream", what);
    return DT_OK;
}

static dt_status sb_finish(svgbuf *b, const char *what, char **svg, size_t *len, dt_err *err) {
    int bad = ferror(b->f);
    if (fclose(b->f) != 0 || bad) {
        free(b->text);
        return dt_fail(err, DT_EIO, "%s: memory stream failed", what);
    }
    *svg = b->text;
    *len = b->len;
    return DT_OK;
}

/* ---- the ratio chart ---- */

typedef struct scope_style {
    const char *scope, *label, *color;
    int shape; /* 0 circle, 1 square, 2 diamond, 3 triangle */
} scope_style;

/* Okabe-Ito colours: distinguishable with common colour-vision deficiencies. */
static const scope_style k_scopes[] = {
    {"e2e_batch", "host E2E batch", "#0072B2", 0},
    {"e2e_single", "host E2E single", "#E69F00", 1},
    {"control_batch", "device control batch", "#009E73", 2},
    {"control_single", "device control single", "#CC79A7", 3},
};
#define N_SCOPES (sizeof k_scopes / sizeof k_scopes[0])

static const json_t *scope_ratio(const json_t *cas, const char *scope) {
    return dt_jget(dt_jget(dt_jget(dt_jget(cas, "derived"), "scopes"), scope), "ratio");
}

static int ratio_ok(double x) { return isfinite(x) && x > 0; }

#define R_MIN 1e-3 /* the axis never extends beyond [R_MIN, R_MAX] */
#define R_MAX 1e3
#define MARK_R 3.6

/* Largest 1-2-5 value <= v, smallest >= v. */
static double nice_down(double v) {
    double e = floor(log10(v)), p = pow(10, e), m = v / p;
    return (m >= 5 - 1e-9 ? 5 : m >= 2 - 1e-9 ? 2 : 1) * p;
}

static double nice_up(double v) {
    double e = floor(log10(v)), p = pow(10, e), m = v / p;
    return (m <= 1 + 1e-9 ? 1 : m <= 2 + 1e-9 ? 2 : m <= 5 + 1e-9 ? 5 : 10) * p;
}

typedef struct axis {
    double lo, hi;     /* ratio range */
    double x0, width;  /* pixels */
} axis;

static double ax_x(const axis *a, double v) {
    if (v < a->lo)
        v = a->lo;
    if (v > a->hi)
        v = a->hi;
    return a->x0 + a->width * (log10(v) - log10(a->lo)) / (log10(a->hi) - log10(a->lo));
}

/* A marker of one shape centred at (x, y), hollow or filled. */
static void marker(FILE *o, const scope_style *s, double x, double y, int hollow,
                   const char *extra_class) {
    const char *fill = hollow ? "#ffffff" : s->color;
    double r = MARK_R;
    fprintf(o, "<path class=\"marker s-%s%s\" transform=\"translate(%.2f,%.2f)\" ", s->scope,
            extra_class, x, y);
    switch (s->shape) {
    case 0:
        fprintf(o, "d=\"M%.2f,0A%.2f,%.2f 0 1,0 %.2f,0A%.2f,%.2f 0 1,0 %.2f,0Z\"", -r, r, r, r, r,
                r, -r);
        break;
    case 1:
        r *= 0.9;
        fprintf(o, "d=\"M%.2f,%.2fH%.2fV%.2fH%.2fZ\"", -r, -r, r, r, -r);
        break;
    case 2:
        r *= 1.25;
        fprintf(o, "d=\"M0,%.2fL%.2f,0L0,%.2fL%.2f,0Z\"", -r, r, r, -r);
        break;
    default:
        r *= 1.2;
        fprintf(o, "d=\"M0,%.2fL%.2f,%.2fL%.2f,%.2fZ\"", -r, r, 0.8 * r, -r, 0.8 * r);
    }
    fprintf(o, " fill=\"%s\" stroke=\"%s\" stroke-width=\"1.4\"/>\n", fill, s->color);
}

dt_status dt_plot_ratios_svg(const json_t *results, char **svg, size_t *len, dt_err *err) {
    *svg = NULL;
    *len = 0;
    const char *cand, *base;
    dt_status st = dt_derive_roles(results, &cand, &base, err);
    if (st != DT_OK)
        return st;
    const json_t *cases = dt_jget(results, "cases");
    if (!json_is_array(cases))
        return dt_fail(err, DT_EINVAL, "ratios.svg: cases is missing or not an array");

    /* Which scopes the run has, the value range, the longest label. */
    int present[N_SCOPES] = {0};
    double vmin = 1, vmax = 1;
    size_t label_chars = 4, i;
    json_t *c;
    json_array_foreach(cases, i, c) {
        size_t n = utf8_chars(dt_jstr(c, "id", "?"));
        if (n > label_chars)
            label_chars = n;
        for (size_t s = 0; s < N_SCOPES; s++) {
            const json_t *ro = scope_ratio(c, k_scopes[s].scope);
            if (!ro)
                continue;
            present[s] = 1;
            if (!dt_case_shown(c))
                continue;
            const char *keys[3] = {"median", "ci_low", "ci_high"};
            for (int k = 0; k < 3; k++) {
                double v = dt_jnum(ro, keys[k]);
                if (!ratio_ok(v))
                    continue;
                vmin = v < vmin ? v : vmin;
                vmax = v > vmax ? v : vmax;
            }
        }
    }
    size_t nsc = 0;
    for (size_t s = 0; s < N_SCOPES; s++)
        nsc += present[s];
    if (nsc == 0)
        present[0] = 1, nsc = 1; /* keep one sub-row so invalid cases still get a row */

    axis ax;
    ax.lo = nice_down(fmax(vmin / 1.12, R_MIN));
    ax.hi = nice_up(fmin(vmax * 1.12, R_MAX));
    if (ax.lo >= 1)
        ax.lo = 0.5;
    if (ax.hi <= 1)
        ax.hi = 2;

    const size_t max_label = 40;
    if (label_chars > max_label)
        label_chars = max_label;
    const int W = 960;
    const double label_w = 16 + 7.0 * (double)label_chars;
    ax.x0 = label_w + 14;
    ax.width = W - 40 - ax.x0;
    const double step = 6.5, row_h = (double)(nsc - 1) * step + 14;
    const double rows_top = 132;
    size_t ncases = json_array_size(cases);
    const double rows_bottom = rows_top + row_h * (double)(ncases ? ncases : 1);
    const int H = (int)ceil(rows_bottom + 52);

    svgbuf b;
    if ((st = sb_open(&b, "ratios.svg", err)) != DT_OK)
        return st;
    FILE *o = b.f;
    svg_open(o, W, H);

    /* Titles: framework ids, names and versions come from results.frameworks. */
    const json_t *fc = dt_framework(results, cand), *fb = dt_framework(results, base);
    fputs("<title>", o);
    xml_text(o, cand);
    fputs(" / ", o);
    xml_text(o, base);
    fputs(" time ratio per case</title>\n", o);
    fputs("<text x=\"16\" y=\"24\" font-size=\"16\" font-weight=\"bold\" fill=\"#111\">", o);
    xml_text(o, cand);
    fputs(" / ", o);
    xml_text(o, base);
    fputs(" time per call: median of paired ratios with 95% interval</text>\n", o);
    fputs("<text x=\"16\" y=\"44\" fill=\"#444\">candidate ", o);
    xml_text(o, cand);
    fputs(" = ", o);
    xml_text(o, dt_jstr(fc, "framework", "?"));
    fputs(" ", o);
    xml_text(o, dt_jstr(fc, "framework_version", "?"));
    fputs("; baseline ", o);
    xml_text(o, base);
    fputs(" = ", o);
    xml_text(o, dt_jstr(fb, "framework", "?"));
    fputs(" ", o);
    xml_text(o, dt_jstr(fb, "framework_version", "?"));
    fputs("; backend ", o);
    xml_text(o, dt_jstr(dt_jget(results, "settings"), "backend", "unknown"));
    fputs("</text>\n", o);

    /* Legend. */
    double lx = 16;
    const double ly = 68;
    fputs("<g class=\"legend\">\n", o);
    for (size_t s = 0; s < N_SCOPES; s++) {
        if (!present[s])
            continue;
        fprintf(o, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                   "stroke-width=\"1.5\"/>\n", lx, ly, lx + 22, ly, k_scopes[s].color);
        marker(o, &k_scopes[s], lx + 11, ly, 0, " legend");
        fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#222\">%s</text>\n", lx + 28, ly + 4,
                k_scopes[s].label);
        lx += 28 + 7.0 * (double)strlen(k_scopes[s].label) + 22;
    }
    marker(o, &k_scopes[0], lx + 4, ly, 1, " legend");
    fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#222\">hollow: &lt; 3 pairs, no "
               "interval</text>\n</g>\n", lx + 14, ly + 4);

    /* Direction labels above the line at 1. */
    double x1 = ax_x(&ax, 1);
    fprintf(o, "<text x=\"%.1f\" y=\"98\" text-anchor=\"end\" fill=\"#0b6b2c\" "
               "font-weight=\"bold\">← candidate faster</text>\n", x1 - 8);
    fprintf(o, "<text x=\"%.1f\" y=\"98\" fill=\"#a3340f\" font-weight=\"bold\">slower "
               "→</text>\n", x1 + 8);

    /* Row stripes and case labels. */
    json_array_foreach(cases, i, c) {
        double top = rows_top + row_h * (double)i;
        if (i % 2 == 0)
            fprintf(o, "<rect x=\"8\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                       "fill=\"#f2f4f7\"/>\n", top, W - 16.0, row_h);
    }

    /* Ticks and grid: 1-2-5 when that gives at most 13 ticks, else powers of ten. */
    double tick_y_top = rows_top - 6, tick_y_bot = rows_bottom + 16;
    int decades_only = log10(ax.hi / ax.lo) > 4.01;
    fputs("<g class=\"grid\">\n", o);
    for (double e = floor(log10(ax.lo)); e <= ceil(log10(ax.hi)); e++) {
        static const double mant[3] = {1, 2, 5};
        for (int m = 0; m < 3; m++) {
            if (decades_only && m > 0)
                continue;
            double v = mant[m] * pow(10, e);
            if (v < ax.lo * (1 - 1e-9) || v > ax.hi * (1 + 1e-9))
                continue;
            double x = ax_x(&ax, v);
            fprintf(o, "<line class=\"tick\" x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\" "
                       "stroke=\"#d0d4da\" stroke-width=\"1\"/>\n",
                    x, rows_top, x, rows_bottom);
            fprintf(o, "<text x=\"%.2f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#333\">%g"
                       "</text>\n<text x=\"%.2f\" y=\"%.1f\" text-anchor=\"middle\" "
                       "fill=\"#333\">%g</text>\n",
                    x, tick_y_top, v, x, tick_y_bot, v);
        }
    }
    fputs("</g>\n", o);
    fprintf(o, "<line class=\"axis\" x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\" "
               "stroke=\"#555\"/>\n", ax.x0, rows_bottom, ax.x0 + ax.width, rows_bottom);
    fprintf(o, "<line class=\"one\" x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\" "
               "stroke=\"#222\" stroke-width=\"1.5\"/>\n", x1, rows_top - 2, x1, rows_bottom);
    fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#333\">ratio ",
            ax.x0 + ax.width / 2, rows_bottom + 36);
    xml_text(o, cand);
    fputs("/", o);
    xml_text(o, base);
    fputs(" of time per call (log scale; 1 = same time)</text>\n", o);

    /* Rows. */
    json_array_foreach(cases, i, c) {
        double top = rows_top + row_h * (double)i, mid = top + row_h / 2;
        const char *id = dt_jstr(c, "id", "?");
        fprintf(o, "<g class=\"case\">\n<text class=\"label\" x=\"%.1f\" y=\"%.1f\" "
                   "text-anchor=\"end\" fill=\"#111\">", ax.x0 - 10, mid + 4);
        if (utf8_chars(id) > max_label) {
            fputs("<title>", o);
            xml_text(o, id);
            fputs("</title>", o);
        }
        xml_text_n(o, id, max_label);
        fputs("</text>\n", o);
        if (!dt_case_shown(c)) {
            fprintf(o, "<text class=\"invalid\" x=\"%.1f\" y=\"%.1f\" fill=\"#b00020\" "
                       "font-style=\"italic\">invalid (failed a check: no ratio)</text>\n</g>\n",
                    x1 + 8, mid + 4);
            continue;
        }
        int k = 0, drawn = 0;
        for (size_t s = 0; s < N_SCOPES; s++) {
            if (!present[s])
                continue;
            double y = top + 7 + step * k++;
            const json_t *ro = scope_ratio(c, k_scopes[s].scope);
            double med = dt_jnum(ro, "median"), lo = dt_jnum(ro, "ci_low"), hi = dt_jnum(ro, "ci_high");
            if (!ro || !ratio_ok(med))
                continue;
            int hollow = !(ratio_ok(lo) && ratio_ok(hi));
            numbuf a, bb, cc;
            fputs("<g class=\"point\"><title>", o);
            xml_text(o, id);
            fprintf(o, " %s: %s", k_scopes[s].scope, fnum3(a, med));
            if (hollow)
                fprintf(o, " (no interval: %lld pairs)",
                        (long long)json_integer_value(dt_jget(ro, "pairs")));
            else
                fprintf(o, " [%s, %s]", fnum3(bb, lo), fnum3(cc, hi));
            fputs(" ", o);
            xml_text(o, dt_jstr(dt_jget(dt_jget(dt_jget(c, "derived"), "scopes"), k_scopes[s].scope),
                             "verdict", ""));
            fputs("</title>\n", o);
            if (!hollow) {
                double xa = ax_x(&ax, lo), xb = ax_x(&ax, hi);
                fprintf(o, "<path class=\"whisker\" d=\"M%.2f,%.2fH%.2fM%.2f,%.2fV%.2fM%.2f,%.2fV"
                           "%.2f\" stroke=\"%s\" stroke-width=\"1.5\" fill=\"none\"/>\n",
                        xa, y, xb, xa, y - 2.5, y + 2.5, xb, y - 2.5, y + 2.5, k_scopes[s].color);
            }
            marker(o, &k_scopes[s], ax_x(&ax, med), y, hollow, hollow ? " hollow" : "");
            fputs("</g>\n", o);
            drawn++;
        }
        if (!drawn)
            fprintf(o, "<text class=\"noratio\" x=\"%.1f\" y=\"%.1f\" fill=\"#666\" "
                       "font-style=\"italic\">no paired samples</text>\n", x1 + 8, mid + 4);
        fputs("</g>\n", o);
    }
    if (ncases == 0)
        fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#666\">no cases</text>\n", x1 + 8,
                rows_top + row_h / 2 + 4);
    fputs("</svg>\n", o);
    return sb_finish(&b, "ratios.svg", svg, len, err);
}

/* ---- the roofline chart ---- */

/* Achieved bandwidth of one framework in one case as a fraction of the copy ceiling,
 * its GB/s and the scope its time came from (NAN / NULL when unknown). Reads
 * cases[].derived.roofline (dt_derive.c): impl.<fw>.{copy_pct, gbps, scope} with
 * copy_pct in percent (72.5 = 72.5%), or gbps over roofline.copy_gbps. Compute-bound
 * ops (bound "compute": GEMM) have no copy percentage and are not drawn. */
static double roof_frac(const json_t *cas, const char *fw, double *gbps, const char **scope) {
    const json_t *rf = dt_jget(dt_jget(cas, "derived"), "roofline");
    const json_t *f = dt_jget(dt_jget(rf, "impl"), fw);
    *gbps = dt_jnum(f, "gbps");
    *scope = dt_jstr(f, "scope", NULL);
    if (!f || strcmp(dt_jstr(rf, "bound", "memory"), "compute") == 0)
        return NAN;
    double pct = dt_jnum(f, "copy_pct");
    if (isfinite(pct) && pct >= 0)
        return pct / 100;
    double ceil_gbps = dt_jnum(rf, "copy_gbps");
    if (isfinite(*gbps) && isfinite(ceil_gbps) && ceil_gbps > 0 && *gbps >= 0)
        return *gbps / ceil_gbps;
    return NAN;
}

int dt_plot_has_roofline(const json_t *results) {
    const char *cand, *base;
    if (dt_derive_roles(results, &cand, &base, NULL) != DT_OK)
        return 0;
    size_t i;
    json_t *c;
    double g;
    const char *sc;
    json_array_foreach(dt_jget(results, "cases"), i, c) {
        if (isfinite(roof_frac(c, cand, &g, &sc)) || isfinite(roof_frac(c, base, &g, &sc)))
            return 1;
    }
    return 0;
}

dt_status dt_plot_roofline_svg(const json_t *results, char **svg, size_t *len, dt_err *err) {
    *svg = NULL;
    *len = 0;
    const char *cand, *base;
    dt_status st = dt_derive_roles(results, &cand, &base, err);
    if (st != DT_OK)
        return st;
    if (!dt_plot_has_roofline(results))
        return DT_OK;
    const json_t *cases = dt_jget(results, "cases");
    const char *ids[2] = {cand, base};
    static const char *const colors[2] = {"#0072B2", "#E69F00"};
    size_t i, nrows = 0, label_chars = 4;
    json_t *c;
    double fmax_seen = 1, g;
    const char *sc;
    json_array_foreach(cases, i, c) {
        double a = roof_frac(c, cand, &g, &sc), bb = roof_frac(c, base, &g, &sc);
        if (!isfinite(a) && !isfinite(bb))
            continue;
        nrows++;
        size_t n = utf8_chars(dt_jstr(c, "id", "?"));
        label_chars = n > label_chars ? n : label_chars;
        if (isfinite(a) && a > fmax_seen)
            fmax_seen = a;
        if (isfinite(bb) && bb > fmax_seen)
            fmax_seen = bb;
    }
    const size_t max_label = 40;
    if (label_chars > max_label)
        label_chars = max_label;
    double top_frac = ceil(fmin(fmax_seen, 10.0) * 4 - 1e-9) / 4; /* 25% steps */
    const int W = 960;
    const double x0 = 16 + 7.0 * (double)label_chars + 14, width = W - 170 - x0;
    const double bar_h = 11, row_h = 2 * bar_h + 10, rows_top = 116;
    const double rows_bottom = rows_top + row_h * (double)nrows;
    const int H = (int)ceil(rows_bottom + 52);
#define RX(f) (x0 + width * fmin((f), top_frac) / top_frac)

    svgbuf b;
    if ((st = sb_open(&b, "roofline.svg", err)) != DT_OK)
        return st;
    FILE *o = b.f;
    svg_open(o, W, H);
    fputs("<title>achieved bandwidth as % of the copy ceiling</title>\n", o);
    fputs("<text x=\"16\" y=\"24\" font-size=\"16\" font-weight=\"bold\" fill=\"#111\">"
          "Achieved memory bandwidth as % of the device copy ceiling: ", o);
    xml_text(o, cand);
    fputs(" vs ", o);
    xml_text(o, base);
    fputs("</text>\n", o);
    fputs("<text x=\"16\" y=\"44\" fill=\"#444\">GB/s = fewest bytes the op must move / p50 "
          "time per call (device control batch where measured, else host E2E batch).</text>\n"
          "<text x=\"16\" y=\"60\" fill=\"#444\">100% = the copy ceiling measured on this "
          "machine; memory-bound ops only (GEMM is compute-bound and not shown).</text>\n", o);
    /* Row stripes first, so grid lines stay visible on top of them. */
    size_t srow = 0;
    json_array_foreach(cases, i, c) {
        double g0, g1;
        const char *s0, *s1;
        if (!isfinite(roof_frac(c, cand, &g0, &s0)) && !isfinite(roof_frac(c, base, &g1, &s1)))
            continue;
        if (srow % 2 == 0)
            fprintf(o, "<rect x=\"8\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                       "fill=\"#f2f4f7\"/>\n", rows_top + row_h * (double)srow, W - 16.0, row_h);
        srow++;
    }
    for (int f = 0; f < 2; f++) {
        double lx = 16 + 220.0 * f;
        fprintf(o, "<rect x=\"%.1f\" y=\"74\" width=\"14\" height=\"10\" fill=\"%s\"/>\n"
                   "<text x=\"%.1f\" y=\"83\" fill=\"#222\">", lx, colors[f], lx + 20);
        xml_text(o, ids[f]);
        fputs(f ? " (baseline)</text>\n" : " (candidate)</text>\n", o);
    }
    for (int t = 0; t <= (int)lround(top_frac * 4); t++) {
        double x = RX(t / 4.0);
        fprintf(o, "<line class=\"tick\" x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\" "
                   "stroke=\"%s\" stroke-width=\"%s\"/>\n<text x=\"%.2f\" y=\"%.1f\" "
                   "text-anchor=\"middle\" fill=\"#333\">%d%%</text>\n<text x=\"%.2f\" "
                   "y=\"%.1f\" text-anchor=\"middle\" fill=\"#333\">%d%%</text>\n",
                x, rows_top, x, rows_bottom, t == 4 ? "#222" : "#d0d4da", t == 4 ? "1.5" : "1",
                x, rows_top - 6, t * 25, x, rows_bottom + 16, t * 25);
    }
    fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#333\">%% of copy "
               "ceiling</text>\n", x0 + width / 2, rows_bottom + 36);
    size_t row = 0;
    json_array_foreach(cases, i, c) {
        double fr[2], gb[2];
        const char *sc[2];
        for (int f = 0; f < 2; f++)
            fr[f] = roof_frac(c, ids[f], &gb[f], &sc[f]);
        if (!isfinite(fr[0]) && !isfinite(fr[1]))
            continue;
        double top = rows_top + row_h * (double)row++;
        fprintf(o, "<text class=\"label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" "
                   "fill=\"#111\">", x0 - 10, top + row_h / 2 + 4);
        xml_text_n(o, dt_jstr(c, "id", "?"), max_label);
        fputs("</text>\n", o);
        for (int f = 0; f < 2; f++) {
            double y = top + 5 + bar_h * f;
            if (!isfinite(fr[f]))
                continue;
            fprintf(o, "<rect class=\"bar\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" "
                       "fill=\"%s\"><title>", x0, y, RX(fr[f]) - x0, bar_h - 1, colors[f]);
            xml_text(o, dt_jstr(c, "id", "?"));
            fputs(" ", o);
            xml_text(o, ids[f]);
            fprintf(o, ": %.1f%% of copy", 100 * fr[f]);
            if (isfinite(gb[f]))
                fprintf(o, ", %.0f GB/s", gb[f]);
            if (sc[f]) {
                fputs(" (", o);
                xml_text(o, sc[f]);
                fputs(" p50)", o);
            }
            fprintf(o, "</title></rect>\n<text x=\"%.2f\" y=\"%.1f\" font-size=\"10\" "
                       "fill=\"#333\">%.0f%%", RX(fr[f]) + 4, y + bar_h - 1, 100 * fr[f]);
            if (isfinite(gb[f]))
                fprintf(o, gb[f] >= 10 ? " · %.0f GB/s" : " · %.2g GB/s", gb[f]);
            fputs("</text>\n", o);
        }
    }
    fputs("</svg>\n", o);
#undef RX
    return sb_finish(&b, "roofline.svg", svg, len, err);
}

/* ---- writing ---- */

static dt_status write_one(const char *dir, const char *name, const char *text, size_t len,
                           json_t *written, dt_err *err) {
    size_t n = strlen(dir) + strlen(name) + 2;
    char *path = dt_xmalloc(n);
    snprintf(path, n, "%s/%s", dir, name);
    dt_status st = dt_results_write_text_atomic(path, text, len, err);
    free(path);
    if (st == DT_OK && json_is_array(written))
        json_array_append_new(written, json_string(name));
    return st;
}

dt_status dt_plot_write_all(const json_t *results, const char *dir, json_t *written,
                            dt_err *err) {
    size_t n = strlen(dir) + sizeof DT_PLOT_DIR + 2;
    char *pdir = dt_xmalloc(n);
    snprintf(pdir, n, "%s/%s", dir, DT_PLOT_DIR);
    if (mkdir(pdir, 0755) != 0 && errno != EEXIST) {
        dt_status st = dt_fail(err, DT_EIO, "%s: cannot create: %s", pdir, strerror(errno));
        free(pdir);
        return st;
    }
    free(pdir);
    char *svg = NULL;
    size_t len = 0;
    dt_status st = dt_plot_ratios_svg(results, &svg, &len, err);
    if (st == DT_OK)
        st = write_one(dir, DT_PLOT_RATIOS, svg, len, written, err);
    free(svg);
    svg = NULL;
    if (st == DT_OK)
        st = dt_plot_roofline_svg(results, &svg, &len, err);
    if (st == DT_OK && svg)
        st = write_one(dir, DT_PLOT_ROOFLINE, svg, len, written, err);
    free(svg);
    return st;
}
