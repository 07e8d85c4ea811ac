/*
 * test_route_table.c — the route table (server/route_table.c): the
 * pattern matcher, which row a path reaches, the table's own rules
 * (patterns well formed, fallbacks after the routes they back up), and the
 * one parser per parameter kind with its 400 texts.
 */
#include "testutil.h"
#include "api/api.h"
#include "server/route_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int match(const char *pattern, const char *path, xpv_route_capture *caps)
{
    return xpv_route_match(pattern, path, caps, XPV_ROUTE_MAX_CAPTURES);
}

static void test_match_literal(void)
{
    xpv_route_capture caps[XPV_ROUTE_MAX_CAPTURES];
    CU_ASSERT_EQUAL(match("/api/health", "/api/health", caps), 0);
    CU_ASSERT_EQUAL(match("/api/health", "/api/healthz", caps), -1);
    CU_ASSERT_EQUAL(match("/api/health", "/api/healt", caps), -1);
    CU_ASSERT_EQUAL(match("/api/health", "/api/health/", caps), -1);
    CU_ASSERT_EQUAL(match("/api/health", "", caps), -1);
}

static void test_match_segment(void)
{
    xpv_route_capture caps[XPV_ROUTE_MAX_CAPTURES];
    const char *path = "/api/profiles/00112233aabbccdd/kernels";
    CU_ASSERT_EQUAL(match("/api/profiles/{id}/kernels", path, caps), 1);
    CU_ASSERT_EQUAL(caps[0].name_len, 2);
    CU_ASSERT_NSTRING_EQUAL(caps[0].name, "id", 2);
    CU_ASSERT_EQUAL(caps[0].len, 16);
    CU_ASSERT_NSTRING_EQUAL(caps[0].value, "00112233aabbccdd", 16);
    /* a segment is never empty and never holds a slash */
    CU_ASSERT_EQUAL(match("/api/profiles/{id}/kernels", "/api/profiles//kernels", caps), -1);
    CU_ASSERT_EQUAL(match("/api/profiles/{id}", "/api/profiles/a/b", caps), -1);
    CU_ASSERT_EQUAL(match("/api/profiles/{id}/steps", path, caps), -1);
}

static void test_match_rest(void)
{
    xpv_route_capture caps[XPV_ROUTE_MAX_CAPTURES];
    CU_ASSERT_EQUAL(match("/p/{id}/hlo/{module*}", "/p/x/hlo/jit_f(1)/a b", caps), 2);
    CU_ASSERT_NSTRING_EQUAL(caps[1].name, "module", caps[1].name_len);
    CU_ASSERT_EQUAL(caps[1].name_len, 6);
    CU_ASSERT_STRING_EQUAL(caps[1].value, "jit_f(1)/a b");   /* slashes included */
    CU_ASSERT_EQUAL(match("/tb/{route*}", "/tb/", caps), 1); /* may be empty */
    CU_ASSERT_EQUAL(caps[0].len, 0);
    CU_ASSERT_EQUAL(match("/tb/{route*}", "/tb", caps), -1);
}

/* The row that answers a path, by pattern; NULL when none. */
static const char *row_for(const char *method, const char *path, char *clean)
{
    xpv_route_capture caps[XPV_ROUTE_MAX_CAPTURES];
    int n;
    const xpv_route *rt = xpv_route_find(method, path, clean, XPV_HTTP_MAX_URL, caps, &n);
    return rt ? rt->pattern : NULL;
}

