/*
 * fuzz_routes.c — the request router and every handler behind it (REST
 * API, TensorBoard plugin routes, embedded files), called directly with no
 * socket: libmicrohttpd's two request accessors are replaced here by ones
 * that read the fuzz input, so path, query and headers are all fuzzed.
 *
 * Input: "METHOD TARGET [SITE]\n" then "Name: value\n" header lines. In
 * TARGET, "@0", "@1", ... stand for the ids of the indexed profiles, so the
 * fuzzer reaches real answers. SITE picks what answers: none, the main
 * listener of a loopback server; "token", that of a server on the network
 * (it asks FUZZ_TOKEN, answers to fuzz.example); "perfetto", the Perfetto
 * listener. So the Host check, the CORS grant, the cookie and the token
 * are fuzzed with the routes. Besides memory errors and undefined
 * behaviour, it fails on an answer the token server gives without the
 * token, and on a CORS grant the main listener makes or the Perfetto
 * listener makes to an origin it must not.
 *
 * The index holds a small built-in trace and, when XPV_FIXTURES names the
 * shared fixtures, an MI300X xplane (HLO tools).
 */
#define _GNU_SOURCE
#include "fuzz.h"

#include "api/block_marks.h"
#include "api/hlo/hlo_cache.h"
#include "server/access.h"
#include "server/perfetto_listener.h"
#include "server/router.h"
#include "server/static_files.h"

/* The answer checks below are the harness's: they hold in a Release build
 * too. */
#undef NDEBUG
#include <assert.h>
#include <microhttpd.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PAIRS 64
#define FUZZ_PORT 6006
#define FUZZ_TOKEN "0123456789abcdef0123456789abcdef"

typedef struct {
    enum MHD_ValueKind kind;
    char *key, *value;
} pair;

/* What the router sees as the connection. */
struct MHD_Connection {
    pair pairs[MAX_PAIRS];
    int n;
};

static xpv_server server, tokened;
static const char *const fuzz_hosts[] = {"fuzz.example"};
static char ids[4][17];
static int nids;

/* ---- the two accessors the handlers use ---- */

const char *MHD_lookup_connection_value(struct MHD_Connection *c, enum MHD_ValueKind kind,
                                        const char *key)
{
    for (int i = 0; i < c->n; i++)
        if ((c->pairs[i].kind & kind) && strcasecmp(c->pairs[i].key, key) == 0)
            return c->pairs[i].value;
    return NULL;
}

int MHD_get_connection_values(struct MHD_Connection *c, enum MHD_ValueKind kind,
                              MHD_KeyValueIterator it, void *cls)
{
    int n = 0;
    for (int i = 0; i < c->n; i++) {
        if (!(c->pairs[i].kind & kind)) continue;
        n++;
        if (it && it(cls, c->pairs[i].kind, c->pairs[i].key, c->pairs[i].value) != MHD_YES) break;
    }
    return n;
}

/* ---- parsing the input ---- */

static void unescape(char *s)
{
    char *out = s;
    for (; *s; s++) {
        if (*s == '+') {
            *out++ = ' ';
        } else if (*s == '%' && s[1] && s[2] && strchr("0123456789abcdefABCDEF", s[1]) &&
                   strchr("0123456789abcdefABCDEF", s[2])) {
            char hex[3] = {s[1], s[2], 0};
            *out++ = (char)strtol(hex, NULL, 16);
            s += 2;
        } else {
            *out++ = *s;
        }
    }
    *out = 0;
}

static void add_pair(struct MHD_Connection *c, enum MHD_ValueKind kind, char *key, char *value)
{
    if (c->n == MAX_PAIRS) return;
    c->pairs[c->n++] = (pair){kind, key, value};
}

static void parse_query(struct MHD_Connection *c, char *q)
{
    for (char *arg = strtok(q, "&"); arg; arg = strtok(NULL, "&")) {
        char *eq = strchr(arg, '=');
        if (eq) *eq = 0;
        unescape(arg);
        if (eq) unescape(eq + 1);
        add_pair(c, MHD_GET_ARGUMENT_KIND, arg, eq ? eq + 1 : NULL);
    }
}

