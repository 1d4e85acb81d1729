/* dt_format_svg.c — the SVG charts of a run record (ratios per case and scope on a log
 * axis, roofline bars). Reads only; contract in dt_format_svg.h. Layout is computed in
 * pixels from the data: a label column sized to the longest case id (capped, longer ids
 * are shortened with an ellipsis and given in full in a <title>), one row per case with
 * one sub-row per scope present in the run. */
#define _GNU_SOURCE
#include "format/dt_format_svg.h"
#include "format/dt_format_util.h"

#include <math.h>
#include <string.h>

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

static const char *or_dflt(const char *s, const char *dflt) { return s ? s : dflt; }

static void svg_open(FILE *o, int w, int h) {
    fprintf(o,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" "
            "height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" "
            "font-size=\"12\">\n"
            "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n",
            w, h, w, h, w, h);
}

/* A memory stream; the text is the caller's after a successful finish. */
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

static dt_status need_candidate(const dt_record *r, const char *what, dt_err *err) {
    if (r->n_impls < 2)
        return dt_fail(err, DT_EINVAL, "%s: the run needs a baseline and a candidate (has %zu "
                       "implementation(s))", what, r->n_impls);
    return DT_OK;
}

/* ---- the ratio chart ---- */

typedef struct scope_style {
    dt_scope scope;
    const char *label, *color;
    int shape; /* 0 circle, 1 square, 2 diamond, 3 triangle */
} scope_style;

/* Okabe-Ito colours: distinguishable with common colour-vision deficiencies. The probe
 * scopes are diagnostics and not plotted. Device control is the held window, dispatch
 * the unheld one (files before held windows show their control as dispatch). */
static const scope_style k_scopes[] = {
    {DT_SCOPE_E2E_BATCH, "host E2E batch", "#0072B2", 0},
    {DT_SCOPE_E2E_SINGLE, "host E2E single", "#E69F00", 1},
    {DT_SCOPE_CONTROL_BATCH, "device control batch", "#009E73", 2},
    {DT_SCOPE_CONTROL_SINGLE, "device control single", "#CC79A7", 3},
    {DT_SCOPE_DISPATCH_BATCH, "device dispatch batch", "#D55E00", 4},
    {DT_SCOPE_DISPATCH_SINGLE, "device dispatch single", "#56B4E9", 5},
};
#define N_SCOPES (sizeof k_scopes / sizeof k_scopes[0])

/* The candidate-vs-baseline ratio of case c in scope s, NULL when derive gave none. */
static const dt_rec_ratio *scope_ratio(const dt_case *c, size_t cand, dt_scope s,
                                       dt_rec_verdict *verdict) {
    const dt_scope_derived *sd = &c->derived.scopes[s];
    if (!c->derived.present || !sd->present || !sd->vs || !sd->vs[cand].present ||
        !sd->vs[cand].has_ratio)
        return NULL;
    if (verdict)
        *verdict = sd->vs[cand].verdict;
    return &sd->vs[cand].ratio;
}

static int ratio_ok(double x) { return isfinite(x) && x > 0; }

#define R_MIN 1e-3 /* the axis never extends beyond [R_MIN, R_MAX] */
#define R_MAX 1e3
#define MARK_R 3.6
#define MAX_LABEL 40 /* case ids longer than this are shortened */

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
    double lo, hi;    /* ratio range */
    double x0, width; /* pixels */
} axis;

static double ax_x(const axis *a, double v) {
    if (v < a->lo)
        v = a->lo;
    if (v > a->hi)
        v = a->hi;
    return a->x0 + a->width * (log10(v) - log10(a->lo)) / (log10(a->hi) - log10(a->lo));
}

/* The layout of one ratio chart. */
typedef struct ratio_layout {
    const dt_record *r;
    size_t cand;
    const char *cand_id, *base_id;
    int present[N_SCOPES]; /* scopes with a ratio in some case */
    size_t nsc;            /* sub-rows per case */
    axis ax;
    int W, H;
    double step, row_h, rows_top, rows_bottom, x1;
} ratio_layout;

