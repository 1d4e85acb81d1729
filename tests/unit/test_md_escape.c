/* test_md_escape.c — Markdown that reads well as raw text (issue 15): dt_format_md_text
 * escapes only what would break a table or start markup, dt_format_md_code keeps kernel
 * names literal, dt_format_shell_quote quotes a command-line word by POSIX rules.
 * Run: ctest -R test_md_escape. */
#define _GNU_SOURCE
#include "format/dt_format_util.h"

#include <stdlib.h>
#include <string.h>

#include "../dt_check.h"

typedef void (*writer)(FILE *, const char *);

static void code_cell(FILE *o, const char *s) { dt_format_md_code(o, s, 1); }
static void code_text(FILE *o, const char *s) { dt_format_md_code(o, s, 0); }

static void expect(int line, writer w, const char *in, const char *want) {
    char *out = NULL;
    size_t n = 0;
    FILE *o = open_memstream(&out, &n);
    w(o, in);
    fclose(o);
    CHECK_AT(line, strcmp(out, want) == 0, "'%s' -> '%s', wanted '%s'", in, out, want);
    free(out);
}
#define MD(in, want) expect(__LINE__, dt_format_md_text, in, want)
#define SH(in, want) expect(__LINE__, dt_format_shell_quote, in, want)

int main(void) {
    /* left alone: nothing here is markup */
    MD("gelu_add_17x257", "gelu_add_17x257");
    MD("dispatch_batch", "dispatch_batch");
    MD("noise > 10% in 3 scopes", "noise > 10% in 3 scopes");
    MD("too few samples (< 5)", "too few samples (< 5)");
    MD("<= 10%, >= 5", "<= 10%, >= 5");
    MD("a & b", "a & b");
    MD("[0.98, 1.02]", "[0.98, 1.02]");
    MD("x * y", "x * y");
    MD("C:\\path", "C:\\path");
    MD("issue #12", "issue #12");
    MD("a - b", "a - b");
    /* escaped: would break a cell or start markup */
    MD("a|b", "a\\|b");
    MD("`x`", "\\`x\\`");
    MD("_lead", "\\_lead");
    MD("trail_", "trail\\_");
    MD("float*", "float\\*");
    MD("**bold**", "\\*\\*bold\\*\\*");
    MD("~~gone~~", "\\~\\~gone\\~\\~");
    MD("# head", "\\# head");
    MD("> quote", "\\> quote");
    MD("- item", "\\- item");
    MD("<b>x</b>", "&lt;b>x&lt;/b>");
    MD("<!-- c -->", "&lt;!-- c -->");
    MD("&gt;", "&amp;gt;");
    MD("&#62;", "&amp;#62;");
    MD("[t](http://x)", "\\[t](http://x)");
    MD("a\\*b", "a\\\\\\*b");
    MD("a\nb\tc", "a b c");
    expect(__LINE__, dt_format_md_text_keep_amp, "&gt;", "&gt;");
    /* code spans: literal _ * < >, | escaped only in a table */
    expect(__LINE__, code_cell, "void add_kernel<float>(float*, int|x)",
           "`void add_kernel<float>(float*, int\\|x)`");
    expect(__LINE__, code_text, "a|b", "`a|b`");
    expect(__LINE__, code_text, "x`y", "``x`y``");
    expect(__LINE__, code_text, "`x", "`` `x ``");
    /* shell quoting (POSIX single quotes) */
    SH("--output", "--output");
    SH("/tmp/a_b/c.d,e:f=g@h%i+j", "/tmp/a_b/c.d,e:f=g@h%i+j");
    SH("", "''");
    SH("two words", "'two words'");
    SH("it's", "'it'\\''s'");
    SH("soft*,*norm", "'soft*,*norm'");
    SH("$HOME;rm", "'$HOME;rm'");
    return dt_check_summary("test_md_escape");
}
