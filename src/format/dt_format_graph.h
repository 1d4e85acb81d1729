/* dt_format_graph.h — the results.md sections of issue 13 items 1 and 2: graph replay
 * next to the held control and dispatch batches (per call), and the cache state of every
 * number (warm, or cold with the flush and rotation each implementation confirmed).
 *
 * Reads a derived `const dt_record *` only (measurement and printing never mix); writes
 * Markdown on o. Nothing is written for a run that asked for neither (older files keep
 * their results.md). Not thread-safe per stream. */
#ifndef DT_FORMAT_GRAPH_H
#define DT_FORMAT_GRAPH_H

#include <stdio.h>

#include "record/dt_record.h"

/* "## Graph replay ..." (when settings.graph is 1 or a case has graph_batch samples) and
 * "## Cache state" (when settings.cache is recorded). */
void dt_format_md_graph_cache(FILE *o, const dt_record *r);

#endif
