/*
 * tracks.h — the `tracks` table (schema in index_db.c): one row per
 * (process, thread) track of a profile, its names, sort keys, device and
 * event count and span. Every query of the answers that reads the table
 * is here (tracks.c): whole rows, a profile's track ids of a kind, and
 * rows of (track, device); nothing in api/ names the table in SQL
 * (scripts/checksrc.sh).
 *
 * The rows are written by indexer/ingest_rows.c, inside the ingest's
 * transaction; that writer stays there.
 *
 * Invariant: a NULL column is unknown (text: s NULL; number: its bit in
 * `known` clear), never 0.
 */
#ifndef XPV_STORE_TRACKS_H
#define XPV_STORE_TRACKS_H

#include "cursor.h"

/* The number columns that may be unknown: bit i of known is num[i]. */
enum {
    XPV_STORE_TRACK_PROCESS_SORT,
    XPV_STORE_TRACK_THREAD_SORT,
    XPV_STORE_TRACK_DEVICE,
    XPV_STORE_TRACK_EVENTS,
    XPV_STORE_TRACK_T_MIN,
    XPV_STORE_TRACK_T_MAX,
    XPV_STORE_TRACK_NNUMS
};

/* A track. From the list only: the name of its device as the profile's
 * devices list gives it (s NULL when the list has no text for it) and
 * how many pids carry its process name (else s NULL and 0). Texts valid
 * until the cursor's next step. */
typedef struct {
    int64_t id, pid, tid;
    xpv_store_text process_name, thread_name, process_labels, device_name;
    int64_t num[XPV_STORE_TRACK_NNUMS];
    unsigned known;
    int64_t name_pids;
} xpv_store_track;

static inline int xpv_store_track_known(const xpv_store_track *r, int field)
{
    return (r->known >> field) & 1u;
}

/* A profile's tracks in the order the timeline shows them: by process
 * (sort index, else pid), then thread (sort index, else tid), then id. */
int xpv_store_tracks_open_list(xpv_store_cursor *c, sqlite3 *db, int64_t profile_id, xpv_err *err);
/* A profile's tracks by pid, tid, then id: the order of a trace export. */
int xpv_store_tracks_open_by_pid(xpv_store_cursor *c, sqlite3 *db, int64_t profile_id,
                                 xpv_err *err);
/* The next row of either: 1 (row filled), 0 at the end, -1 with err. */
int xpv_store_tracks_next(xpv_store_cursor *c, xpv_store_track *row, xpv_err *err);
/* Track `track` of a profile: 1 (row filled; c stays open for its texts
 * and the caller closes it), 0 when there is none (c closed), -1 with err
 * (c closed). */
int xpv_store_tracks_get(xpv_store_cursor *c, sqlite3 *db, int64_t profile_id, int64_t track,
                         xpv_store_track *row, xpv_err *err);

/* A profile's track ids, ascending; *ids malloc'ed (NULL when none). 0,
 * or -1 with err. */
int xpv_store_tracks_ids(sqlite3 *db, int64_t profile_id, int64_t **ids, size_t *n, xpv_err *err);
/* The same for the tracks with events, of one thread name (line), or of
 * a device when line is NULL. */
int xpv_store_tracks_ids_with_events(sqlite3 *db, int64_t profile_id, const char *line,
                                     int64_t **ids, size_t *n, xpv_err *err);
/* The greatest track id of a profile: 1 with *id, 0 when it has no
 * tracks (*id 0), -1 with err. */
int xpv_store_tracks_max_id(sqlite3 *db, int64_t profile_id, int64_t *id, xpv_err *err);
/* A profile's tracks of a device, as (track, device) rows in no order. */
int xpv_store_tracks_open_devices(xpv_store_cursor *c, sqlite3 *db, int64_t profile_id,
                                  xpv_err *err);
int xpv_store_tracks_device_next(xpv_store_cursor *c, int64_t *track, int *device, xpv_err *err);

#endif
