/*
 * indexer.h — keeping the index in step with the profile directory.
 *
 * xpv_indexer_register() records every discovered file in `profiles`,
 * marks new or changed ones (size or mtime differ) `pending`, and drops the
 * rows of files that are gone. xpv_indexer_run() then indexes the pending
 * ones, one transaction per profile, primaries before trace-JSON twins,
 * several files at once with `jobs` (index_jobs.c), each file as
 * index_file.h says.
 * A file whose size and mtime are unchanged is never read again.
 */
#ifndef XPV_INDEXER_H
#define XPV_INDEXER_H

#include "discover.h"
#include "index_file.h"
#include <sqlite3.h>

/* Returns the number of pending profiles, or -1 with err. */
int xpv_indexer_register(sqlite3 *db, const xpv_found_list *found, xpv_err *err);

/* Indexes every pending profile of `found`, calling progress before each
 * file, after each (with `finished` set, once its row is committed) and at
 * the end. With several jobs, files are read and analysed in parallel and
 * committed one at a time in the order one job would commit them, so the
 * index is the same. A profile that fails gets status `error`; that is not
 * an error of the run. Returns 0, or -1 with err on an index (SQLite)
 * failure. o may be NULL: one job, no progress. */
int xpv_indexer_run(sqlite3 *db, const xpv_found_list *found, const xpv_index_options *o,
                    xpv_err *err);

#endif
