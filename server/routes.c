/*
 * routes.c — see routes.h. Every numeric parameter is parsed strictly
 * (whole string, finite, within range); anything else is a 400.
 */
#define _GNU_SOURCE
#include "routes.h"
#include "live_events.h"
#include "response_cache.h"
#include "trace_stream.h"
#include "../api/api.h"
#include "../api/tools/tools.h"
#include "../api/findings/findings.h"
#include "../store/event_store.h"

#include <cjson/cJSON.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TRACKS_PARAM 4096

static const char *param(struct MHD_Connection *c, const char *name)
{
    return MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, name);
}

static int parse_long(const char *v, long long lo, long long hi, long long *out)
{
    char *end;
    errno = 0;
    if (!v || !*v || strlen(v) > 24) return -1;
    long long n = strtoll(v, &end, 10);
    if (errno || *end || n < lo || n > hi) return -1;
    *out = n;
    return 0;
}

/* Optional integer parameter; -1 with a 400 in r when present but bad. */
static int int_param(struct MHD_Connection *c, const char *name, long long lo, long long hi,
                     long long *out, xpv_reply *r)
{
    const char *v = param(c, name);
    if (!v) return 0;
    if (parse_long(v, lo, hi, out) == 0) return 0;
    xpv_reply_error(r, 400, "%s must be an integer from %lld to %lld", name, lo, hi);
    return -1;
}

static int double_param(struct MHD_Connection *c, const char *name, double limit, int *has,
                        double *out, xpv_reply *r)
{
    const char *v = param(c, name);
    *has = 0;
    if (!v) return 0;
    char *end;
    errno = 0;
    double d = strlen(v) <= 40 ? strtod(v, &end) : NAN;
    if (strlen(v) <= 40 && *v && !*end && !errno && isfinite(d) && fabs(d) <= limit) {
        *has = 1;
        *out = d;
        return 0;
    }
    xpv_reply_error(r, 400, "%s must be a number of microseconds within +-%g", name, limit);
    return -1;
}

static int with_db(xpv_server *s, sqlite3 **db, xpv_reply *r)
{
    xpv_err err = {{0}};
    *db = xpv_server_db(s, &err);
    if (*db) return 0;
    xpv_reply_error(r, 503, "index unavailable: %s", err.msg);
    return -1;
}

int xpv_routes_profile_id(xpv_server *s, const char *text, size_t len, int64_t *id, xpv_reply *r)
{
    char hex[32];
    if (len == 6 && strncmp(text, "latest", 6) == 0) {
        sqlite3 *db;
        if (with_db(s, &db, r) != 0) return -1;
        xpv_err err = {{0}};
        int found = xpv_api_latest_id(db, id, &err);
        if (found < 0)
            xpv_reply_error(r, 500, "%s", err.msg);
        else if (!found)
            xpv_reply_error(r, 404, "no profiles found");
        return found > 0 ? 0 : -1;
    }
    if (len != 16) {
        xpv_reply_error(r, 400, "a profile id is 16 hex digits (or \"latest\")");
        return -1;
    }
    memcpy(hex, text, 16);
    hex[16] = 0;
    if (xpv_profile_id_parse(hex, id) != 0) {
        xpv_reply_error(r, 400, "a profile id is 16 hex digits (or \"latest\")");
        return -1;
    }
    return 0;
}

/* ---- /api/health ---- */

/* A progress text as a JSON string, null when empty (nothing to say). */
static void put_text_or_null(xpv_buf *b, const char *text)
{
    if (text[0])
        xpv_buf_json_str(b, text, strlen(text));
    else
        xpv_buf_puts(b, "null");
}