static void parse_headers(struct MHD_Connection *c, char *lines)
{
    char *save = NULL;
    for (char *l = strtok_r(lines, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        char *colon = strchr(l, ':');
        if (!colon) continue;
        *colon = 0;
        char *v = colon + 1;
        while (*v == ' ')
            v++;
        add_pair(c, MHD_HEADER_KIND, l, v);
    }
}

/* Replaces "@<digit>" with the id of that profile. */
static char *expand_ids(const char *target)
{
    size_t n = strlen(target);
    char *out = malloc(n * 17 + 1), *o = out;
    if (!out) abort();
    for (const char *p = target; *p; p++) {
        if (*p == '@' && p[1] >= '0' && p[1] < '0' + nids) {
            o = stpcpy(o, ids[p[1] - '0']);
            p++;
        } else {
            *o++ = *p;
        }
    }
    *o = 0;
    return out;
}

/* ---- the index the requests read ---- */

/* Two steps of a PyTorch-like trace: CPU ops, launches, kernels, a copy, a
 * counter and a flow, so every route has something to answer with. */
static const char BUILTIN_TRACE[] =
    "{\"deviceProperties\":[{\"id\":0,\"name\":\"GPU\",\"totalGlobalMem\":1024}],"
    "\"traceEvents\":["
    "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"args\":{\"name\":\"python\"}},"
    "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#1\",\"pid\":1,\"tid\":1,"
    "\"ts\":0,\"dur\":100},"
    "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#2\",\"pid\":1,\"tid\":1,"
    "\"ts\":100,\"dur\":120},"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,\"ts\":5,"
    "\"dur\":20},"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,"
    "\"ts\":10,\"dur\":5,\"args\":{\"correlation\":7}},"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm_kernel\",\"pid\":0,\"tid\":7,\"ts\":20,"
    "\"dur\":30,\"args\":{\"correlation\":7,\"device\":0,\"stream\":7,\"grid\":[4,1,1],"
    "\"block\":[128,1,1]}},"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,"
    "\"ts\":110,\"dur\":5,\"args\":{\"correlation\":9}},"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm_kernel\",\"pid\":0,\"tid\":7,\"ts\":120,"
    "\"dur\":0,\"args\":{\"correlation\":9,\"device\":0,\"stream\":7}},"
    "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy HtoD (Pageable -> Device)\","
    "\"pid\":0,\"tid\":7,\"ts\":150,\"dur\":10,\"args\":{\"device\":0,\"bytes\":4096}},"
    "{\"ph\":\"C\",\"name\":\"Memory\",\"pid\":1,\"ts\":50,\"args\":{\"bytes\":10}},"
    "{\"ph\":\"s\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":7,\"pid\":1,\"tid\":1,\"ts\":10},"
    "{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":7,\"pid\":0,\"tid\":7,"
    "\"ts\":20}]}";

static void load_fixture(const char *rel, const char *as)
{
    const char *fixtures = getenv("XPV_FIXTURES");
    char path[4096];
    if (!fixtures) return;
    snprintf(path, sizeof path, "%s/%s", fixtures, rel);
    FILE *f = fopen(path, "rb");
    if (!f) return;
    size_t cap = (size_t)1 << 20, n;
    uint8_t *buf = malloc(cap);
    if (!buf) abort();
    n = fread(buf, 1, cap, f);
    fclose(f);
    if (n < cap) xpv_fuzz_write(as, buf, n);
    free(buf);
}

static void read_ids(void)
{
    char db_path[700];
    sqlite3 *db;
    sqlite3_stmt *st;
    snprintf(db_path, sizeof db_path, "%s/index.sqlite", xpv_fuzz_tmpdir());
    if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "SELECT printf('%016x', id) FROM profiles ORDER BY path", -1, &st,
                           NULL) != SQLITE_OK)
        abort();
    while (nids < 4 && sqlite3_step(st) == SQLITE_ROW)
        snprintf(ids[nids++], sizeof ids[0], "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(db);
    snprintf(server.db_path, sizeof server.db_path, "%s", db_path);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    xpv_fuzz_write("a/host.pt.trace.json", (const uint8_t *)BUILTIN_TRACE,
                   sizeof BUILTIN_TRACE - 1);
    load_fixture("xplane/jax-rocm-mi300x-gemm.xplane.pb", "b/host.xplane.pb");
    xpv_fuzz_index_all();
    server.opts.host = "127.0.0.1";
    server.port = FUZZ_PORT;
    pthread_mutex_init(&server.mu, NULL);
    snprintf(server.root_abs, sizeof server.root_abs, "%s", xpv_fuzz_profiles_dir());
    server.marks = xpv_block_marks_new((size_t)16 << 20);
    server.hlo_cache = xpv_hlo_ops_cache_new((size_t)16 << 20);
    read_ids();
    xpv_static_init();
    tokened = server; /* the same index and caches, another exposure */
    pthread_mutex_init(&tokened.mu, NULL);
    tokened.opts.host = "0.0.0.0";
    tokened.opts.token = FUZZ_TOKEN;
    tokened.opts.allow_hosts = fuzz_hosts;
    tokened.opts.n_allow_hosts = 1;
    return 0;
}

