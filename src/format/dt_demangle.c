/* dt_demangle.c — Itanium C++ ABI names demangled by libstdc++'s __cxa_demangle and the
 * deterministic shortening of long template names for results.md's tables (the rule is
 * in dt_demangle.h). */
#include "format/dt_demangle.h"

#include "common/dt_common.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* libstdc++'s demangler (<cxxabi.h> is C++ only); dt_core links libstdc++. */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

char *dt_demangle(const char *name, int *demangled) {
    if (demangled)
        *demangled = 0;
    if (!name)
        return NULL;
    if (strncmp(name, "_Z", 2) == 0) {
        int st = 0;
        char *d = __cxa_demangle(name, NULL, NULL, &st);
        if (d && st == 0) {
            char *out = dt_xstrdup(d);
            free(d);
            if (demangled)
                *demangled = 1;
            return out;
        }
        free(d);
    }
    return dt_xstrdup(name);
}

static int ident_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* Length of an "operator" token with its symbol at s[i] (0 when none): the symbol's
 * '<', '>', '(' must not count as brackets. */
static size_t operator_len(const char *s, size_t i, size_t e) {
    if (e - i < 8 || strncmp(s + i, "operator", 8) != 0 || (i > 0 && ident_char(s[i - 1])))
        return 0;
    size_t k = i + 8;
    if (k + 1 < e && s[k] == '(' && s[k + 1] == ')')
        return k + 2 - i;
    while (k < e && strchr("<>=-!+*/%&|^~", s[k]))
        k++;
    if (k > i + 8 && k + 1 < e && s[k] == ' ' && s[k + 1] == '<')
        k++; /* "operator< <int>": the space belongs to the symbol */
    return k - i;
}

/* Index of the bracket closing the one at s[i] (open/close), or e - 1 when unbalanced. */
static size_t matching(const char *s, size_t i, size_t e, char open, char close) {
    int depth = 0;
    for (size_t k = i; k < e; k++) {
        size_t op = operator_len(s, k, e);
        if (op) {
            k += op - 1;
            continue;
        }
        if (s[k] == open)
            depth++;
        else if (s[k] == close && --depth == 0)
            return k;
    }
    return e - 1;
}

/* [*b, *e) of s: without the parameter list, trailing qualifiers and the return type. */
static void name_range(const char *s, size_t *b, size_t *e) {
    static const char *const quals[] = {" const", " volatile", " &&", " &", " noexcept"};
    size_t n = strlen(s);
    for (int again = 1; again;) {
        again = 0;
        for (size_t q = 0; q < sizeof quals / sizeof quals[0]; q++) {
            size_t ql = strlen(quals[q]);
            if (n >= ql && strncmp(s + n - ql, quals[q], ql) == 0) {
                n -= ql;
                again = 1;
            }
        }
    }
    if (n > 0 && s[n - 1] == ')') {
        int depth = 0;
        for (size_t k = n; k-- > 0;) {
            depth += s[k] == ')' ? 1 : s[k] == '(' ? -1 : 0;
            if (depth == 0) {
                if (k > 0)
                    n = k;
                break;
            }
        }
    }
    *e = n;
    *b = 0;
    int depth = 0;
    for (size_t k = 0; k < n; k++) {
        size_t op = operator_len(s, k, n);
        if (op) {
            k += op - 1;
            continue;
        }
        char c = s[k];
        depth += (c == '<' || c == '(' || c == '{' || c == '[') ? 1
                 : (c == '>' || c == ')' || c == '}' || c == ']') ? -1 : 0;
        if (c == ' ' && depth == 0)
            *b = k + 1;
    }
}

#define DT_DM_DEPTH 64
#define DT_DM_ELLIPSIS "\xe2\x80\xa6"

typedef struct {
    char *o;
    size_t n;
    size_t seg[DT_DM_DEPTH]; /* where the current qualified segment of each depth starts */
    size_t open1, close1;    /* the last outermost template list's '<' and '>' */
    size_t *commas;          /* its top-level ',' positions */
    size_t n_commas;
    int has1;
} dm_out;

static void put(dm_out *d, const char *t, size_t len) {
    memcpy(d->o + d->n, t, len);
    d->n += len;
}

