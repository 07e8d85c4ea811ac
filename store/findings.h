/*
 * findings.h — the `findings` table (schema in index_db.c): each profile's
 * findings answer (api/findings/), computed once and kept, so that asking
 * again reads a row instead of scanning the profile's events.
 *
 * A row holds one answer: the JSON after the answer's head (from
 * `,"complete":` to the closing brace), the key it was computed under (a
 * hash of the thresholds and of the program that computed it) and the
 * stamp of the profile it was computed from (a hash of the profile row's
 * indexing outcome). A read names both and finds nothing unless both
 * match, so an answer for other thresholds, another build or another
 * version of the file is never returned; the rows also go with the
 * profile's other rows when it is indexed again or vanishes
 * (xpv_index_clear_profile, indexer.c's drop of vanished profiles).
 *
 * Invariant: at most one row per profile (a put replaces the last).
 */
#ifndef XPV_STORE_FINDINGS_H
#define XPV_STORE_FINDINGS_H

#include "cursor.h"

/* Appends profile id's stored answer to out when it was kept under key
 * and stamp: 1, or 0 when there is none that matches (out untouched), or
 * -1 with err. */
int xpv_store_findings_get(sqlite3 *db, int64_t id, uint64_t key, uint64_t stamp, xpv_buf *out,
                           xpv_err *err);

/* Keeps body (n bytes) as profile id's answer under key and stamp,
 * replacing the one kept before. 0, or -1 with err; *busy (when not NULL)
 * is set when the failure is another connection's write since this one's
 * transaction began (the answer is then not kept, and should not be). */
int xpv_store_findings_put(sqlite3 *db, int64_t id, uint64_t key, uint64_t stamp, const char *body,
                           size_t n, int *busy, xpv_err *err);

/* How many answers the index keeps (for tests and benches): 0.., or -1. */
int64_t xpv_store_findings_count(sqlite3 *db, xpv_err *err);

#endif
