/* test_ceilings.c — the ceilings check of the protocol module
 * (dt_protocol_ceilings_parse, src/session/dt_protocol.h) on hand-made objects, no
 * worker: the four required keys, and the optional touch floor
 * (launch_sync_touch_floor_us): absent is fine (older results.json files), present it
 * must be a positive finite number and a refusal names it; the same for the optional
 * held floors (held_launch_floor_us, held_launch_batch_floor_us, held_touch_floor_us,
 * held_touch_batch_floor_us), which land in the record's held_* fields. */
#include <math.h>
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
    /* the held floors: optional, each checked like the touch floor and named */
    static const char *held_keys[] = {"held_launch_floor_us", "held_launch_batch_floor_us",
                                      "held_touch_floor_us", "held_touch_batch_floor_us"};
    char text[512];
    CHECK(check_text("{" BASE ",\"held_launch_floor_us\":2.5,\"held_launch_batch_floor_us\":1.1,"
                     "\"held_touch_floor_us\":3,\"held_touch_batch_floor_us\":1.9}",
                     msg, sizeof msg) == DT_OK,
          "all held floors refused: %s", msg);
    for (size_t i = 0; i < sizeof held_keys / sizeof held_keys[0]; i++) {
        snprintf(text, sizeof text, "{" BASE ",\"%s\":1.5}", held_keys[i]);
        CHECK(check_text(text, msg, sizeof msg) == DT_OK, "refused %s: %s", text, msg);
        static const char *bad_values[] = {"0", "-2", "\"1\"", "null"};
        for (size_t j = 0; j < sizeof bad_values / sizeof bad_values[0]; j++) {
            snprintf(text, sizeof text, "{" BASE ",\"%s\":%s}", held_keys[i], bad_values[j]);
            CHECK(check_text(text, msg, sizeof msg) == DT_EINVAL && strstr(msg, held_keys[i]),
                  "accepted or unnamed %s: '%s'", text, msg);
        }
    }
    /* the held floors land in their record fields */
    {
        dt_err err = {{0}};
        dt_ceilings_rec c;
        const char *t = "{" BASE ",\"held_launch_floor_us\":2.5,\"held_launch_batch_floor_us\":1.1,"
                        "\"held_touch_floor_us\":3,\"held_touch_batch_floor_us\":1.9}";
        CHECK(dt_protocol_ceilings_parse(t, strlen(t), "cuda", &c, &err) == DT_OK, "%s", err.msg);
        CHECK(c.held_floor_single_us == 2.5 && c.held_floor_batch_us == 1.1 &&
                  c.held_touch_floor_single_us == 3 && c.held_touch_floor_batch_us == 1.9,
              "held floors: %g %g %g %g", c.held_floor_single_us, c.held_floor_batch_us,
              c.held_touch_floor_single_us, c.held_touch_floor_batch_us);
        free(c.error); free(c.method); free(c.backend);
        t = "{" BASE "}";
        CHECK(dt_protocol_ceilings_parse(t, strlen(t), "cuda", &c, &err) == DT_OK &&
                  isnan(c.held_floor_single_us) && isnan(c.held_touch_floor_batch_us),
              "absent held floors are NAN");
        free(c.error); free(c.method); free(c.backend);
    }
    /* a required key still refused when the touch floor is fine */
    dt_status st = check_text("{\"copy_gbps\":9.5,\"copy_bytes\":1048576,\"launch_sync_floor_us\":8,"
                              "\"launch_sync_touch_floor_us\":9}",
                              msg, sizeof msg);
    CHECK(st == DT_EINVAL && strstr(msg, "launch_queue_floor_us") != NULL,
          "missing launch_queue_floor_us: status %d, '%s'", (int)st, msg);
    return dt_check_summary("test_ceilings");
}
