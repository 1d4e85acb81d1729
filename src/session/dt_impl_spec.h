/* dt_impl_spec.h — the implementations of a run as the user names them (--impls LIST),
 * parsed into specs, checked, and turned into the worker commands that provide them.
 *
 * Grammar (docs/implementations.md): LIST is a comma-separated list of specs, the first
 * the baseline. A spec is [NAME=]KIND where KIND is one of
 *   native                  the native worker next to the dualtime binary
 *   torch                   the PyTorch worker (eager)
 *   torch-compile[:MODE]    the PyTorch worker started with --compile MODE (default
 *                           "default")
 *   py:FILE.py              the PyTorch worker started with --module FILE
 *   cuda:DIR                the native worker started with --kernel-dir DIR
 *   worker:CMD              CMD, split into words like a shell does (dt_words_split)
 * NAME ([A-Za-z0-9_.-]+, unique in the list, not one of the results' reserved keys:
 * record/dt_record_json.h, dt_record_id_reserved) is the implementation's id in the results;
 * it is required for py:, cuda: and worker:, and defaults to the KIND for the built-ins
 * ("torch-compile-MODE" for a mode other than the default). Commas inside quotes of a
 * worker: command do not split the list.
 *
 * Pure functions except dt_impl_specs_check (it looks at the file system). Errors are one
 * line in dt_err naming the flag and the value at fault (callers exit 2). Ownership: a
 * dt_impl_specs owns its strings (dt_impl_specs_free; safe on a zeroed one); word lists
 * from dt_words_split are the caller's (dt_words_free). Not thread-safe. */
#ifndef DT_IMPL_SPEC_H
#define DT_IMPL_SPEC_H

#include "../common/dt_common.h"

#define DT_IMPL_SPEC_MAX 8       /* implementations in one run */
#define DT_IMPL_NAME_LEN 64      /* a name's bytes, terminator included */
#define DT_IMPL_DEFAULT "torch,native"

typedef enum dt_impl_kind {
    DT_IMPL_NATIVE = 0,    /* "native" */
    DT_IMPL_TORCH,         /* "torch" */
    DT_IMPL_TORCH_COMPILE, /* "torch-compile[:MODE]": arg = MODE */
    DT_IMPL_PY,            /* "py:FILE": arg = FILE */
    DT_IMPL_CUDA,          /* "cuda:DIR": arg = DIR */
    DT_IMPL_WORKER,        /* "worker:CMD": arg = CMD */
} dt_impl_kind;

typedef struct dt_impl_spec {
    char name[DT_IMPL_NAME_LEN]; /* the id; "" for a legacy --*-worker spelling: the id then
                                    comes from the worker's hello */
    dt_impl_kind kind;
    char *arg;                   /* MODE, FILE, DIR or CMD; NULL for native and torch */
    const char *flag;            /* for messages: "--impls", "--candidate-worker", ... */
} dt_impl_spec;

typedef struct dt_impl_specs {
    dt_impl_spec v[DT_IMPL_SPEC_MAX];
    int n;
} dt_impl_specs;

/* Splits text into words like a POSIX shell without expansions: blanks (space, tab,
 * newline) separate words; '...' keeps everything literally; "..." keeps everything but
 * a backslash before " \ $ ` or newline; an unquoted backslash keeps the next character.
 * *words gets a NULL-terminated array of *n owned words. DT_EINVAL (flag named) for an
 * unterminated quote or a trailing backslash; an empty text gives 0 words. */
dt_status dt_words_split(const char *flag, const char *text, char ***words, int *n, dt_err *err);
void dt_words_free(char **words);

/* Parses LIST (see above) into out. DT_EINVAL, "FLAG: ..." naming the value, for an
 * empty list or spec, an unknown kind, a missing or bad NAME, a duplicate name, a
 * missing FILE/DIR/CMD, an unsplittable CMD or more than DT_IMPL_SPEC_MAX specs. */
dt_status dt_impl_specs_parse(const char *flag, const char *list, dt_impl_specs *out,
                              dt_err *err);

/* The two implementations of the older spellings: baseline_cmd (--baseline-worker, or
 * NULL: torch) first, then candidate_cmd (--candidate-worker, or NULL: native); names
 * "" (ids from the hellos, as before --impls). */
void dt_impl_specs_legacy(const char *candidate_cmd, const char *baseline_cmd,
                          dt_impl_specs *out);

/* Before anything starts: every py: FILE is a readable file and every cuda: DIR a
 * directory ("--impls NAME: ... does not exist"). */
dt_status dt_impl_specs_check(const dt_impl_specs *s, dt_err *err);

/* The extra arguments the spec's worker is started with, before "--threads N":
 * torch-compile: --compile MODE; py: --module FILE; cuda: --kernel-dir DIR (FILE and DIR
 * as absolute paths when they resolve); none for the others. Up to 2 words into
 * args[] (pointers into buf, cap bytes); returns the count. */
int dt_impl_spec_extra_args(const dt_impl_spec *s, const char *args[2], char *buf, size_t cap);

/* 1 when the spec is served by the PyTorch worker script (torch, torch-compile, py). */
int dt_impl_spec_is_torch(const dt_impl_spec *s);

void dt_impl_specs_free(dt_impl_specs *s);

#endif