static void health(xpv_server *s, xpv_reply *r)
{
    sqlite3 *db;
    if (with_db(s, &db, r) != 0) return;
    xpv_server_progress p;
    xpv_server_progress_get(s, &p);
    xpv_buf *b = &r->body;
    xpv_buf_printf(b, "{\"version\":\"%s\",\"ui\":\"%s\"", XPV_VERSION, xpv_server_ui_name(s));
    xpv_buf_putc(b, ',');
    if (xpv_api_status_counts(db, b, NULL) != 0) /* health still answers: counts unknown */
        xpv_buf_puts(b, "\"profiles\":0,\"status_counts\":{}");
    xpv_buf_printf(b,
                   ",\"indexing\":{\"active\":%s,\"total\":%d,\"done\":%d,\"runs\":%lld,"
                   "\"current\":",
                   p.active ? "true" : "false", p.total, p.done, (long long)p.runs);
    put_text_or_null(b, p.current);
    xpv_buf_puts(b, ",\"error\":");
    put_text_or_null(b, p.error);
    xpv_buf_puts(b, "},\"perfetto\":");
    if (s->perfetto_port)
        xpv_buf_printf(b, "{\"port\":%d,\"base_url\":\"http://127.0.0.1:%d/\"}", s->perfetto_port,
                       s->perfetto_port);
    else
        xpv_buf_puts(b, "null");
    xpv_buf_printf(b, ",\"live\":{\"watch\":");
    put_text_or_null(b, p.watch);
    xpv_buf_printf(b, ",\"poll_seconds\":");
    if (p.poll_seconds)
        xpv_buf_printf(b, "%d", p.poll_seconds);
    else
        xpv_buf_puts(b, "null");
    xpv_buf_printf(b, ",\"settle_ms\":%d,\"last_event_id\":%llu,\"streams\":%d}", s->opts.settle_ms,
                   (unsigned long long)xpv_live_last_id(), xpv_live_clients());
    xpv_buf_puts(b, ",\"profile_dir\":");
    xpv_buf_json_str(b, s->root_abs, strlen(s->root_abs));
    xpv_buf_putc(b, '}');
    xpv_reply_json(r, 200);
}

/* ---- per-profile routes ---- */

/* The whole trace, or with start_us and end_us (both or neither) the
 * events that overlap that window, as a download. */
static void trace(xpv_server *s, struct MHD_Connection *c, int64_t id, xpv_reply *r)
{
    const double limit = 9.2e15; /* µs: keeps every ns value inside int64 */
    int has_a, has_b;
    double a, b;
    if (double_param(c, "start_us", limit, &has_a, &a, r) ||
        double_param(c, "end_us", limit, &has_b, &b, r))
        return;
    if (has_a != has_b || (has_a && b <= a)) {
        xpv_reply_error(r, 400, "a window needs start_us < end_us, both");
        return;
    }
    xpv_trace_window w = {(int64_t)floor(a * 1000.0), (int64_t)ceil(b * 1000.0)};
    xpv_trace_stream_reply(s, c, id, 1, has_a ? &w : NULL, r);
}

/* /tools lists the profile's tools; /tools/{tag}?hosts=all&format=json|csv answers one. */
static void tools(xpv_server *s, struct MHD_Connection *c, sqlite3 *db, int64_t id, const char *tag,
                  xpv_reply *r)
{
    if (!*tag) {
        xpv_reply_json(r, xpv_api_profile_tools(db, id, &r->body));
        return;
    }
    if (strcmp(tag, "trace_viewer") == 0) { /* listed like the others: the trace itself */
        xpv_trace_stream_reply(s, c, id, 0, NULL, r);
        return;
    }
    const char *format = param(c, "format"), *hosts = param(c, "hosts");
    if (format && strcmp(format, "json") && strcmp(format, "csv")) {
        xpv_reply_error(r, 400, "format must be json or csv");
        return;
    }
    if (hosts && strcmp(hosts, "all") && strcmp(hosts, "one")) {
        xpv_reply_error(r, 400, "hosts must be all or one");
        return;
    }
    int csv = format && strcmp(format, "csv") == 0, all = hosts && strcmp(hosts, "all") == 0;
    int status = xpv_api_profile_tool(db, id, tag, all, csv ? XPV_TOOL_CSV : XPV_TOOL_JSON,
                                      s->hlo_cache, &r->body);
    xpv_reply_json(r, status);
    if (status == 200 && csv) r->content_type = "text/csv; charset=utf-8";
}