static void test_find(void)
{
    static char clean[XPV_HTTP_MAX_URL];
    static const char *const cases[][2] = {
        {"/api/health", "/api/health"},
        {"/api/health/", "/api/health"}, /* one trailing slash is ignored under /api */
        {"/api/profiles/latest", "/api/profiles/latest"},
        {"/api/profiles/0011223344556677", "/api/profiles/{id}"},
        {"/api/profiles/latest/kernels", "/api/profiles/{id}/kernels"},
        {"/api/profiles/x/tools", "/api/profiles/{id}/tools"},
        {"/api/profiles/x/tools/trace_viewer", "/api/profiles/{id}/tools/trace_viewer"},
        {"/api/profiles/x/tools/kernel_stats", "/api/profiles/{id}/tools/{tag*}"},
        {"/api/profiles/x/hlo", "/api/profiles/{id}/hlo"},
        {"/api/profiles/x/hlo/a/b", "/api/profiles/{id}/hlo/{module*}"},
        {"/api/profiles/x/nope", "/api/profiles/{id}/{rest*}"},
        {"/api/compare", "/api/compare"},
        {"/api", "/api"},
        {"/api/", "/api"},
        {"/api/nope/deeper", "/api/{rest*}"},
        {"/data/plugin/profile/runs", "/data/plugin/profile/runs"},
        {"/data/plugin/profile/data_csv", "/data/plugin/profile/data_csv"},
        {"/data/plugin/profile/runs/", "/data/plugin/profile/{route*}"}, /* no slash rule */
        {"/data/plugin/profile/", "/data/plugin/profile/{route*}"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *got = row_for("GET", cases[i][0], clean);
        CU_ASSERT_PTR_NOT_NULL_FATAL(got);
        if (strcmp(got, cases[i][1]) != 0) fprintf(stderr, "%s -> %s\n", cases[i][0], got);
        CU_ASSERT_STRING_EQUAL(got, cases[i][1]);
    }
    CU_ASSERT_STRING_EQUAL(row_for("HEAD", "/api/health/", clean), "/api/health");
    CU_ASSERT_STRING_EQUAL(clean, "/api/health");
    /* outside the table: the embedded frontend answers */
    CU_ASSERT_PTR_NULL(row_for("GET", "/", clean));
    CU_ASSERT_PTR_NULL(row_for("GET", "/apix", clean));
    CU_ASSERT_PTR_NULL(row_for("GET", "/data/plugin/profile", clean));
    CU_ASSERT_PTR_NULL(row_for("POST", "/api/health", clean));
}

/* Every row's pattern is well formed, every route matches its own
 * pattern first (no earlier row shadows it), and params name each once. */
static void test_table_rules(void)
{
    size_t n;
    const xpv_route *t = xpv_route_table(&n);
    static char clean[XPV_HTTP_MAX_URL], path[256];
    CU_ASSERT(n > 30);
    for (size_t i = 0; i < n; i++) {
        CU_ASSERT_EQUAL(t[i].pattern[0], '/');
        CU_ASSERT(!(t[i].flags & XPV_ROUTE_FALLBACK) == (t[i].summary != NULL));
        /* a sample path: each {x} becomes "x0", each {x*} "x0/x1" */
        size_t k = 0;
        for (const char *p = t[i].pattern; *p && k + 8 < sizeof path;) {
            if (*p == '{') {
                const char *close = strchr(p, '}');
                k += (size_t)snprintf(path + k, sizeof path - k, "%s",
                                      close[-1] == '*' ? "x0/x1" : "x0");
                p = close + 1;
            } else {
                path[k++] = *p++;
            }
        }
        path[k] = 0;
        const char *got = row_for(t[i].method, path, clean);
        CU_ASSERT_PTR_NOT_NULL_FATAL(got);
        if (strcmp(got, t[i].pattern)) fprintf(stderr, "%s shadowed by %s\n", t[i].pattern, got);
        CU_ASSERT_STRING_EQUAL(got, t[i].pattern);
        for (int a = 0; t[i].params && t[i].params[a].name; a++) {
            CU_ASSERT(a < XPV_ROUTE_MAX_PARAMS);
            for (int b = 0; b < a; b++)
                CU_ASSERT_STRING_NOT_EQUAL(t[i].params[a].name, t[i].params[b].name);
            xpv_param_kind kind = t[i].params[a].kind;
            if (kind == XPV_PARAM_NUMBER || kind == XPV_PARAM_LIST || kind == XPV_PARAM_REF)
                CU_ASSERT_PTR_NOT_NULL(t[i].params[a].error); /* they have no own text */
        }
    }
}

/* The row of a pattern and its parameter of a name. */
static const xpv_route_param *spec(const char *pattern, const char *name)
{
    size_t n;
    const xpv_route *t = xpv_route_table(&n);
    for (size_t i = 0; i < n; i++)
        for (int k = 0; !strcmp(t[i].pattern, pattern) && t[i].params && t[i].params[k].name; k++)
            if (strcmp(t[i].params[k].name, name) == 0) return &t[i].params[k];
    CU_FAIL_FATAL("no such parameter");
    return NULL;
}

/* Parses text by the spec: 0, or -1 with the 400's error text in err. */
static int parse(const xpv_route_param *p, const char *text, xpv_route_value *v, char *err)
{
    xpv_reply r;
    xpv_reply_init(&r);
    memset(v, 0, sizeof *v);
    int rc = xpv_route_parse(NULL, p, text, v, &r);
    err[0] = 0;
    if (rc) {
        CU_ASSERT_EQUAL(r.status, 400);
        snprintf(err, 200, "%s", r.body.data);
    }
    xpv_reply_free(&r);
    return rc;
}

static void test_parse_int_and_enum(void)
{
    xpv_route_value v;
    char err[256];
    const xpv_route_param *device = spec("/api/profiles/{id}/kernels", "device");
    CU_ASSERT_EQUAL(parse(device, "-1", &v, err), 0);
    CU_ASSERT_EQUAL(v.i, -1);
    CU_ASSERT_EQUAL(parse(device, "7", &v, err), 0);
    CU_ASSERT_EQUAL(v.i, 7);
    const char *bad[] = {"", "-2", "1000001", "1x", "1.0", "+-1", "99999999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CU_ASSERT_EQUAL(parse(device, bad[i], &v, err), -1);
        CU_ASSERT_STRING_EQUAL(err, "{\"error\":\"device must be an integer from -1 to 1000000\"}");
    }
    const xpv_route_param *kind = spec("/api/profiles/{id}/kernels", "kind");
    CU_ASSERT_EQUAL(parse(kind, "xla_op", &v, err), 0);
    CU_ASSERT_EQUAL(parse(kind, "xla", &v, err), -1);
    CU_ASSERT_STRING_EQUAL(
        err, "{\"error\":\"kind must be kernel, memcpy, memset, xla_op or hlo_category\"}");
    /* the table's kinds are those the answer knows */
    for (const char *c = kind->choices; *c;) {
        char one[32];
        size_t len = strcspn(c, "|");
        snprintf(one, sizeof one, "%.*s", (int)len, c);
        CU_ASSERT(xpv_api_kernel_kind_valid(one));
        c += len + (c[len] == '|');
    }
    CU_ASSERT_EQUAL(parse(spec("/api/profiles/{id}/kernels", "format"), "xml", &v, err), -1);
    CU_ASSERT_STRING_EQUAL(err, "{\"error\":\"format must be json or csv\"}");
    CU_ASSERT_EQUAL(parse(spec("/api/profiles/{id}/search", "limit"), "0", &v, err), -1);
    CU_ASSERT_STRING_EQUAL(err, "{\"error\":\"limit must be a number from 1 to 1000\"}");
}

static void test_parse_number_list_ref_text(void)
{
    xpv_route_value v;
    char err[256];
    const xpv_route_param *start = spec("/api/profiles/{id}/events", "start_us");
    CU_ASSERT_EQUAL(parse(start, "12.5", &v, err), 0);
    CU_ASSERT_DOUBLE_EQUAL(v.d, 12.5, 0);
    const char *bad[] = {"", "nan", "inf", "1e16", "1e-400", "3us"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CU_ASSERT_EQUAL(parse(start, bad[i], &v, err), -1);
    CU_ASSERT_STRING_EQUAL(
        err, "{\"error\":\"start_us must be a number of microseconds within +-9.2e+15\"}");

    const xpv_route_param *tracks = spec("/api/profiles/{id}/events", "tracks");
    CU_ASSERT_EQUAL(parse(tracks, "3,1,2", &v, err), 0);
    CU_ASSERT_EQUAL(v.n, 3);
    CU_ASSERT_EQUAL(v.list[0], 3);
    CU_ASSERT_EQUAL(v.list[2], 2);
    free(v.list);
    CU_ASSERT_EQUAL(parse(tracks, "1,,2", &v, err), -1);
    free(v.list);
    CU_ASSERT_EQUAL(parse(tracks, "16777216", &v, err), -1);
    free(v.list);
    CU_ASSERT_STRING_EQUAL(err, "{\"error\":\"tracks must be a comma-separated list of track "
                                "ids (at most 4096)\"}");

    const xpv_route_param *ref = spec("/api/profiles/{id}/event", "ref");
    CU_ASSERT_EQUAL(parse(ref, "12:4294967295", &v, err), 0);
    CU_ASSERT_EQUAL(v.i, 12);
    CU_ASSERT_EQUAL(v.j, 4294967295LL);
    CU_ASSERT_EQUAL(parse(ref, "12:4294967296", &v, err), -1);
    CU_ASSERT_EQUAL(parse(ref, "12", &v, err), -1);
    CU_ASSERT_EQUAL(parse(ref, "-1:0", &v, err), -1);

    /* search takes any name a URL carries: kernel names run to thousands of bytes */
    static char q[XPV_HTTP_MAX_URL + 2];
    memset(q, 'a', sizeof q - 1);
    q[sizeof q - 1] = 0;
    CU_ASSERT_EQUAL(parse(spec("/api/profiles/{id}/search", "q"), q, &v, err), -1);
    CU_ASSERT_STRING_EQUAL(err, "{\"error\":\"q is longer than 8192 bytes\"}");
    q[XPV_HTTP_MAX_URL] = 0;
    CU_ASSERT_EQUAL(parse(spec("/api/profiles/{id}/search", "q"), q, &v, err), 0);
}

int main(void)
{
    static const xpv_test_case tests[] = {
        {"match literal", test_match_literal},
        {"match segment", test_match_segment},
        {"match rest", test_match_rest},
        {"find", test_find},
        {"table rules", test_table_rules},
        {"parse int and enum", test_parse_int_and_enum},
        {"parse number list ref text", test_parse_number_list_ref_text},
        {NULL, NULL},
    };
    return xpv_test_run("route_table", tests, 0);
}
