/* dt_format_util.h — small read-only helpers shared by the formatters of a run record
 * (results.md, the SVG charts, compare): number formatting, Markdown escaping, the
 * shown-case rule, the display order of implementations and the roofline fraction.
 *
 * Purpose. These are the typed twins of the old src/report/dt_report_util (which read
 * the jansson tree): every formatter prints numbers and decides "is this case shown
 * with numbers" the same way, so results.md, the charts and compare agree.
 *
 * Number buffers: a dt_format_buf is a caller-owned char[48]; the dt_format_* number
 * functions write into it and return it, so several can sit in one printf. "—" (an em
 * dash) stands for a missing value (NaN; the record's null).
 *
 * Implementations: r->impls[0] is the baseline; the display order of per-implementation
 * rows is the candidates in order (impls[1..]) and then the baseline, which for the
 * two-implementation runs of today is "candidate, baseline" as before.
 *
 * Ownership: nothing is retained; strings returned point into the record or into the
 * caller's buffer. Thread-safety: reentrant (no globals). Never includes jansson.h or
 * cuda.h. */
#ifndef DT_FORMAT_UTIL_H
#define DT_FORMAT_UTIL_H

#include "record/dt_record.h"

#include <stdio.h>

typedef char dt_format_buf[48];

/* About three significant digits: "123", "12.3", "1.23", "0.123", "1.23e-04"; "0" for
 * zero; "—" for a non-finite value. Returns b. */
const char *dt_format_num(dt_format_buf b, double x);
/* Ratios: three decimals in [0.001, 10) ("0.602"), else as dt_format_num. Returns b. */
const char *dt_format_ratio(dt_format_buf b, double x);
/* A fraction as a percentage with one decimal: 0.123 -> "12.3%"; "—" when non-finite. */
const char *dt_format_pct(dt_format_buf b, double fraction);
/* A number that already is a percentage, three digits: 12.34 -> "12.3%"; "—". */
const char *dt_format_pct_num(dt_format_buf b, double pct);
/* A byte count: "512 B", "51.2 KiB", "4.00 MiB" (binary units); "—" when non-finite. */
const char *dt_format_bytes(dt_format_buf b, double bytes);
/* A reading (MHz, °C, W): whole numbers as they are ("1980"), others as
 * dt_format_num; "—" when non-finite. Returns b. */
const char *dt_format_reading(dt_format_buf b, double x);
/* A policy constant in prose: the shortest of "%g" (0.95 * 100 -> "95", 131072 ->
 * "131072", 2.5 -> "2.5"); "—" when non-finite. Returns b. */
const char *dt_format_const(dt_format_buf b, double x);

/* Writes s for Markdown text and table cells, escaped only where CommonMark/GFM would
 * read markup, so the raw text reads as it is: | and ` always get a backslash; \ before
 * ASCII punctuation; _ unless between two word characters (gelu_add stays); * and ~
 * unless with space on both sides; [ when a "](" follows; # > at the start, - + at the
 * start before a space; < becomes &lt; only before a letter, /, ! or ? (a tag could
 * open: "< 5", "<= 10%" stay); & becomes &amp; only before an entity ("&gt;");
 * line breaks and tabs a space. NULL writes nothing. */
void dt_format_md_text(FILE *o, const char *s);
/* The same but & is never escaped (compare's reports). */
void dt_format_md_text_keep_amp(FILE *o, const char *s);
/* s as a code span, so that its _ * < are literal (kernel names, the command line):
 * fenced by one backtick more than its longest backtick run, padded with a space when
 * it starts or ends with a backtick; line breaks and tabs a space; in_table: | becomes
 * \| (GFM splits cells before code spans). NULL writes nothing. */
void dt_format_md_code(FILE *o, const char *s, int in_table);
/* One command-line word quoted for a POSIX shell: as it is when every character is one
 * of [A-Za-z0-9_@%+=:,./-] and it is not empty, else in single quotes with each ' as
 * '\'' . NULL writes nothing. */
void dt_format_shell_quote(FILE *o, const char *s);

/* A case is shown with numbers only when it is valid and every implementation that
 * recorded it has status ok. */
int dt_format_case_shown(const dt_record *r, const dt_case *c);

/* Index into r->impls of the k-th implementation in display order (0 <= k < n_impls):
 * the candidates impls[1..] in order, then the baseline impls[0]. */
size_t dt_format_impl_at(const dt_record *r, size_t k);
/* The first candidate (impls[1]), or 0 (the baseline) in a run without candidates. */
size_t dt_format_first_candidate(const dt_record *r);
/* The implementation with this id, or NULL. */
const dt_impl *dt_format_impl_find(const dt_record *r, const char *id);

/* Implementation `impl` of case c as a fraction of the copy ceiling (copy_pct / 100,
 * else gbps / the ceiling): NaN when the case has no roofline entry for it or the op is
 * compute-bound. *gbps receives the achieved GB/s (NaN when none). */
double dt_format_roofline_frac(const dt_case *c, size_t impl, double *gbps);
/* 1 when some case has a finite dt_format_roofline_frac for some implementation: the
 * roofline chart exists and results.md links it. */
int dt_format_has_roofline(const dt_record *r);

#endif
