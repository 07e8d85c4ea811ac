/*
 * route_table.c — the route table (see route_table.h), its matcher and its
 * JSON print. A route is added here and nowhere else by hand: the docs,
 * the web client, the API snapshot and the fuzz dictionary are checked
 * against `xprof-view --routes` (tests/e2e/test_route_table.py).
 */
#include "route_table.h"
#include "routes.h"
#include "tensorboard_routes.h"
#include "../api/api.h"

#include <assert.h>
#include <string.h>

#define STR_(x) #x
#define STR(x) STR_(x)

/* ---- parameters ---- */

#define END                                                                                        \
    {                                                                                              \
        0                                                                                          \
    }
#define US(n)                                                                                      \
    {                                                                                              \
        .name = n, .kind = XPV_PARAM_NUMBER, .max = 40, .limit = 9.2e15, /* keeps ns in int64 */   \
            .error = n " must be a number of microseconds within +-9.2e+15"                        \
    }
#define DEVICE                                                                                     \
    {                                                                                              \
        .name = "device", .kind = XPV_PARAM_INT, .lo = -1, .hi = 1000000, .dflt = -1               \
    }
#define FORMAT                                                                                     \
    {                                                                                              \
        .name = "format", .kind = XPV_PARAM_ENUM, .choices = "json|csv"                            \
    }
/* TensorBoard's clients send empty parameters for unset ones. */
#define TB_TEXT(n, fl, err)                                                                        \
    {                                                                                              \
        .name = n, .kind = XPV_PARAM_TEXT, .max = 1023, .flags = XPV_PARAM_LENIENT | (fl),         \
        .error = err                                                                               \
    }
#define TB_MS(n)                                                                                   \
    {                                                                                              \
        .name = n, .kind = XPV_PARAM_NUMBER, .max = 1023, .limit = 9.2e12,                         \
        .flags = XPV_PARAM_LENIENT | XPV_PARAM_LAZY, .error = XPV_TB_WINDOW_ERROR                  \
    }

static const xpv_route_param kernels_params[] = {
    DEVICE,
    /* include: the device work of compilation inside the capture too */
    {.name = "compile", .kind = XPV_PARAM_ENUM, .choices = "exclude|include"},
    {.name = "limit", .kind = XPV_PARAM_INT, .lo = 1, .hi = 10000000, .dflt = 0},
    {.name = "kind", .kind = XPV_PARAM_ENUM, .choices = "kernel|memcpy|memset|xla_op|hlo_category"},
    {.name = "order", .kind = XPV_PARAM_ENUM, .choices = "asc|desc"},
    FORMAT,
    /* lazy: xpv_api_kernels checks it after the profile's state, whose 404
     * or 409 comes first */
    {.name = "sort",
     .kind = XPV_PARAM_ENUM,
     .choices = "total|count|avg|max|name",
     .flags = XPV_PARAM_LAZY},
    END};
static const xpv_route_param steps_params[] = {DEVICE, END};
static const xpv_route_param window_params[] = {
    US("start_us"),
    US("end_us"),
    {.name = "resolution",
     .kind = XPV_PARAM_INT,
     .lo = 1,
     .hi = XPV_EVENTS_MAX_RESOLUTION,
     .dflt = 1000},
    {.name = "tracks",
     .kind = XPV_PARAM_LIST,
     .lo = 0,
     .hi = (1 << 24) - 1,
     .max = XPV_ROUTE_MAX_LIST,
     .error = "tracks must be a comma-separated list of track ids (at most " STR(
         XPV_ROUTE_MAX_LIST) ")"},
    END};
static const xpv_route_param trace_params[] = {US("start_us"), US("end_us"), END};
static const xpv_route_param event_params[] = {
    {.name = "ref",
     .kind = XPV_PARAM_REF,
     .flags = XPV_PARAM_REQUIRED,
     .error = "ref must be <block>:<index> as given by the events answer"},
    END};
static const xpv_route_param search_params[] = {
    {.name = "limit",
     .kind = XPV_PARAM_INT,
     .lo = 1,
     .hi = XPV_SEARCH_MAX_LIMIT,
     .dflt = 200,
     .error = "limit must be a number from 1 to " STR(XPV_SEARCH_MAX_LIMIT)},
    {.name = "offset",
     .kind = XPV_PARAM_INT,
     .lo = 0,
     .hi = XPV_SEARCH_MAX_OFFSET,
     .dflt = 0,
     .error = "offset must be a number from 0 to " STR(XPV_SEARCH_MAX_OFFSET)},
    /* Any name the URL can carry: C++ template kernel names run to
     * thousands of bytes, and the kernel tables' links search for them. */
    {.name = "q", .kind = XPV_PARAM_TEXT, .max = XPV_HTTP_MAX_URL},
    END};
