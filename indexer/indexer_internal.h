/*
 * indexer_internal.h — what indexer.c and index_jobs.c share: the queue of
 * pending files in commit order, and the steps a worker runs on a part.
 */
#ifndef XPV_INDEXER_INTERNAL_H
#define XPV_INDEXER_INTERNAL_H

#include "indexer.h"

typedef struct {
    const xpv_found *f;
    int64_t id;
} xpv_index_job;

/* Calls o's progress callback: `next` is about to be indexed (or waited
 * for), NULL at the end of the run; `committed`, when not NULL, was just
 * committed to the index, and counts as done. */
void xpv_indexer_report(const xpv_index_options *o, xpv_index_progress *p, const xpv_found *next,
                        const xpv_found *committed);

/* Gives a fresh part (index_db.h) the profiles row that indexing updates. */
int xpv_indexer_seed_part(sqlite3 *part, const xpv_found *f, int64_t id, xpv_err *err);

/* Indexes queue[0..n) with `jobs` worker threads into parts, moving each
 * into db from the calling thread in queue order (index_jobs.c). */
int xpv_indexer_run_parallel(sqlite3 *db, const xpv_found_list *found, const xpv_index_job *queue,
                             size_t n, int jobs, const xpv_index_options *o, xpv_err *err);

#endif
