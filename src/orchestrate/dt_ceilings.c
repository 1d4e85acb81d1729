/* dt_ceilings.c — the `ceilings` request and the check of its answer (dt_ceilings.h). */
#include "orchestrate/dt_ceilings.h"

#include <math.h>
#include <string.h>

static const char *const k_required[] = {"copy_gbps", "copy_bytes", "launch_sync_floor_us",
                                         "launch_queue_floor_us"};
/* Optional: older results.json files and other workers lack them. The held floors are
 * event intervals of held windows (docs/protocol.md, "ceilings"). */
static const char *const k_optional[] = {"launch_sync_touch_floor_us", "held_launch_floor_us",
                                         "held_launch_batch_floor_us", "held_touch_floor_us",
                                         "held_touch_batch_floor_us"};

/* c[key] must be a positive finite number; absent is fine unless required. */
static dt_status check_positive(const json_t *c, const char *key, int required, dt_err *err) {
    const json_t *v = json_object_get(c, key);
    if (!v)
        return required ? dt_fail(err, DT_EINVAL, "ceilings: missing '%s'", key) : DT_OK;
    if (!json_is_number(v))
        return dt_fail(err, DT_EINVAL, "ceilings: '%s' is not a number", key);
    double x = json_number_value(v);
    if (!isfinite(x) || x <= 0)
        return dt_fail(err, DT_EINVAL, "ceilings: '%s' = %g is not a positive finite number",
                       key, x);
    return DT_OK;
}

dt_status dt_ceilings_check(const json_t *c, dt_err *err) {
    if (!json_is_object(c)) return dt_fail(err, DT_EINVAL, "ceilings: not an object");
    for (size_t i = 0; i < sizeof k_required / sizeof k_required[0]; i++)
        if (check_positive(c, k_required[i], 1, err) != DT_OK) return DT_EINVAL;
    for (size_t i = 0; i < sizeof k_optional / sizeof k_optional[0]; i++)
        if (check_positive(c, k_optional[i], 0, err) != DT_OK) return DT_EINVAL;
    const json_t *m = json_object_get(c, "method");
    if (m && !json_is_string(m)) return dt_fail(err, DT_EINVAL, "ceilings: 'method' is not a string");
    return DT_OK;
}

dt_status dt_ceilings_measure(dt_worker *w, const char *backend, double timeout_s,
                              json_t **ceilings, dt_err *err) {
    *ceilings = NULL;
    if (!backend) return dt_fail(err, DT_EINVAL, "ceilings: no backend");
    json_t *req = json_pack("{s:s,s:s}", "cmd", "ceilings", "backend", backend);
    if (!req) return dt_fail(err, DT_EINVAL, "ceilings: backend name is not UTF-8");
    json_t *resp = NULL;
    dt_status st = dt_worker_call(w, req, timeout_s, &resp, err);
    json_decref(req);
    if (st != DT_OK) {
        json_decref(resp);
        return st;
    }
    json_t *c = json_object_get(resp, "ceilings");
    st = dt_ceilings_check(c, err);
    if (st == DT_OK) {
        *ceilings = json_deep_copy(c);
        DT_ASSERT(*ceilings);
        if (!json_object_get(*ceilings, "backend"))
            json_object_set_new(*ceilings, "backend", json_string(backend));
    }
    json_decref(resp);
    return st;
}