static void kernels(struct MHD_Connection *c, sqlite3 *db, int64_t id, xpv_reply *r)
{
    xpv_kernels_query q = {.device = -1};
    long long device = -1, limit = 0;
    if (int_param(c, "device", -1, 1000000, &device, r) ||
        int_param(c, "limit", 1, 10000000, &limit, r))
        return;
    q.device = (int)device;
    q.limit = limit;
    q.kind = param(c, "kind");
    if (q.kind && !xpv_api_kernel_kind_valid(q.kind)) {
        xpv_reply_error(r, 400, "kind must be kernel, memcpy, memset, xla_op or hlo_category");
        return;
    }
    q.sort = param(c, "sort");
    const char *order = param(c, "order"), *format = param(c, "format");
    if (order) {
        if (strcmp(order, "asc") && strcmp(order, "desc")) {
            xpv_reply_error(r, 400, "order must be asc or desc");
            return;
        }
        q.order_given = 1;
        q.desc = strcmp(order, "desc") == 0;
    }
    if (format && strcmp(format, "json") && strcmp(format, "csv")) {
        xpv_reply_error(r, 400, "format must be json or csv");
        return;
    }
    q.csv = format && strcmp(format, "csv") == 0;
    int status = xpv_api_kernels(db, id, &q, &r->body);
    xpv_reply_json(r, status);
    if (status == 200 && q.csv) {
        char hex[17];
        xpv_profile_id_hex(id, hex);
        r->content_type = "text/csv; charset=utf-8";
        snprintf(r->disposition, sizeof r->disposition, "attachment; filename=\"%s-%s.csv\"", hex,
                 q.kind ? q.kind : "kernels");
    }
}

static void steps(struct MHD_Connection *c, sqlite3 *db, int64_t id, xpv_reply *r)
{
    long long device = -1;
    if (int_param(c, "device", -1, 1000000, &device, r)) return;
    xpv_reply_json(r, xpv_api_steps(db, id, (int)device, &r->body));
}

static int parse_tracks(const char *v, int64_t *out, size_t *n, xpv_reply *r)
{
    *n = 0;
    const char *p = v;
    while (*p) {
        char tmp[24];
        size_t len = strcspn(p, ",");
        long long t;
        if (len == 0 || len >= sizeof tmp || *n >= MAX_TRACKS_PARAM) goto bad;
        memcpy(tmp, p, len);
        tmp[len] = 0;
        if (parse_long(tmp, 0, (1 << 24) - 1, &t) != 0) goto bad;
        out[(*n)++] = t;
        p += len;
        if (*p == ',') p++;
    }
    if (*n) return 0;
bad:
    xpv_reply_error(r, 400, "tracks must be a comma-separated list of track ids (at most %d)",
                    MAX_TRACKS_PARAM);
    return -1;
}

/* The window answers (events, counters, aggregate): the window, resolution
 * and tracks parameters, then the answer. */
static void window_route(xpv_server *s, struct MHD_Connection *c, sqlite3 *db, int64_t id,
                         xpv_reply *r,
                         int (*answer)(sqlite3 *, int64_t, const xpv_events_query *, xpv_buf *))
{
    xpv_events_query q = {.marks = s->marks};
    long long resolution = 1000;
    const double limit = 9.2e15;
    if (double_param(c, "start_us", limit, &q.has_start, &q.start_us, r) ||
        double_param(c, "end_us", limit, &q.has_end, &q.end_us, r) ||
        int_param(c, "resolution", 1, XPV_EVENTS_MAX_RESOLUTION, &resolution, r))
        return;
    q.resolution = (int)resolution;
    const char *tracks = param(c, "tracks");
    int64_t *list = NULL;
    if (tracks && *tracks) {
        list = xpv_xmalloc(MAX_TRACKS_PARAM * sizeof *list);
        if (parse_tracks(tracks, list, &q.ntracks, r) != 0) {
            free(list);
            return;
        }
        q.tracks = list;
    }
    xpv_reply_json(r, answer(db, id, &q, &r->body));
    free(list);
}

