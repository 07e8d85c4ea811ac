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

static const char *param(struct MHD_Connection *c, const char *name)
{
    const char *v = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, name);
    return v && *v && strlen(v) < 1024 ? v : NULL;
}

/* trace_viewer@'s start_time_ms and end_time_ms (of the trace's own ts
 * clock; both or neither): 0, with an empty window for none, or -1 with r
 * filled. Its resolution is not needed: the window comes whole. */
static int trace_window(struct MHD_Connection *c, xpv_trace_window *w, xpv_reply *r)
{
    const char *a = param(c, "start_time_ms"), *b = param(c, "end_time_ms");
    *w = (xpv_trace_window){0, 0};
    if (!a && !b) return 0;
    char *ea = NULL, *eb = NULL;
    double da = a ? strtod(a, &ea) : NAN, db = b ? strtod(b, &eb) : NAN;
    if (!a || !b || *ea || *eb || !isfinite(da) || !isfinite(db) || db <= da || fabs(da) > 9.2e12 ||
        fabs(db) > 9.2e12) {
        xpv_reply_error(r, 400, "start_time_ms and end_time_ms must be numbers, start < end");
        return -1;
    }
    *w = (xpv_trace_window){(int64_t)floor(da * 1e6), (int64_t)ceil(db * 1e6)};
    return 0;
}

/* The profiles a request names: one host's (*id, *ids NULL, *n 1), or
 * several hosts' (host=ALL_HOSTS, or hosts=a,b; *ids malloc'ed). 0, or -1
 * with r filled: 404 "No Data" when none matches. */
static int scope_of(sqlite3 *db, const char *run, const char *host, const char *hosts, int64_t *id,
                    int64_t **ids, size_t *n, xpv_reply *r)
{
    if (host && strcmp(host, XPV_TB_ALL_HOSTS) == 0) hosts = host;
    xpv_err err = {{0}};
    int found = hosts ? xpv_api_tb_scope(db, run, hosts, ids, n, &err)
                      : xpv_api_tb_profile(db, run, host, id, &err);
    if (found < 0)
        xpv_reply_error(r, 500, "%s", err.msg);
    else if (!found)
        xpv_reply_error(r, 404, "No Data");
    return found > 0 ? 0 : -1;
}

/* data and data_csv: one host's profile, or several (host=ALL_HOSTS, or
 * hosts=a,b) for a tool that merges hosts. */
static void data(xpv_server *s, struct MHD_Connection *c, sqlite3 *db, int csv, xpv_reply *r)
{
    const char *run = param(c, "run"), *tag = param(c, "tag"), *host = param(c, "host");
    const char *hosts = param(c, "hosts");
    if (!run || !tag) {
        xpv_reply_error(r, 400, "data needs run and tag");
        return;
    }
    int64_t id, *ids = NULL;
    size_t n = 1;
    if (scope_of(db, run, host, hosts, &id, &ids, &n, r) != 0) return;
    if (!csv && (strcmp(tag, "trace_viewer") == 0 || strcmp(tag, "trace_viewer@") == 0)) {
        xpv_trace_window w;
        if (n != 1)
            xpv_reply_error(r, 404, "No Data");
        else if (trace_window(c, &w, r) == 0)
            xpv_trace_stream_reply(s, c, ids ? ids[0] : id, 0, w.b_ns > w.a_ns ? &w : NULL, r);
    } else {
        xpv_tool_scope scope = {ids ? ids : &id, n, s->hlo_cache};
        int status =
            xpv_api_tool(db, tag, &scope, csv ? XPV_TOOL_CSV : XPV_TOOL_DATATABLE, &r->body);
        xpv_reply_json(r, status);
        if (csv && status == 200) r->content_type = "text/csv; charset=utf-8";
        xpv_routes_damaged(s, ids ? ids : &id, n, r);
    }
    free(ids);
}

/* module_list: the modules one host's profile ran, or several hosts'
 * (host=ALL_HOSTS, or hosts=a,b). */
static void module_list(struct MHD_Connection *c, sqlite3 *db, xpv_reply *r)
{
    const char *run = param(c, "run"), *host = param(c, "host"), *hosts = param(c, "hosts");
    if (!run) {
        xpv_reply_error(r, 400, "module_list needs run");
        return;
    }
    int64_t id, *ids = NULL;
    size_t n = 1;
    if (scope_of(db, run, host, hosts, &id, &ids, &n, r) != 0) return;
    xpv_reply_json(r, xpv_api_module_list(db, ids ? ids : &id, n, &r->body));
    free(ids);
}

void xpv_tensorboard_reply(xpv_server *s, struct MHD_Connection *c, const char *path, xpv_reply *r)
{
    if (s->opts.ui == XPV_UI_PERFETTO) {
        xpv_reply_error(r, 404, "TensorBoard routes are served with --ui=tensorboard or both");
        return;
    }
    xpv_err err = {{0}};
    sqlite3 *db = xpv_server_db(s, &err);
    if (!db) {
        xpv_reply_error(r, 503, "index unavailable: %s", err.msg);
        return;
    }
    const char *route = path + strlen("/data/plugin/profile/");
    const char *run = param(c, "run");
    if (strcmp(route, "runs") == 0) {
        xpv_reply_json(r, xpv_api_tb_runs(db, &r->body));
    } else if (strcmp(route, "run_tools") == 0 || strcmp(route, "hosts") == 0) {
        if (!run) {
            xpv_reply_error(r, 400, "%s needs run", route);
            return;
        }
        int status = route[0] == 'r' ? xpv_api_tb_tools(db, run, &r->body)
                                     : xpv_api_tb_hosts(db, run, param(c, "tag"), &r->body);
        xpv_reply_json(r, status);
    } else if (strcmp(route, "data") == 0 || strcmp(route, "data_csv") == 0) {
        data(s, c, db, route[4] == '_', r);
    } else if (strcmp(route, "module_list") == 0) {
        module_list(c, db, r);
    } else {
        xpv_reply_error(r, 404, "no TensorBoard route %.100s", route);
    }
}