/* Rule 2 of the header on s[b, e) into d. */
static void transduce(const char *s, size_t b, size_t e, dm_out *d) {
    int ad = 0;
    d->seg[0] = 0;
    for (size_t i = b; i < e; i++) {
        size_t op = operator_len(s, i, e);
        char c = s[i];
        if (op) {
            put(d, s + i, op);
            i += op - 1;
        } else if (c == '<' && ad >= 2) {
            put(d, "<" DT_DM_ELLIPSIS ">", 5);
            i = matching(s, i, e, '<', '>');
        } else if (c == '<') {
            put(d, "<", 1);
            if (ad < DT_DM_DEPTH - 1)
                ad++;
            d->seg[ad] = d->n;
            if (ad == 1) {
                d->open1 = d->n - 1;
                d->n_commas = 0;
                d->has1 = 0;
            }
        } else if (c == '>') {
            if (d->n > 0 && d->o[d->n - 1] == ' ')
                d->n--;
            put(d, ">", 1);
            if (ad == 1) {
                d->close1 = d->n - 1;
                d->has1 = 1;
            }
            if (ad > 0)
                ad--;
        } else if (c == '(') {
            size_t m = matching(s, i, e, '(', ')');
            if (m == i + 1)
                put(d, "()", 2);
            else
                put(d, "(" DT_DM_ELLIPSIS ")", 5);
            i = m;
        } else if (c == '{') {
            size_t m = matching(s, i, e, '{', '}');
            put(d, s + i, m - i + 1);
            i = m;
        } else if (c == ':' && i + 1 < e && s[i + 1] == ':' && ad >= 1) {
            if (d->seg[ad] < d->n)
                d->n = d->seg[ad];
            i++;
        } else {
            put(d, &c, 1);
            if (c == ',' && ad == 1)
                d->commas[d->n_commas++] = d->n - 1;
            if (c == ',' || c == ' ')
                d->seg[ad] = d->n;
        }
    }
}

/* Characters of t[0, n) ("…" counts one). */
static size_t chars(const char *t, size_t n) {
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += ((unsigned char)t[i] & 0xC0) != 0x80;
    return k;
}

/* prefix + mid + suffix, malloc'd. */
static char *join3(const char *p, size_t pn, const char *mid, const char *sfx) {
    size_t mn = strlen(mid), sn = strlen(sfx);
    char *t = dt_xmalloc(pn + mn + sn + 1);
    memcpy(t, p, pn);
    memcpy(t + pn, mid, mn);
    memcpy(t + pn + mn, sfx, sn + 1);
    return t;
}

/* Rule 3 of the header: fits d's text into max_chars. */
static char *fit(dm_out *d, size_t max_chars) {
    d->o[d->n] = 0;
    if (chars(d->o, d->n) <= max_chars)
        return dt_xstrdup(d->o);
    if (d->has1) {
        for (size_t k = d->n_commas; k >= 1; k--) {
            char *t = join3(d->o, d->commas[k - 1], ", " DT_DM_ELLIPSIS, d->o + d->close1);
            if (chars(t, strlen(t)) <= max_chars)
                return t;
            free(t);
        }
        char *t = join3(d->o, d->open1, "<" DT_DM_ELLIPSIS ">", d->o + d->close1 + 1);
        if (chars(t, strlen(t)) <= max_chars)
            return t;
        free(t);
    }
    size_t cut = 0, k = 0;
    while (cut < d->n && k < max_chars - 1) {
        cut++;
        while (cut < d->n && ((unsigned char)d->o[cut] & 0xC0) == 0x80)
            cut++;
        k++;
    }
    return join3(d->o, cut, DT_DM_ELLIPSIS, "");
}

char *dt_demangle_shorten(const char *demangled, size_t max_chars) {
    if (!demangled)
        return NULL;
    if (max_chars < 8)
        max_chars = 8;
    size_t b, e;
    name_range(demangled, &b, &e);
    dm_out d = {0};
    d.o = dt_xmalloc(3 * (e - b) + 8);
    d.commas = dt_xmalloc(sizeof *d.commas * (e - b + 1));
    transduce(demangled, b, e, &d);
    char *out = fit(&d, max_chars);
    free(d.o);
    free(d.commas);
    return out;
}

char *dt_demangle_short(const char *name, size_t max_chars) {
    int ok = 0;
    char *full = dt_demangle(name, &ok);
    if (!full || !ok)
        return full;
    char *s = dt_demangle_shorten(full, max_chars);
    free(full);
    return s;
}