static void event(struct MHD_Connection *c, sqlite3 *db, int64_t id, xpv_reply *r)
{
    const char *ref = param(c, "ref");
    char block_s[24], index_s[24];
    long long block, index;
    const char *colon = ref ? strchr(ref, ':') : NULL;
    if (!colon || colon - ref >= 24 || strlen(colon + 1) >= 24) goto bad;
    snprintf(block_s, sizeof block_s, "%.*s", (int)(colon - ref), ref);
    snprintf(index_s, sizeof index_s, "%s", colon + 1);
    if (parse_long(block_s, 0, INT64_MAX, &block) || parse_long(index_s, 0, UINT32_MAX, &index))
        goto bad;
    xpv_reply_json(r, xpv_api_event(db, id, block, (uint32_t)index, &r->body));
    return;
bad:
    xpv_reply_error(r, 400, "ref must be <block>:<index> as given by the events answer");
}

static void search(struct MHD_Connection *c, sqlite3 *db, int64_t id, xpv_reply *r)
{
    const char *q = param(c, "q"), *limit_s = param(c, "limit"), *offset_s = param(c, "offset");
    long long limit = 200, offset = 0;
    if (limit_s && parse_long(limit_s, 1, XPV_SEARCH_MAX_LIMIT, &limit)) {
        xpv_reply_error(r, 400, "limit must be a number from 1 to %d", XPV_SEARCH_MAX_LIMIT);
        return;
    }
    if (offset_s && parse_long(offset_s, 0, XPV_SEARCH_MAX_OFFSET, &offset)) {
        xpv_reply_error(r, 400, "offset must be a number from 0 to %d", XPV_SEARCH_MAX_OFFSET);
        return;
    }
    if (q && strlen(q) > 256) {
        xpv_reply_error(r, 400, "q is longer than 256 bytes");
        return;
    }
    xpv_reply_json(r, xpv_api_search(db, id, q, offset, (int)limit, &r->body));
}

/* /memory_viewer?module= and /hlo[/{module}]?q=: a module is named as the
 * profile names it ("jit_dot(79)"), by program id, or by its HLO name. */
static void memory_routes(xpv_server *s, struct MHD_Connection *c, sqlite3 *db, int64_t id,
                          const char *sub, xpv_reply *r)
{
    const char *q = param(c, "q"), *module = param(c, "module");
    if ((q && strlen(q) > 256) || (module && strlen(module) > 1024)) {
        xpv_reply_error(r, 400, "q or module is too long");
        return;
    }
    if (strcmp(sub, "memory_profile") == 0)
        xpv_reply_json(r, xpv_api_memory_profile(db, id, &r->body));
    else if (strcmp(sub, "memory_viewer") == 0)
        xpv_reply_json(r,
                       xpv_api_memory_viewer(db, id, module && *module ? module : NULL, &r->body));
    else
        xpv_reply_json(
            r, xpv_api_hlo_module(db, id, sub[3] ? sub + 4 : NULL, q, s->hlo_cache, &r->body));
}

/* /api/compare?a=ID&b=ID: ids as everywhere ("latest" included). */
static void compare(xpv_server *s, struct MHD_Connection *c, xpv_reply *r)
{
    const char *a = param(c, "a"), *b = param(c, "b");
    int64_t ida, idb;
    sqlite3 *db;
    if (!a || !b) {
        xpv_reply_error(r, 400, "compare needs a=ID and b=ID");
        return;
    }
    if (xpv_routes_profile_id(s, a, strlen(a), &ida, r) != 0 ||
        xpv_routes_profile_id(s, b, strlen(b), &idb, r) != 0 || with_db(s, &db, r) != 0)
        return;
    xpv_reply_json(r, xpv_api_compare(db, ida, db, idb, &r->body));
}

/* A damaged event block (event_store.c's message) is the damage of the
 * profiles asked about: the indexer thread checks their blocks and indexes
 * a damaged one again; meanwhile the answer is a 503 naming them. */
void xpv_routes_damaged(xpv_server *s, const int64_t *ids, size_t n, xpv_reply *r)
{
    if (r->status != 500 || !r->body.data || !xpv_store_damage_in(r->body.data) || !n) return;
    char hex[17], why[400];
    for (size_t i = 0; i < n; i++)
        xpv_server_profile_damaged(s, ids[i]);
    xpv_profile_id_hex(ids[0], hex);
    cJSON *j = cJSON_Parse(r->body.data);
    const char *error = cJSON_GetStringValue(cJSON_GetObjectItem(j, "error"));
    snprintf(why, sizeof why, "%s", error ? error : "a damaged event block");
    cJSON_Delete(j);
    xpv_reply_free(r);
    xpv_reply_init(r);
    xpv_reply_error(r, 503,
                    "profile %s%s is damaged (%s); it is being indexed again, try again shortly",
                    hex, n > 1 ? " or another of these hosts" : "", why);
}

