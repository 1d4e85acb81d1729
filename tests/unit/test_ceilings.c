/* test_ceilings.c — the ceilings check of the protocol module
 * (dt_protocol_ceilings_parse, src/session/dt_protocol.h) on hand-made objects, no
 * worker: the four required keys, and the optional touch floor
 * (launch_sync_touch_floor_us): absent is fine (older results.json files), present it
 * must be a positive finite number and a refusal names it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../dt_check.h"
#include "session/dt_protocol.h"

#define BASE "\"copy_gbps\":9.5,\"copy_bytes\":1048576,\"launch_sync_floor_us\":8,\"launch_queue_floor_us\":2"

/* The status of dt_ceilings_check on text; the message goes to msg. */
static dt_status check_text(const char *text, char *msg, size_t msg_len) {
    dt_err err = {{0}};
    dt_ceilings_rec c;
    dt_status st = dt_protocol_ceilings_parse(text, strlen(text), "cpu", &c, &err);
    snprintf(msg, msg_len, "%s", err.msg);
    free(c.error);
    free(c.method);
    free(c.backend);
    return st;
}

int main(void) {
    char msg[DT_ERR_LEN];
    static const char *good[] = {
        "{" BASE "}",                                           /* touch floor absent */
        "{" BASE ",\"method\":\"m\",\"backend\":\"cpu\"}",      /* absent, with extras */
        "{" BASE ",\"launch_sync_touch_floor_us\":9.25}",       /* present, positive */
        "{" BASE ",\"launch_sync_touch_floor_us\":1e-3}",       /* tiny but positive */
        "{" BASE ",\"launch_sync_touch_floor_us\":12}",         /* an integer */
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        dt_status st = check_text(good[i], msg, sizeof msg);
        CHECK(st == DT_OK, "refused %s: %s", good[i], msg);
    }
    static const char *bad_touch[] = {
        "{" BASE ",\"launch_sync_touch_floor_us\":-1}",
        "{" BASE ",\"launch_sync_touch_floor_us\":0}",
        "{" BASE ",\"launch_sync_touch_floor_us\":\"9\"}",
        "{" BASE ",\"launch_sync_touch_floor_us\":null}",
        "{" BASE ",\"launch_sync_touch_floor_us\":[1]}",
    };
    for (size_t i = 0; i < sizeof bad_touch / sizeof bad_touch[0]; i++) {
        dt_status st = check_text(bad_touch[i], msg, sizeof msg);
        CHECK(st == DT_EINVAL, "accepted %s (status %d)", bad_touch[i], (int)st);
        CHECK(strstr(msg, "launch_sync_touch_floor_us") != NULL,
              "message for %s does not name the key: '%s'", bad_touch[i], msg);
    }
    /* a required key still refused when the touch floor is fine */
    dt_status st = check_text("{\"copy_gbps\":9.5,\"copy_bytes\":1048576,\"launch_sync_floor_us\":8,"
                              "\"launch_sync_touch_floor_us\":9}",
                              msg, sizeof msg);
    CHECK(st == DT_EINVAL && strstr(msg, "launch_queue_floor_us") != NULL,
          "missing launch_queue_floor_us: status %d, '%s'", (int)st, msg);
    return dt_check_summary("test_ceilings");
}
