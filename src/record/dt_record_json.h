/* dt_record_json.h — the one codec of results.json: dt_record <-> JSON text.
 *
 * This module (with the worker protocol module) is the only code that knows
 * results.json's keys; the schema is docs/results-format.md. Encoding writes format
 * version 2 (DT_RECORD_FORMAT_VERSION): 2-space indentation, keys in a fixed order, reals
 * with 17 significant digits (every double round-trips), NAN written as null, and a
 * final newline — so decode -> encode of an encoded file is byte-identical. Decoding
 * reads versions 1 and 2, refusing malformed input with one line that names the JSON
 * path (e.g. "r.json: cases[1] (softmax_1x127).impl.torch.samples.e2e_batch[3].us must
 * be a number, found a string"); version 1 files map onto the record with their
 * baseline as impls[0] and every case f32.
 * Ownership: *text of an encode and *out of a decode/load are the caller's (free /
 * dt_record_free); on failure nothing is returned. Reentrant; never prints. */
#ifndef DT_RECORD_JSON_H
#define DT_RECORD_JSON_H

#include "common/dt_common.h"
#include "record/dt_record.h"

/* results.json text of r (NUL-terminated; *len excludes the NUL). DT_EINVAL when r
 * cannot be encoded (a string that is not UTF-8, an embedded *_json text that does not
 * parse, a broken invariant such as impls[0] not the baseline). */
dt_status dt_record_encode(const dt_record *r, char **text, size_t *len, dt_err *err);

/* Pieces of dt_record_encode's text for an incremental encoder (record/dt_record_cache.h):
 * the document with "cases" written as an empty array (every other key as
 * dt_record_encode writes it, final newline included), and case i alone as the same
 * encoder writes it at depth 0 (no final newline): inside the document every newline of
 * it is followed by 4 more spaces. Ownership and errors as dt_record_encode. */
dt_status dt_record_encode_without_cases(const dt_record *r, char **text, size_t *len,
                                         dt_err *err);
dt_status dt_record_encode_case(const dt_record *r, size_t i, char **text, size_t *len,
                                dt_err *err);

/* Parses and validates len bytes of text; `what` names the source in messages. */
dt_status dt_record_decode(const char *text, size_t len, const char *what, dt_record **out,
                           dt_err *err);

/* Reads path (a regular file of at most DT_RECORD_MAX_BYTES) and decodes it. DT_EIO when
 * it cannot be read ("cannot read"), DT_EINVAL otherwise. */
dt_status dt_record_load(const char *path, dt_record **out, dt_err *err);

/* Encodes r and writes it to path atomically (dt_file_write_atomic). */
dt_status dt_record_save(const dt_record *r, const char *path, dt_err *err);

/* A merged run's "shards": for each shard record its plan.index, hostname, start and
 * finish times, command line and environment, as canonical JSON array text (*text the
 * caller's; becomes dt_record.shards_json). */
dt_status dt_record_shards_json(const dt_record *const *shards, size_t n, char **text,
                                dt_err *err);

/* 1 when id may not name an implementation: it would collide with a fixed key of
 * derived.scopes.<scope> ("noise", "probe", "probe_over_control", "vs_baseline",
 * "ratio", "verdict"); the decoder refuses such a file. */
int dt_record_id_reserved(const char *id);

#endif
