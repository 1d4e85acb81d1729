/* dt_ops_json.h — the op registry's wire form: the one encoder of src/plan/dt_ops.c's
 * table as JSON, for `dualtime list --json` and for the `ops` of the orchestrator's
 * hello request (docs/protocol.md, "The op table"). Workers that are not C (the PyTorch
 * worker) learn names, buffer roles and their order, dtypes and shapes from it instead
 * of keeping a copy.
 *
 * This is a protocol module: it and its callers at the protocol edge are the only ones
 * that see jansson here. Ownership: every function returns a new reference the caller
 * json_decref()s. Thread-safety: reentrant (reads static data only). */
#ifndef DT_OPS_JSON_H
#define DT_OPS_JSON_H

#include <jansson.h>

/* Version of the op-table document; bumped when a field changes meaning. */
#define DT_OPS_JSON_VERSION 1

/* The ops in registry order: [{"name","definition","gemm","buffers":[{"name","dtype",
 * "rows","cols","is_output","viewable"}...],"atol","rtol","scale"}...]. Dims are "M",
 * "N", "K" or "1"; dtypes "f32" or "i64"; inputs first, the single output last. */
json_t *dt_ops_json(void);

/* The whole `dualtime list --json` document: {"format":"dualtime-ops","version",
 * "ops":dt_ops_json(),"pass_rule","shapes":{"cpu"|"cuda":{"rows","gemm","quick_rows",
 * "quick_gemm"}}}; row shapes are [m,n], gemm shapes [m,n,k]. */
json_t *dt_ops_list_json(void);

/* dt_ops_list_json() as text (indent 1, 15 significant digits so the tolerances print as
 * written, final newline), malloc'd; for the CLI, which does not see jansson. */
char *dt_ops_list_json_text(void);

#endif
