/* dt_impl_spec.c — --impls specs: the word splitter, the list parser, the file checks and
 * the extra worker arguments (contract in dt_impl_spec.h). */
#define _GNU_SOURCE
#include "dt_impl_spec.h"

#include "../record/dt_record_json.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- words ---------------------------------------------------------------------------- */

/* A word being built and the list of finished ones. */
typedef struct word_buf {
    char **w;
    int n, cap;
    char *cur;
    size_t len, cur_cap;
    int in_word; /* a word has started (an empty quoted '' is a word) */
} word_buf;

static void wb_putc(word_buf *b, char ch) {
    if (b->len + 2 > b->cur_cap) {
        b->cur_cap = b->cur_cap ? 2 * b->cur_cap : 32;
        b->cur = realloc(b->cur, b->cur_cap);
        DT_ASSERT(b->cur);
    }
    b->cur[b->len++] = ch;
    b->cur[b->len] = '\0';
    b->in_word = 1;
}

static void wb_end_word(word_buf *b) {
    if (!b->in_word) return;
    if (b->n + 2 > b->cap) {
        b->cap = b->cap ? 2 * b->cap : 8;
        b->w = realloc(b->w, (size_t)b->cap * sizeof *b->w);
        DT_ASSERT(b->w);
    }
    b->w[b->n++] = dt_xstrdup(b->cur ? b->cur : "");
    b->w[b->n] = NULL;
    b->len = 0;
    if (b->cur) b->cur[0] = '\0';
    b->in_word = 0;
}

void dt_words_free(char **words) {
    for (int i = 0; words && words[i]; i++) free(words[i]);
    free(words);
}

dt_status dt_words_split(const char *flag, const char *text, char ***words, int *n, dt_err *err) {
    word_buf b = {0};
    char quote = 0; /* 0, '\'' or '"' */
    const char *p = text;
    for (; *p; p++) {
        char ch = *p;
        if (quote == '\'') {
            if (ch == '\'') quote = 0;
            else wb_putc(&b, ch);
        } else if (quote == '"') {
            if (ch == '"') {
                quote = 0;
            } else if (ch == '\\' && p[1] && strchr("\"\\$`\n", p[1])) {
                if (*++p != '\n') wb_putc(&b, *p);
            } else {
                wb_putc(&b, ch);
            }
        } else if (ch == '\'' || ch == '"') {
            quote = ch;
            b.in_word = 1;
        } else if (ch == '\\') {
            if (!p[1]) break;
            if (*++p != '\n') wb_putc(&b, *p);
        } else if (ch == ' ' || ch == '\t' || ch == '\n') {
            wb_end_word(&b);
        } else {
            wb_putc(&b, ch);
        }
    }
    const char *problem = quote == '\'' ? "unterminated ' quote"
                          : quote == '"' ? "unterminated \" quote"
                          : *p ? "a backslash at the end" : NULL;
    if (!problem) wb_end_word(&b);
    free(b.cur);
    if (problem) {
        dt_words_free(b.w);
        return dt_fail(err, DT_EINVAL, "%s: '%s': %s", flag, text, problem);
    }
    if (!b.w) {
        b.w = dt_xcalloc(1, sizeof *b.w);
    }
    *words = b.w;
    *n = b.n;
    return DT_OK;
}

/* ---- the list ------------------------------------------------------------------------- */

static int name_ok(const char *s, size_t len) {
    if (len == 0 || len >= DT_IMPL_NAME_LEN) return 0;
    for (size_t i = 0; i < len; i++)
        if (!(s[i] >= 'a' && s[i] <= 'z') && !(s[i] >= 'A' && s[i] <= 'Z') &&
            !(s[i] >= '0' && s[i] <= '9') && !strchr("_.-", s[i]))
            return 0;
    return 1;
}

/* Where the spec starting at p ends: the first comma outside quotes (or the end). */
static const char *spec_end(const char *p) {
    char quote = 0;
    for (; *p; p++) {
        if (quote) {
            if (*p == quote) quote = 0;
            else if (quote == '"' && *p == '\\' && p[1]) p++;
        } else if (*p == '\'' || *p == '"') {
            quote = *p;
        } else if (*p == '\\' && p[1]) {
            p++;
        } else if (*p == ',') {
            break;
        }
    }
    return p;
}