/* A marker of one shape centred at (x, y), hollow or filled. */
static void marker(FILE *o, const scope_style *s, double x, double y, int hollow,
                   const char *extra_class) {
    const char *fill = hollow ? "#ffffff" : s->color;
    double r = MARK_R;
    fprintf(o, "<path class=\"marker s-%s%s\" transform=\"translate(%.2f,%.2f)\" ",
            dt_scope_name(s->scope), extra_class, x, y);
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
    case 4: /* triangle pointing down */
        r *= 1.2;
        fprintf(o, "d=\"M0,%.2fL%.2f,%.2fL%.2f,%.2fZ\"", r, r, -0.8 * r, -r, -0.8 * r);
        break;
    case 5: /* hexagon */
        fprintf(o, "d=\"M%.2f,0L%.2f,%.2fL%.2f,%.2fL%.2f,0L%.2f,%.2fL%.2f,%.2fZ\"", -r,
                -0.5 * r, -0.87 * r, 0.5 * r, -0.87 * r, r, 0.5 * r, 0.87 * r, -0.5 * r,
                0.87 * r);
        break;
    default:
        r *= 1.2;
        fprintf(o, "d=\"M0,%.2fL%.2f,%.2fL%.2f,%.2fZ\"", -r, r, 0.8 * r, -r, 0.8 * r);
    }
    fprintf(o, " fill=\"%s\" stroke=\"%s\" stroke-width=\"1.4\"/>\n", fill, s->color);
}

/* Which scopes the run has, the value range and the longest label give the layout. */
static void ratio_layout_make(ratio_layout *L) {
    const dt_record *r = L->r;
    double vmin = 1, vmax = 1;
    size_t label_chars = 4;
    for (size_t i = 0; i < r->n_cases; i++) {
        const dt_case *c = &r->cases[i];
        size_t n = utf8_chars(or_dflt(c->id, "?"));
        if (n > label_chars)
            label_chars = n;
        for (size_t s = 0; s < N_SCOPES; s++) {
            const dt_rec_ratio *ro = scope_ratio(c, L->cand, k_scopes[s].scope, NULL);
            if (!ro)
                continue;
            L->present[s] = 1;
            if (!dt_format_case_shown(r, c))
                continue;
            double v3[3] = {ro->median, ro->ci_low, ro->ci_high};
            for (int k = 0; k < 3; k++) {
                if (!ratio_ok(v3[k]))
                    continue;
                vmin = v3[k] < vmin ? v3[k] : vmin;
                vmax = v3[k] > vmax ? v3[k] : vmax;
            }
        }
    }
    L->nsc = 0;
    for (size_t s = 0; s < N_SCOPES; s++)
        L->nsc += (size_t)L->present[s];
    if (L->nsc == 0)
        L->present[0] = 1, L->nsc = 1; /* keep one sub-row so invalid cases still get a row */

    L->ax.lo = nice_down(fmax(vmin / 1.12, R_MIN));
    L->ax.hi = nice_up(fmin(vmax * 1.12, R_MAX));
    if (L->ax.lo >= 1)
        L->ax.lo = 0.5;
    if (L->ax.hi <= 1)
        L->ax.hi = 2;
    if (label_chars > MAX_LABEL)
        label_chars = MAX_LABEL;
    L->W = 960;
    const double label_w = 16 + 7.0 * (double)label_chars;
    L->ax.x0 = label_w + 14;
    L->ax.width = L->W - 40 - L->ax.x0;
    L->step = 6.5;
    L->row_h = (double)(L->nsc - 1) * L->step + 14;
    L->rows_top = 132;
    L->rows_bottom = L->rows_top + L->row_h * (double)(r->n_cases ? r->n_cases : 1);
    L->H = (int)ceil(L->rows_bottom + 52);
    L->x1 = ax_x(&L->ax, 1);
}

