/* dt_ceilings.c — the run's device ceilings from the first worker offering them
 * (dt_ceilings.h). */
#include "orchestrate/dt_ceilings.h"

#include <string.h>

#include "orchestrate/dt_flop_ceilings.h"
#include "session/dt_protocol.h"

/* The copy bandwidth and launch floors: the first worker that answers. */
static void measure_copy_and_floors(dt_session *s, const char *backend, double timeout_s,
                                    dt_ceilings_rec *out) {
    dt_err first = {{0}};
    for (int i = 0; i < s->count; i++) {
        dt_worker *w = dt_session_worker(s, i, DT_STEP_MAIN);
        if (i > 0 && !dt_worker_alive(w)) break;
        dt_err e;
        if (dt_protocol_ceilings(w, backend, timeout_s, out, &e) == DT_OK) return;
        if (i == 0) first = e;
    }
    memset(out, 0, sizeof *out);
    out->present = 1;
    out->error = dt_xstrdup(first.msg);
}

void dt_ceilings_measure(dt_session *s, const char *backend, double timeout_s,
                         dt_ceilings_rec *out) {
    measure_copy_and_floors(s, backend, timeout_s, out);
    /* the FLOP ceilings by dtype, from every worker offering them (dt_flop_ceilings.h) */
    dt_flop_ceilings_measure(s, backend, timeout_s, &out->flops);
}
