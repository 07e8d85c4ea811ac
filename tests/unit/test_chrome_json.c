/*
 * test_chrome_json.c — the Chrome trace JSON reader on small inline
 * documents: both top-level forms, trailing commas and {}, string pids and
 * tids, exact fractional times, B/E and async pairing, counters, flows,
 * every arg type, classification, facts, and every kind of bad input
 * (each an error naming the byte offset, never a crash), plus re-indexing
 * a file after it was fixed.
 */
#define _GNU_SOURCE
#include "testutil.h"
#include "indexer/discover.h"
#include "indexer/event_store.h"
#include "indexer/index_db.h"
#include "indexer/indexer.h"
#include "indexer/ingest.h"
#include "indexer/readers/json_scan.h"
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

static const char *string_of(result *r, uint32_t id, char *buf, size_t cap)
{
    buf[0] = 0;
    sqlite3_reset(r->str);
    sqlite3_bind_int64(r->str, 1, id);
    if (sqlite3_step(r->str) == SQLITE_ROW)
        snprintf(buf, cap, "%s", (const char *)sqlite3_column_text(r->str, 0));
    return buf;
}

static int collect(void *ctx, const xpv_event *ev, int64_t block, uint32_t index)
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

static void result_free(result *r)
{
    sqlite3_finalize(r->str);
    sqlite3_close(r->db);
    free(r->v);
    memset(r, 0, sizeof *r);
}

static sqlite3 *fresh_index(const char *dir)
{
    return xpv_test_fresh_index(dir, 7);
}

static void write_gzip(const char *path, const void *data, size_t len)
{
    gzFile gz = gzopen(path, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(gz);
    if (len) CU_ASSERT_EQUAL(gzwrite(gz, data, (unsigned)len), (int)len);
    gzclose(gz);
}

/* Reads a document through a sink into a fresh index and collects the
 * stored events. Returns the reader's result. */
static int run_doc_n(const char *doc, size_t len, int gzip, result *r)
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
    sqlite3_prepare_v2(r->db, "SELECT value FROM strings WHERE profile_id=7 AND id=?1", -1, &r->str,
                       NULL);
    xpv_store_query q;
    xpv_store_query_all(&q, 7);
    CU_ASSERT_EQUAL(xpv_store_scan(r->db, &q, collect, r, &err), 0);
    return r->rc;
}

static int run_doc(const char *doc, result *r)
{
    return run_doc_n(doc, strlen(doc), 0, r);
}

static const rec *find(const result *r, const char *name)
{
    for (int i = 0; i < r->n; i++)
        if (strcmp(r->v[i].name, name) == 0) return &r->v[i];
    return NULL;
}

static int count_ph(const result *r, char ph)
{
    int n = 0;
    for (int i = 0; i < r->n; i++)
        n += r->v[i].ph == ph;
    return n;
}

/* First column of the first row, as text ("" when none). */
static const char *query(result *r, const char *sql)
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

/* ---- forms ---- */

static void test_array_form(void)
{
    result r;
    CU_ASSERT_EQUAL(run_doc("[{\"ph\":\"X\",\"name\":\"a\",\"cat\":\"c\",\"pid\":1,\"tid\":2,"
                            "\"ts\":1.5,\"dur\":2.25},\n{\"ph\":\"i\",\"name\":\"b\",\"pid\":1,"
                            "\"tid\":2,\"ts\":3,\"s\":\"t\"},{},]",
                            &r),
                    0);
    CU_ASSERT_EQUAL(r.n, 2);
    const rec *a = find(&r, "a"), *b = find(&r, "b");
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_EQUAL(a->ts, 1500);
    CU_ASSERT_EQUAL(a->dur_ns, 2250);
    CU_ASSERT_EQUAL(a->dur_ps, 2250000);
    CU_ASSERT_STRING_EQUAL(a->cat, "c");
    CU_ASSERT_EQUAL(b->ph, 'i');
    CU_ASSERT_EQUAL(b->dur_ns, -1);
    CU_ASSERT(strstr(b->args, "s=s:t;") != NULL);
    CU_ASSERT_EQUAL(r.stats.phase_counts['X'], 1);
    CU_ASSERT_EQUAL(r.stats.phase_counts['i'], 1);
    CU_ASSERT_STRING_EQUAL(query(&r, "SELECT phase_counts FROM profiles WHERE id=7"),
                           "{\"X\":1,\"i\":1}");
    result_free(&r);
}