/* Titles (ids, framework names and versions from r->impls), legend, direction labels. */
static void ratio_header(FILE *o, const ratio_layout *L) {
    const dt_impl *fc = &L->r->impls[L->cand], *fb = &L->r->impls[0];
    fputs("<title>", o);
    xml_text(o, L->cand_id);
    fputs(" / ", o);
    xml_text(o, L->base_id);
    fputs(" time ratio per case</title>\n", o);
    fputs("<text x=\"16\" y=\"24\" font-size=\"16\" font-weight=\"bold\" fill=\"#111\">", o);
    xml_text(o, L->cand_id);
    fputs(" / ", o);
    xml_text(o, L->base_id);
    dt_format_buf lv;
    fprintf(o, " time per call: median of paired ratios with %s%% interval</text>\n",
            dt_format_const(lv, 100 * L->r->derived.policy.ci_level));
    fputs("<text x=\"16\" y=\"44\" fill=\"#444\">candidate ", o);
    xml_text(o, L->cand_id);
    fputs(" = ", o);
    xml_text(o, or_dflt(fc->framework, "?"));
    fputs(" ", o);
    xml_text(o, or_dflt(fc->framework_version, "?"));
    fputs("; baseline ", o);
    xml_text(o, L->base_id);
    fputs(" = ", o);
    xml_text(o, or_dflt(fb->framework, "?"));
    fputs(" ", o);
    xml_text(o, or_dflt(fb->framework_version, "?"));
    fputs("; backend ", o);
    xml_text(o, or_dflt(L->r->settings.backend, "unknown"));
    fputs("</text>\n", o);

    double lx = 16, ly = 68;
    fputs("<g class=\"legend\">\n", o);
    for (size_t s = 0; s < N_SCOPES; s++) {
        if (!L->present[s])
            continue;
        double need = 28 + 7.0 * (double)strlen(k_scopes[s].label) + 22;
        if (lx > 16 && lx + need > L->W - 16) { /* a second legend row */
            lx = 16;
            ly += 16;
        }
        fprintf(o, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                   "stroke-width=\"1.5\"/>\n", lx, ly, lx + 22, ly, k_scopes[s].color);
        marker(o, &k_scopes[s], lx + 11, ly, 0, " legend");
        fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#222\">%s</text>\n", lx + 28, ly + 4,
                k_scopes[s].label);
        lx += 28 + 7.0 * (double)strlen(k_scopes[s].label) + 22;
    }
    if (lx > 16 && lx + 230 > L->W - 16) {
        lx = 16;
        ly += 16;
    }
    marker(o, &k_scopes[0], lx + 4, ly, 1, " legend");
    fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#222\">hollow: &lt; %zu pairs, no "
               "interval</text>\n</g>\n", lx + 14, ly + 4,
            L->r->derived.policy.min_pairs_interval);

    fprintf(o, "<text x=\"%.1f\" y=\"98\" text-anchor=\"end\" fill=\"#0b6b2c\" "
               "font-weight=\"bold\">← candidate faster</text>\n", L->x1 - 8);
    fprintf(o, "<text x=\"%.1f\" y=\"98\" fill=\"#a3340f\" font-weight=\"bold\">slower "
               "→</text>\n", L->x1 + 8);
}

/* Row stripes, ticks and grid (1-2-5 when that gives at most 13 ticks, else powers of
 * ten), the axis, the line at 1 and the axis label. */
static void ratio_grid(FILE *o, const ratio_layout *L) {
    const axis *ax = &L->ax;
    for (size_t i = 0; i < L->r->n_cases; i++) {
        double top = L->rows_top + L->row_h * (double)i;
        if (i % 2 == 0)
            fprintf(o, "<rect x=\"8\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                       "fill=\"#f2f4f7\"/>\n", top, L->W - 16.0, L->row_h);
    }
    double tick_y_top = L->rows_top - 6, tick_y_bot = L->rows_bottom + 16;
    int decades_only = log10(ax->hi / ax->lo) > 4.01;
    fputs("<g class=\"grid\">\n", o);
    for (double e = floor(log10(ax->lo)); e <= ceil(log10(ax->hi)); e++) {
        static const double mant[3] = {1, 2, 5};
        for (int m = 0; m < 3; m++) {
            if (decades_only && m > 0)
                continue;
            double v = mant[m] * pow(10, e);
            if (v < ax->lo * (1 - 1e-9) || v > ax->hi * (1 + 1e-9))
                continue;
            double x = ax_x(ax, v);
            fprintf(o, "<line class=\"tick\" x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\" "
                       "stroke=\"#d0d4da\" stroke-width=\"1\"/>\n",
                    x, L->rows_top, x, L->rows_bottom);
            fprintf(o, "<text x=\"%.2f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#333\">%g"
                       "</text>\n<text x=\"%.2f\" y=\"%.1f\" text-anchor=\"middle\" "
                       "fill=\"#333\">%g</text>\n",
                    x, tick_y_top, v, x, tick_y_bot, v);
        }
    }
    fputs("</g>\n", o);
    fprintf(o, "<line class=\"axis\" x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\" "
               "stroke=\"#555\"/>\n", ax->x0, L->rows_bottom, ax->x0 + ax->width, L->rows_bottom);
    fprintf(o, "<line class=\"one\" x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\" "
               "stroke=\"#222\" stroke-width=\"1.5\"/>\n", L->x1, L->rows_top - 2, L->x1,
            L->rows_bottom);
    fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#333\">ratio ",
            ax->x0 + ax->width / 2, L->rows_bottom + 36);
    xml_text(o, L->cand_id);
    fputs("/", o);
    xml_text(o, L->base_id);
    fputs(" of time per call (log scale; 1 = same time)</text>\n", o);
}

