/*
 * indexer.h — keeping the index in step with the profile directory.
 *
 * xpv_indexer_register() records every discovered file in `profiles`,
 * marks new or changed ones (size or mtime differ) `pending`, and drops the
 * rows of files that are gone. xpv_indexer_run() then indexes the pending
 * ones, one transaction per profile, primaries before trace-JSON twins,
 * several files at once with `jobs` (index_jobs.c).
 * A file whose size and mtime are unchanged is never read again.
 */
#ifndef XPV_INDEXER_H
#define XPV_INDEXER_H

#include "discover.h"
#include <sqlite3.h>

typedef struct {
    int total; /* profiles pending when the run started */
    int done;
    const char *current;       /* relative path being indexed, NULL when idle */
    const xpv_found *finished; /* the file whose indexing was just committed, else NULL */
} xpv_index_progress;

typedef void (*xpv_progress_fn)(void *ctx, const xpv_index_progress *p);

/* Returns the number of pending profiles, or -1 with err. */
int xpv_indexer_register(sqlite3 *db, const xpv_found_list *found, xpv_err *err);

typedef struct {
    int jobs;                 /* files indexed at once; 0: one per CPU; 1: one after another */
    xpv_progress_fn progress; /* may be NULL */
    void *ctx;                /* passed to progress */
    volatile int *stop;       /* may be NULL; non-zero stops the run early */
} xpv_index_options;

/* Indexes every pending profile of `found`, calling progress before each
 * file, after each (with `finished` set, once its row is committed) and at
 * the end. With several jobs, files are read and analysed in parallel and
 * committed one at a time in the order one job would commit them, so the
 * index is the same. A profile that fails gets status `error`; that is not
 * an error of the run. Returns 0, or -1 with err on an index (SQLite)
 * failure. o may be NULL: one job, no progress. */
int xpv_indexer_run(sqlite3 *db, const xpv_found_list *found, const xpv_index_options *o,
                    xpv_err *err);

/* Indexes one file into the profile row `id` (already registered) in one
 * transaction. */
int xpv_indexer_index_file(sqlite3 *db, const xpv_found *f, int64_t id,
                           const xpv_input_limits *limits, xpv_err *err);

#endif
