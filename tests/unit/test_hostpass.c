/* test_hostpass.c — the parallel host passes (src/orchestrate/dt_hostpass.h) give what the
 * sequential ones give: dt_hostpass_copy equals memcpy (sizes below, at and above a chunk,
 * odd lengths and offsets, 1 and 2 threads) and touches nothing past the end; the
 * parallel SHA-256s of a case's inputs and of several arenas' outputs equal
 * dt_buffer_sha256 of each, views included; a changed output element changes its hash
 * only; a NULL arena is skipped. */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "../dt_check.h"
#include "orchestrate/dt_hostpass.h"

static void copy_cases(void) {
    static const size_t sizes[] = {0, 1, 4095, (4u << 20), (4u << 20) + 1, (9u << 20) + 777};
    int saved = omp_get_max_threads();
    for (int t = 1; t <= 2; t++) {
        omp_set_num_threads(t);
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
            size_t n = sizes[k];
            uint8_t *src = malloc(n + 64), *dst = malloc(n + 64);
            for (size_t i = 0; i < n + 64; i++) {
                src[i] = (uint8_t)(i * 7u + 3u);
                dst[i] = 0xA5;
            }
            dt_hostpass_copy(dst + 3, src + 5, n);
            int same = memcmp(dst + 3, src + 5, n) == 0, tail = 1;
            for (size_t i = n + 3; i < n + 64; i++) tail &= dst[i] == 0xA5;
            CHECK(same && tail && dst[0] == 0xA5 && dst[2] == 0xA5,
                  "copy of %zu bytes with %d threads: same bytes, nothing else written", n, t);
            free(src);
            free(dst);
        }
    }
    omp_set_num_threads(saved);
}

static void sha_cases(int views) {
    dt_case_layout L;
    dt_layout_make(&L, DT_OP_LAYERNORM, 300, 1000, 0, views);
    uint8_t *a[3];
    for (int i = 0; i < 3; i++) {
        a[i] = malloc((size_t)L.total_bytes);
        dt_arena_fill(&L, a[i], 11);
    }
    int out = dt_layout_output(&L);
    /* inputs */
    int ib[DT_MAX_BUFFERS], ni = 0;
    for (int b = 0; b < L.nbuffers; b++)
        if (!L.buf[b].is_output) ib[ni++] = b;
    char par[DT_MAX_BUFFERS][65], seq[65];
    dt_hostpass_sha256_buffers(&L, a[0], ib, ni, par);
    for (int j = 0; j < ni; j++) {
        dt_buffer_sha256(&L, ib[j], a[0], seq);
        CHECK(strcmp(par[j], seq) == 0, "input %s (views %d): parallel = sequential SHA-256",
              L.buf[ib[j]].name, views);
    }
    CHECK(ni == 3 && strcmp(par[0], par[1]) != 0, "layernorm has 3 distinct inputs");
    /* outputs of three arenas, the second changed in one element, the third skipped */
    for (int i = 0; i < 3; i++) /* a written output: the inputs' first row */
        memcpy(a[i] + L.buf[out].data_offset, a[i] + L.buf[0].data_offset, 1000 * 4);
    a[1][L.buf[out].data_offset + 4 * 17] ^= 1;
    const uint8_t *bases[3] = {a[0], a[1], NULL};
    char hx[3][65];
    strcpy(hx[2], "untouched");
    dt_hostpass_sha256_arenas(&L, out, bases, 3, hx);
    for (int i = 0; i < 2; i++) {
        dt_buffer_sha256(&L, out, a[i], seq);
        CHECK(strcmp(hx[i], seq) == 0, "output of arena %d: parallel = sequential", i);
    }
    CHECK(strcmp(hx[0], hx[1]) != 0, "one changed output element changes the hash");
    CHECK(strcmp(hx[2], "untouched") == 0, "a NULL arena is skipped");
    for (int i = 0; i < 3; i++) free(a[i]);
}

int main(void) {
    copy_cases();
    sha_cases(0);
    sha_cases(1);
    return dt_check_summary("test_hostpass");
}