/* One scope's point of one case at height y: tooltip, whisker, marker. 0 when it has no
 * ratio to draw. */
static int ratio_point(FILE *o, const ratio_layout *L, const dt_case *c, size_t s, double y) {
    dt_rec_verdict verdict = DT_REC_VERDICT_INVALID;
    const dt_rec_ratio *ro = scope_ratio(c, L->cand, k_scopes[s].scope, &verdict);
    if (!ro || !ratio_ok(ro->median))
        return 0;
    double med = ro->median, lo = ro->ci_low, hi = ro->ci_high;
    int hollow = !(ratio_ok(lo) && ratio_ok(hi));
    const char *scope = dt_scope_name(k_scopes[s].scope);
    numbuf a, bb, cc;
    fputs("<g class=\"point\"><title>", o);
    xml_text(o, or_dflt(c->id, "?"));
    fprintf(o, " %s: %s", scope, fnum3(a, med));
    if (hollow)
        fprintf(o, " (no interval: %lld pairs)", (long long)ro->pairs);
    else
        fprintf(o, " [%s, %s]", fnum3(bb, lo), fnum3(cc, hi));
    fputs(" ", o);
    xml_text(o, dt_rec_verdict_name(verdict));
    fputs("</title>\n", o);
    if (!hollow) {
        double xa = ax_x(&L->ax, lo), xb = ax_x(&L->ax, hi);
        fprintf(o, "<path class=\"whisker\" d=\"M%.2f,%.2fH%.2fM%.2f,%.2fV%.2fM%.2f,%.2fV"
                   "%.2f\" stroke=\"%s\" stroke-width=\"1.5\" fill=\"none\"/>\n",
                xa, y, xb, xa, y - 2.5, y + 2.5, xb, y - 2.5, y + 2.5, k_scopes[s].color);
    }
    marker(o, &k_scopes[s], ax_x(&L->ax, med), y, hollow, hollow ? " hollow" : "");
    fputs("</g>\n", o);
    return 1;
}

/* One case: its label, then "invalid", its points, or "no paired samples". */
static void ratio_row(FILE *o, const ratio_layout *L, size_t i) {
    const dt_case *c = &L->r->cases[i];
    double top = L->rows_top + L->row_h * (double)i, mid = top + L->row_h / 2;
    const char *id = or_dflt(c->id, "?");
    fprintf(o, "<g class=\"case\">\n<text class=\"label\" x=\"%.1f\" y=\"%.1f\" "
               "text-anchor=\"end\" fill=\"#111\">", L->ax.x0 - 10, mid + 4);
    if (utf8_chars(id) > MAX_LABEL) {
        fputs("<title>", o);
        xml_text(o, id);
        fputs("</title>", o);
    }
    xml_text_n(o, id, MAX_LABEL);
    fputs("</text>\n", o);
    if (!dt_format_case_shown(L->r, c)) {
        fprintf(o, "<text class=\"invalid\" x=\"%.1f\" y=\"%.1f\" fill=\"#b00020\" "
                   "font-style=\"italic\">invalid (failed a check: no ratio)</text>\n</g>\n",
                L->x1 + 8, mid + 4);
        return;
    }
    int k = 0, drawn = 0;
    for (size_t s = 0; s < N_SCOPES; s++) {
        if (!L->present[s])
            continue;
        double y = top + 7 + L->step * k++;
        drawn += ratio_point(o, L, c, s, y);
    }
    if (!drawn)
        fprintf(o, "<text class=\"noratio\" x=\"%.1f\" y=\"%.1f\" fill=\"#666\" "
                   "font-style=\"italic\">no paired samples</text>\n", L->x1 + 8, mid + 4);
    fputs("</g>\n", o);
}

