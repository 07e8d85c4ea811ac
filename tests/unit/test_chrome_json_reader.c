/*
 * test_chrome_json_reader.c — the walk of chrome_json_reader.c on small
 * inline documents: both top-level forms, trailing commas and {}, exact
 * fractional times, every arg type, NaN and Infinity, the tokenizer's
 * string scan, and every kind of bad input (each an error naming the byte
 * offset, never a crash), plain and gzip, plus re-indexing a file after it
 * was fixed.
 */
#define _GNU_SOURCE
#include "chrome_json_testutil.h"
#include "indexer/discover.h"
#include "store/index_db.h"
#include "indexer/indexer.h"
#include "indexer/readers/json_scan.h"

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

/* ---- args and numbers ---- */

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
/* The inline number scan answers as js_scan_number() does: random runs of
 * number characters and delimiters, in windows of every length. */
static void test_number_scan_fast(void)
{
    static const char alphabet[] = "0123456789012345678901234567890123456789-.eE+, ]}x";
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    char buf[64];
    int bad = 0, fast_ok = 0;
    for (int round = 0; round < 200000; round++) {
        size_t len = 1 + (size_t)(xpv_test_xorshift(&rng) % 40);
        /* mostly well-formed: digits, maybe a '.', then a delimiter */
        for (size_t i = 0; i < sizeof buf; i++)
            buf[i] = alphabet[xpv_test_xorshift(&rng) % (round % 3 ? 20 : sizeof alphabet - 1)];
        if (round % 3) {
            if (round % 5 == 0) buf[0] = '-';
            if (round % 7 == 0) buf[1 + xpv_test_xorshift(&rng) % 17] = '.';
            buf[len] = ",]} "[round % 4];
        }
        size_t window = round % 11 ? sizeof buf : 1 + xpv_test_xorshift(&rng) % sizeof buf;
        for (int final = 0; final <= 1; final++) {
            const char *a1 = NULL, *a2 = NULL;
            int i1 = -1, i2 = -1;
            js_error e1 = {NULL, NULL}, e2 = {NULL, NULL};
            int r1 = js_scan_number(buf, buf + window, final, &a1, &i1, &e1);
            int r2 = js_scan_number_fast(buf, buf + window, final, &a2, &i2, &e2);
            if (r1 != r2 || (r1 == JS_OK && (a1 != a2 || i1 != i2)) ||
                (r1 == JS_ERR && e1.at != e2.at))
                bad++;
            fast_ok += r1 == JS_OK;
        }
    }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT(fast_ok > 100000); /* the generator does make numbers */
}

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
                const char *fast_after = NULL;
                int fast_esc = 0;
                js_error fast_e = {NULL, NULL};
                if (js_scan_string_fast(buf, buf + n + 1 + 20, &fast_after, &fast_esc, &fast_e) !=
                        rc ||
                    (rc == JS_OK && (fast_after != after || fast_esc != esc)) ||
                    (rc == JS_ERR && fast_e.at != e.at))
                    bad++;
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

/* Scaled conversion at the int64 edges, where the 19-digit fast path and
 * the general path meet: both must agree on every value and on overflow. */
