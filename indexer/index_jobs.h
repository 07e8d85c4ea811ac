/*
 * index_jobs.h — indexing a run's queue with several worker threads, for
 * xpv_indexer_run (indexer.h); each file is indexed as index_file.h says.
 */
#ifndef XPV_INDEX_JOBS_H
#define XPV_INDEX_JOBS_H

#include "index_file.h"

/* Indexes queue[0..n) with `jobs` worker threads into parts, moving each
 * into db from the calling thread in queue order (index_jobs.c). */
int xpv_indexer_run_parallel(sqlite3 *db, const xpv_found_list *found, const xpv_index_job *queue,
                             size_t n, int jobs, const xpv_index_options *o, xpv_err *err);

#endif