dt_status dt_format_svg_ratios_vs(const dt_record *r, size_t cand, char **svg, size_t *len,
                                  dt_err *err) {
    *svg = NULL;
    *len = 0;
    dt_status st = need_candidate(r, "ratios.svg", err);
    if (st != DT_OK)
        return st;
    if (cand < 1 || cand >= r->n_impls)
        return dt_fail(err, DT_EINVAL, "ratios.svg: implementation %zu is not a candidate "
                       "(the run has %zu)", cand, r->n_impls);
    ratio_layout L;
    memset(&L, 0, sizeof L);
    L.r = r;
    L.cand = cand;
    L.cand_id = r->impls[cand].id;
    L.base_id = r->impls[0].id;
    ratio_layout_make(&L);

    svgbuf b;
    if ((st = sb_open(&b, "ratios.svg", err)) != DT_OK)
        return st;
    FILE *o = b.f;
    svg_open(o, L.W, L.H);
    ratio_header(o, &L);
    ratio_grid(o, &L);
    for (size_t i = 0; i < r->n_cases; i++)
        ratio_row(o, &L, i);
    if (r->n_cases == 0)
        fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#666\">no cases</text>\n", L.x1 + 8,
                L.rows_top + L.row_h / 2 + 4);
    fputs("</svg>\n", o);
    return sb_finish(&b, "ratios.svg", svg, len, err);
}

dt_status dt_format_svg_ratios(const dt_record *r, char **svg, size_t *len, dt_err *err) {
    return dt_format_svg_ratios_vs(r, 1, svg, len, err);
}

void dt_format_svg_ratios_name(const dt_record *r, size_t cand, char *buf, size_t cap) {
    DT_ASSERT(cand >= 1 && cand < r->n_impls);
    if (cand == 1) {
        snprintf(buf, cap, "%s", DT_FORMAT_SVG_RATIOS);
        return;
    }
    const char *id = r->impls[cand].id ? r->impls[cand].id : "";
    size_t n = strlen(id), ok = n > 0 && n < 64;
    for (size_t i = 0; ok && i < n; i++)
        ok = (id[i] >= 'a' && id[i] <= 'z') || (id[i] >= 'A' && id[i] <= 'Z') ||
             (id[i] >= '0' && id[i] <= '9') || strchr("_.-", id[i]);
    if (ok)
        snprintf(buf, cap, "%s/ratios-%s.svg", DT_FORMAT_SVG_DIR, id);
    else
        snprintf(buf, cap, "%s/ratios-impl%zu.svg", DT_FORMAT_SVG_DIR, cand);
}

/* ---- the roofline chart ---- */

/* Achieved bandwidth of implementation f in case c as a fraction of the copy ceiling
 * (dt_format_roofline_frac: NAN for compute-bound ops, which are not drawn), its GB/s
 * and the scope its time came from (NULL when unknown). */
static double roof_frac(const dt_case *c, size_t f, double *gbps, const char **scope) {
    const dt_roofline *rf = &c->derived.roofline;
    int has = c->derived.present && rf->present && rf->impl && rf->impl[f].present;
    *scope = has ? dt_scope_name(rf->impl[f].scope) : NULL;
    return dt_format_roofline_frac(c, f, gbps);
}

/* 1 when case c has a bar to draw for some implementation. */
static int roof_row(const dt_record *r, const dt_case *c) {
    double g;
    const char *sc;
    for (size_t f = 0; f < r->n_impls; f++)
        if (isfinite(roof_frac(c, f, &g, &sc)))
            return 1;
    return 0;
}

int dt_format_svg_has_roofline(const dt_record *r) {
    return r->n_impls >= 2 && dt_format_has_roofline(r);
}

/* The colour of the k-th bar of a case (display order, dt_format_impl_at): candidates
 * in Okabe-Ito colours, the baseline (last) orange. */
static const char *roof_color(const dt_record *r, size_t k) {
    static const char *const cand[] = {"#0072B2", "#009E73", "#CC79A7", "#56B4E9",
                                       "#D55E00", "#F0E442", "#000000"};
    return dt_format_impl_at(r, k) == 0 ? "#E69F00" : cand[k % (sizeof cand / sizeof cand[0])];
}