/* The memory and HLO routes share one check of q and module, each
 * answer using the one it needs (if any). */
#define MODULE_Q(fl)                                                                               \
    {                                                                                              \
        .name = "q", .kind = XPV_PARAM_TEXT, .max = 256, .flags = (fl),                            \
        .error = "q or module is too long"                                                         \
    }
#define MODULE(fl)                                                                                 \
    {                                                                                              \
        .name = "module", .kind = XPV_PARAM_TEXT, .max = 1024, .flags = (fl),                      \
        .error = "q or module is too long"                                                         \
    }
/* XProf's names for a module: module_name "jit_train_step(18566)", or its
 * program_id 18566 (a 64-bit fingerprint on TPU: text, not an int64). */
#define MODULE_ALIASES(fl)                                                                         \
    {.name = "module_name",                                                                        \
     .kind = XPV_PARAM_TEXT,                                                                       \
     .max = 1024,                                                                                  \
     .flags = (fl),                                                                                \
     .error = "module_name is too long"},                                                          \
    {                                                                                              \
        .name = "program_id", .kind = XPV_PARAM_TEXT, .max = 20, .flags = (fl),                    \
        .error = "program_id is too long"                                                          \
    }
static const xpv_route_param memory_params[] = {
    MODULE_Q(XPV_PARAM_UNUSED), MODULE(XPV_PARAM_UNUSED), MODULE_ALIASES(XPV_PARAM_UNUSED), END};
static const xpv_route_param viewer_params[] = {MODULE_Q(XPV_PARAM_UNUSED), MODULE(0),
                                                MODULE_ALIASES(0), END};
static const xpv_route_param hlo_params[] = {MODULE_Q(0), MODULE(0), MODULE_ALIASES(0), END};
static const xpv_route_param tool_params[] = {
    FORMAT,
    {.name = "hosts", .kind = XPV_PARAM_ENUM, .choices = "all|one"},
    {.name = "module", .kind = XPV_PARAM_TEXT, .max = 1024, .error = "module is too long"},
    MODULE_ALIASES(0),
    END};
static const xpv_route_param compare_params[] = {{.name = "a",
                                                  .kind = XPV_PARAM_ID,
                                                  .flags = XPV_PARAM_REQUIRED,
                                                  .missing = "compare needs a=ID and b=ID"},
                                                 {.name = "b",
                                                  .kind = XPV_PARAM_ID,
                                                  .flags = XPV_PARAM_REQUIRED,
                                                  .missing = "compare needs a=ID and b=ID"},
                                                 END};

static const xpv_route_param tb_run_tools_params[] = {
    TB_TEXT("run", XPV_PARAM_REQUIRED, "run_tools needs run"), END};
static const xpv_route_param tb_hosts_params[] = {
    TB_TEXT("run", XPV_PARAM_REQUIRED, "hosts needs run"), TB_TEXT("tag", 0, NULL), END};
#define TB_SCOPE TB_TEXT("host", 0, NULL), TB_TEXT("hosts", 0, NULL)
/* memory_viewer's module, as XProf's frontend names it (or as ours does) */
#define TB_MODULE                                                                                  \
    TB_TEXT("module_name", 0, NULL), TB_TEXT("program_id", 0, NULL), TB_TEXT("module", 0, NULL)
static const xpv_route_param tb_data_params[] = {
    TB_TEXT("run", XPV_PARAM_REQUIRED, "data needs run and tag"),
    TB_TEXT("tag", XPV_PARAM_REQUIRED, "data needs run and tag"),
    TB_SCOPE,
    TB_MODULE,
    TB_MS("start_time_ms"),
    TB_MS("end_time_ms"),
    END};
static const xpv_route_param tb_data_csv_params[] = {
    TB_TEXT("run", XPV_PARAM_REQUIRED, "data needs run and tag"),
    TB_TEXT("tag", XPV_PARAM_REQUIRED, "data needs run and tag"), TB_SCOPE, TB_MODULE, END};
static const xpv_route_param tb_module_list_params[] = {
    TB_TEXT("run", XPV_PARAM_REQUIRED, "module_list needs run"), TB_SCOPE, END};

/* ---- the table ---- */

#define API XPV_ROUTE_SLASH
#define P "/api/profiles/{id}"
#define TB "/data/plugin/profile/"
#define FALLBACK XPV_ROUTE_FALLBACK

