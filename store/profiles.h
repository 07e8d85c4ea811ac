/*
 * profiles.h — the `profiles` table (schema in index_db.c): one row per
 * profile file, its place (run, host), its indexing outcome and what the
 * indexer learnt of it (span, devices, facts, counts). Every query of the
 * answers that reads the table is here (profiles.c): the whole row, the
 * narrower state row the window answers read on each request, the lists
 * (profiles, runs, hosts of a run) in the order the views show them, and
 * the few aggregates over a scope's profiles. Nothing in api/ names the
 * table in SQL (scripts/checksrc.sh).
 *
 * The rows are written while indexing: indexer/indexer.c (discovery's
 * insert, delete, and the reads that decide what to index again),
 * indexer/index_file.c and indexer/ingest_rows.c (a file's outcome),
 * indexer/analysis/kernel_rows.c (kernel_totals) and store/index_db.c
 * (copying a part's row in, resets). Those writers keep their statements
 * inside their transactions, and are exempt from the check.
 *
 * Order: "newest first" is by file modification time, then run name (XProf
 * run names are timestamps), then path; "best indexed" ranks ok before
 * partial before anything else.
 *
 * Invariant: a NULL column is unknown (text: s NULL; number: its bit in
 * `known` clear), never 0.
 */
#ifndef XPV_STORE_PROFILES_H
#define XPV_STORE_PROFILES_H

#include "cursor.h"

/* The number columns of a whole row: bit i of known is num[i]. */
enum {
    XPV_STORE_PROFILE_SIZE_BYTES,
    XPV_STORE_PROFILE_MTIME_NS,
    XPV_STORE_PROFILE_EVENTS,
    XPV_STORE_PROFILE_START_NS,
    XPV_STORE_PROFILE_END_NS,
    XPV_STORE_PROFILE_STEP_COUNT,
    XPV_STORE_PROFILE_KERNEL_COUNT,
    XPV_STORE_PROFILE_COMPANION_OF,
    XPV_STORE_PROFILE_NNUMS
};

/* A whole row but kernel_totals. The texts are valid until the cursor's
 * next step; devices, facts, phase_counts and warnings hold JSON. */
typedef struct {
    int64_t id;
    xpv_store_text path, run, host, format, producer, status, error;
    xpv_store_text devices, facts, phase_counts, step_source, warnings;
    int partial;
    int64_t num[XPV_STORE_PROFILE_NNUMS];
    unsigned known;
    double index_seconds, indexed_at;
    int index_seconds_known;
} xpv_store_profile;

static inline int xpv_store_profile_known(const xpv_store_profile *r, int field)
{
    return (r->known >> field) & 1u;
}

/* Profile id's row. */
int xpv_store_profiles_open_id(xpv_store_cursor *c, sqlite3 *db, int64_t id, xpv_err *err);
/* Every row newest first; companions (a run's trace JSON twin of an
 * xplane) only when with_companions. */
int xpv_store_profiles_open_all(xpv_store_cursor *c, sqlite3 *db, int with_companions,
                                xpv_err *err);
/* The next row of either: 1 (row filled), 0 at the end, -1 with err. */
int xpv_store_profiles_next(xpv_store_cursor *c, xpv_store_profile *row, xpv_err *err);
/* Profile id's row on its own: 1 (row filled; c stays open for its texts
 * and the caller closes it), 0 when there is no such profile (c closed),
 * -1 with err (c closed). */
int xpv_store_profiles_get(xpv_store_cursor *c, sqlite3 *db, int64_t id, xpv_store_profile *row,
                           xpv_err *err);

/* What an answer on a window of a profile needs, read on every request:
 * the columns of xpv_store_profile of the same names. */
enum {
    XPV_STORE_PROFILE_STATE_EVENTS,
    XPV_STORE_PROFILE_STATE_START_NS,
    XPV_STORE_PROFILE_STATE_END_NS,
    XPV_STORE_PROFILE_STATE_MTIME_NS,
    XPV_STORE_PROFILE_STATE_NNUMS
};
typedef struct {
    xpv_store_text status, path;
    int64_t num[XPV_STORE_PROFILE_STATE_NNUMS];
    unsigned known;
    double indexed_at;
    int partial;
} xpv_store_profile_state;
/* As xpv_store_profiles_get, for the state row. */
int xpv_store_profiles_state(xpv_store_cursor *c, sqlite3 *db, int64_t id,
                             xpv_store_profile_state *row, xpv_err *err);

/* The profile's generation for per-profile caches: a hash of what changes
 * when the profile is indexed again (events, mtime, partial, time indexed),
 * so a cache entry keyed on it never outlives its profile. 1 with *gen, 0
 * when the profile is not indexed for good ("ok": not to be cached), -1 with
 * err. */
int xpv_store_profiles_generation(sqlite3 *db, int64_t id, uint64_t *gen, xpv_err *err);

/* An xplane profile's file as the index knows it: the profile folder
 * (meta profile_dir; a file when the index is of one file), the path in
 * it, its size and modification time. As xpv_store_profiles_get; 0 also
 * when the profile is not an xplane. */
typedef struct {
    xpv_store_text dir, path;
    int64_t size_bytes, mtime_ns;
} xpv_store_profile_file;
int xpv_store_profiles_xplane_file(xpv_store_cursor *c, sqlite3 *db, int64_t id,
                                   xpv_store_profile_file *row, xpv_err *err);