static int carries(const struct MHD_Connection *c, const char *secret)
{
    for (int i = 0; i < c->n; i++)
        if (c->pairs[i].value && strstr(c->pairs[i].value, secret)) return 1;
    return 0;
}

/* What must hold of any answer, whatever the request. */
static void check_answer(const char *site, const struct MHD_Connection *c, const xpv_reply *r)
{
    assert(r->status >= 100 && r->status <= 599);
    if (strcmp(site, "perfetto") != 0) {
        assert(!r->cors_origin[0]); /* the UI port grants no origin */
    } else if (r->cors_origin[0]) {
        char own[40];
        snprintf(own, sizeof own, ":%d", FUZZ_PORT);
        assert(strcmp(r->cors_origin, XPV_ACCESS_PERFETTO_ORIGIN) == 0 ||
               (strncmp(r->cors_origin, "http://", 7) == 0 &&
                strcmp(r->cors_origin + strlen(r->cors_origin) - strlen(own), own) == 0));
    }
    if (strcmp(site, "token") == 0 && r->status != 401 && r->status != 403)
        assert(carries(c, FUZZ_TOKEN));
    if (r->cookie[0]) assert(strcmp(site, "token") == 0 && carries(c, FUZZ_TOKEN));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = strndup((const char *)data, size), *save = NULL;
    if (!text) return 0;
    struct MHD_Connection c = {.n = 0};
    char *nl = strchr(text, '\n');
    if (nl) *nl = 0;
    char *method = strtok_r(text, " ", &save), *target = strtok_r(NULL, " ", &save);
    const char *site = strtok_r(NULL, " ", &save);
    if (!site) site = "";
    if (method && target) {
        char *url = expand_ids(target), *q = strchr(url, '?');
        if (q) *q++ = 0;
        if (q) parse_query(&c, q);
        if (nl) parse_headers(&c, nl + 1);
        xpv_reply r;
        xpv_reply_init(&r);
        if (strcmp(site, "perfetto") == 0)
            xpv_perfetto_answer(&server, &c, url, method, &r);
        else
            xpv_router_answer(strcmp(site, "token") == 0 ? &tokened : &server, &c, url, method, &r);
        check_answer(site, &c, &r);
        if (getenv("XPV_FUZZ_VERBOSE"))
            fprintf(stderr, "%s %s -> %d, %zu bytes\n", method, url, r.status,
                    r.static_data ? r.static_len : r.body.len);
        xpv_reply_free(&r);
        free(url);
    }
    free(text);
    return 0;
}
