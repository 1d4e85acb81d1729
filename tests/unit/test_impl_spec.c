/* test_impl_spec.c — --impls specs (src/session/dt_impl_spec.h): the shell-like word
 * splitter (blanks, '...', "...", backslashes, empty quoted words, errors), the list
 * parser (built-ins and their default names, NAME= forms, commas inside quotes, every
 * refusal naming the flag and the value), the older spellings, the file checks and the
 * extra worker arguments. Run: ctest -R test_impl_spec. */
#define _GNU_SOURCE
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../dt_check.h"
#include "session/dt_impl_spec.h"

/* Splits text and compares with want[0..n) (NULL-terminated). */
static void split_is(int line, const char *text, const char *const *want) {
    char **w = NULL;
    int n = -1;
    dt_err e = {{0}};
    dt_status st = dt_words_split("--x", text, &w, &n, &e);
    int nw = 0;
    while (want[nw]) nw++;
    int same = st == DT_OK && n == nw && w[n] == NULL;
    for (int i = 0; same && i < n; i++) same = strcmp(w[i], want[i]) == 0;
    CHECK_AT(line, same, "split [%s]: %s, %d words, first '%s'", text, e.msg, n,
             st == DT_OK && n > 0 ? w[0] : "");
    if (st == DT_OK) dt_words_free(w);
}