static const xpv_route table[] = {
    {"GET", "/api/health", xpv_routes_health, NULL, 0, API,
     "version, profile count, indexing progress, UI mode, live mode"},
    {"GET", "/api/stream", xpv_routes_stream, NULL, 0, API | XPV_ROUTE_NO_DB,
     "Server-Sent Events: profiles added, updated, removed; indexing progress"},
    {"GET", "/api/profiles", xpv_routes_profiles, NULL, 1, API, "every profile, newest first"},
    {"GET", "/api/profiles/latest", xpv_routes_latest, NULL, 1, API,
     "the newest readable profile (ok, or partial)"},
    {"GET", P, xpv_routes_profile, NULL, 1, API, "one profile"},
    {"GET", P "/kernels", xpv_routes_kernels, kernels_params, 1, API,
     "time by kernel, copy, memset, XLA op or HLO category (JSON or CSV)"},
    {"GET", P "/steps", xpv_routes_steps, steps_params, 1, API, "the steps and their breakdown"},
    {"GET", P "/tracks", xpv_routes_tracks, NULL, 1, API, "processes and threads"},
    {"GET", P "/events", xpv_routes_events, window_params, 1, API,
     "a time window's events at a resolution"},
    {"GET", P "/event", xpv_routes_event, event_params, 1, API,
     "one event with its args and links"},
    {"GET", P "/search", xpv_routes_search, search_params, 1, API,
     "events whose name holds q, a page at a time"},
    {"GET", P "/counters", xpv_routes_counters, window_params, 1, API,
     "a time window's counter series"},
    {"GET", P "/aggregate", xpv_routes_aggregate, window_params, 1, API,
     "a time window's slices summed by name"},
    {"GET", P "/modules", xpv_routes_modules, NULL, 1, API, "the XLA/HLO modules the profile ran"},
    {"GET", P "/findings", xpv_routes_findings, NULL, 1, API, "what is slow and why"},
    {"GET", P "/trace", xpv_routes_trace, trace_params, 0, API | XPV_ROUTE_NO_DB,
     "the Chrome trace JSON, streamed (or a window of it)"},
    {"GET", P "/tools", xpv_routes_tools, NULL, 1, API, "the XProf tools with data"},
    {"GET", P "/tools/trace_viewer", xpv_routes_trace_viewer, NULL, 0, API,
     "the Chrome trace JSON, streamed"},
    {"GET", P "/tools/{tag*}", xpv_routes_tool, tool_params, 1, API,
     "one tool's table (JSON or CSV)"},
    {"GET", P "/memory_profile", xpv_routes_memory_profile, memory_params, 1, API,
     "memory in use per allocator over time"},
    {"GET", P "/memory_viewer", xpv_routes_memory_viewer, viewer_params, 1, API,
     "the compiled modules' memory, or one module's buffers"},
    {"GET", P "/hlo", xpv_routes_hlo, hlo_params, 1, API, "the HLO modules"},
    {"GET", P "/hlo/{module*}", xpv_routes_hlo, hlo_params, 1, API,
     "one HLO module's instructions"},
    {"GET", "/api/compare", xpv_routes_compare, compare_params, 1, API | XPV_ROUTE_NO_DB,
     "profile b against profile a"},
    {"GET", P "/{rest*}", xpv_routes_not_found, NULL, 0, API | FALLBACK, NULL},
    {"GET", "/api", xpv_routes_not_found, NULL, 0, API | XPV_ROUTE_NO_DB | FALLBACK, NULL},
    {"GET", "/api/{rest*}", xpv_routes_not_found, NULL, 0, API | XPV_ROUTE_NO_DB | FALLBACK, NULL},

    {"GET", TB "runs", xpv_tb_runs, NULL, 0, XPV_ROUTE_TB, "run names, newest first"},
    {"GET", TB "run_tools", xpv_tb_run_tools, tb_run_tools_params, 0, XPV_ROUTE_TB,
     "the tools with data in a run"},
    {"GET", TB "hosts", xpv_tb_hosts, tb_hosts_params, 0, XPV_ROUTE_TB,
     "the hosts of a run (with data for a tool)"},
    {"GET", TB "data", xpv_tb_data, tb_data_params, 0, XPV_ROUTE_TB,
     "a tool's DataTable, or the trace"},
    {"GET", TB "data_csv", xpv_tb_data_csv, tb_data_csv_params, 0, XPV_ROUTE_TB,
     "a tool's table as CSV"},
    {"GET", TB "module_list", xpv_tb_module_list, tb_module_list_params, 0, XPV_ROUTE_TB,
     "the XLA/HLO modules a host ran"},
    {"GET", TB "{route*}", xpv_tb_not_found, NULL, 0, XPV_ROUTE_TB | FALLBACK, NULL},
};

const xpv_route *xpv_route_table(size_t *n)
{
    *n = sizeof table / sizeof table[0];
    return table;
}

/* ---- matching ---- */