/* The newest readable top-level profile (indexed ok, or partial, with
 * events), else the newest of all: 1 with *id, 0 when there is none, -1
 * with err. */
int xpv_store_profiles_latest(sqlite3 *db, int64_t *id, xpv_err *err);
/* The top-level profiles by status, one row per status in its order:
 * text the status, n how many. */
int xpv_store_profiles_open_status_counts(xpv_store_cursor *c, sqlite3 *db, xpv_err *err);
int xpv_store_profiles_count_next(xpv_store_cursor *c, xpv_store_text *text, int64_t *n,
                                  xpv_err *err);
/* The ids of the profiles with events (> 0); *ids malloc'ed. 0 or -1. */
int xpv_store_profiles_with_events(sqlite3 *db, int64_t **ids, size_t *n, xpv_err *err);

/* ---- runs and hosts (the TensorBoard plugin's view) ---- */

/* The runs of top-level profiles, newest first (by their newest profile):
 * the TensorBoard run list, whose first run is the one the view lands on.
 * Each row a text (xpv_store_profiles_text_next). */
int xpv_store_profiles_open_runs(xpv_store_cursor *c, sqlite3 *db, xpv_err *err);
/* The hosts of run's top-level profiles, by name; run must outlive c. */
int xpv_store_profiles_open_hosts(xpv_store_cursor *c, sqlite3 *db, const char *run, xpv_err *err);
/* The next text of either: 1 (*text filled), 0 at the end, -1 with err. */
int xpv_store_profiles_text_next(xpv_store_cursor *c, xpv_store_text *text, xpv_err *err);
/* Run's top-level profiles by host, each host's best indexed and newest
 * first: rows of (id, host) for xpv_store_profiles_host_next. */
int xpv_store_profiles_open_run_hosts(xpv_store_cursor *c, sqlite3 *db, const char *run,
                                      xpv_err *err);
int xpv_store_profiles_host_next(xpv_store_cursor *c, int64_t *id, xpv_store_text *host,
                                 xpv_err *err);
/* The profile of run (and host, unless NULL) an answer shows: top-level
 * before companions, then the best indexed, then the newest. 1 with *id,
 * 0 when none, -1 with err. */
int xpv_store_profiles_of_run(sqlite3 *db, const char *run, const char *host, int64_t *id,
                              xpv_err *err);
/* The ok top-level profiles of the newest run, by host then id: *ids
 * malloc'ed (NULL when none). 0 or -1. */
int xpv_store_profiles_newest_run(sqlite3 *db, int64_t **ids, size_t *n, xpv_err *err);

/* ---- over several profiles (a tool's scope) ---- */

/* Whether any of the profiles has events (ok_only: and indexed ok): 1, 0,
 * or -1 with err. */
int xpv_store_profiles_any_events(sqlite3 *db, const int64_t *ids, size_t n, int ok_only,
                                  xpv_err *err);

/* The profiles' hosts and devices: how many profiles, their hosts joined
 * by ", ", how many devices they list (devices_known clear when no
 * profile lists them) and the greatest first device. As
 * xpv_store_profiles_get (0: no row, never so for an aggregate). */
typedef struct {
    int64_t profiles, devices;
    int devices_known;
    xpv_store_text hosts, device;
} xpv_store_profiles_environment;
int xpv_store_profiles_environment_get(xpv_store_cursor *c, sqlite3 *db, const int64_t *ids,
                                       size_t n, xpv_store_profiles_environment *out, xpv_err *err);

/* The device planes' figures of the profiles, facts device.<name>.<stat>
 * of a stat in stats (NULL-terminated, at most 16): one row per distinct
 * (stat, value), by stat then most devices first, with how many devices
 * state it and the first of their names. */
typedef struct {
    xpv_store_text stat, value, device;
    double number; /* value as a number */
    int64_t devices;
} xpv_store_device_figure;
int xpv_store_profiles_open_device_figures(xpv_store_cursor *c, sqlite3 *db, const int64_t *ids,
                                           size_t n, const char *const *stats, xpv_err *err);
int xpv_store_profiles_device_figure_next(xpv_store_cursor *c, xpv_store_device_figure *row,
                                          xpv_err *err);
/* The same stats, one row per stat: how many distinct values the devices
 * state and how many profiles state it; value is the greatest value. */
typedef struct {
    xpv_store_text stat, value;
    int64_t values, profiles;
} xpv_store_device_stat;
int xpv_store_profiles_open_device_stats(xpv_store_cursor *c, sqlite3 *db, const int64_t *ids,
                                         size_t n, const char *const *stats, xpv_err *err);
int xpv_store_profiles_device_stat_next(xpv_store_cursor *c, xpv_store_device_stat *row,
                                        xpv_err *err);
/* A fact (a JSON path into facts, "$.name") across the profiles: how many
 * distinct values, how many profiles state it, how many profiles, and the
 * greatest value into value (cut to fit; "" when none). 0 or -1. */
typedef struct {
    int64_t values, stating, profiles;
    int value_known;
} xpv_store_fact_agreement;
int xpv_store_profiles_fact(sqlite3 *db, const int64_t *ids, size_t n, const char *path,
                            xpv_store_fact_agreement *out, char *value, size_t valuesz,
                            xpv_err *err);

#endif