/* The KIND part of one spec (text, not empty) into s; s->name is set when given. */
static dt_status parse_kind(const char *flag, const char *text, dt_impl_spec *s, dt_err *err) {
    static const struct { const char *prefix; dt_impl_kind kind; const char *what; } k_args[] = {
        {"py:", DT_IMPL_PY, "Python file"},
        {"cuda:", DT_IMPL_CUDA, "directory"},
        {"worker:", DT_IMPL_WORKER, "command"}};
    if (strcmp(text, "native") == 0 || strcmp(text, "torch") == 0) {
        s->kind = text[0] == 'n' ? DT_IMPL_NATIVE : DT_IMPL_TORCH;
        if (!s->name[0]) snprintf(s->name, sizeof s->name, "%s", text);
        return DT_OK;
    }
    if (strcmp(text, "torch-compile") == 0 || strncmp(text, "torch-compile:", 14) == 0) {
        const char *mode = text[13] == ':' ? text + 14 : "default";
        if (!*mode) return dt_fail(err, DT_EINVAL, "%s: '%s': empty torch.compile mode", flag, text);
        s->kind = DT_IMPL_TORCH_COMPILE;
        s->arg = dt_xstrdup(mode);
        if (!s->name[0]) {
            if (strcmp(mode, "default") == 0) snprintf(s->name, sizeof s->name, "torch-compile");
            else snprintf(s->name, sizeof s->name, "torch-compile-%.40s", mode);
            if (!name_ok(s->name, strlen(s->name)) || strlen(mode) > 40)
                return dt_fail(err, DT_EINVAL, "%s: '%s': give it a name (NAME=%s; NAME of "
                               "A-Z a-z 0-9 _ . -)", flag, text, text);
        }
        return DT_OK;
    }
    for (size_t i = 0; i < sizeof k_args / sizeof k_args[0]; i++) {
        size_t pl = strlen(k_args[i].prefix);
        if (strncmp(text, k_args[i].prefix, pl) != 0) continue;
        if (!s->name[0])
            return dt_fail(err, DT_EINVAL, "%s: '%s' needs a name: NAME=%s", flag, text, text);
        if (!text[pl])
            return dt_fail(err, DT_EINVAL, "%s: '%s=%s' names no %s", flag, s->name, text,
                           k_args[i].what);
        s->kind = k_args[i].kind;
        s->arg = dt_xstrdup(text + pl);
        if (s->kind == DT_IMPL_WORKER) { /* the command must split, and not into nothing */
            char **w;
            int n;
            char what[DT_IMPL_NAME_LEN + 16];
            snprintf(what, sizeof what, "%s %s", flag, s->name);
            dt_status st = dt_words_split(what, s->arg, &w, &n, err);
            if (st != DT_OK) return st;
            dt_words_free(w);
            if (n == 0) return dt_fail(err, DT_EINVAL, "%s: '%s=%s': empty command", flag,
                                       s->name, text);
        }
        return DT_OK;
    }
    return dt_fail(err, DT_EINVAL, "%s: '%s': unknown implementation (known: native, torch, "
                   "torch-compile[:MODE], NAME=py:FILE.py, NAME=cuda:DIR, NAME=worker:CMD)",
                   flag, text);
}

/* One spec text[0..len) into s. */
static dt_status parse_one(const char *flag, const char *text, size_t len, dt_impl_spec *s,
                           dt_err *err) {
    char *t = dt_xmalloc(len + 1);
    memcpy(t, text, len);
    t[len] = '\0';
    memset(s, 0, sizeof *s);
    s->flag = flag;
    dt_status st = DT_OK;
    const char *kind = t;
    /* NAME= before the first ':' (a worker command may hold '=' later) */
    char *eq = strchr(t, '='), *colon = strchr(t, ':');
    if (eq && (!colon || eq < colon)) {
        if (!name_ok(t, (size_t)(eq - t))) {
            st = dt_fail(err, DT_EINVAL, "%s: '%s': the name '%.*s' must be 1 to %d of A-Z "
                         "a-z 0-9 _ . -", flag, t, (int)(eq - t), t, DT_IMPL_NAME_LEN - 1);
        } else {
            snprintf(s->name, sizeof s->name, "%.*s", (int)(eq - t), t);
        }
        kind = eq + 1;
    }
    if (st == DT_OK && !*kind)
        st = dt_fail(err, DT_EINVAL, "%s: '%s': no implementation after '='", flag, t);
    if (st == DT_OK) st = parse_kind(flag, kind, s, err);
    if (st == DT_OK && dt_record_id_reserved(s->name))
        st = dt_fail(err, DT_EINVAL, "%s: '%s': the name '%s' is reserved (a key of the "
                     "results' derived scopes); give it another", flag, t, s->name);
    free(t);
    return st;
}