/* The layout of the roofline chart. */
typedef struct roof_layout {
    const dt_record *r;
    size_t nf; /* bars per case: every implementation */
    double top_frac, x0, width, bar_h, row_h, rows_top, rows_bottom;
    double tick_step;  /* fraction between labelled ticks, wide enough for their labels */
    int any_cache;     /* some bar passes 100%: the data stayed in cache */
    double ceiling_noise; /* the copy ceiling's IQR / its value; NAN: not recorded */
    int W, H;
} roof_layout;

/* 1 when the copy ceiling's own spread is above the policy's noise bound. */
static int roof_ceiling_noisy(const roof_layout *L) {
    return isfinite(L->ceiling_noise) && L->ceiling_noise > L->r->derived.policy.max_noise;
}

/* Approximate width in px of `chars` characters at font size px (the chart's sans-serif
 * averages about 0.6 em per character; digits and '%' are about that wide). */
static double text_px(size_t chars, double px) { return 0.6 * px * (double)chars; }

/* Case ids longer than this are wrapped onto two lines (at an '_' where possible). */
#define ROOF_LABEL_LINE 22

/* Where a label of n characters breaks into two lines: the last '_' at or before
 * ROOF_LABEL_LINE (the '_' stays on the first line), else ROOF_LABEL_LINE; n when it
 * fits on one. Counts bytes: ids are ASCII in practice, others break at a character. */
static size_t roof_label_break(const char *s) {
    size_t n = strlen(s);
    if (utf8_chars(s) <= ROOF_LABEL_LINE)
        return n;
    size_t cut = ROOF_LABEL_LINE;
    for (size_t i = ROOF_LABEL_LINE; i > ROOF_LABEL_LINE / 2; i--)
        if (s[i - 1] == '_') {
            cut = i;
            break;
        }
    while (cut < n && ((unsigned char)s[cut] & 0xC0) == 0x80) cut++; /* not mid-character */
    return cut;
}

/* The smallest step of 25%, 50%, 100%, 200%, 250%, 500% whose labels ("1000%") leave a
 * gap of at least 8 px between neighbours. */
static double roof_tick_step(const roof_layout *L) {
    static const double steps[] = {0.25, 0.5, 1, 2, 2.5, 5, 10};
    char widest[32];
    snprintf(widest, sizeof widest, "%.0f%%", 100 * L->top_frac);
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++)
        if (L->width * steps[i] / L->top_frac >= text_px(strlen(widest), 12) + 8)
            return steps[i];
    return L->top_frac;
}

static double roof_x(const roof_layout *L, double f) {
    return L->x0 + L->width * fmin(f, L->top_frac) / L->top_frac;
}

static void roof_layout_make(roof_layout *L) {
    const dt_record *r = L->r;
    size_t nrows = 0, label_chars = 4;
    double fmax_seen = 1, g;
    const char *sc;
    L->nf = r->n_impls;
    for (size_t i = 0; i < r->n_cases; i++) {
        const dt_case *c = &r->cases[i];
        if (!roof_row(r, c))
            continue;
        nrows++;
        const char *id = or_dflt(c->id, "?");
        size_t cut = roof_label_break(id), n = utf8_chars(id);
        if (cut < strlen(id)) { /* two lines: the longer one counts */
            size_t second = utf8_chars(id + cut);
            n = n - second > second ? n - second : second;
        }
        label_chars = n > label_chars ? n : label_chars;
        for (size_t k = 0; k < L->nf; k++) {
            double fr = roof_frac(c, dt_format_impl_at(r, k), &g, &sc);
            if (isfinite(fr) && fr > fmax_seen)
                fmax_seen = fr;
            L->any_cache |= isfinite(fr) && fr > 1;
        }
    }
    if (label_chars > MAX_LABEL)
        label_chars = MAX_LABEL;
    L->top_frac = ceil(fmin(fmax_seen, 10.0) * 4 - 1e-9) / 4; /* 25% steps */
    L->W = L->any_cache ? 1160 : 960; /* room for the in-cache note right of a bar */
    L->x0 = 16 + text_px(label_chars, 12) + 14;
    L->width = L->W - (L->any_cache ? 370 : 170) - L->x0;
    L->tick_step = roof_tick_step(L);
    L->bar_h = 11;
    L->row_h = (double)L->nf * L->bar_h + 10;
    L->rows_top = 116;
    L->rows_bottom = L->rows_top + L->row_h * (double)nrows;
    const dt_ceilings_rec *ce = &r->env.ceilings;
    L->ceiling_noise = ce->present && !ce->error && ce->copy_gbps > 0
                           ? ce->copy_gbps_iqr / ce->copy_gbps : NAN;
    L->H = (int)ceil(L->rows_bottom + 52 + (roof_ceiling_noisy(L) ? 18 : 0));
}