static void test_unterminated_array(void)
{
    result r;
    CU_ASSERT_EQUAL(run_doc("[{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":1},\n", &r), 0);
    CU_ASSERT_EQUAL(r.n, 1);
    CU_ASSERT(strstr(query(&r, "SELECT warnings FROM profiles WHERE id=7"), "closing") != NULL);
    result_free(&r);
}

static void test_object_form_skips_unknown_keys(void)
{
    result r;
    const char *doc =
        "{\"metadata\":{\"highres-ticks\":true,\"deep\":[1,[2,{\"x\":\"y\\\"\"}]]},"
        "\"displayTimeUnit\":\"ns\",\"stackFrames\":{\"1\":{\"name\":\"f\"}},"
        "\"samples\":[],\"traceEvents\":[{\"ph\":\"X\",\"name\":\"k\",\"ts\":10,\"dur\":1,"
        "\"pid\":1,\"tid\":1}],\"systemTraceEvents\":\"# tracer: nop\\n...\",\"z\":null}";
    CU_ASSERT_EQUAL(run_doc(doc, &r), 0);
    CU_ASSERT_EQUAL(r.n, 1);
    CU_ASSERT_STRING_EQUAL(query(&r, "SELECT producer FROM profiles WHERE id=7"), "JAX/XLA");
    result_free(&r);
    /* The same, gzipped. */
    CU_ASSERT_EQUAL(run_doc_n(doc, strlen(doc), 1, &r), 0);
    CU_ASSERT_EQUAL(r.n, 1);
    result_free(&r);
}

static void test_string_pids_and_tids(void)
{
    result r;
    CU_ASSERT_EQUAL(run_doc("{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\",\"pid\":\"Spans\","
                            "\"tid\":\"PyTorch Profiler\",\"ts\":1,\"dur\":1},"
                            "{\"ph\":\"X\",\"name\":\"b\",\"pid\":5,\"tid\":\"7\",\"ts\":2,"
                            "\"dur\":1},{\"ph\":\"X\",\"name\":\"c\",\"pid\":5,\"tid\":7,\"ts\":3,"
                            "\"dur\":1},{\"ph\":\"X\",\"name\":\"d\",\"pid\":4611686018427387904,"
                            "\"tid\":null,\"ts\":3,\"dur\":1}]}",
                            &r),
                    0);
    CU_ASSERT_EQUAL(r.n, 4);
    CU_ASSERT_EQUAL(find(&r, "b")->track, find(&r, "c")->track);
    CU_ASSERT_NOT_EQUAL(find(&r, "a")->track, find(&r, "c")->track);
    CU_ASSERT_NOT_EQUAL(find(&r, "a")->track, find(&r, "d")->track);
    CU_ASSERT_STRING_EQUAL(
        query(&r, "SELECT process_name || '/' || thread_name FROM tracks WHERE profile_id=7 AND "
                  "process_name='Spans'"),
        "Spans/PyTorch Profiler");
    CU_ASSERT_STRING_EQUAL(query(&r, "SELECT count(*) FROM tracks WHERE profile_id=7"), "3");
    result_free(&r);
}

static void test_exact_times(void)
{
    result r;
    CU_ASSERT_EQUAL(run_doc("[{\"ph\":\"X\",\"name\":\"a\",\"ts\":1623143089861234.567,"
                            "\"dur\":0.0015},{\"ph\":\"X\",\"name\":\"b\",\"ts\":1.5e3,"
                            "\"dur\":2E-3},{\"ph\":\"X\",\"name\":\"c\",\"ts\":-2.0009,"
                            "\"dur\":123456789.123456789}]",
                            &r),
                    0);
    const rec *a = find(&r, "a"), *b = find(&r, "b"), *c = find(&r, "c");
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_EQUAL(a->ts, 1623143089861234567LL);
    CU_ASSERT_EQUAL(a->dur_ns, 1);
    CU_ASSERT_EQUAL(a->dur_ps, 1500);
    CU_ASSERT_EQUAL(b->ts, 1500000);
    CU_ASSERT_EQUAL(b->dur_ns, 2);
    CU_ASSERT_EQUAL(c->ts, -2000);
    CU_ASSERT_EQUAL(c->dur_ns, 123456789123LL);
    CU_ASSERT_EQUAL(c->dur_ps, 123456789123456LL);
    result_free(&r);
}

/* ---- pairing, counters, flows ---- */

static void test_begin_end(void)
{
    result r;
    CU_ASSERT_EQUAL(run_doc("[{\"ph\":\"B\",\"name\":\"outer\",\"pid\":1,\"tid\":1,\"ts\":1,"
                            "\"args\":{\"x\":1}},{\"ph\":\"B\",\"name\":\"inner\",\"pid\":1,"
                            "\"tid\":1,\"ts\":2},{\"ph\":\"E\",\"pid\":1,\"tid\":1,\"ts\":4,"
                            "\"args\":{\"y\":2}},{\"ph\":\"E\",\"pid\":1,\"tid\":1,\"ts\":10},"
                            "{\"ph\":\"E\",\"name\":\"stray\",\"pid\":1,\"tid\":2,\"ts\":5},"
                            "{\"ph\":\"B\",\"name\":\"open\",\"pid\":1,\"tid\":3,\"ts\":6},"
                            "{\"ph\":\"B\",\"name\":\"same\",\"pid\":1,\"tid\":4,\"ts\":7},"
                            "{\"ph\":\"E\",\"pid\":1,\"tid\":4,\"ts\":7}]",
                            &r),
                    0);
    CU_ASSERT_EQUAL(r.n, 5);
    /* B and E at the same time: a slice of 0, not an open B */
    CU_ASSERT_EQUAL(find(&r, "same")->ph, 'X');
    CU_ASSERT_EQUAL(find(&r, "same")->dur_ns, 0);
    const rec *outer = find(&r, "outer"), *inner = find(&r, "inner"), *stray = find(&r, "stray"),
              *open = find(&r, "open");
    CU_ASSERT_PTR_NOT_NULL_FATAL(outer);
    CU_ASSERT_PTR_NOT_NULL_FATAL(inner);
    CU_ASSERT_PTR_NOT_NULL_FATAL(stray);
    CU_ASSERT_PTR_NOT_NULL_FATAL(open);
    CU_ASSERT_EQUAL(outer->ph, 'X');
    CU_ASSERT_EQUAL(outer->dur_ns, 9000);
    CU_ASSERT(strstr(outer->args, "x=i:1;") != NULL);
    CU_ASSERT_EQUAL(inner->dur_ns, 2000);
    CU_ASSERT(strstr(inner->args, "y=i:2;") != NULL);
    CU_ASSERT_EQUAL(stray->ph, 'E');
    CU_ASSERT_EQUAL(stray->dur_ns, -1);
    CU_ASSERT_EQUAL(open->ph, 'B');
    CU_ASSERT_EQUAL(open->dur_ns, -1);
    CU_ASSERT_EQUAL(r.stats.phase_counts['B'], 4);
    CU_ASSERT_EQUAL(r.stats.phase_counts['E'], 4);
    const char *w = query(&r, "SELECT warnings FROM profiles WHERE id=7");
    CU_ASSERT(strstr(w, "1 B events without a matching E") != NULL);
    CU_ASSERT(strstr(w, "1 E events without a matching B") != NULL);
    result_free(&r);
}

static void test_counters_async_flows(void)
{
    result r;
    CU_ASSERT_EQUAL(
        run_doc(
            "[{\"ph\":\"C\",\"name\":\"mem\",\"pid\":1,\"ts\":1,\"args\":{\"a\":1,\"b\":2.5}},"
            "{\"ph\":\"b\",\"cat\":\"q\",\"id\":\"0x1\",\"name\":\"req\",\"pid\":1,\"tid\":1,"
            "\"ts\":2},{\"ph\":\"n\",\"cat\":\"q\",\"id\":\"0x1\",\"name\":\"mark\",\"pid\":1,"
            "\"tid\":1,\"ts\":3},{\"ph\":\"b\",\"cat\":\"q\",\"id\":\"0x2\",\"name\":\"req\","
            "\"pid\":1,\"tid\":1,\"ts\":3},{\"ph\":\"e\",\"cat\":\"q\",\"id\":\"0x1\",\"name\":"
            "\"req\",\"pid\":1,\"tid\":1,\"ts\":7},{\"ph\":\"e\",\"cat\":\"q\",\"id\":\"0x9\","
            "\"name\":\"lost\",\"pid\":1,\"tid\":1,\"ts\":8},"
            "{\"ph\":\"s\",\"id\":41,\"name\":\"fl\",\"cat\":\"ac2g\",\"pid\":1,\"tid\":1,"
            "\"ts\":4},{\"ph\":\"t\",\"id\":41,\"name\":\"fl\",\"pid\":1,\"tid\":1,\"ts\":5},"
            "{\"ph\":\"f\",\"id\":41,\"name\":\"fl\",\"pid\":2,\"tid\":1,\"ts\":6,\"bp\":\"e\"},"
            "{\"ph\":\"X\",\"name\":\"bound\",\"bind_id\":\"0xab\",\"flow_out\":true,"
            "\"ts\":1,\"dur\":1},{\"ph\":\"P\",\"name\":\"sample\",\"ts\":1},"
            "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":2,\"args\":{\"name\":\"dev\"}}]",
            &r),
        0);
    const rec *mem = find(&r, "mem");
    CU_ASSERT_PTR_NOT_NULL_FATAL(mem);
    CU_ASSERT_EQUAL(mem->ph, 'C');
    CU_ASSERT(strstr(mem->args, "a=i:1;b=d:2.5;") != NULL);
    CU_ASSERT_EQUAL(count_ph(&r, 'b'), 2); /* one paired, one left open */
    int paired = 0;
    for (int i = 0; i < r.n; i++)
        if (r.v[i].ph == 'b' && r.v[i].dur_ns == 5000 && strstr(r.v[i].args, "id=s:0x1")) paired++;
    CU_ASSERT_EQUAL(paired, 1);
    CU_ASSERT_EQUAL(find(&r, "lost")->ph, 'e');
    CU_ASSERT_EQUAL(find(&r, "mark")->ph, 'n');
    CU_ASSERT_EQUAL(count_ph(&r, 's') + count_ph(&r, 't') + count_ph(&r, 'f'), 3);
    for (int i = 0; i < r.n; i++)
        if (strchr("stf", r.v[i].ph)) CU_ASSERT(strstr(r.v[i].args, "id=i:41;") != NULL);
    CU_ASSERT(strstr(find(&r, "bound")->args, "bind_id=s:0xab;flow_out=j:true;") != NULL);
    CU_ASSERT_EQUAL(r.stats.phase_counts['P'], 1);
    CU_ASSERT_EQUAL(r.stats.phase_counts['M'], 1);
    CU_ASSERT_EQUAL(r.n, 9);
    CU_ASSERT(strstr(query(&r, "SELECT facts FROM profiles WHERE id=7"), "\"phase P\":1") != NULL);
    CU_ASSERT_STRING_EQUAL(
        query(&r, "SELECT process_name FROM tracks WHERE profile_id=7 AND pid=2"), "dev");
    result_free(&r);
}

static void test_arg_types(void)
{
    char doc[4096], longstr[600];
    memset(longstr, 'x', sizeof longstr - 1);
    longstr[sizeof longstr - 1] = 0;
    snprintf(doc, sizeof doc,
             "[{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":1,\"args\":{\"i\":-42,"
             "\"u\":18446744073709551615,\"big\":1e400000000000,\"d\":0.1,\"s\":\"short\","
             "\"esc\":\"a\\nb\\u00e9\\ud83d\\ude00\\\"\",\"long\":\"%s\",\"o\":{\"k\":[1, 2]},"
             "\"arr\":[1,\"x\"],\"t\":true,\"f\":false,\"n\":null,\"e\":\"\"}}]",
             longstr);
    result r;
    run_doc(doc, &r);
    CU_ASSERT_EQUAL(r.rc, -1); /* 1e400000000000 is out of range */
    CU_ASSERT(strstr(r.err.msg, "out of range") != NULL);
    result_free(&r);
    char *big = strstr(doc, "\"big\":1e400000000000,");
    memmove(big, big + 21, strlen(big + 21) + 1);
    CU_ASSERT_EQUAL(run_doc(doc, &r), 0);
    CU_ASSERT_EQUAL_FATAL(r.n, 1);
    const char *a = r.v[0].args;
    CU_ASSERT(strstr(a, "i=i:-42;") != NULL);
    CU_ASSERT(strstr(a, "u=u:18446744073709551615;") != NULL);
    CU_ASSERT(strstr(a, "d=d:0.10000000000000001;") != NULL);
    CU_ASSERT(strstr(a, "s=s:short;") != NULL);
    CU_ASSERT(strstr(a, "esc=s:a\nb\xc3\xa9\xf0\x9f\x98\x80\";") != NULL);
    CU_ASSERT(strstr(a, "long=t:xxxxxxxx") != NULL);
    CU_ASSERT(strstr(a, "o=j:{\"k\":[1, 2]};arr=j:[1,\"x\"];t=j:true;f=j:false;n=j:null;e=s:;") !=
              NULL);
    result_free(&r);
}

static void expect_error(const char *doc, size_t len, int gzip, const char *reason)
{
    result r;
    int rc = run_doc_n(doc, len, gzip, &r);
    CU_ASSERT_EQUAL(rc, -1);
    CU_ASSERT(strstr(r.err.msg, "offset") != NULL);
    if (reason && !strstr(r.err.msg, reason)) {
        fprintf(stderr, "\nwanted \"%s\" in: %s\n", reason, r.err.msg);
        CU_FAIL("error message lacks the reason");
    }
    result_free(&r);
}

static void test_non_finite_numbers(void)
{
    /* Python's json writes NaN/Infinity for non-finite floats and reads
     * them back; PyTorch traces carry them (bandwidth of a 0 us copy). */
    result r;
    CU_ASSERT_EQUAL(run_doc("[{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":0,\"args\":{"
                            "\"n\":NaN,\"i\":Infinity,\"m\":-Infinity,\"l\":[NaN, -Infinity]}}]",
                            &r),
                    0);
    CU_ASSERT_EQUAL_FATAL(r.n, 1);
    CU_ASSERT(strstr(r.v[0].args, "n=d:nan;i=d:inf;m=d:-inf;l=j:[NaN, -Infinity];") != NULL);
    result_free(&r);
    expect_error("[{\"ph\":\"X\",\"args\":{\"n\":Nan}}]", 29, 0, "literal");
}

/* The tokenizer's string scan against a byte-at-a-time reading, for every
 * length and every position of a quote, escape, non-ASCII or control byte
 * (the vector loops take 16 and 32 bytes at a time). */
static void test_string_scan_all_positions(void)
{
    char buf[160];
    int bad = 0;
    static const char *const inserts[] = {"\"", "\\n", "\xc3\xa9", "\x01", "\xff", "\\u00e9"};
    for (int len = 0; len < 100; len++) {
        for (int at = 0; at <= len; at++) {
            for (int k = 0; k < 6; k++) {
                size_t ins = strlen(inserts[k]), n = 0;
                memset(buf, 'a', sizeof buf);
                memcpy(buf + at, inserts[k], ins);
                n = (size_t)len + ins;
                buf[n] = '"';
                const char *after = NULL;
                int esc = 0;
                js_error e = {NULL, NULL};
                int rc = js_scan_string(buf, buf + n + 1 + 20, &after, &esc, &e);
                int want_rc = (k == 3 || k == 4) ? JS_ERR : JS_OK;
                const char *want_after = k == 0 ? buf + at + 1 : buf + n + 1;
                if (rc != want_rc || (rc == JS_OK && after != want_after) ||
                    (rc == JS_ERR && e.at != buf + at) ||
                    (rc == JS_OK && esc != (k == 1 || k == 5)))
                    bad++;
                /* Cut just before the closing quote: more input is needed. */
                if (k != 0 && want_rc == JS_OK &&
                    js_scan_string(buf, buf + n, &after, &esc, &e) != JS_MORE)
                    bad++;
            }
        }
    }
    CU_ASSERT_EQUAL(bad, 0);
}

/* ---- classification and facts ---- */

static void test_pytorch_classification(void)
{
    result r;
    const char *doc =
        "{\"schemaVersion\":1,\"deviceProperties\":[{\"id\":0,\"name\":\"GPU-A\"},{\"id\":1,"
        "\"name\":\"GPU-B\"}],\"distributedInfo\":{\"backend\":\"nccl\",\"rank\":3,"
        "\"world_size\":8},\"traceEvents\":["
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"ProfilerStep#12\",\"pid\":9,\"tid\":9,"
        "\"ts\":0,\"dur\":100},"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":9,\"tid\":9,"
        "\"ts\":1,\"dur\":1,\"args\":{\"correlation\":77}},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm\",\"pid\":1,\"tid\":7,\"ts\":5,"
        "\"dur\":3,\"args\":{\"device\":1,\"stream\":7,\"correlation\":77,\"grid\":[4,2,1],"
        "\"block\":[128,1,1],\"registers per thread\":32,\"shared memory\":1024,"
        "\"est. achieved occupancy %\":50}},"
        "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy DtoH (Device -> Pinned)\","
        "\"pid\":1,\"tid\":7,\"ts\":9,\"dur\":1,\"args\":{\"device\":1}},"
        "{\"ph\":\"X\",\"cat\":\"Memcpy\",\"name\":\"Memcpy HtoD\",\"pid\":1,\"tid\":7,\"ts\":11,"
        "\"dur\":1},{\"ph\":\"X\",\"cat\":\"Memset\",\"name\":\"Memset (Device)\",\"pid\":1,"
        "\"tid\":7,\"ts\":13,\"dur\":1}]}";
    CU_ASSERT_EQUAL(run_doc(doc, &r), 0);
    const rec *step = find(&r, "ProfilerStep#12"), *launch = find(&r, "cudaLaunchKernel"),
              *k = find(&r, "gemm");
    CU_ASSERT_PTR_NOT_NULL_FATAL(step);
    CU_ASSERT_PTR_NOT_NULL_FATAL(launch);
    CU_ASSERT_PTR_NOT_NULL_FATAL(k);
    CU_ASSERT_EQUAL(step->kind, XPV_KIND_STEP);
    CU_ASSERT_EQUAL(step->step, 12);
    CU_ASSERT_EQUAL(step->step_src, XPV_STEP_PROFILER_STEP);
    CU_ASSERT_EQUAL(launch->kind, XPV_KIND_LAUNCH);
    CU_ASSERT_EQUAL(launch->corr, 77);
    CU_ASSERT_EQUAL(k->kind, XPV_KIND_KERNEL);
    CU_ASSERT_EQUAL(k->corr, 77);
    CU_ASSERT_EQUAL(find(&r, "Memcpy DtoH (Device -> Pinned)")->kind, XPV_KIND_MEMCPY_D2H);
    CU_ASSERT_EQUAL(find(&r, "Memcpy HtoD")->kind, XPV_KIND_MEMCPY_H2D);
    CU_ASSERT_EQUAL(find(&r, "Memset (Device)")->kind, XPV_KIND_MEMSET);
    CU_ASSERT_STRING_EQUAL(query(&r, "SELECT producer FROM profiles WHERE id=7"), "PyTorch");
    CU_ASSERT_STRING_EQUAL(query(&r, "SELECT devices FROM profiles WHERE id=7"),
                           "[\"GPU-A\",\"GPU-B\"]");
    const char *facts = query(&r, "SELECT facts FROM profiles WHERE id=7");
    CU_ASSERT(strstr(facts, "\"rank\":\"3\"") && strstr(facts, "\"world_size\":\"8\""));
    CU_ASSERT_STRING_EQUAL(
        query(&r, "SELECT device_id FROM tracks WHERE profile_id=7 AND pid=1 AND tid=7"), "1");
    result_free(&r);
}

/* Without ProfilerStep#N: Lightning's training_step and torch.optim's
 * Optimizer.step annotations are step markers of their own, weaker sources;
 * a zero-length kernel keeps its duration of 0 (not "no duration"). */
static void test_pytorch_weaker_step_markers(void)
{
    result r;
    const char *doc =
        "{\"schemaVersion\":1,\"traceEvents\":["
        "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":"
        "\"[LightningModule]Lit.training_step\",\"pid\":9,\"tid\":9,\"ts\":0,\"dur\":50},"
        "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"Optimizer.step#SGD.step\","
        "\"pid\":9,\"tid\":9,\"ts\":60,\"dur\":10},"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::train_steps\",\"pid\":9,"
        "\"tid\":9,\"ts\":61,\"dur\":1},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"fill\",\"pid\":1,\"tid\":7,"
        "\"ts\":65,\"dur\":0,\"args\":{\"device\":1,\"stream\":7}}]}";
    CU_ASSERT_EQUAL(run_doc(doc, &r), 0);
    const rec *ts = find(&r, "[LightningModule]Lit.training_step"),
              *opt = find(&r, "Optimizer.step#SGD.step"), *op = find(&r, "aten::train_steps"),
              *k = find(&r, "fill");
    CU_ASSERT_PTR_NOT_NULL_FATAL(ts);
    CU_ASSERT_PTR_NOT_NULL_FATAL(opt);
    CU_ASSERT_PTR_NOT_NULL_FATAL(op);
    CU_ASSERT_PTR_NOT_NULL_FATAL(k);
    CU_ASSERT_EQUAL(ts->kind, XPV_KIND_STEP);
    CU_ASSERT_EQUAL(ts->step_src, XPV_STEP_TRAINING_STEP);
    CU_ASSERT_EQUAL(opt->kind, XPV_KIND_STEP);
    CU_ASSERT_EQUAL(opt->step_src, XPV_STEP_OPTIMIZER);
    CU_ASSERT_EQUAL(opt->step, -1);
    CU_ASSERT_NOT_EQUAL(op->kind, XPV_KIND_STEP);
    CU_ASSERT_EQUAL(k->kind, XPV_KIND_KERNEL);
    CU_ASSERT_EQUAL(k->dur_ns, 0);
    CU_ASSERT_EQUAL(k->dur_ps, 0);
    CU_ASSERT_STRING_EQUAL(query(&r, "SELECT step_source FROM profiles WHERE id=7"),
                           "training_step");
    CU_ASSERT_STRING_EQUAL(query(&r, "SELECT count FROM kernel_stats WHERE profile_id=7 AND"
                                     " kind='kernel' AND device=-1 AND name='fill'"),
                           "1");
    result_free(&r);
}

static void test_jax_classification(void)
{
    result r;
    const char *doc =
        "{\"displayTimeUnit\":\"ns\",\"metadata\":{\"highres-ticks\":true},\"traceEvents\":["
        "{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\",\"args\":{\"name\":\"/device:GPU:0\"}},"
        "{\"ph\":\"M\",\"pid\":1,\"tid\":16,\"name\":\"thread_name\",\"args\":{\"name\":"
        "\"Stream #16(Kernel)\"}},"
        "{\"ph\":\"M\",\"pid\":1,\"tid\":7,\"name\":\"thread_name\",\"args\":{\"name\":"
        "\"Stream #7(MemcpyH2D)\"}},"
        "{\"ph\":\"M\",\"pid\":1,\"tid\":3,\"name\":\"thread_name\",\"args\":{\"name\":\"XLA "
        "Ops\"}},"
        "{\"ph\":\"M\",\"pid\":2,\"name\":\"process_name\",\"args\":{\"name\":\"/host:CPU\"}},"
        "{\"ph\":\"X\",\"pid\":1,\"tid\":16,\"name\":\"fusion_3\",\"ts\":10,\"dur\":2,\"args\":{"
        "\"correlation_id\":\"55\",\"kernel_details\":\"regs:32 grid:1,2,3 block:4,5,6\","
        "\"hlo_op\":\"fusion.3\",\"group_id\":\"4\"}},"
        "{\"ph\":\"X\",\"pid\":1,\"tid\":7,\"name\":\"copy\",\"ts\":12,\"dur\":2},"
        "{\"ph\":\"X\",\"pid\":1,\"tid\":3,\"name\":\"dot.1\",\"ts\":12,\"dur\":2},"
        "{\"ph\":\"X\",\"pid\":2,\"tid\":1,\"name\":\"train\",\"ts\":1,\"dur\":50,\"args\":{"
        "\"step_num\":\"4\",\"_r\":\"1\"}},"
        "{\"ph\":\"X\",\"pid\":2,\"tid\":1,\"name\":\"cuLaunchKernel\",\"ts\":2,\"dur\":1,"
        "\"args\":{\"correlation_id\":\"55\"}}]}";
    CU_ASSERT_EQUAL(run_doc(doc, &r), 0);
    const rec *k = find(&r, "fusion_3"), *step = find(&r, "train");
    CU_ASSERT_PTR_NOT_NULL_FATAL(k);
    CU_ASSERT_PTR_NOT_NULL_FATAL(step);
    CU_ASSERT_EQUAL(k->kind, XPV_KIND_KERNEL);
    CU_ASSERT_EQUAL(k->corr, 55);
    CU_ASSERT_EQUAL(k->step, 4);
    CU_ASSERT_EQUAL(find(&r, "copy")->kind, XPV_KIND_MEMCPY_H2D);
    CU_ASSERT_EQUAL(find(&r, "dot.1")->kind, XPV_KIND_XLA_OP);
    CU_ASSERT_EQUAL(step->kind, XPV_KIND_STEP);
    CU_ASSERT_EQUAL(step->step, 4);
    CU_ASSERT_EQUAL(step->step_src, XPV_STEP_ANNOTATION);
    CU_ASSERT_EQUAL(find(&r, "cuLaunchKernel")->kind, XPV_KIND_LAUNCH);
    CU_ASSERT_EQUAL(find(&r, "cuLaunchKernel")->corr, 55);
    CU_ASSERT_STRING_EQUAL(query(&r, "SELECT producer FROM profiles WHERE id=7"), "JAX/XLA");
    CU_ASSERT_STRING_EQUAL(query(&r, "SELECT devices FROM profiles WHERE id=7"),
                           "[\"/device:GPU:0\"]");
    result_free(&r);
}

static void test_tensorflow_classification(void)
{
    result r;
    const char *doc =
        "{\"traceEvents\":[{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"args\":{\"name\":"
        "\"/device:GPU:0/stream:15 Compute\"}},{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":2,"
        "\"args\":{\"name\":\"/job:localhost/replica:0/task:0/device:GPU:0 Compute\"}},"
        "{\"ph\":\"X\",\"cat\":\"Op\",\"name\":\"MatMul\",\"pid\":1,\"tid\":0,\"ts\":1,\"dur\":2,"
        "\"args\":{\"name\":\"dense/MatMul\",\"op\":\"MatMul\"}},"
        "{\"ph\":\"X\",\"cat\":\"Op\",\"name\":\"MEMCPYDtoH\",\"pid\":1,\"tid\":0,\"ts\":4,"
        "\"dur\":1,\"args\":{\"name\":\"edge\",\"op\":\"MEMCPYDtoH\"}},"
        "{\"ph\":\"X\",\"cat\":\"Op\",\"name\":\"MatMulOp\",\"pid\":2,\"tid\":0,\"ts\":1,"
        "\"dur\":2},"
        "{\"ph\":\"X\",\"cat\":\"Op\",\"name\":\"Relu\",\"pid\":1,\"tid\":0,\"ts\":6,\"dur\":0}]}";
    CU_ASSERT_EQUAL(run_doc(doc, &r), 0);
    CU_ASSERT_EQUAL(find(&r, "MatMul")->kind, XPV_KIND_KERNEL);
    /* a zero-length kernel is a kernel instance, counted in kernel_stats */
    CU_ASSERT_EQUAL(find(&r, "Relu")->kind, XPV_KIND_KERNEL);
    CU_ASSERT_EQUAL(find(&r, "Relu")->dur_ps, 0);
    CU_ASSERT_STRING_EQUAL(query(&r, "SELECT count || '/' || min_ps FROM kernel_stats WHERE"
                                     " profile_id=7 AND device=-1 AND name='Relu'"),
                           "1/0");
    CU_ASSERT_EQUAL(find(&r, "MEMCPYDtoH")->kind, XPV_KIND_MEMCPY_D2H);
    CU_ASSERT_EQUAL(find(&r, "MatMulOp")->kind, XPV_KIND_DEVICE_OTHER);
    CU_ASSERT_STRING_EQUAL(query(&r, "SELECT producer FROM profiles WHERE id=7"), "TensorFlow");
    CU_ASSERT_STRING_EQUAL(query(&r, "SELECT device_id FROM tracks WHERE profile_id=7 AND pid=1"),
                           "0");
    result_free(&r);
}

/* ---- bad input ---- */

static const char GOOD[] =
    "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\\u00e9\",\"pid\":1,\"tid\":2,\"ts\":1.5,"
    "\"dur\":2,\"args\":{\"k\":[1,{\"x\":null}],\"s\":\"v\"}},{\"ph\":\"i\",\"ts\":-3e2}],"
    "\"meta\":[true,false]}";

static void test_bad_input_kinds(void)
{
    expect_error("[{\"ph\":\"X\",\"name\":\"a\xff\"}]", 22, 0, "UTF-8");
    expect_error("[{\"ph\":\"X\",\"name\":\"\xc0\xaf\"}]", 23, 0, "UTF-8");
    expect_error("[{\"ph\":\"X\",\"name\":\"\xed\xa0\x80\"}]", 24, 0, "UTF-8");
    expect_error("[{\"ph\" \"X\"}]", 12, 0, "':'");
    expect_error("[{\"ph\":\"X\",\"ts\":01}]", 20, 0, "number");
    expect_error("[{\"ph\":\"X\",\"ts\":1e30}]", 22, 0, "out of range");
    expect_error("[{\"ph\":\"X\",\"ts\":1,\"dur\":9e15}]", 30, 0, "out of range");
    expect_error("{\"a\":1}", 7, 0, "not a trace");
    expect_error("\"hello\"", 7, 0, "not a trace");
    expect_error("[1,2]", 5, 0, "not a trace");
    expect_error("[{\"a\":1}]", 9, 0, "not a trace");
    expect_error("{\"traceEvents\":{}}", 18, 0, "not a trace");
    expect_error("", 0, 0, "empty");
    expect_error("[{\"ph\":\"X\"}] x", 14, 0, "after the JSON");
    expect_error("[{\"ph\":\"X\",\"name\":\"a\tb\"}]", 25, 0, "control character");
    expect_error("[{\"ph\":\"X\",\"name\":\"\\q\"}]", 24, 0, "escape");
    /* Deep nesting, without recursion. */
    char deep[400];
    int n = snprintf(deep, sizeof deep, "[{\"ph\":\"X\",\"args\":{\"d\":");
    for (int i = 0; i < 100; i++)
        deep[n++] = '[';
    for (int i = 0; i < 100; i++)
        deep[n++] = ']';
    n += snprintf(deep + n, sizeof deep - (size_t)n, "}}]");
    expect_error(deep, (size_t)n, 0, "nesting too deep");
}

static void test_truncated_gzip(void)
{
    const char *dir = xpv_test_tmpdir();
    char path[512];
    snprintf(path, sizeof path, "%s/full.gz", dir);
    char doc[20000];
    size_t len = 0;
    len += (size_t)snprintf(doc, sizeof doc, "[");
    for (int i = 0; i < 200; i++)
        len += (size_t)snprintf(doc + len, sizeof doc - len,
                                "{\"ph\":\"X\",\"name\":\"e%d\",\"ts\":%d,\"dur\":1},", i, i * 7);
    len += (size_t)snprintf(doc + len, sizeof doc - len, "{}]");
    write_gzip(path, doc, len);
    FILE *f = fopen(path, "rb");
    char gz[20000];
    size_t gzlen = fread(gz, 1, sizeof gz, f);
    fclose(f);
    /* Cut inside the compressed data and inside the trailer. */
    size_t cuts[] = {gzlen / 2, gzlen - 4};
    for (int i = 0; i < 2; i++) {
        const char *d = xpv_test_tmpdir();
        CU_ASSERT_EQUAL_FATAL(xpv_test_write(d, "t.json.gz", gz, cuts[i]), 0);
        char p[512];
        snprintf(p, sizeof p, "%s/t.json.gz", d);
        sqlite3 *db = fresh_index(d);
        xpv_err err = {{0}}, rerr = {{0}};
        xpv_sink *sink = xpv_sink_open(db, 7, &err);
        CU_ASSERT_EQUAL(xpv_reader_for(XPV_FMT_CHROME_JSON)(p, sink, &rerr), -1);
        CU_ASSERT(strstr(rerr.msg, "truncated") != NULL || strstr(rerr.msg, "end of input"));
        CU_ASSERT(strstr(rerr.msg, "offset") != NULL);
        xpv_sink_stats st;
        CU_ASSERT_EQUAL(xpv_sink_finish(sink, &st, &err), 0);
        if (i == 1) CU_ASSERT_EQUAL(st.events, 200); /* all data was there: kept */
        xpv_sink_free(sink);
        sqlite3_close(db);
    }
}

/* Reads doc into profile 7 of db (cleared first); returns the reader's
 * result with its message in err. For the many small runs below. */
static int quick_read(sqlite3 *db, const char *dir, const char *doc, size_t len, xpv_err *rerr)
{
    char path[512];
    snprintf(path, sizeof path, "%s/q.json", dir);
    CU_ASSERT_EQUAL_FATAL(xpv_test_write(dir, "q.json", doc, len), 0);
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL(xpv_index_clear_profile(db, 7, &err), 0);
    xpv_sink *sink = xpv_sink_open(db, 7, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(sink);
    memset(rerr, 0, sizeof *rerr);
    int rc = xpv_reader_for(XPV_FMT_CHROME_JSON)(path, sink, rerr);
    xpv_sink_stats st;
    CU_ASSERT_EQUAL(xpv_sink_finish(sink, &st, &err), 0);
    xpv_sink_free(sink);
    return rc;
}

static void test_every_byte(void)
{
    /* Cut short at every byte: always an error with an offset. Damaged at
     * every byte: never a crash; an error always names the offset. */
    size_t len = strlen(GOOD);
    result r;
    CU_ASSERT_EQUAL(run_doc(GOOD, &r), 0);
    CU_ASSERT_EQUAL(r.n, 2);
    result_free(&r);
    const char *dir = xpv_test_tmpdir();
    sqlite3 *db = fresh_index(dir);
    xpv_err err;
    int failures = 0, errors = 0;
    for (size_t cut = 0; cut < len; cut++)
        if (quick_read(db, dir, GOOD, cut, &err) != -1 || !strstr(err.msg, "offset")) failures++;
    CU_ASSERT_EQUAL(failures, 0);
    const char bad[] = {'\x01', '"', '}', ']', ',', '\xff', 'x'};
    char doc[sizeof GOOD];
    failures = 0;
    for (size_t at = 0; at < len; at++) {
        for (size_t b = 0; b < sizeof bad; b++) {
            memcpy(doc, GOOD, len);
            doc[at] = bad[b];
            int rc = quick_read(db, dir, doc, len, &err);
            errors += rc != 0;
            if (rc != 0 && !strstr(err.msg, "offset")) failures++;
        }
    }
    CU_ASSERT_EQUAL(failures, 0);
    CU_ASSERT(errors > (int)len * 5); /* nearly every damage is caught */
    sqlite3_close(db);
}

static void test_absurdly_long_string(void)
{
    size_t n = (70u << 20);
    char *doc = malloc(n + 64);
    size_t len = (size_t)snprintf(doc, 64, "[{\"ph\":\"X\",\"name\":\"");
    memset(doc + len, 'a', n);
    len += n;
    memcpy(doc + len, "\"}]", 3);
    len += 3;
    expect_error(doc, len, 1, "longer than");
    free(doc);
}

static void test_events_larger_than_a_chunk(void)
{
    /* Events of 2.5 MB straddle the reader's 4 MB chunks and its 1 MB
     * headroom; small ones between them go back to the fast path. */
    size_t big = (5u << 20) / 2, cap = 6 * big + 4096, len = 1;
    char *doc = malloc(cap);
    doc[0] = '[';
    for (int i = 0; i < 5; i++) {
        len += (size_t)snprintf(doc + len, cap - len,
                                "{\"ph\":\"X\",\"name\":\"small%d\",\"ts\":%d,\"dur\":1},"
                                "{\"ph\":\"X\",\"name\":\"big%d\",\"ts\":%d,\"dur\":1,"
                                "\"args\":{\"blob\":\"",
                                i, i, i, i);
        memset(doc + len, 'a' + i, big);
        len += big;
        len += (size_t)snprintf(doc + len, cap - len, "\"}},");
    }
    doc[len - 1] = ']';
    result r;
    CU_ASSERT_EQUAL(run_doc_n(doc, len, 1, &r), 0);
    CU_ASSERT_EQUAL(r.n, 10);
    for (int i = 0; i < 5; i++) {
        char name[16], want[16];
        snprintf(name, sizeof name, "big%d", i);
        const rec *e = find(&r, name);
        CU_ASSERT_PTR_NOT_NULL_FATAL(e);
        snprintf(want, sizeof want, "blob=t:%c%c%c", 'a' + i, 'a' + i, 'a' + i);
        CU_ASSERT(strncmp(e->args, want, strlen(want)) == 0);
    }
    result_free(&r);
    free(doc);
}

/* ---- re-indexing ---- */

static const char *status_of(sqlite3 *db)
{
    static char buf[600];
    buf[0] = 0;
    sqlite3_stmt *st;
    sqlite3_prepare_v2(db,
                       "SELECT status || ':' || coalesce(events, -1) || ':' || "
                       "coalesce(error, '') FROM profiles",
                       -1, &st, NULL);
    if (sqlite3_step(st) == SQLITE_ROW)
        snprintf(buf, sizeof buf, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return buf;
}

static void index_dir(const char *root, sqlite3 *db)
{
    xpv_found_list found;
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL_FATAL(xpv_discover(root, &found, &err), 0);
    CU_ASSERT(xpv_indexer_register(db, &found, &err) >= 0);
    CU_ASSERT_EQUAL(xpv_indexer_run(db, &found, NULL, NULL, NULL, &err), 0);
    xpv_found_list_free(&found);
}

static void test_reindex_after_fix(void)
{
    const char *dir = xpv_test_tmpdir();
    char root[512], db_path[512];
    snprintf(root, sizeof root, "%s/prof", dir);
    snprintf(db_path, sizeof db_path, "%s/index.sqlite", dir);
    const char *broken = "[{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":1},{\"ph\":\"X\",\"name\"";
    CU_ASSERT_EQUAL_FATAL(xpv_test_write(dir, "prof/w.pt.trace.json", broken, strlen(broken)), 0);
    sqlite3 *db = NULL;
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL_FATAL(xpv_index_open(db_path, root, &db, NULL, &err), 0);
    index_dir(root, db);
    const char *s = status_of(db);
    CU_ASSERT(strncmp(s, "error:1:", 8) == 0);
    CU_ASSERT(strstr(s, "offset") != NULL);
    const char *fixed = "[{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":1},{\"ph\":\"X\",\"name\":"
                        "\"b\",\"ts\":2,\"dur\":1},{\"ph\":\"i\",\"name\":\"c\",\"ts\":3}]";
    CU_ASSERT_EQUAL_FATAL(xpv_test_write(dir, "prof/w.pt.trace.json", fixed, strlen(fixed)), 0);
    index_dir(root, db);
    CU_ASSERT_STRING_EQUAL(status_of(db), "ok:3:");
    sqlite3_close(db);
}

int main(void)
{
    static const xpv_test_case tests[] = {
        {"array form, trailing comma and {}", test_array_form},
        {"array without its closing bracket", test_unterminated_array},
        {"object form skips unknown keys (plain and gzip)", test_object_form_skips_unknown_keys},
        {"string pids and tids", test_string_pids_and_tids},
        {"fractional times are exact", test_exact_times},
        {"B/E pairing and unmatched ones", test_begin_end},
        {"counters, async, flows, unknown phases, M", test_counters_async_flows},
        {"arg types", test_arg_types},
        {"NaN and Infinity", test_non_finite_numbers},
        {"string scan at every length and position", test_string_scan_all_positions},
        {"PyTorch classification and facts", test_pytorch_classification},
        {"PyTorch training_step and Optimizer.step markers", test_pytorch_weaker_step_markers},
        {"JAX classification and facts", test_jax_classification},
        {"TensorFlow classification", test_tensorflow_classification},
        {"bad input of every kind", test_bad_input_kinds},
        {"truncated gzip", test_truncated_gzip},
        {"cut or damaged at every byte", test_every_byte},
        {"absurdly long string", test_absurdly_long_string},
        {"events larger than a chunk", test_events_larger_than_a_chunk},
        {"re-indexing after a fix", test_reindex_after_fix},
        {NULL, NULL},
    };
    return xpv_test_run("chrome_json", tests, 0);
}
