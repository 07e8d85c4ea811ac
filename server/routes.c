/*
 * routes.c — see routes.h. The handlers only assemble api/ calls: the
 * router has checked their parameters (route_params.c) and opened the
 * index, so a handler reads q->db, q->id and q->values.
 */
#define _GNU_SOURCE
#include "routes.h"
#include "live_events.h"
#include "trace_stream.h"
#include "../api/api.h"
#include "../api/tools/tools.h"
#include "../api/findings/findings.h"
#include "../store/event_store.h"

#include <cjson/cJSON.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- /api/health ---- */

/* A progress text as a JSON string, null when empty (nothing to say). */
static void put_text_or_null(xpv_buf *b, const char *text)
{
    if (text[0])
        xpv_buf_json_str(b, text, strlen(text));
    else
        xpv_buf_puts(b, "null");
}

void xpv_routes_health(xpv_route_req *q, xpv_reply *r)
{
    xpv_server *s = q->s;
    sqlite3 *db = q->db;
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

void xpv_routes_stream(xpv_route_req *q, xpv_reply *r)
{
    xpv_live_reply(q->c, r);
}

void xpv_routes_profiles(xpv_route_req *q, xpv_reply *r)
{
    xpv_reply_json(r, xpv_api_profiles(q->db, &r->body));
}

void xpv_routes_latest(xpv_route_req *q, xpv_reply *r)
{
    xpv_reply_json(r, xpv_api_profile_latest(q->db, &r->body));
}

/* ---- per-profile routes ---- */

void xpv_routes_profile(xpv_route_req *q, xpv_reply *r)
{
    xpv_reply_json(r, xpv_api_profile(q->db, q->id, &r->body));
}

/* The whole trace, or with start_us and end_us (both or neither) the
 * events that overlap that window, as a download. */
void xpv_routes_trace(xpv_route_req *q, xpv_reply *r)
{
    const xpv_route_value *a = xpv_route_value_of(q, "start_us"),
                          *b = xpv_route_value_of(q, "end_us");
    if (a->present != b->present || (a->present && b->d <= a->d)) {
        xpv_reply_error(r, 400, "a window needs start_us < end_us, both");
        return;
    }
    if (!a->present) {
        xpv_trace_stream_reply(q->s, q->c, q->id, 1, NULL, r);
        return;
    }
    /* Only a window asked for is converted: the parameters' limit keeps
     * its nanoseconds inside int64. */
    xpv_trace_window w = {(int64_t)floor(a->d * 1000.0), (int64_t)ceil(b->d * 1000.0)};
    xpv_trace_stream_reply(q->s, q->c, q->id, 1, &w, r);
}

void xpv_routes_tools(xpv_route_req *q, xpv_reply *r)
{
    xpv_reply_json(r, xpv_api_profile_tools(q->db, q->id, &r->body));
}

/* Listed like the other tools: the trace itself. */
void xpv_routes_trace_viewer(xpv_route_req *q, xpv_reply *r)
{
    xpv_trace_stream_reply(q->s, q->c, q->id, 0, NULL, r);
}

/* /tools/{tag}?hosts=all&format=json|csv: one tool's table. */
void xpv_routes_tool(xpv_route_req *q, xpv_reply *r)
{
    const char *format = xpv_route_text(q, "format"), *hosts = xpv_route_text(q, "hosts");
    int csv = format && strcmp(format, "csv") == 0, all = hosts && strcmp(hosts, "all") == 0;
    xpv_tool_scope sc = {&q->id, 1, q->s->hlo_cache, xpv_routes_module(q)};
    int status = xpv_api_profile_tool(q->db, q->rest, &sc, all, csv ? XPV_TOOL_CSV : XPV_TOOL_JSON,
                                      &r->body);
    xpv_reply_json(r, status);
    if (status == 200 && csv) r->content_type = "text/csv; charset=utf-8";
}

void xpv_routes_kernels(xpv_route_req *q, xpv_reply *r)
{
    const char *order = xpv_route_text(q, "order"), *format = xpv_route_text(q, "format");
    const char *compile = xpv_route_text(q, "compile");
    xpv_kernels_query k = {.device = (int)xpv_route_int(q, "device"),
                           .limit = xpv_route_int(q, "limit"),
                           .kind = xpv_route_text(q, "kind"),
                           .sort = xpv_route_raw(q, "sort"),
                           .order_given = order != NULL,
                           .desc = order && strcmp(order, "desc") == 0,
                           .csv = format && strcmp(format, "csv") == 0,
                           .with_compile = compile && strcmp(compile, "include") == 0};
    int status = xpv_api_kernels(q->db, q->id, &k, &r->body);
    xpv_reply_json(r, status);
    if (status == 200 && k.csv) {
        char hex[17];
        xpv_profile_id_hex(q->id, hex);
        r->content_type = "text/csv; charset=utf-8";
        snprintf(r->disposition, sizeof r->disposition, "attachment; filename=\"%s-%s.csv\"", hex,
                 k.kind ? k.kind : "kernels");
    }
}

void xpv_routes_steps(xpv_route_req *q, xpv_reply *r)
{
    xpv_reply_json(r, xpv_api_steps(q->db, q->id, (int)xpv_route_int(q, "device"), &r->body));
}

void xpv_routes_tracks(xpv_route_req *q, xpv_reply *r)
{
    xpv_reply_json(r, xpv_api_tracks_cached(q->db, q->id, q->s->devrows, &r->body));
}

/* The window answers (events, counters, aggregate): the window, resolution
 * and tracks parameters, then the answer. */
static void window(xpv_route_req *q, xpv_reply *r,
                   int (*answer)(sqlite3 *, int64_t, const xpv_events_query *, xpv_buf *))
{
    const xpv_route_value *a = xpv_route_value_of(q, "start_us"),
                          *b = xpv_route_value_of(q, "end_us"),
                          *tracks = xpv_route_value_of(q, "tracks");
    xpv_events_query w = {.marks = q->s->marks,
                          .devrows = q->s->devrows,
                          .has_start = a->present,
                          .start_us = a->d,
                          .has_end = b->present,
                          .end_us = b->d,
                          .resolution = (int)xpv_route_int(q, "resolution"),
                          .tracks = tracks->present ? tracks->list : NULL,
                          .ntracks = tracks->present ? tracks->n : 0};
    xpv_reply_json(r, answer(q->db, q->id, &w, &r->body));
}

void xpv_routes_events(xpv_route_req *q, xpv_reply *r)
{
    window(q, r, xpv_api_events);
}

void xpv_routes_counters(xpv_route_req *q, xpv_reply *r)
{
    window(q, r, xpv_api_counters);
}

void xpv_routes_aggregate(xpv_route_req *q, xpv_reply *r)
{
    window(q, r, xpv_api_aggregate);
}

void xpv_routes_event(xpv_route_req *q, xpv_reply *r)
{
    const xpv_route_value *ref = xpv_route_value_of(q, "ref");
    xpv_reply_json(r, xpv_api_event(q->db, q->id, ref->i, (uint32_t)ref->j, &r->body));
}

void xpv_routes_search(xpv_route_req *q, xpv_reply *r)
{
    xpv_reply_json(r,
                   xpv_api_search(q->db, q->id, xpv_route_text(q, "q"), xpv_route_int(q, "offset"),
                                  (int)xpv_route_int(q, "limit"), &r->body));
}

void xpv_routes_modules(xpv_route_req *q, xpv_reply *r)
{
    xpv_reply_json(r, xpv_api_profile_modules(q->db, q->id, &r->body));
}

void xpv_routes_findings(xpv_route_req *q, xpv_reply *r)
{
    xpv_reply_json(r, xpv_api_findings(q->db, q->id, &q->s->opts.findings, &r->body));
}

void xpv_routes_memory_profile(xpv_route_req *q, xpv_reply *r)
{
    xpv_reply_json(r, xpv_api_memory_profile(q->db, q->id, &r->body));
}

const char *xpv_routes_module(xpv_route_req *q)
{
    static const char *const NAMES[] = {"module", "module_name", "program_id"};
    for (size_t i = 0; i < sizeof NAMES / sizeof NAMES[0]; i++) {
        const char *m = xpv_route_text(q, NAMES[i]);
        if (m && *m) return m;
    }
    return NULL;
}

/* A module is named as the profile names it ("jit_dot(79)"), by program
 * id, or by its HLO name. */
void xpv_routes_memory_viewer(xpv_route_req *q, xpv_reply *r)
{
    xpv_reply_json(r, xpv_api_memory_viewer(q->db, q->id, xpv_routes_module(q), &r->body));
}

/* /hlo lists the modules, /hlo/{module}?q= (or /hlo?module=) answers one. */
void xpv_routes_hlo(xpv_route_req *q, xpv_reply *r)
{
    const char *module = *q->rest ? q->rest : xpv_routes_module(q);
    xpv_reply_json(r, xpv_api_hlo_module(q->db, q->id, module, xpv_route_text(q, "q"),
                                         q->s->hlo_cache, &r->body));
}

/* /api/compare?a=ID&b=ID: ids as everywhere ("latest" included); the
 * index is opened once both are known. */
void xpv_routes_compare(xpv_route_req *q, xpv_reply *r)
{
    sqlite3 *db;
    if (xpv_route_db(q->s, &db, r) != 0) return;
    xpv_reply_json(r, xpv_api_compare(db, xpv_route_value_of(q, "a")->i, db,
                                      xpv_route_value_of(q, "b")->i, &r->body));
}

void xpv_routes_not_found(xpv_route_req *q, xpv_reply *r)
{
    (void)q;
    xpv_reply_error(r, 404, "no such API route");
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