static void profile_route(xpv_server *s, struct MHD_Connection *c, const char *rest, xpv_reply *r)
{
    size_t idlen = strcspn(rest, "/");
    int64_t id;
    if (xpv_routes_profile_id(s, rest, idlen, &id, r) != 0) return;
    const char *sub = rest[idlen] ? rest + idlen + 1 : "";
    if (strcmp(sub, "trace") == 0) {
        trace(s, c, id, r);
        return;
    }
    sqlite3 *db;
    if (with_db(s, &db, r) != 0) return;
    if (!*sub)
        xpv_reply_json(r, xpv_api_profile(db, id, &r->body));
    else if (strcmp(sub, "kernels") == 0)
        kernels(c, db, id, r);
    else if (strcmp(sub, "steps") == 0)
        steps(c, db, id, r);
    else if (strcmp(sub, "tracks") == 0)
        xpv_reply_json(r, xpv_api_tracks(db, id, &r->body));
    else if (strcmp(sub, "events") == 0)
        window_route(s, c, db, id, r, xpv_api_events);
    else if (strcmp(sub, "event") == 0)
        event(c, db, id, r);
    else if (strcmp(sub, "search") == 0)
        search(c, db, id, r);
    else if (strcmp(sub, "counters") == 0)
        window_route(s, c, db, id, r, xpv_api_counters);
    else if (strcmp(sub, "aggregate") == 0)
        window_route(s, c, db, id, r, xpv_api_aggregate);
    else if (strcmp(sub, "findings") == 0)
        xpv_reply_json(r, xpv_api_findings(db, id, &s->opts.findings, &r->body));
    else if (strcmp(sub, "modules") == 0)
        xpv_reply_json(r, xpv_api_profile_modules(db, id, &r->body));
    else if (!strcmp(sub, "memory_profile") || !strcmp(sub, "memory_viewer") ||
             !strcmp(sub, "hlo") || !strncmp(sub, "hlo/", 4))
        memory_routes(s, c, db, id, sub, r);
    else if (strcmp(sub, "tools") == 0 || strncmp(sub, "tools/", 6) == 0)
        tools(s, c, db, id, sub[5] ? sub + 6 : "", r);
    else
        xpv_reply_error(r, 404, "no such API route");
    xpv_routes_damaged(s, &id, 1, r);
}

void xpv_routes_api(xpv_server *s, struct MHD_Connection *c, const char *path, xpv_reply *r)
{
    char clean[XPV_HTTP_MAX_URL];
    snprintf(clean, sizeof clean, "%s", path);
    size_t n = strlen(clean);
    if (n > 1 && clean[n - 1] == '/') clean[n - 1] = 0;
    sqlite3 *db;
    if (strcmp(clean, "/api/health") == 0) {
        health(s, r); /* live progress: never cached */
        return;
    }
    if (strcmp(clean, "/api/stream") == 0) {
        xpv_live_reply(c, r); /* Server-Sent Events, never cached */
        return;
    }
    if (xpv_response_cache_get(s, c, clean, r)) {
        return;
    } else if (strcmp(clean, "/api/profiles") == 0) {
        if (with_db(s, &db, r) == 0) xpv_reply_json(r, xpv_api_profiles(db, &r->body));
    } else if (strcmp(clean, "/api/profiles/latest") == 0) {
        if (with_db(s, &db, r) == 0) xpv_reply_json(r, xpv_api_profile_latest(db, &r->body));
    } else if (strncmp(clean, "/api/profiles/", 14) == 0) {
        profile_route(s, c, clean + 14, r);
    } else if (strcmp(clean, "/api/compare") == 0) {
        compare(s, c, r);
    } else {
        xpv_reply_error(r, 404, "no such API route");
    }
    xpv_response_cache_put(s, c, clean, r);
}
