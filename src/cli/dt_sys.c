/* dt_sys.c — system facts for the CLI (see dt_sys.h). */
#define _GNU_SOURCE
#include "dt_sys.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <openssl/evp.h>
#include <spawn.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/dt_common.h"

extern char **environ;

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

int dt_which(const char *name, char *out, size_t len) {
    if (strchr(name, '/')) {
        if (access(name, X_OK) != 0) return -1;
        snprintf(out, len, "%s", name);
        return 0;
    }
    const char *path = getenv("PATH");
    if (!path) path = "/usr/bin:/bin";
    char *copy = dt_xstrdup(path);
    int found = -1;
    for (char *save = NULL, *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        char cand[PATH_MAX];
        snprintf(cand, sizeof cand, "%s/%s", *d ? d : ".", name);
        if (access(cand, X_OK) == 0) {
            snprintf(out, len, "%s", cand);
            found = 0;
            break;
        }
    }
    free(copy);
    return found;
}

int dt_capture(char *const argv[], char *out, size_t len) {
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, p[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(p[1]);
    if (rc != 0) {
        close(p[0]);
        return -1;
    }
    size_t got = 0;
    ssize_t k;
    while ((k = read(p[0], out + got, len - 1 - got)) > 0) {
        got += (size_t)k;
        if (got >= len - 1) break;
    }
    out[got] = 0;
    close(p[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    while (got > 0 && (out[got - 1] == '\n' || out[got - 1] == '\r')) out[--got] = 0;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
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

json_t *dt_host_info(void) {
    char cpu[256], os[256], host[256] = "";
    read_field("/proc/cpuinfo", "model name", cpu, sizeof cpu);
    read_field("/etc/os-release", "PRETTY_NAME", os, sizeof os);
    gethostname(host, sizeof host - 1);
    struct utsname u;
    uname(&u);
    return json_pack("{s:s,s:I,s:s,s:s,s:s,s:s}", "cpu", cpu, "cores",
                     (json_int_t)sysconf(_SC_NPROCESSORS_ONLN), "os", os, "kernel", u.release,
                     "machine", u.machine, "hostname", host);
}

json_t *dt_git_info(const char *repo_dir, const char *build_rev) {
    char rev[128] = "", status[4096] = "";
    char *a1[] = {"git", "-C", (char *)repo_dir, "rev-parse", "HEAD", NULL};
    if (dt_capture(a1, rev, sizeof rev) == 0 && strlen(rev) >= 40) {
        char *a2[] = {"git", "-C", (char *)repo_dir, "status", "--porcelain",
                      "--untracked-files=no", NULL};
        int rc = dt_capture(a2, status, sizeof status);
        return json_pack("{s:s,s:b,s:s}", "revision", rev, "dirty", rc != 0 || status[0] != 0,
                         "source", "git");
    }
    return json_pack("{s:s,s:n,s:s}", "revision", build_rev, "dirty", "source",
                     "build (no git checkout next to the binary)");
}
