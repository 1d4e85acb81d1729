/* replay_main.c — a plain main() for the libFuzzer harnesses: runs every file named on
 * the command line (directories: every regular file inside, sorted) through
 * LLVMFuzzerTestOneInput once. Built with the normal compiler by tests/fuzz so the seed
 * corpora and every saved crash input (fuzz/corpus/<harness>/) are replayed by ctest,
 * under the sanitizer build too. Exits 1 when nothing was replayed. */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return -1;
    }
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    size_t k;
    while (buf && (k = fread(buf + n, 1, cap - n, f)) > 0) {
        n += k;
        if (n == cap) buf = realloc(buf, cap *= 2);
    }
    fclose(f);
    if (!buf) return -1;
    /* an exact-size copy, so a read past the end is caught under AddressSanitizer */
    uint8_t *exact = malloc(n ? n : 1);
    memcpy(exact, buf, n);
    free(buf);
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
    return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b) {
    return strcmp((*a)->d_name, (*b)->d_name);
}

int main(int argc, char **argv) {
    int count = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "replay: %s does not exist\n", argv[i]);
            return 1;
        }
        if (!S_ISDIR(st.st_mode)) {
            if (replay_file(argv[i]) != 0) return 1;
            count++;
            continue;
        }
        struct dirent **ents;
        int n = scandir(argv[i], &ents, NULL, by_name);
        if (n < 0) return 1;
        for (int j = 0; j < n; j++) {
            char p[4096];
            snprintf(p, sizeof p, "%s/%s", argv[i], ents[j]->d_name);
            if (stat(p, &st) == 0 && S_ISREG(st.st_mode)) {
                if (replay_file(p) != 0) return 1;
                count++;
            }
            free(ents[j]);
        }
        free(ents);
    }
    printf("replayed %d inputs\n", count);
    return count > 0 ? 0 : 1;
}