/* Titles, row stripes (first, so grid lines stay visible on top), legend, ticks. */
static void roof_header(FILE *o, const roof_layout *L) {
    const dt_record *r = L->r;
    fputs("<title>achieved bandwidth as % of the copy ceiling</title>\n", o);
    fputs("<text x=\"16\" y=\"24\" font-size=\"16\" font-weight=\"bold\" fill=\"#111\">"
          "Achieved memory bandwidth as % of the device copy ceiling: ", o);
    for (size_t k = 0; k + 1 < L->nf; k++) {
        if (k)
            fputs(", ", o);
        xml_text(o, r->impls[dt_format_impl_at(r, k)].id);
    }
    fputs(" vs ", o);
    xml_text(o, r->impls[0].id);
    fputs("</text>\n", o);
    int dispatch = 0; /* some roofline time is dispatch (a file before held windows) */
    for (size_t c = 0; c < r->n_cases; c++)
        for (size_t i = 0; i < r->n_impls && r->cases[c].derived.roofline.present; i++)
            dispatch |= r->cases[c].derived.roofline.impl[i].present &&
                        r->cases[c].derived.roofline.impl[i].scope == DT_SCOPE_DISPATCH_BATCH;
    fprintf(o, "<text x=\"16\" y=\"44\" fill=\"#444\">GB/s = fewest bytes the op must move / "
            "p50 time per call (device control batch where measured, else %shost E2E "
            "batch).</text>\n", dispatch ? "device dispatch batch, else " : "");
    fputs("<text x=\"16\" y=\"60\" fill=\"#444\">100% = the copy ceiling measured on this "
          "machine; memory-bound ops only (GEMM is compute-bound and not shown).</text>\n", o);
    size_t srow = 0;
    for (size_t i = 0; i < r->n_cases; i++) {
        if (!roof_row(r, &r->cases[i]))
            continue;
        if (srow % 2 == 0)
            fprintf(o, "<rect x=\"8\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                       "fill=\"#f2f4f7\"/>\n", L->rows_top + L->row_h * (double)srow,
                    L->W - 16.0, L->row_h);
        srow++;
    }
    /* legend: 220 px per entry, narrower when more than four share the line */
    double lstep = L->nf > 4 ? (L->W - 32.0) / (double)L->nf : 220.0;
    for (size_t k = 0; k < L->nf; k++) {
        double lx = 16 + lstep * (double)k;
        size_t f = dt_format_impl_at(r, k);
        fprintf(o, "<rect x=\"%.1f\" y=\"74\" width=\"14\" height=\"10\" fill=\"%s\"/>\n"
                   "<text x=\"%.1f\" y=\"83\" fill=\"#222\">", lx, roof_color(r, k), lx + 20);
        xml_text(o, r->impls[f].id);
        fputs(f == 0 ? " (baseline)</text>\n" : " (candidate)</text>\n", o);
    }
    /* grid lines every 25% while they stay 4 px apart; labels every tick_step (so
     * they never collide); the 100% line always, strong */
    int quarters = (int)lround(L->top_frac * 4), every = (int)lround(L->tick_step * 4);
    int thin = L->width / (double)quarters >= 4;
    for (int t = 0; t <= quarters; t++) {
        int labelled = t % every == 0;
        if (!labelled && !thin && t != 4)
            continue;
        double x = roof_x(L, t / 4.0);
        fprintf(o, "<line class=\"tick\" x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\" "
                   "stroke=\"%s\" stroke-width=\"%s\"/>\n", x, L->rows_top, x, L->rows_bottom,
                t == 4 ? "#222" : "#d0d4da", t == 4 ? "1.5" : "1");
        if (labelled)
            fprintf(o, "<text class=\"ticklabel\" x=\"%.2f\" y=\"%.1f\" text-anchor=\"middle\" "
                       "fill=\"#333\">%d%%</text>\n<text class=\"ticklabel\" x=\"%.2f\" "
                       "y=\"%.1f\" text-anchor=\"middle\" fill=\"#333\">%d%%</text>\n",
                    x, L->rows_top - 6, t * 25, x, L->rows_bottom + 16, t * 25);
    }
    fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#333\">%% of copy "
               "ceiling</text>\n", L->x0 + L->width / 2, L->rows_bottom + 36);
    if (roof_ceiling_noisy(L))
        fprintf(o, "<text class=\"noisyceiling\" x=\"16\" y=\"%.1f\" fill=\"#B00020\">The copy "
                   "ceiling itself was noisy: its copies spread by %.0f%% (IQR / median, above "
                   "the %.0f%% noise bound), so every percentage here is uncertain by about "
                   "as much.</text>\n", L->rows_bottom + 56, 100 * L->ceiling_noise,
                100 * L->r->derived.policy.max_noise);
}