int xpv_route_match(const char *pattern, const char *path, xpv_route_capture *caps, int max)
{
    int n = 0;
    while (*pattern) {
        if (*pattern != '{') {
            if (*pattern++ != *path++) return -1;
            continue;
        }
        const char *close = strchr(pattern, '}');
        assert(close && close > pattern + 1);
        int star = close[-1] == '*';
        assert(!star || !close[1]); /* {name*} comes last */
        size_t len = star ? strlen(path) : strcspn(path, "/");
        if ((!star && len == 0) || n >= max) return -1;
        caps[n++] =
            (xpv_route_capture){pattern + 1, (size_t)(close - pattern - 1 - star), path, len};
        path += len;
        pattern = close + 1;
    }
    return *path ? -1 : n;
}

const xpv_route *xpv_route_find(const char *method, const char *path, char *clean, size_t n,
                                xpv_route_capture *caps, int *ncaps)
{
    size_t len = strlen(path);
    if (len >= n) return NULL;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        const xpv_route *rt = &table[i];
        if (strcmp(rt->method, method) &&
            !(strcmp(method, "HEAD") == 0 && !strcmp(rt->method, "GET")))
            continue;
        memcpy(clean, path, len + 1);
        if ((rt->flags & XPV_ROUTE_SLASH) && len > 1 && clean[len - 1] == '/') clean[len - 1] = 0;
        if ((*ncaps = xpv_route_match(rt->pattern, clean, caps, XPV_ROUTE_MAX_CAPTURES)) >= 0)
            return rt;
    }
    return NULL;
}

/* ---- the print ---- */

static void put_param(xpv_buf *b, const xpv_route_param *p)
{
    static const char *const kinds[] = {"int", "number", "enum", "text", "id", "list", "ref"};
    xpv_buf_puts(b, "{\"name\":");
    xpv_buf_json_str(b, p->name, strlen(p->name));
    xpv_buf_printf(b, ",\"type\":\"%s\"", kinds[p->kind]);
    if (p->kind == XPV_PARAM_INT || p->kind == XPV_PARAM_LIST)
        xpv_buf_printf(b, ",\"min\":%lld,\"max\":%lld", p->lo, p->hi);
    if (p->kind == XPV_PARAM_INT) xpv_buf_printf(b, ",\"default\":%lld", p->dflt);
    if (p->kind == XPV_PARAM_LIST) xpv_buf_printf(b, ",\"max_items\":%lld", p->max);
    if (p->kind == XPV_PARAM_TEXT) xpv_buf_printf(b, ",\"max_bytes\":%lld", p->max);
    if (p->kind == XPV_PARAM_NUMBER) xpv_buf_printf(b, ",\"limit\":%g", p->limit);
    if (p->kind == XPV_PARAM_ENUM) {
        xpv_buf_puts(b, ",\"choices\":[");
        for (const char *c = p->choices; *c;) {
            size_t n = strcspn(c, "|");
            if (c != p->choices) xpv_buf_putc(b, ',');
            xpv_buf_json_str(b, c, n);
            c += n + (c[n] == '|');
        }
        xpv_buf_putc(b, ']');
    }
    xpv_buf_printf(b, ",\"required\":%s,\"lenient\":%s,\"lazy\":%s,\"unused\":%s}",
                   p->flags & XPV_PARAM_REQUIRED ? "true" : "false",
                   p->flags & XPV_PARAM_LENIENT ? "true" : "false",
                   p->flags & XPV_PARAM_LAZY ? "true" : "false",
                   p->flags & XPV_PARAM_UNUSED ? "true" : "false");
}

void xpv_route_table_json(xpv_buf *b)
{
    xpv_buf_puts(b, "{\"routes\":[");
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        const xpv_route *rt = &table[i];
        xpv_buf_printf(b, "%s\n{\"method\":\"%s\",\"path\":", i ? "," : "", rt->method);
        xpv_buf_json_str(b, rt->pattern, strlen(rt->pattern));
        xpv_buf_printf(b, ",\"cacheable\":%s,\"fallback\":%s,\"tensorboard\":%s,\"summary\":",
                       rt->cacheable ? "true" : "false",
                       rt->flags & XPV_ROUTE_FALLBACK ? "true" : "false",
                       rt->flags & XPV_ROUTE_TB ? "true" : "false");
        if (rt->summary)
            xpv_buf_json_str(b, rt->summary, strlen(rt->summary));
        else
            xpv_buf_puts(b, "null");
        xpv_buf_puts(b, ",\"params\":[");
        for (int k = 0; rt->params && rt->params[k].name; k++) {
            if (k) xpv_buf_putc(b, ',');
            put_param(b, &rt->params[k]);
        }
        xpv_buf_puts(b, "]}");
    }
    xpv_buf_puts(b, "\n]}\n");
}
