/*
 * api_util.h — helpers shared by the api/ answers: the error answer (its
 * declaration is in api.h, with the answers), exact microsecond
 * numbers from integer nanoseconds or picoseconds, SQL column output,
 * interned-string lookups with a small cache, and profile checks.
 *
 * Invariant: numbers derived from integers are written exactly (a value in
 * ns becomes µs with at most 3 decimals); an unknown (NULL) value is written
 * as null, never 0.
 */
#ifndef XPV_API_UTIL_H
#define XPV_API_UTIL_H

#include "api.h"
#include "../common/xpv_common.h"
#include <sqlite3.h>

/* An integer, without printf (it is written millions of times). */
void xpv_api_put_int(xpv_buf *b, int64_t v);
/* ns -> µs, exact: "1234.567", "12", "-0.5". */
void xpv_api_put_us(xpv_buf *b, int64_t ns);
/* Integer ps column -> µs as a JSON number (null when NULL). */
void xpv_api_put_ps_col(xpv_buf *b, sqlite3_stmt *st, int col);
/* Integer column as a JSON number or null. */
void xpv_api_put_int_col(xpv_buf *b, sqlite3_stmt *st, int col);
/* Real column as a JSON number or null. */
void xpv_api_put_real_col(xpv_buf *b, sqlite3_stmt *st, int col);
/* Text column as a JSON string or null. */
void xpv_api_put_text_col(xpv_buf *b, sqlite3_stmt *st, int col);
/* The same from C values (store/ rows): null when not known. A ps value
 * read as a double is exact for integers below 2^53, as the columns are. */
void xpv_api_put_ps_opt(xpv_buf *b, int known, double ps);
void xpv_api_put_int_opt(xpv_buf *b, int known, int64_t v);
void xpv_api_put_real_opt(xpv_buf *b, int known, double v);
/* s NULL: null. */
void xpv_api_put_text_opt(xpv_buf *b, const char *s, size_t n);

/* Looks up interned strings of one profile, caching recent ones. */
typedef struct xpv_api_strings xpv_api_strings;
/* NULL with err when the index cannot be read. */
xpv_api_strings *xpv_api_strings_open_checked(sqlite3 *db, int64_t profile_id, xpv_err *err);
/* The same for callers that answer without names: never NULL; when the
 * index cannot be read, every string is "". */
xpv_api_strings *xpv_api_strings_open(sqlite3 *db, int64_t profile_id);
/* The string (never NULL: "" when unknown); valid until the next call. */
const char *xpv_api_string(xpv_api_strings *s, uint32_t id, size_t *len);
/* 200 when every name read so far was sound; else the answer in out is
 * replaced by the error of the damaged chunk met (a 500 the router turns
 * into the 503 that sends the profile to be checked and indexed again). */
int xpv_api_strings_status(const xpv_api_strings *s, xpv_buf *out);
void xpv_api_strings_free(xpv_api_strings *s);

/* Reads the profile's status ("ok", "pending", ...), its time span and its
 * file's name. Returns 200, or 404/500 with the error in out. */
typedef struct {
    char status[16];
    int64_t events;
    int has_span;
    int64_t start_ns, end_ns;
    int64_t mtime_ns;
    double indexed_at;
    char file_name[256]; /* the profile file's name, no folder (cut to fit) */
} xpv_api_profile_state;
int xpv_api_profile_state_get(sqlite3 *db, int64_t id, xpv_api_profile_state *ps, xpv_buf *out);
/* The same for callers that are not answers: 1 found, 0 no such profile,
 * -1 with err (the index cannot be read). */
int xpv_api_profile_state_find(sqlite3 *db, int64_t id, xpv_api_profile_state *ps, xpv_err *err);

/* The window [*a, *b) in ns that q asks of an indexed profile (its span by
 * default; [0, 1) when it has none), the profile's state in *ps and, when
 * resolution is not NULL, the pixels. Returns 200, or an error status with
 * out filled (profile not indexed, empty window, resolution out of range).
 * Shared by the window answers: events, counters, aggregate. */
int xpv_api_window(sqlite3 *db, int64_t id, const xpv_events_query *q, xpv_api_profile_state *ps,
                   int64_t *a, int64_t *b, int *resolution, xpv_buf *out);
/* Opens a profile's answer object: `{"profile":"<id>","status":"<status>"`. */
void xpv_api_put_profile_head(xpv_buf *b, int64_t id, const xpv_api_profile_state *ps);

#endif
