/* dt_report_util.h — small read-only helpers shared by the report writers (results.md,
 * plots, compare): NULL-safe JSON lookups and number formatting.
 * They never modify the JSON; formatted numbers go into a caller-owned buffer.
 * Reentrant. */
#ifndef DT_REPORT_UTIL_H
#define DT_REPORT_UTIL_H

#include <jansson.h>

/* o[k] when o is an object, else NULL. */
const json_t *dt_jget(const json_t *o, const char *k);
/* o[k] as a double, NAN when missing or not a number. */
double dt_jnum(const json_t *o, const char *k);
/* o[k] as a string, dflt when missing or not a string. */
const char *dt_jstr(const json_t *o, const char *k, const char *dflt);

/* results.frameworks[] entry with this id, or NULL. */
const json_t *dt_framework(const json_t *results, const char *id);
/* A case is shown with numbers only when it is valid and every implementation is ok. */
int dt_case_shown(const json_t *cas);

typedef char dt_numbuf[48];
/* About three significant digits; "—" for missing (non-finite) values. Returns b. */
const char *dt_fnum(dt_numbuf b, double x);
/* Ratios: three decimals in [0.001, 10), else as dt_fnum. Returns b. */
const char *dt_fratio(dt_numbuf b, double x);

#endif
