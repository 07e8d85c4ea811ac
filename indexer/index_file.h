/*
 * index_file.h — indexing one file: its profile row cleared, its reader
 * run into a fresh sink, its status set, all in one transaction; a part
 * (index_db.h) seeded with the row; the run's progress report around each
 * file; and the read-ahead of the file queued next. The serial run
 * (indexer.c) and the workers (index_jobs.c) both index files this way.
 */
#ifndef XPV_INDEX_FILE_H
#define XPV_INDEX_FILE_H

#include "discover.h"
#include "ingest.h"
#include <sqlite3.h>

struct xpv_index_part_rows;

typedef struct {
    int total; /* profiles pending when the run started */
    int done;
    const char *current;       /* relative path being indexed, NULL when idle */
    const xpv_found *finished; /* the file whose indexing was just committed, else NULL */
} xpv_index_progress;

typedef void (*xpv_progress_fn)(void *ctx, const xpv_index_progress *p);

typedef struct {
    int jobs;                 /* files indexed at once; 0: one per CPU; 1: one after another */
    xpv_progress_fn progress; /* may be NULL */
    void *ctx;                /* passed to progress */
    volatile int *stop;       /* may be NULL; non-zero stops the run early */
} xpv_index_options;

/* A file to index and its profile row, in the queue of a run. */
typedef struct {
    const xpv_found *f;
    int64_t id;
} xpv_index_job;

/* Indexes one file into the profile row `id` (already registered) in one
 * transaction, the sink's stages run as `stages` says; its kernel rows and
 * strings into `deferred` when not NULL (a part's, which the index's
 * writer inserts: index_db.h), else into db. */
int xpv_indexer_index_file(sqlite3 *db, const xpv_found *f, int64_t id,
                           const xpv_input_limits *limits, enum xpv_sink_stages stages,
                           struct xpv_index_part_rows *deferred, xpv_err *err);

/* Calls o's progress callback: `next` is about to be indexed (or waited
 * for), NULL at the end of the run; `committed`, when not NULL, was just
 * committed to the index, and counts as done. */
void xpv_indexer_report(const xpv_index_options *o, xpv_index_progress *p, const xpv_found *next,
                        const xpv_found *committed);

/* Asks the kernel to start reading f's first XPV_READ_AHEAD_BYTES, so that
 * it is in memory by the time its turn comes: the run calls it for the
 * file queued next while one is indexed. A file it cannot open is left to
 * its turn to report. */
void xpv_indexer_read_ahead(const xpv_found *f);
#define XPV_READ_AHEAD_BYTES ((int64_t)64 << 20)

/* Gives a fresh part (index_db.h) the profiles row that indexing updates. */
int xpv_indexer_seed_part(sqlite3 *part, const xpv_found *f, int64_t id, xpv_err *err);

#endif
