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

/* 1 when a worker should run a file's stages (event store, analysis) on
 * its own thread (XPV_SINK_STAGES_INLINE): when the workers alone fill the
 * CPUs, a file's consumer thread would only take turns with the other
 * workers, and be started and faulted in anew for each file; but only
 * while the files queued after it (bytes_after, on disk) can keep the
 * other workers busy as long as it takes, else its last stretch would run
 * alone, one CPU idle, without the consumer thread beside it. */
int xpv_index_jobs_inline(int64_t size, int64_t bytes_after, int workers, int cpus);

#endif