dt_status dt_impl_specs_parse(const char *flag, const char *list, dt_impl_specs *out,
                              dt_err *err) {
    memset(out, 0, sizeof *out);
    if (!list || !*list) return dt_fail(err, DT_EINVAL, "%s: empty list", flag);
    dt_status st = DT_OK;
    for (const char *p = list; st == DT_OK;) {
        const char *e = spec_end(p);
        if (e == p) {
            st = dt_fail(err, DT_EINVAL, "%s: '%s': an empty implementation in the list", flag,
                         list);
        } else if (out->n == DT_IMPL_SPEC_MAX) {
            st = dt_fail(err, DT_EINVAL, "%s: '%s': more than %d implementations", flag, list,
                         DT_IMPL_SPEC_MAX);
        } else {
            st = parse_one(flag, p, (size_t)(e - p), &out->v[out->n], err);
            out->n++; /* freed with the rest on failure */
        }
        for (int i = 0; st == DT_OK && i + 1 < out->n; i++)
            if (strcmp(out->v[i].name, out->v[out->n - 1].name) == 0)
                st = dt_fail(err, DT_EINVAL, "%s: '%s': the name '%s' is used twice (give one "
                             "of them another: NAME=...)", flag, list, out->v[i].name);
        if (!*e) break;
        p = e + 1;
        if (st == DT_OK && !*p)
            st = dt_fail(err, DT_EINVAL, "%s: '%s': an empty implementation in the list", flag,
                         list);
    }
    if (st != DT_OK) dt_impl_specs_free(out);
    return st;
}

void dt_impl_specs_legacy(const char *candidate_cmd, const char *baseline_cmd,
                          dt_impl_specs *out) {
    memset(out, 0, sizeof *out);
    dt_impl_spec *b = &out->v[0], *c = &out->v[1];
    b->kind = baseline_cmd ? DT_IMPL_WORKER : DT_IMPL_TORCH;
    b->arg = baseline_cmd ? dt_xstrdup(baseline_cmd) : NULL;
    b->flag = "--baseline-worker";
    c->kind = candidate_cmd ? DT_IMPL_WORKER : DT_IMPL_NATIVE;
    c->arg = candidate_cmd ? dt_xstrdup(candidate_cmd) : NULL;
    c->flag = "--candidate-worker";
    out->n = 2;
}

dt_status dt_impl_specs_check(const dt_impl_specs *s, dt_err *err) {
    for (int i = 0; i < s->n; i++) {
        const dt_impl_spec *p = &s->v[i];
        struct stat st;
        if (p->kind == DT_IMPL_PY && (stat(p->arg, &st) != 0 || !S_ISREG(st.st_mode) ||
                                      access(p->arg, R_OK) != 0))
            return dt_fail(err, DT_EINVAL, "%s %s: the Python file '%s' does not exist or is "
                           "not readable", p->flag, p->name, p->arg);
        if (p->kind == DT_IMPL_CUDA && (stat(p->arg, &st) != 0 || !S_ISDIR(st.st_mode)))
            return dt_fail(err, DT_EINVAL, "%s %s: the directory '%s' does not exist", p->flag,
                           p->name, p->arg);
    }
    return DT_OK;
}

int dt_impl_spec_extra_args(const dt_impl_spec *s, const char *args[2], char *buf, size_t cap) {
    const char *opt = s->kind == DT_IMPL_TORCH_COMPILE ? "--compile"
                      : s->kind == DT_IMPL_PY          ? "--module"
                      : s->kind == DT_IMPL_CUDA        ? "--kernel-dir" : NULL;
    if (!opt) return 0;
    char abs_path[PATH_MAX];
    const char *val = s->arg;
    if (s->kind != DT_IMPL_TORCH_COMPILE && realpath(s->arg, abs_path)) val = abs_path;
    snprintf(buf, cap, "%s", val);
    args[0] = opt;
    args[1] = buf;
    return 2;
}

int dt_impl_spec_is_torch(const dt_impl_spec *s) {
    return s->kind == DT_IMPL_TORCH || s->kind == DT_IMPL_TORCH_COMPILE || s->kind == DT_IMPL_PY;
}

void dt_impl_specs_free(dt_impl_specs *s) {
    for (int i = 0; i < s->n; i++) {
        free(s->v[i].arg);
        s->v[i].arg = NULL;
    }
    s->n = 0;
}
