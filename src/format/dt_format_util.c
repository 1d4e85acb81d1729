/* dt_format_util.c — number formatting, Markdown escaping, the shown-case rule and
 * implementation order for the formatters of a run record. Contract in dt_format_util.h. */
#include "format/dt_format_util.h"

#include <ctype.h>
#include <math.h>
#include <string.h>

const char *dt_format_num(dt_format_buf b, double x) {
    double a = fabs(x);
    if (!isfinite(x))
        snprintf(b, sizeof(dt_format_buf), "—");
    else if (a == 0)
        snprintf(b, sizeof(dt_format_buf), "0");
    else if (a >= 100)
        snprintf(b, sizeof(dt_format_buf), "%.0f", x);
    else if (a >= 10)
        snprintf(b, sizeof(dt_format_buf), "%.1f", x);
    else if (a >= 1)
        snprintf(b, sizeof(dt_format_buf), "%.2f", x);
    else if (a >= 0.001)
        snprintf(b, sizeof(dt_format_buf), "%#.3g", x);
    else
        snprintf(b, sizeof(dt_format_buf), "%.2e", x);
    return b;
}

const char *dt_format_ratio(dt_format_buf b, double x) {
    if (isfinite(x) && fabs(x) < 10 && fabs(x) >= 0.001)
        snprintf(b, sizeof(dt_format_buf), "%.3f", x);
    else
        dt_format_num(b, x);
    return b;
}

const char *dt_format_pct(dt_format_buf b, double fraction) {
    if (!isfinite(fraction))
        snprintf(b, sizeof(dt_format_buf), "—");
    else
        snprintf(b, sizeof(dt_format_buf), "%.1f%%", 100 * fraction);
    return b;
}

const char *dt_format_pct_num(dt_format_buf b, double pct) {
    dt_format_buf t;
    if (!isfinite(pct))
        snprintf(b, sizeof(dt_format_buf), "—");
    else
        snprintf(b, sizeof(dt_format_buf), "%s%%", dt_format_num(t, pct));
    return b;
}

const char *dt_format_bytes(dt_format_buf b, double bytes) {
    dt_format_buf t;
    if (!isfinite(bytes))
        snprintf(b, sizeof(dt_format_buf), "—");
    else if (bytes >= 1048576.0)
        snprintf(b, sizeof(dt_format_buf), "%s MiB", dt_format_num(t, bytes / 1048576.0));
    else if (bytes >= 1024.0)
        snprintf(b, sizeof(dt_format_buf), "%s KiB", dt_format_num(t, bytes / 1024.0));
    else
        snprintf(b, sizeof(dt_format_buf), "%.0f B", bytes);
    return b;
}

const char *dt_format_reading(dt_format_buf b, double x) {
    if (isfinite(x) && x == floor(x) && fabs(x) < 1e9)
        snprintf(b, sizeof(dt_format_buf), "%.0f", x);
    else
        dt_format_num(b, x);
    return b;
}

const char *dt_format_const(dt_format_buf b, double x) {
    if (!isfinite(x))
        snprintf(b, sizeof(dt_format_buf), "—");
    else
        snprintf(b, sizeof(dt_format_buf), "%g", x);
    return b;
}

/* Markdown escaping that leaves raw text readable (issue 15): a character gets a backslash
 * or an entity only where CommonMark/GFM would read it as markup. */
static int md_word(int c) { return c && (isalnum((unsigned char)c) || (c & 0x80)); }
static int md_space(int c) { return !c || isspace((unsigned char)c); }

/* 1 when "&..." at s is an entity reference (&name; &#123; &#x1f;): it would be decoded. */
static int md_entity_at(const char *s) {
    size_t i = 1;
    while (s[i] && (isalnum((unsigned char)s[i]) || (i == 1 && s[i] == '#'))) i++;
    return i > 1 && s[i] == ';';
}

