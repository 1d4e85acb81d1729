/* dt_outputs.c — results.json, results.md and plots of a derived record (dt_outputs.h). */
#define _GNU_SOURCE
#include "format/dt_outputs.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "common/dt_outpath.h"
#include "format/dt_format_md.h"
#include "format/dt_format_svg.h"
#include "record/dt_file.h"
#include "record/dt_record_json.h"

/* Writes dir/name (name may contain one directory level, e.g. plots/x.svg). */
static dt_status write_in(const char *dir, const char *name, const char *text, size_t len,
                          dt_err *err) {
    size_t n = strlen(dir) + strlen(name) + 2;
    char *path = dt_xmalloc(n);
    snprintf(path, n, "%s/%s", dir, name);
    dt_status st = dt_file_write_atomic(path, text, len, err);
    free(path);
    return st;
}

/* The ratio charts of the candidates after the first (plots/ratios-ID.svg,
 * dt_format_svg_ratios_name) in dir. */
static dt_status write_more_ratios(const dt_record *r, const char *dir, dt_err *err) {
    dt_status st = DT_OK;
    for (size_t k = 2; st == DT_OK && k < r->n_impls; k++) {
        char name[128], *svg = NULL;
        size_t len = 0;
        dt_format_svg_ratios_name(r, k, name, sizeof name);
        st = dt_format_svg_ratios_vs(r, k, &svg, &len, err);
        if (st == DT_OK) st = write_in(dir, name, svg, len, err);
        free(svg);
    }
    return st;
}

/* plots/ratios.svg (and one more per further candidate) and, when some case has
 * roofline data, plots/roofline.svg in dir. */
static dt_status write_plots(const dt_record *r, const char *dir, dt_err *err) {
    size_t n = strlen(dir) + sizeof DT_FORMAT_SVG_DIR + 2;
    char *pdir = dt_xmalloc(n);
    snprintf(pdir, n, "%s/%s", dir, DT_FORMAT_SVG_DIR);
    if (mkdir(pdir, 0755) != 0 && errno != EEXIST) {
        dt_status st = dt_fail(err, DT_EIO, "%s: cannot create: %s", pdir, strerror(errno));
        free(pdir);
        return st;
    }
    free(pdir);
    char *svg = NULL;
    size_t len = 0;
    dt_status st = dt_format_svg_ratios(r, &svg, &len, err);
    if (st == DT_OK) st = write_in(dir, DT_FORMAT_SVG_RATIOS, svg, len, err);
    free(svg);
    svg = NULL;
    if (st == DT_OK) st = write_more_ratios(r, dir, err);
    if (st == DT_OK) st = dt_format_svg_roofline(r, &svg, &len, err);
    if (st == DT_OK && svg) st = write_in(dir, DT_FORMAT_SVG_ROOFLINE, svg, len, err);
    free(svg);
    return st;
}

/* results.md at path. */
static dt_status write_md(const dt_record *r, const char *path, dt_err *err) {
    char *md = NULL;
    size_t len = 0;
    dt_status st = dt_format_md(r, &md, &len, err);
    if (st == DT_OK) st = dt_file_write_atomic(path, md, len, err);
    free(md);
    return st;
}

dt_status dt_outputs_write(const dt_record *r, const char *dir, dt_err *err) {
    size_t n = strlen(dir) + sizeof "/results.json";
    char *path = dt_xmalloc(n);
    snprintf(path, n, "%s/results.json", dir);
    dt_status st = dt_record_save(r, path, err);
    if (st == DT_OK) {
        snprintf(path, n, "%s/results.md", dir);
        st = write_md(r, path, err);
    }
    free(path);
    if (st == DT_OK) st = write_plots(r, dir, err);
    return st;
}

dt_status dt_outputs_write_record(const dt_record *r, const char *dir, dt_err *err) {
    size_t n = strlen(dir) + sizeof "/results.json";
    char *path = dt_xmalloc(n);
    snprintf(path, n, "%s/results.json", dir);
    dt_status st = dt_record_save(r, path, err);
    free(path);
    return st;
}

dt_status dt_outputs_write_report(const dt_record *r, const char *md_path, dt_err *err) {
    dt_status st = write_md(r, md_path, err);
    if (st != DT_OK) return st;
    /* the charts results.md links, next to it */
    char *dir = dt_xstrdup(md_path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    st = write_plots(r, slash ? (*dir ? dir : "/") : ".", err);
    free(dir);
    return st;
}

/* dir/name checked with dt_outpath_check against inputs. */
static dt_status check_in(const char *flag, const char *dir, const char *name,
                          const char *const *inputs, size_t n_inputs, dt_err *err) {
    size_t n = strlen(dir) + strlen(name) + 2;
    char *path = dt_xmalloc(n);
    snprintf(path, n, "%s/%s", dir, name);
    dt_status st = dt_outpath_check(flag, path, inputs, n_inputs, err);
    free(path);
    return st;
}

/* dir/plots (a folder or a new path) and the charts in it. */
static dt_status check_plots(const char *flag, const char *dir, const char *const *inputs,
                             size_t n_inputs, dt_err *err) {
    size_t n = strlen(dir) + sizeof DT_FORMAT_SVG_DIR + 2;
    char *pdir = dt_xmalloc(n);
    snprintf(pdir, n, "%s/%s", dir, DT_FORMAT_SVG_DIR);
    dt_status st = dt_outpath_check_dir(flag, pdir, err);
    struct stat sb;
    int exists = lstat(pdir, &sb) == 0; /* a new plots/ holds no chart yet */
    free(pdir);
    if (st == DT_OK && exists)
        st = check_in(flag, dir, DT_FORMAT_SVG_RATIOS, inputs, n_inputs, err);
    if (st == DT_OK && exists)
        st = check_in(flag, dir, DT_FORMAT_SVG_ROOFLINE, inputs, n_inputs, err);
    return st;
}

dt_status dt_outputs_check(const char *dir, dt_err *err) {
    dt_status st = dt_outpath_check_dir("--output", dir, err);
    if (st == DT_OK) st = check_in("--output", dir, "results.json", NULL, 0, err);
    if (st == DT_OK) st = check_in("--output", dir, "results.md", NULL, 0, err);
    if (st == DT_OK) st = check_plots("--output", dir, NULL, 0, err);
    return st;
}

dt_status dt_outputs_check_report(const char *md_path, const char *const *inputs,
                                  size_t n_inputs, dt_err *err) {
    dt_status st = dt_outpath_check("--output", md_path, inputs, n_inputs, err);
    if (st != DT_OK) return st;
    char *dir = dt_xstrdup(md_path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    st = check_plots("--output", slash ? (*dir ? dir : "/") : ".", inputs, n_inputs, err);
    free(dir);
    return st;
}