/* The bars of one case (row number `row`). */
static void roof_bars(FILE *o, const roof_layout *L, const dt_case *c, size_t row) {
    double top = L->rows_top + L->row_h * (double)row;
    const char *id = or_dflt(c->id, "?");
    size_t cut = roof_label_break(id);
    fprintf(o, "<text class=\"label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" "
               "fill=\"#111\">", L->x0 - 10, top + L->row_h / 2 + (cut < strlen(id) ? -2 : 4));
    if (cut < strlen(id)) { /* a long id: two lines, each right-aligned at the axis */
        char *first = dt_xstrdup(id);
        first[cut] = 0;
        fprintf(o, "<tspan x=\"%.1f\">", L->x0 - 10);
        xml_text_n(o, first, MAX_LABEL);
        fprintf(o, "</tspan><tspan x=\"%.1f\" dy=\"12\">", L->x0 - 10);
        xml_text_n(o, id + cut, MAX_LABEL);
        fputs("</tspan>", o);
        free(first);
    } else {
        xml_text_n(o, id, MAX_LABEL);
    }
    fputs("</text>\n", o);
    for (size_t k = 0; k < L->nf; k++) {
        double y = top + 5 + L->bar_h * (double)k, gb;
        const char *sc;
        size_t f = dt_format_impl_at(L->r, k);
        double fr = roof_frac(c, f, &gb, &sc);
        if (!isfinite(fr))
            continue;
        fprintf(o, "<rect class=\"bar\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" "
                   "fill=\"%s\"><title>", L->x0, y, roof_x(L, fr) - L->x0, L->bar_h - 1,
                roof_color(L->r, k));
        xml_text(o, or_dflt(c->id, "?"));
        fputs(" ", o);
        xml_text(o, L->r->impls[f].id);
        fprintf(o, ": %.1f%% of copy", 100 * fr);
        if (isfinite(gb))
            fprintf(o, ", %.0f GB/s", gb);
        if (sc) {
            fputs(" (", o);
            xml_text(o, sc);
            fputs(" p50)", o);
        }
        fprintf(o, "</title></rect>\n<text x=\"%.2f\" y=\"%.1f\" font-size=\"10\" "
                   "fill=\"#333\">%.0f%%", roof_x(L, fr) + 4, y + L->bar_h - 1, 100 * fr);
        if (isfinite(gb))
            fprintf(o, gb >= 10 ? " · %.0f GB/s" : " · %.2g GB/s", gb);
        if (fr > 1) /* faster than a copy through DRAM: the data stayed in cache */
            fputs("<tspan class=\"incache\" fill=\"#B00020\"> in cache: above the copy "
                  "ceiling</tspan>", o);
        fputs("</text>\n", o);
    }
}

dt_status dt_format_svg_roofline(const dt_record *r, char **svg, size_t *len, dt_err *err) {
    *svg = NULL;
    *len = 0;
    dt_status st = need_candidate(r, "roofline.svg", err);
    if (st != DT_OK)
        return st;
    if (!dt_format_svg_has_roofline(r))
        return DT_OK;
    roof_layout L;
    memset(&L, 0, sizeof L);
    L.r = r;
    roof_layout_make(&L);

    svgbuf b;
    if ((st = sb_open(&b, "roofline.svg", err)) != DT_OK)
        return st;
    FILE *o = b.f;
    svg_open(o, L.W, L.H);
    roof_header(o, &L);
    size_t row = 0;
    for (size_t i = 0; i < r->n_cases; i++) {
        if (!roof_row(r, &r->cases[i]))
            continue;
        roof_bars(o, &L, &r->cases[i], row++);
    }
    fputs("</svg>\n", o);
    return sb_finish(&b, "roofline.svg", svg, len, err);
}
