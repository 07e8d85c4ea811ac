/*
 * tracks.c — the reads of the `tracks` table (see tracks.h).
 *
 * The list names each device from the profile's devices (a JSON array,
 * by device id) in SQL, so a profile with many tracks is read in one pass.
 */
#include "tracks.h"

/* A whole row, in the order xpv_store_tracks_next reads the columns; the
 * list fills the last two (here NULL and 0). */
#define WHOLE_ROW                                                                                  \
    "SELECT id, pid, tid, process_name, thread_name, process_labels, NULL,"                        \
    " process_sort, thread_sort, device_id, events, t_min, t_max, 0 FROM tracks"

int xpv_store_tracks_open_list(xpv_store_cursor *c, sqlite3 *db, int64_t profile_id, xpv_err *err)
{
    return xpv_store_cursor_open_id(
        c, db,
        "WITH names AS (SELECT process_name AS name, count(DISTINCT pid) AS processes FROM"
        " tracks WHERE profile_id=?1 GROUP BY process_name),"
        " devs AS (SELECT CASE WHEN json_valid(devices) THEN devices END AS list FROM profiles"
        " WHERE id=?1)"
        " SELECT t.id, pid, tid, process_name, thread_name, process_labels,"
        " (SELECT json_extract(list, '$[' || t.device_id || ']') FROM devs WHERE"
        " t.device_id >= 0), process_sort, thread_sort, device_id, events, t_min, t_max,"
        " names.processes"
        " FROM tracks t LEFT JOIN names ON names.name IS t.process_name WHERE t.profile_id=?1"
        " ORDER BY coalesce(process_sort, pid), pid, coalesce(thread_sort, tid), tid, t.id",
        profile_id, err);
}

int xpv_store_tracks_open_by_pid(xpv_store_cursor *c, sqlite3 *db, int64_t profile_id, xpv_err *err)
{
    return xpv_store_cursor_open_id(c, db, WHOLE_ROW " WHERE profile_id=?1 ORDER BY pid, tid, id",
                                    profile_id, err);
}

int xpv_store_tracks_next(xpv_store_cursor *c, xpv_store_track *row, xpv_err *err)
{
    int rc = xpv_store_cursor_step(c, err);
    if (rc != 1) return rc;
    sqlite3_stmt *st = c->st;
    row->id = sqlite3_column_int64(st, 0);
    row->pid = sqlite3_column_int64(st, 1);
    row->tid = sqlite3_column_int64(st, 2);
    row->process_name = xpv_store_column_text(st, 3);
    row->thread_name = xpv_store_column_text(st, 4);
    row->process_labels = xpv_store_column_text(st, 5);
    row->device_name = sqlite3_column_type(st, 6) == SQLITE_TEXT ? xpv_store_column_text(st, 6)
                                                                 : (xpv_store_text){NULL, 0};
    row->known = xpv_store_columns(st, 7, XPV_STORE_TRACK_NNUMS, row->num, NULL);
    row->name_pids = sqlite3_column_int64(st, 13);
    return 1;
}

int xpv_store_tracks_get(xpv_store_cursor *c, sqlite3 *db, int64_t profile_id, int64_t track,
                         xpv_store_track *row, xpv_err *err)
{
    if (xpv_store_cursor_open_id(c, db, WHOLE_ROW " WHERE profile_id=?1 AND id=?2", profile_id,
                                 err) != 0)
        return -1;
    sqlite3_bind_int64(c->st, 2, track);
    int rc = xpv_store_tracks_next(c, row, err);
    if (rc != 1) xpv_store_cursor_close(c);
    return rc;
}

int xpv_store_tracks_ids(sqlite3 *db, int64_t profile_id, int64_t **ids, size_t *n, xpv_err *err)
{
    xpv_store_cursor c;
    *ids = NULL, *n = 0;
    if (xpv_store_cursor_open_id(&c, db, "SELECT id FROM tracks WHERE profile_id=?1 ORDER BY id",
                                 profile_id, err) != 0)
        return -1;
    return xpv_store_cursor_ids(&c, ids, n, err);
}

int xpv_store_tracks_ids_with_events(sqlite3 *db, int64_t profile_id, const char *line,
                                     int64_t **ids, size_t *n, xpv_err *err)
{
    xpv_store_cursor c;
    *ids = NULL, *n = 0;
    if (xpv_store_cursor_open_id(&c, db,
                                 "SELECT id FROM tracks WHERE profile_id=?1 AND events > 0 AND"
                                 " (?2 IS NULL AND device_id IS NOT NULL OR thread_name=?2)"
                                 " ORDER BY id",
                                 profile_id, err) != 0)
        return -1;
    if (line) sqlite3_bind_text(c.st, 2, line, -1, SQLITE_STATIC);
    return xpv_store_cursor_ids(&c, ids, n, err);
}

int xpv_store_tracks_max_id(sqlite3 *db, int64_t profile_id, int64_t *id, xpv_err *err)
{
    xpv_store_cursor c;
    *id = 0;
    if (xpv_store_cursor_open_id(&c, db, "SELECT max(id) FROM tracks WHERE profile_id=?1",
                                 profile_id, err) != 0)
        return -1;
    return xpv_store_cursor_first_int(&c, id, err);
}

int xpv_store_tracks_open_devices(xpv_store_cursor *c, sqlite3 *db, int64_t profile_id,
                                  xpv_err *err)
{
    return xpv_store_cursor_open_id(
        c, db, "SELECT id, device_id FROM tracks WHERE profile_id=?1 AND device_id IS NOT NULL",
        profile_id, err);
}

int xpv_store_tracks_device_next(xpv_store_cursor *c, int64_t *track, int *device, xpv_err *err)
{
    int rc = xpv_store_cursor_step(c, err);
    if (rc == 1) *track = sqlite3_column_int64(c->st, 0), *device = sqlite3_column_int(c->st, 1);
    return rc;
}
