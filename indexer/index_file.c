/*
 * index_file.c — indexing one file (see index_file.h): the serial run and
 * the worker threads both call this, so it sits below both.
 *
 * Invariant: a file's rows change in one transaction; a reader's failure
 * is the profile's status (error, partial when some events were read),
 * not an error of the run.
 */
#include "index_file.h"
#include "../store/index_db.h"
#include "ingest.h"
#include "readers/readers.h"

#include <stdio.h>
#include <time.h>

static int set_status(sqlite3 *db, int64_t id, const char *status, const char *error, int partial,
                      double seconds, xpv_err *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db,
                           "UPDATE profiles SET status=?2, error=?3, partial=?4, indexed_at=?5,"
                           " index_seconds=?6 WHERE id=?1",
                           -1, &st, NULL) != SQLITE_OK)
        return xpv_db_error(err, db);
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_text(st, 2, status, -1, SQLITE_STATIC);
    if (error) sqlite3_bind_text(st, 3, error, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 4, partial);
    sqlite3_bind_double(st, 5, (double)time(NULL));
    sqlite3_bind_double(st, 6, seconds);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : xpv_db_error(err, db);
}

/* Runs the reader into a fresh sink; the status reflects the reader's result. */
static int run_reader(sqlite3 *db, const xpv_found *f, int64_t id, xpv_reader_fn reader,
                      const xpv_input_limits *limits, enum xpv_sink_stages stages,
                      struct xpv_index_part_rows *deferred, double t0, xpv_err *err)
{
    xpv_err rerr = {{0}};
    xpv_sink *sink = xpv_sink_open_with(db, id, stages, err);
    if (!sink) return -1;
    xpv_sink_set_limits(sink, limits);
    xpv_sink_defer_rows(sink, deferred);
    int read_rc = reader(f->abs_path, sink, &rerr);
    xpv_sink_stats stats;
    int rc = xpv_sink_finish(sink, &stats, err);
    xpv_sink_free(sink);
    if (rc != 0) return -1;
    double secs = xpv_now_mono() - t0;
    if (read_rc != 0)
        return set_status(db, id, "error", rerr.msg[0] ? rerr.msg : "unreadable", stats.events > 0,
                          secs, err);
    return set_status(db, id, "ok", NULL, 0, secs, err);
}

int xpv_indexer_index_file(sqlite3 *db, const xpv_found *f, int64_t id,
                           const xpv_input_limits *limits, enum xpv_sink_stages stages,
                           struct xpv_index_part_rows *deferred, xpv_err *err)
{
    double t0 = xpv_now_mono();
    if (xpv_db_exec(db, "BEGIN IMMEDIATE", err) != 0) return -1;
    int rc = xpv_index_clear_profile(db, id, err);
    const xpv_format *fmt = xpv_format_named(f->format);
    if (rc == 0 && f->error) {
        rc = set_status(db, id, "error", f->error, 0, 0, err);
    } else if (rc == 0 && (!fmt || !fmt->read)) {
        char hint[2048];
        if (fmt && fmt->explain)
            fmt->explain(f->abs_path, hint, sizeof hint);
        else
            snprintf(hint, sizeof hint, "not a profile format this tool reads");
        rc = set_status(db, id, "unsupported", hint, 0, 0, err);
    } else if (rc == 0) {
        rc = run_reader(db, f, id, fmt->read, limits, stages, deferred, t0, err);
    }
    if (rc != 0) {
        xpv_db_exec(db, "ROLLBACK", NULL);
        return -1;
    }
    return xpv_db_exec(db, "COMMIT", err);
}

int xpv_indexer_seed_part(sqlite3 *part, const xpv_found *f, int64_t id, xpv_err *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(part, "INSERT INTO profiles(id, path) VALUES(?1, ?2)", -1, &st, NULL) !=
        SQLITE_OK)
        return xpv_db_error(err, part);
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_text(st, 2, f->rel_path, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : xpv_db_error(err, part);
}

void xpv_indexer_report(const xpv_index_options *o, xpv_index_progress *p, const xpv_found *next,
                        const xpv_found *committed)
{
    if (committed) p->done++;
    p->current = next ? next->rel_path : NULL;
    p->finished = committed;
    if (o->progress) o->progress(o->ctx, p);
    p->finished = NULL;
}

/* Without it a file not in the page cache (a cold disk, a network mount)
 * stalls its reader on every page it faults in or reads, while the CPU
 * waits; with it the reads overlap the file indexed before. */
void xpv_indexer_read_ahead(const xpv_found *f)
{
    int64_t n = f->size < XPV_READ_AHEAD_BYTES ? f->size : XPV_READ_AHEAD_BYTES;
    if (n > 0) xpv_read_ahead(f->abs_path, n); /* an empty file may have grown since */
}
