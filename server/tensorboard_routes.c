/*
 * tensorboard_routes.c — see tensorboard_routes.h. Served with --ui=both
 * (the default) and --ui=tensorboard; run and host names come from the
 * query and are only ever compared with indexed values.
 */
#include "tensorboard_routes.h"
#include "routes.h"
#include "trace_stream.h"
#include "../api/api.h"
#include "../api/tools/tools.h"

#include <math.h>
#include <stdlib.h>

#include <string.h>

/* trace_viewer@'s start_time_ms and end_time_ms (of the trace's own ts
 * clock; both or neither): 0, with an empty window for none, or -1 with r
 * filled. Its resolution is not needed: the window comes whole. */
static int trace_window(xpv_route_req *q, xpv_trace_window *w, xpv_reply *r)
{
    *w = (xpv_trace_window){0, 0};
    if (xpv_route_check(q, "start_time_ms", r) || xpv_route_check(q, "end_time_ms", r)) return -1;
    const xpv_route_value *a = xpv_route_value_of(q, "start_time_ms"),
                          *b = xpv_route_value_of(q, "end_time_ms");
    if (!a->present && !b->present) return 0;
    if (a->present != b->present || b->d <= a->d) {
        xpv_reply_error(r, 400, XPV_TB_WINDOW_ERROR);
        return -1;
    }
    *w = (xpv_trace_window){(int64_t)floor(a->d * 1e6), (int64_t)ceil(b->d * 1e6)};
    return 0;
}

/* The profiles a request names: one host's (host=: *id, *ids NULL, *n 1),
 * or several (host=ALL_HOSTS or hosts=a,b: *ids malloc'ed). 0, or -1 with r
 * filled: 404 "No Data" when none matches. */
static int scope(xpv_route_req *q, int64_t *id, int64_t **ids, size_t *n, xpv_reply *r)
{
    const char *run = xpv_route_text(q, "run"), *host = xpv_route_text(q, "host");
    const char *hosts = xpv_route_text(q, "hosts");
    if (host && strcmp(host, XPV_TB_ALL_HOSTS) == 0) hosts = host;
    *ids = NULL;
    *n = 1;
    xpv_err err = {{0}};
    int found = hosts ? xpv_api_tb_scope(q->db, run, hosts, ids, n, &err)
                      : xpv_api_tb_profile(q->db, run, host, id, &err);
    if (found < 0)
        xpv_reply_error(r, 500, "%s", err.msg);
    else if (!found)
        xpv_reply_error(r, 404, "No Data");
    return found > 0 ? 0 : -1;
}

/* data and data_csv: one host's profile, or several for a tool that
 * merges hosts. */
static void data(xpv_route_req *q, int csv, xpv_reply *r)
{
    const char *tag = xpv_route_text(q, "tag");
    int64_t id, *ids;
    size_t n;
    if (scope(q, &id, &ids, &n, r) != 0) return;
    if (!csv && (strcmp(tag, "trace_viewer") == 0 || strcmp(tag, "trace_viewer@") == 0)) {
        xpv_trace_window w;
        if (n != 1)
            xpv_reply_error(r, 404, "No Data");
        else if (trace_window(q, &w, r) == 0)
            xpv_trace_stream_reply(q->s, q->c, ids ? ids[0] : id, 0, w.b_ns > w.a_ns ? &w : NULL,
                                   r);
    } else {
        xpv_tool_scope sc = {ids ? ids : &id, n, q->s->hlo_cache, xpv_routes_module(q)};
        int status =
            xpv_api_tool(q->db, tag, &sc, csv ? XPV_TOOL_CSV : XPV_TOOL_DATATABLE, &r->body);
        xpv_reply_json(r, status);
        if (csv && status == 200) r->content_type = "text/csv; charset=utf-8";
        xpv_routes_damaged(q->s, ids ? ids : &id, n, r);
    }
    free(ids);
}

void xpv_tb_data(xpv_route_req *q, xpv_reply *r)
{
    data(q, 0, r);
}

void xpv_tb_data_csv(xpv_route_req *q, xpv_reply *r)
{
    data(q, 1, r);
}

void xpv_tb_module_list(xpv_route_req *q, xpv_reply *r)
{
    int64_t id, *ids;
    size_t n;
    if (scope(q, &id, &ids, &n, r) != 0) return;
    xpv_reply_json(r, xpv_api_module_list(q->db, ids ? ids : &id, n, &r->body));
    free(ids);
}

void xpv_tb_runs(xpv_route_req *q, xpv_reply *r)
{
    xpv_reply_json(r, xpv_api_tb_runs(q->db, &r->body));
}

void xpv_tb_run_tools(xpv_route_req *q, xpv_reply *r)
{
    xpv_reply_json(r, xpv_api_tb_tools(q->db, xpv_route_text(q, "run"), &r->body));
}

void xpv_tb_hosts(xpv_route_req *q, xpv_reply *r)
{
    xpv_reply_json(
        r, xpv_api_tb_hosts(q->db, xpv_route_text(q, "run"), xpv_route_text(q, "tag"), &r->body));
}

void xpv_tb_not_found(xpv_route_req *q, xpv_reply *r)
{
    xpv_reply_error(r, 404, "no TensorBoard route %.100s", q->rest);
}
