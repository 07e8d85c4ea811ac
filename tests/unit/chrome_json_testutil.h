/*
 * chrome_json_testutil.h — what the tests of the Chrome JSON reader's
 * files share: reading a small inline document through a sink into a fresh
 * index and collecting the stored events, their names and args as text to
 * assert on. The functions are static inline because each test program is
 * one test_*.c with testutil.c: a header needs no build change, and a test
 * that leaves a helper unused gets no warning for it.
 */
#ifndef XPV_CHROME_JSON_TESTUTIL_H
#define XPV_CHROME_JSON_TESTUTIL_H

#include "testutil.h"
#include "store/event_store.h"
#include "store/string_chunks.h"
#include "indexer/ingest.h"
#include "indexer/readers/readers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

typedef struct {
    int64_t ts, dur_ns, dur_ps, corr, step;
    char ph;
    int kind, step_src;
    uint32_t track;
    char name[160];
    char cat[64];
    char args[2048]; /* "key=t:value;" per arg, t one of i u d s t j */
} rec;

typedef struct {
    sqlite3 *db;
    sqlite3_stmt *str;
    rec *v;
    int n, cap;
    int rc;
    xpv_err err;
    xpv_sink_stats stats;
} result;

static inline const char *string_of(result *r, uint32_t id, char *buf, size_t cap)
{
    buf[0] = 0;
    sqlite3_reset(r->str);
    sqlite3_bind_int64(r->str, 1, id);
    if (sqlite3_step(r->str) == SQLITE_ROW)
        snprintf(buf, cap, "%s", (const char *)sqlite3_column_text(r->str, 0));
    return buf;
}

static inline int collect(void *ctx, const xpv_event *ev, int64_t block, uint32_t index)
{
    (void)block, (void)index;
    result *r = ctx;
    if (r->n == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 64;
        r->v = realloc(r->v, (size_t)r->cap * sizeof *r->v);
    }
    rec *o = &r->v[r->n++];
    memset(o, 0, sizeof *o);
    o->ts = ev->ts_ns;
    o->dur_ns = ev->dur_ns;
    o->dur_ps = ev->dur_ps;
    o->corr = ev->corr;
    o->step = ev->step;
    o->ph = ev->ph;
    o->kind = ev->kind;
    o->step_src = ev->step_src;
    o->track = ev->track;
    string_of(r, ev->name, o->name, sizeof o->name);
    string_of(r, ev->cat, o->cat, sizeof o->cat);
    size_t len = 0;
    for (uint32_t i = 0; i < ev->nargs && len < sizeof o->args - 300; i++) {
        const xpv_arg *a = &ev->args[i];
        char key[64], val[256];
        string_of(r, a->key, key, sizeof key);
        char t = '?';
        switch (a->type) {
        case XPV_ARG_INT:
            t = 'i', snprintf(val, sizeof val, "%lld", (long long)a->v.i);
            break;
        case XPV_ARG_UINT:
            t = 'u', snprintf(val, sizeof val, "%llu", (unsigned long long)a->v.u);
            break;
        case XPV_ARG_DOUBLE:
            t = 'd', snprintf(val, sizeof val, "%.17g", a->v.d);
            break;
        case XPV_ARG_STR:
            t = 's', string_of(r, a->v.str, val, sizeof val);
            break;
        case XPV_ARG_TEXT:
            t = 't', snprintf(val, sizeof val, "%.*s", (int)(a->len < 200 ? a->len : 200), a->text);
            break;
        case XPV_ARG_JSON:
            t = 'j', snprintf(val, sizeof val, "%.*s", (int)(a->len < 200 ? a->len : 200), a->text);
            break;
        }
        len += (size_t)snprintf(o->args + len, sizeof o->args - len, "%s=%c:%s;", key, t, val);
    }
    return 0;
}

static inline void result_free(result *r)
{
    sqlite3_finalize(r->str);
    sqlite3_close(r->db);
    free(r->v);
    memset(r, 0, sizeof *r);
}

static inline sqlite3 *fresh_index(const char *dir)
{
    return xpv_test_fresh_index(dir, 7);
}

static inline void write_gzip(const char *path, const void *data, size_t len)
{
    gzFile gz = gzopen(path, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(gz);
    if (len) CU_ASSERT_EQUAL(gzwrite(gz, data, (unsigned)len), (int)len);
    gzclose(gz);
}

/* Reads a document through a sink into a fresh index and collects the
 * stored events. Returns the reader's result. */
static inline int run_doc_n(const char *doc, size_t len, int gzip, result *r)
{
    memset(r, 0, sizeof *r);
    const char *dir = xpv_test_tmpdir();
    char path[512];
    snprintf(path, sizeof path, "%s/t.json%s", dir, gzip ? ".gz" : "");
    if (gzip)
        write_gzip(path, doc, len);
    else
        CU_ASSERT_EQUAL_FATAL(xpv_test_write(dir, gzip ? "t.json.gz" : "t.json", doc, len), 0);
    r->db = fresh_index(dir);
    xpv_err err = {{0}};
    xpv_sink *sink = xpv_sink_open(r->db, 7, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(sink);
    r->rc = xpv_reader_for(XPV_FMT_CHROME_JSON)(path, sink, &r->err);
    CU_ASSERT_EQUAL(xpv_sink_finish(sink, &r->stats, &err), 0);
    xpv_sink_free(sink);
    sqlite3_prepare_v2(r->db,
                       "SELECT r.value FROM strings s, string_rows(s.first_id, s.data) r"
                       " WHERE s.profile_id=7 AND s.first_id=?1 & " XPV_STORE_STRINGS_CHUNK_MASK
                       " AND r.id=?1",
                       -1, &r->str, NULL);
    xpv_store_query q;
    xpv_store_query_all(&q, 7);
    CU_ASSERT_EQUAL(xpv_store_scan(r->db, &q, collect, r, &err), 0);
    return r->rc;
}

static inline int run_doc(const char *doc, result *r)
{
    return run_doc_n(doc, strlen(doc), 0, r);
}

static inline const rec *find(const result *r, const char *name)
{
    for (int i = 0; i < r->n; i++)
        if (strcmp(r->v[i].name, name) == 0) return &r->v[i];
    return NULL;
}

static inline int count_ph(const result *r, char ph)
{
    int n = 0;
    for (int i = 0; i < r->n; i++)
        n += r->v[i].ph == ph;
    return n;
}

/* First column of the first row, as text ("" when none). */
static inline const char *query(result *r, const char *sql)
{
    static char buf[4096];
    buf[0] = 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(r->db, sql, -1, &st, NULL) != SQLITE_OK) return buf;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
        snprintf(buf, sizeof buf, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return buf;
}

#endif
