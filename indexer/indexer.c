/*
 * indexer.c — registering discovered files and indexing the pending ones.
 */
#include "indexer.h"
#include "../store/index_db.h"
#include "index_jobs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int upsert_found(sqlite3 *db, sqlite3_stmt *sel, sqlite3_stmt *ins, const xpv_found *f,
                        const char *companion_path, int *pending, xpv_err *err)
{
    int64_t id = xpv_profile_id_for(f->rel_path);
    sqlite3_bind_int64(sel, 1, id);
    int unchanged = 0;
    if (sqlite3_step(sel) == SQLITE_ROW) {
        const char *status = (const char *)sqlite3_column_text(sel, 2);
        const char *host = (const char *)sqlite3_column_text(sel, 3);
        /* a host can change with the file untouched: a perfetto_trace.json.gz
         * takes its run's host once the xplane beside it appears */
        unchanged = sqlite3_column_int64(sel, 0) == f->size &&
                    sqlite3_column_int64(sel, 1) == f->mtime_ns && status &&
                    strcmp(status, "pending") != 0 && host && strcmp(host, f->host) == 0;
    }
    sqlite3_reset(sel);
    if (unchanged) return 0;
    if (xpv_index_clear_profile(db, id, err) != 0) return -1;
    sqlite3_bind_int64(ins, 1, id);
    sqlite3_bind_text(ins, 2, f->rel_path, -1, SQLITE_STATIC);
    sqlite3_bind_text(ins, 3, f->run, -1, SQLITE_STATIC);
    sqlite3_bind_text(ins, 4, f->host, -1, SQLITE_STATIC);
    sqlite3_bind_text(ins, 5, f->format, -1, SQLITE_STATIC);
    sqlite3_bind_int64(ins, 6, f->size);
    sqlite3_bind_int64(ins, 7, f->mtime_ns);
    if (companion_path)
        sqlite3_bind_int64(ins, 8, xpv_profile_id_for(companion_path));
    else
        sqlite3_bind_null(ins, 8);
    int rc = sqlite3_step(ins);
    sqlite3_reset(ins);
    if (rc != SQLITE_DONE) return xpv_db_error(err, db);
    (*pending)++;
    return 0;
}

static int drop_vanished(sqlite3 *db, const xpv_found_list *found, xpv_err *err)
{
    if (xpv_db_exec(db,
                    "CREATE TEMP TABLE IF NOT EXISTS found_ids(id INTEGER PRIMARY KEY);"
                    "DELETE FROM found_ids;",
                    err) != 0)
        return -1;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "INSERT OR IGNORE INTO found_ids VALUES(?1)", -1, &st, NULL))
        return xpv_db_error(err, db);
    for (size_t i = 0; i < found->n; i++) {
        sqlite3_bind_int64(st, 1, xpv_profile_id_for(found->items[i].rel_path));
        sqlite3_step(st);
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    for (size_t t = 0; t < XPV_INDEX_PROFILE_TABLES; t++) {
        char sql[160];
        snprintf(sql, sizeof sql,
                 "DELETE FROM %s WHERE profile_id NOT IN (SELECT id FROM found_ids)",
                 xpv_index_profile_tables[t]);
        if (xpv_db_exec(db, sql, err) != 0) return -1;
    }
    return xpv_db_exec(db, "DELETE FROM profiles WHERE id NOT IN (SELECT id FROM found_ids)", err);
}

int xpv_indexer_register(sqlite3 *db, const xpv_found_list *found, xpv_err *err)
{
    sqlite3_stmt *sel = NULL, *ins = NULL;
    int pending = 0, rc = 0;
    if (xpv_db_exec(db, "BEGIN IMMEDIATE", err) != 0) return -1;
    if (sqlite3_prepare_v2(db,
                           "SELECT size_bytes, mtime_ns, status, host FROM profiles WHERE id=?1",
                           -1, &sel, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(
            db,
            "INSERT OR REPLACE INTO profiles(id, path, run, host, format, size_bytes,"
            " mtime_ns, companion_of, status) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,"
            "'pending')",
            -1, &ins, NULL) != SQLITE_OK)
        rc = xpv_db_error(err, db);
    for (size_t i = 0; rc == 0 && i < found->n; i++) {
        const xpv_found *f = &found->items[i];
        const char *comp = f->companion_of >= 0 ? found->items[f->companion_of].rel_path : NULL;
        rc = upsert_found(db, sel, ins, f, comp, &pending, err);
    }
    sqlite3_finalize(sel);
    sqlite3_finalize(ins);
    if (rc == 0) rc = drop_vanished(db, found, err);
    if (rc != 0) {
        xpv_db_exec(db, "ROLLBACK", NULL);
        return -1;
    }
    return xpv_db_exec(db, "COMMIT", err) == 0 ? pending : -1;
}

static int is_pending(sqlite3 *db, int64_t id)
{
    sqlite3_stmt *st;
    int pending = 0;
    if (sqlite3_prepare_v2(db, "SELECT status FROM profiles WHERE id=?1", -1, &st, NULL) ==
        SQLITE_OK) {
        sqlite3_bind_int64(st, 1, id);
        if (sqlite3_step(st) == SQLITE_ROW) {
            const char *s = (const char *)sqlite3_column_text(st, 0);
            pending = s && strcmp(s, "pending") == 0;
        }
        sqlite3_finalize(st);
    }
    return pending;
}

/* Files in the order they are indexed and committed: primary sources
 * first, then the trace-JSON twins of an xplane. */
static size_t queue_pending(sqlite3 *db, const xpv_found_list *found, xpv_index_job *queue)
{
    size_t n = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < found->n; i++) {
            const xpv_found *f = &found->items[i];
            int64_t id = xpv_profile_id_for(f->rel_path);
            if ((f->companion_of >= 0) == pass && is_pending(db, id))
                queue[n++] = (xpv_index_job){f, id};
        }
    return n;
}

static int run_serial(sqlite3 *db, const xpv_found_list *found, const xpv_index_job *queue,
                      size_t n, const xpv_index_options *o, xpv_err *err)
{
    xpv_index_progress p = {(int)n, 0, NULL, NULL};
    for (size_t i = 0; i < n && !xpv_stop_requested(o->stop); i++) {
        const xpv_found *f = queue[i].f;
        if (i + 1 < n) xpv_indexer_read_ahead(queue[i + 1].f);
        xpv_indexer_report(o, &p, f, NULL);
        if (xpv_indexer_index_file(db, f, queue[i].id, &found->limits, XPV_SINK_STAGES_THREADED,
                                   NULL, err) != 0)
            return xpv_err_prefix(err, "indexing %s", f->rel_path);
        xpv_indexer_report(o, &p, f, f);
    }
    xpv_indexer_report(o, &p, NULL, NULL);
    return 0;
}

int xpv_indexer_run(sqlite3 *db, const xpv_found_list *found, const xpv_index_options *o,
                    xpv_err *err)
{
    static const xpv_index_options serial = {1, NULL, NULL, NULL};
    if (!o) o = &serial;
    xpv_index_job *queue = xpv_xmalloc((found->n ? found->n : 1) * sizeof *queue);
    size_t n = queue_pending(db, found, queue);
    int jobs = o->jobs > 0 ? o->jobs : xpv_cpu_count();
    /* A database with no file (in memory) has nowhere to put parts beside. */
    const char *path = sqlite3_db_filename(db, "main");
    int rc = jobs > 1 && n > 1 && path && *path
                 ? xpv_indexer_run_parallel(db, found, queue, n, jobs, o, err)
                 : run_serial(db, found, queue, n, o, err);
    free(queue);
    return rc;
}