static void test_scaled_edges(void)
{
    static const struct {
        const char *text;
        int scale, rc;
        int64_t want;
    } cases[] = {
        {"9223372036854775.807", 3, 0, INT64_MAX},
        {"9223372036854775.808", 3, -1, 0},
        {"-9223372036854775.808", 3, 0, INT64_MIN},
        {"-9223372036854775.809", 3, -1, 0},
        {"9999999999999999.999", 3, -1, 0},
        {"1623142624502746", 3, 0, 1623142624502746000},
        {"-1623142624502746.5", 3, 0, -1623142624502746500},
        {"1623142624502746.12345", 3, 0, 1623142624502746123},
        {"0000000000000000001", 0, 0, 1},
        {"00000000000000000001", 0, 0, 1},
        {"12", 6, 0, 12000000},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t v = 0;
        int rc = js_to_scaled_int64(cases[i].text, strlen(cases[i].text), cases[i].scale, &v);
        CU_ASSERT_EQUAL(rc, cases[i].rc);
        if (rc == 0) CU_ASSERT_EQUAL(v, cases[i].want);
    }
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
    /* Plain, not gzip: 70 MB of one byte gzipped is a gzip bomb by ratio,
     * and that guard would answer before the string limit is reached. */
    expect_error(doc, len, 0, "longer than");
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

/* Builds an array of n small events (names e0, e1, ...) in several chunks
 * and batches, with `bad` in place of event k's ts and `tail` after the
 * last; *at: the offset of `bad`. */
static char *many_events(int n, int k, const char *bad, const char *tail, size_t *len, size_t *at)
{
    size_t cap = (size_t)n * 96 + 4096;
    char *doc = malloc(cap);
    size_t m = 1;
    doc[0] = '[';
    *at = 0;
    for (int i = 0; i < n; i++) {
        m += (size_t)snprintf(doc + m, cap - m,
                              "{\"ph\":\"X\",\"name\":\"e%d\",\"pid\":%d,\"ts\":", i, i % 3);
        if (i == k) *at = m;
        m += (size_t)snprintf(doc + m, cap - m, "%s,\"dur\":1,\"args\":{\"i\":%d}},",
                              i == k ? bad : "7", i);
    }
    m += (size_t)snprintf(doc + m, cap - m, "%s", tail);
    *len = m;
    return doc;
}

static void errors_across_threads(void)
{
    size_t len, at;
    char *doc = many_events(120000, 90000, "1e30", "{\"ph\":", &len, &at);
    result r;
    CU_ASSERT_EQUAL(run_doc_n(doc, len, 1, &r), -1);
    char want[96];
    snprintf(want, sizeof want, "ts out of range at byte offset %zu (uncompressed)", at);
    CU_ASSERT_STRING_EQUAL(r.err.msg, want);
    CU_ASSERT_EQUAL(r.n, 90000);
    const rec *last = find(&r, "e89999");
    CU_ASSERT_PTR_NOT_NULL(last);
    CU_ASSERT_PTR_NULL(find(&r, "e90000"));
    if (last) CU_ASSERT_STRING_EQUAL(last->args, "i=i:89999;");
    result_free(&r);
    free(doc);

    doc = many_events(120000, 90000, "7x", "]", &len, &at);
    CU_ASSERT_EQUAL(run_doc_n(doc, len, 0, &r), -1);
    CU_ASSERT(strstr(r.err.msg, "at byte offset") != NULL);
    CU_ASSERT_EQUAL(r.n, 90000);
    result_free(&r);
    free(doc);
}

static void test_errors_across_threads(void)
{
    /* The parser's error (ts out of range) comes first in the stream, so it
     * wins over the tokenizer's later one, with every event before it
     * stored in order; and the tokenizer's own error keeps the events
     * before it too. The same with the batches mapped inline. */
    errors_across_threads();
    setenv("XPV_JSON_PARSER", "inline", 1);
    errors_across_threads();
    setenv("XPV_JSON_PARSER", "thread", 1);
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
    CU_ASSERT_EQUAL(xpv_indexer_run(db, &found, NULL, &err), 0);
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
        {"fractional times are exact", test_exact_times},
        {"arg types", test_arg_types},
        {"NaN and Infinity", test_non_finite_numbers},
        {"string scan at every length and position", test_string_scan_all_positions},
        {"inline number scan equals the full one", test_number_scan_fast},
        {"scaled times at the int64 edges", test_scaled_edges},
        {"bad input of every kind", test_bad_input_kinds},
        {"truncated gzip", test_truncated_gzip},
        {"cut or damaged at every byte", test_every_byte},
        {"absurdly long string", test_absurdly_long_string},
        {"events larger than a chunk", test_events_larger_than_a_chunk},
        {"errors of either thread, in stream order", test_errors_across_threads},
        {"re-indexing after a fix", test_reindex_after_fix},
        {NULL, NULL},
    };
    /* Every test maps on a parser thread, as on three CPUs or more. */
    setenv("XPV_JSON_PARSER", "thread", 1);
    return xpv_test_run("chrome_json_reader", tests, 0);
}