static void test_split(void) {
    split_is(__LINE__, "a b  c", (const char *[]){"a", "b", "c", NULL});
    split_is(__LINE__, "  \t", (const char *[]){NULL});
    split_is(__LINE__, "", (const char *[]){NULL});
    split_is(__LINE__, "'/my dir/w' --x", (const char *[]){"/my dir/w", "--x", NULL});
    split_is(__LINE__, "\"a \\\"b\\\" \\\\ \\n\"", (const char *[]){"a \"b\" \\ \\n", NULL});
    split_is(__LINE__, "'it''s' \"\" ''", (const char *[]){"its", "", "", NULL});
    split_is(__LINE__, "a\\ b c\\'d", (const char *[]){"a b", "c'd", NULL});
    split_is(__LINE__, "x'y z'w \"$HOME\"", (const char *[]){"xy zw", "$HOME", NULL});
    split_is(__LINE__, "'a\\b' \"c'd\"", (const char *[]){"a\\b", "c'd", NULL});
    const char *bad[][2] = {{"'open", "unterminated ' quote"},
                            {"a \"open", "unterminated \" quote"},
                            {"end\\", "a backslash at the end"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char **w = NULL;
        int n;
        dt_err e = {{0}};
        char want[128];
        snprintf(want, sizeof want, "--x: '%s': %s", bad[i][0], bad[i][1]);
        CHECK(dt_words_split("--x", bad[i][0], &w, &n, &e) == DT_EINVAL &&
                  strcmp(e.msg, want) == 0, "[%s] refused: %s", bad[i][0], e.msg);
    }
}

static void test_parse(void) {
    dt_impl_specs s;
    dt_err e = {{0}};
    REQUIRE(dt_impl_specs_parse("--impls", DT_IMPL_DEFAULT, &s, &e) == DT_OK, "%s", e.msg);
    CHECK(s.n == 2 && s.v[0].kind == DT_IMPL_TORCH && strcmp(s.v[0].name, "torch") == 0 &&
              s.v[1].kind == DT_IMPL_NATIVE && strcmp(s.v[1].name, "native") == 0 &&
              !s.v[0].arg && strcmp(s.v[0].flag, "--impls") == 0, "the default");
    dt_impl_specs_free(&s);
    const char *list = "torch,torch-compile,torch-compile:max-autotune,ro=torch-compile:"
                       "reduce-overhead,tri=py:k/soft max.py,mine=cuda:kernels/x,"
                       "w.1=worker:'/a dir/w' --flag=1 \"x,y\",nat-2=native";
    REQUIRE(dt_impl_specs_parse("--impls", list, &s, &e) == DT_OK, "%s", e.msg);
    CHECK(s.n == 8, "8 specs: %d", s.n);
    CHECK(s.v[1].kind == DT_IMPL_TORCH_COMPILE && strcmp(s.v[1].name, "torch-compile") == 0 &&
              strcmp(s.v[1].arg, "default") == 0, "torch-compile: mode default");
    CHECK(strcmp(s.v[2].name, "torch-compile-max-autotune") == 0 &&
              strcmp(s.v[2].arg, "max-autotune") == 0, "torch-compile:MODE: %s", s.v[2].name);
    CHECK(strcmp(s.v[3].name, "ro") == 0 && strcmp(s.v[3].arg, "reduce-overhead") == 0, "NAME=");
    CHECK(s.v[4].kind == DT_IMPL_PY && strcmp(s.v[4].arg, "k/soft max.py") == 0, "py:");
    CHECK(s.v[5].kind == DT_IMPL_CUDA && strcmp(s.v[5].arg, "kernels/x") == 0, "cuda:");
    CHECK(s.v[6].kind == DT_IMPL_WORKER && strcmp(s.v[6].name, "w.1") == 0 &&
              strcmp(s.v[6].arg, "'/a dir/w' --flag=1 \"x,y\"") == 0,
          "worker: the comma in quotes stays: [%s]", s.v[6].arg);
    CHECK(s.v[7].kind == DT_IMPL_NATIVE && strcmp(s.v[7].name, "nat-2") == 0, "NAME=native");
    const char *extra[2];
    char buf[PATH_MAX];
    CHECK(dt_impl_spec_extra_args(&s.v[0], extra, buf, sizeof buf) == 0, "torch: no extra args");
    CHECK(dt_impl_spec_extra_args(&s.v[2], extra, buf, sizeof buf) == 2 &&
              strcmp(extra[0], "--compile") == 0 && strcmp(extra[1], "max-autotune") == 0,
          "--compile MODE");
    CHECK(dt_impl_spec_extra_args(&s.v[4], extra, buf, sizeof buf) == 2 &&
              strcmp(extra[0], "--module") == 0 && strcmp(extra[1], "k/soft max.py") == 0,
          "--module FILE (as given when it does not resolve)");
    CHECK(dt_impl_spec_extra_args(&s.v[5], extra, buf, sizeof buf) == 2 &&
              strcmp(extra[0], "--kernel-dir") == 0, "--kernel-dir DIR");
    CHECK(dt_impl_spec_is_torch(&s.v[1]) && dt_impl_spec_is_torch(&s.v[4]) &&
              !dt_impl_spec_is_torch(&s.v[5]) && !dt_impl_spec_is_torch(&s.v[6]),
          "which start the PyTorch worker");
    dt_impl_specs_free(&s);
    CHECK(s.n == 0, "freed");
done:;
}

static void test_refusals(void) {
    static const char *const k_bad[][2] = {
        {"", "--impls: empty list"},
        {"torch,", "--impls: 'torch,': an empty implementation in the list"},
        {"torch,,native", "--impls: 'torch,,native': an empty implementation in the list"},
        {",torch", "--impls: ',torch': an empty implementation in the list"},
        {"torch,triton", "--impls: 'triton': unknown implementation (known: native, torch, "
                         "torch-compile[:MODE], NAME=py:FILE.py, NAME=cuda:DIR, NAME=worker:CMD)"},
        {"torch,torch", "--impls: 'torch,torch': the name 'torch' is used twice (give one of "
                        "them another: NAME=...)"},
        {"torch,torch=native", "--impls: 'torch,torch=native': the name 'torch' is used twice "
                               "(give one of them another: NAME=...)"},
        {"torch,py:x.py", "--impls: 'py:x.py' needs a name: NAME=py:x.py"},
        {"torch,worker:/bin/w", "--impls: 'worker:/bin/w' needs a name: NAME=worker:/bin/w"},
        {"torch,a b=native", "--impls: 'a b=native': the name 'a b' must be 1 to 63 of A-Z a-z "
                             "0-9 _ . -"},
        {"torch,=native", "--impls: '=native': the name '' must be 1 to 63 of A-Z a-z 0-9 _ . -"},
        {"torch,x=", "--impls: 'x=': no implementation after '='"},
        {"torch,x=py:", "--impls: 'x=py:' names no Python file"},
        {"torch,x=cuda:", "--impls: 'x=cuda:' names no directory"},
        {"torch,x=worker:", "--impls: 'x=worker:' names no command"},
        {"torch,x=worker:   ", "--impls: 'x=worker:   ': empty command"},
        {"torch,x=worker:'/bin/w", "--impls x: ''/bin/w': unterminated ' quote"},
        {"torch,ratio=native", "--impls: 'ratio=native': the name 'ratio' is reserved (a key "
                               "of the results' derived scopes); give it another"},
        {"torch,torch-compile:", "--impls: 'torch-compile:': empty torch.compile mode"},
        {"torch,torch-compile:a/b", "--impls: 'torch-compile:a/b': give it a name "
                                    "(NAME=torch-compile:a/b; NAME of A-Z a-z 0-9 _ . -)"},
        {"a=native,b=native,c=native,d=native,e=native,f=native,g=native,h=native,i=native",
         "--impls: 'a=native,b=native,c=native,d=native,e=native,f=native,g=native,h=native,"
         "i=native': more than 8 implementations"},
    };
    for (size_t i = 0; i < sizeof k_bad / sizeof k_bad[0]; i++) {
        dt_impl_specs s;
        dt_err e = {{0}};
        dt_status st = dt_impl_specs_parse("--impls", k_bad[i][0], &s, &e);
        CHECK(st == DT_EINVAL && strcmp(e.msg, k_bad[i][1]) == 0 && s.n == 0,
              "[%s] refused:\n   got  %s\n   want %s", k_bad[i][0], e.msg, k_bad[i][1]);
    }
}

static void test_legacy_and_check(void) {
    dt_impl_specs s;
    dt_impl_specs_legacy(NULL, NULL, &s);
    CHECK(s.n == 2 && s.v[0].kind == DT_IMPL_TORCH && s.v[1].kind == DT_IMPL_NATIVE &&
              !s.v[0].name[0] && !s.v[1].name[0] && strcmp(s.v[1].flag, "--candidate-worker") == 0,
          "older spellings, defaults: torch baseline, native candidate, no names");
    dt_impl_specs_free(&s);
    dt_impl_specs_legacy("/bin/c --x", "/bin/b", &s);
    CHECK(s.v[0].kind == DT_IMPL_WORKER && strcmp(s.v[0].arg, "/bin/b") == 0 &&
              s.v[1].kind == DT_IMPL_WORKER && strcmp(s.v[1].arg, "/bin/c --x") == 0,
          "older spellings, commands: baseline first");
    dt_err e = {{0}};
    CHECK(dt_impl_specs_check(&s, &e) == DT_OK, "commands are not checked here: %s", e.msg);
    dt_impl_specs_free(&s);

    char dir[] = "/tmp/dt-impl-spec-XXXXXX";
    REQUIRE(mkdtemp(dir), "mkdtemp");
    char file[PATH_MAX], list[3 * PATH_MAX];
    snprintf(file, sizeof file, "%s/mod.py", dir);
    FILE *fp = fopen(file, "w");
    REQUIRE(fp, "fopen");
    fputs("def add(a, b, out):\n    out.copy_(a + b)\n", fp);
    fclose(fp);
    snprintf(list, sizeof list, "torch,m=py:%s,k=cuda:%s", file, dir);
    REQUIRE(dt_impl_specs_parse("--impls", list, &s, &e) == DT_OK, "%s", e.msg);
    CHECK(dt_impl_specs_check(&s, &e) == DT_OK, "existing file and dir: %s", e.msg);
    const char *extra[2];
    char buf[PATH_MAX];
    char real[PATH_MAX];
    REQUIRE(realpath(file, real), "realpath");
    CHECK(dt_impl_spec_extra_args(&s.v[1], extra, buf, sizeof buf) == 2 &&
              strcmp(extra[1], real) == 0, "the module as an absolute path: %s", extra[1]);
    dt_impl_specs_free(&s);
    snprintf(list, sizeof list, "torch,m=py:%s/none.py", dir);
    REQUIRE(dt_impl_specs_parse("--impls", list, &s, &e) == DT_OK, "%s", e.msg);
    CHECK(dt_impl_specs_check(&s, &e) == DT_EINVAL && strstr(e.msg, "--impls m: the Python file") &&
              strstr(e.msg, "none.py' does not exist"), "a missing module: %s", e.msg);
    dt_impl_specs_free(&s);
    snprintf(list, sizeof list, "torch,k=cuda:%s/nodir", dir);
    REQUIRE(dt_impl_specs_parse("--impls", list, &s, &e) == DT_OK, "%s", e.msg);
    CHECK(dt_impl_specs_check(&s, &e) == DT_EINVAL && strstr(e.msg, "--impls k: the directory") &&
              strstr(e.msg, "nodir' does not exist"), "a missing directory: %s", e.msg);
    dt_impl_specs_free(&s);
    snprintf(list, sizeof list, "torch,k=cuda:%s", file);
    REQUIRE(dt_impl_specs_parse("--impls", list, &s, &e) == DT_OK, "%s", e.msg);
    CHECK(dt_impl_specs_check(&s, &e) == DT_EINVAL, "a file is not a kernel directory");
    dt_impl_specs_free(&s);
    unlink(file);
    rmdir(dir);
done:;
}

int main(void) {
    test_split();
    test_parse();
    test_refusals();
    test_legacy_and_check();
    return dt_check_summary("test_impl_spec");
}