static void md_escape(FILE *o, const char *s, int amp) {
    const char *start = s;
    int in_link_text = 0; /* a '[' ... '](' ahead: the '[' could open a link */
    for (; s && *s; s++) {
        int prev = s > start ? (unsigned char)s[-1] : 0, next = (unsigned char)s[1];
        switch (*s) {
        case '|': fputs("\\|", o); break; /* a cell break in a table */
        case '`': fputs("\\`", o); break; /* a code span */
        case '\\': fputs(ispunct(next) ? "\\\\" : "\\", o); break;
        case '_': /* intraword underscores never emphasize */
            fputs(md_word(prev) && md_word(next) ? "_" : "\\_", o);
            break;
        case '*': case '~': /* with space on both sides they cannot open or close */
            if (!(md_space(prev) && md_space(next))) fputc('\\', o);
            fputc(*s, o);
            break;
        case '[':
            in_link_text = strstr(s, "](") != NULL;
            fputs(in_link_text ? "\\[" : "[", o);
            break;
        case '#': case '>': /* a heading or a quote only at the start of a line */
            if (s == start) fputc('\\', o);
            fputc(*s, o);
            break;
        case '-': case '+': /* a list item only at the start, before a space */
            if (s == start && next == ' ') fputc('\\', o);
            fputc(*s, o);
            break;
        case '<': /* a tag, an autolink or a comment only before a letter, / ! ? */
            fputs(isalpha(next) || next == '/' || next == '!' || next == '?' ? "&lt;" : "<", o);
            break;
        case '&': fputs(amp && md_entity_at(s) ? "&amp;" : "&", o); break;
        case '\n': case '\r': case '\t': fputc(' ', o); break;
        default: fputc(*s, o);
        }
    }
}

void dt_format_md_text(FILE *o, const char *s) { md_escape(o, s, 1); }
void dt_format_md_text_keep_amp(FILE *o, const char *s) { md_escape(o, s, 0); }

void dt_format_md_code(FILE *o, const char *s, int in_table) {
    if (!s) return;
    size_t run = 0, longest = 0;
    for (const char *p = s; *p; p++) {
        run = *p == '`' ? run + 1 : 0;
        if (run > longest) longest = run;
    }
    size_t len = strlen(s);
    int pad = len && (s[0] == '`' || s[len - 1] == '`' || s[0] == ' ');
    for (size_t i = 0; i <= longest; i++) fputc('`', o);
    if (pad) fputc(' ', o);
    for (const char *p = s; *p; p++) {
        if (*p == '|' && in_table) fputs("\\|", o);
        else if (*p == '\n' || *p == '\r' || *p == '\t') fputc(' ', o);
        else fputc(*p, o);
    }
    if (pad) fputc(' ', o);
    for (size_t i = 0; i <= longest; i++) fputc('`', o);
}

void dt_format_shell_quote(FILE *o, const char *s) {
    if (!s) return;
    int plain = *s != 0;
    for (const char *p = s; *p && plain; p++)
        plain = isalnum((unsigned char)*p) || strchr("_@%+=:,./-", *p);
    if (plain) {
        fputs(s, o);
        return;
    }
    fputc('\'', o);
    for (const char *p = s; *p; p++) {
        if (*p == '\'') fputs("'\\''", o);
        else fputc(*p, o);
    }
    fputc('\'', o);
}

int dt_format_case_shown(const dt_record *r, const dt_case *c) {
    if (!c->valid)
        return 0;
    for (size_t i = 0; i < r->n_impls; i++)
        if (c->impl[i].present && c->impl[i].status != DT_IMPL_OK)
            return 0;
    return 1;
}

size_t dt_format_impl_at(const dt_record *r, size_t k) {
    DT_ASSERT(k < r->n_impls);
    return k + 1 < r->n_impls ? k + 1 : 0;
}

size_t dt_format_first_candidate(const dt_record *r) { return r->n_impls > 1 ? 1 : 0; }

const dt_impl *dt_format_impl_find(const dt_record *r, const char *id) {
    int i = dt_record_impl_find(r, id);
    return i < 0 ? NULL : &r->impls[i];
}

double dt_format_roofline_frac(const dt_case *c, size_t impl, double *gbps) {
    const dt_roofline *rl = &c->derived.roofline;
    const dt_roofline_impl *e = c->derived.present && rl->present && rl->impl ? &rl->impl[impl] : NULL;
    *gbps = e && e->present ? e->gbps : NAN;
    if (!e || !e->present || rl->bound == DT_BOUND_COMPUTE)
        return NAN;
    if (isfinite(e->copy_pct) && e->copy_pct >= 0)
        return e->copy_pct / 100;
    if (isfinite(*gbps) && isfinite(rl->copy_gbps) && rl->copy_gbps > 0 && *gbps >= 0)
        return *gbps / rl->copy_gbps;
    return NAN;
}

int dt_format_has_roofline(const dt_record *r) {
    double g;
    for (size_t i = 0; i < r->n_cases; i++)
        for (size_t k = 0; k < r->n_impls; k++)
            if (isfinite(dt_format_roofline_frac(&r->cases[i], k, &g)))
                return 1;
    return 0;
}
