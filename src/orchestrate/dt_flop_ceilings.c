/* dt_flop_ceilings.c — the run's FLOP ceilings from the workers offering them
 * (dt_flop_ceilings.h). */
#include "orchestrate/dt_flop_ceilings.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session/dt_protocol.h"

/* into->method += "[; ]who: text" */
static void method_append(dt_flop_ceilings_rec *into, const char *who, const char *text) {
    const char *old = into->method ? into->method : "";
    const size_t n = strlen(old) + strlen(who) + strlen(text) + 8;
    char *s = dt_xcalloc(n, 1);
    snprintf(s, n, "%s%s%s: %s", old, *old ? "; " : "", who, text);
    free(into->method);
    into->method = s;
}

static double larger(double a, double b) { return b > a ? b : a; }

void dt_flop_ceilings_merge(dt_flop_ceilings_rec *into, const dt_flop_ceilings_rec *answer,
                            const char *who) {
    into->fp32_tflops = larger(into->fp32_tflops, answer->fp32_tflops);
    into->bf16_tflops = larger(into->bf16_tflops, answer->bf16_tflops);
    into->fp16_tflops = larger(into->fp16_tflops, answer->fp16_tflops);
    method_append(into, who, answer->method ? answer->method : "(no method given)");
}

void dt_flop_ceilings_note(dt_flop_ceilings_rec *into, const char *who, const char *why) {
    method_append(into, who, why);
}

void dt_flop_ceilings_measure(dt_session *s, const char *backend, double timeout_s,
                              dt_flop_ceilings_rec *out) {
    free(out->method);
    memset(out, 0, sizeof *out);
    dt_flop_ceilings_rec refusals = {0};
    int answered = 0;
    for (int i = 0; i < s->count; i++) {
        dt_worker *w = dt_session_worker(s, i, DT_STEP_MAIN);
        if (!dt_worker_alive(w)) continue;
        const char *who = s->member[i].id[0] ? s->member[i].id : s->member[i].role;
        dt_flop_ceilings_rec a;
        dt_err e = {{0}};
        if (dt_protocol_flop_ceilings(w, backend, timeout_s, &a, &e) == DT_OK) {
            dt_flop_ceilings_merge(out, &a, who);
            answered = 1;
        } else {
            dt_flop_ceilings_note(&refusals, who, e.msg);
        }
        free(a.method);
    }
    if (!answered) { /* the method says why there is none */
        out->method = refusals.method;
        refusals.method = NULL;
    }
    free(refusals.method);
}
