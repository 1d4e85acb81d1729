/* dt_sys.c — system facts for the CLI (see dt_sys.h). */
#define _GNU_SOURCE
#include "dt_sys.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "common/dt_common.h"
#include "common/dt_spawn.h"

int dt_exe_dir(char *buf, size_t len) {
    ssize_t n = readlink("/proc/self/exe", buf, len - 1);
    if (n <= 0) return -1;
    buf[n] = 0;
    char *slash = strrchr(buf, '/');
    if (!slash) return -1;
    *slash = 0;
    return 0;
}

int dt_file_sha256(const char *path, char out_hex[65]) {
    FILE *fp = fopen(path, "rb");
    if (!fp) return -1;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
    unsigned char buf[1 << 16];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, fp)) > 0) EVP_DigestUpdate(ctx, buf, n);
    int bad = ferror(fp);
    fclose(fp);
    unsigned char md[32];
    unsigned int mdlen = 0;
    EVP_DigestFinal_ex(ctx, md, &mdlen);
    EVP_MD_CTX_free(ctx);
    if (bad) return -1;
    for (int i = 0; i < 32; i++) snprintf(out_hex + 2 * i, 3, "%02x", md[i]);
    return 0;
}

/* Runs a short command (git) and keeps its stdout without trailing newlines; returns
 * its exit status (negative when it could not run, see dt_spawn_capture). */
static int capture(char *const argv[], char *out, size_t len) {
    int rc = dt_spawn_capture(argv, NULL, 0, 0, out, len);
    size_t got = strlen(out);
    while (got > 0 && (out[got - 1] == '\n' || out[got - 1] == '\r')) out[--got] = 0;
    return rc;
}

static void read_field(const char *path, const char *key, char *out, size_t len) {
    out[0] = 0;
    FILE *fp = fopen(path, "r");
    if (!fp) return;
    char line[512];
    size_t kl = strlen(key);
    while (fgets(line, sizeof line, fp)) {
        if (strncmp(line, key, kl) != 0) continue;
        char *v = line + kl;
        while (*v == ' ' || *v == '\t' || *v == ':' || *v == '=' || *v == '"') v++;
        size_t n = strcspn(v, "\"\n");
        v[n] = 0;
        snprintf(out, len, "%s", v);
        break;
    }
    fclose(fp);
}

void dt_host_info(dt_host *h) {
    char cpu[256], os[256], host[256] = "";
    read_field("/proc/cpuinfo", "model name", cpu, sizeof cpu);
    read_field("/etc/os-release", "PRETTY_NAME", os, sizeof os);
    gethostname(host, sizeof host - 1);
    struct utsname u;
    uname(&u);
    dt_record_set_str(&h->cpu, cpu);
    h->cores = sysconf(_SC_NPROCESSORS_ONLN);
    dt_record_set_str(&h->os, os);
    dt_record_set_str(&h->kernel, u.release);
    dt_record_set_str(&h->machine, u.machine);
    dt_record_set_str(&h->hostname, host);
}

void dt_git_info(const char *repo_dir, const char *build_rev, dt_tool *t) {
    char rev[128] = "", status[4096] = "";
    char *a1[] = {"git", "-C", (char *)repo_dir, "rev-parse", "HEAD", NULL};
    const int built = strlen(build_rev) == 40 && strspn(build_rev, "0123456789abcdef") == 40;
    const int checkout = capture(a1, rev, sizeof rev) == 0 && strlen(rev) >= 40;
    if (checkout && built && strncmp(rev, build_rev, 40) != 0) {
        /* a checkout at another revision (a build folder carried into an older or newer
         * copy of the sources, as on the device machine): the binary is the build's */
        char why[160];
        snprintf(why, sizeof why, "build (the checkout next to the binary is at %.40s)", rev);
        dt_record_set_str(&t->git_revision, build_rev);
        t->git_dirty = -1;
        dt_record_set_str(&t->git_source, why);
        return;
    }
    if (checkout) {
        char *a2[] = {"git", "-C", (char *)repo_dir, "status", "--porcelain",
                      "--untracked-files=no", NULL};
        int rc = capture(a2, status, sizeof status);
        dt_record_set_str(&t->git_revision, rev);
        t->git_dirty = rc != 0 || status[0] != 0;
        dt_record_set_str(&t->git_source, "git");
        return;
    }
    dt_record_set_str(&t->git_revision, build_rev);
    t->git_dirty = -1;
    dt_record_set_str(&t->git_source, "build (no git checkout next to the binary)");
}

int dt_cli_bad(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("dualtime: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return 2;
}
