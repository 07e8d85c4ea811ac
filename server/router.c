/*
 * router.c — the first look at every request on the main listener: the
 * Host it names and the access token (access.h), size limits, method, a
 * path that cannot escape (traversal, encoded dots or slashes, control
 * bytes), then the route table's row for the path (route_table.h), or else
 * the embedded frontend. It reads only the request; a handler it calls
 * fills the reply.
 *
 * A row is answered in this order, each step's failure ending it: the
 * TensorBoard routes' UI mode, the response cache (cacheable rows), the
 * {id}, the index (unless NO_DB), the parameters, the handler; then an
 * answer about one profile that met a damaged block becomes a 503.
 */
#include "router.h"
#include "access.h"
#include "response_cache.h"
#include "route_table.h"
#include "routes.h"
#include "static_files.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/* Rejects paths that could name something outside the embedded files or
 * the API: traversal (also once percent-decoded), empty segments, odd bytes. */
static const char *path_problem(const char *url)
{
    if (url[0] != '/') return "the request target must be a path starting with /";
    if (strstr(url, "//")) return "empty path segment";
    for (const char *p = url; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == '\\' || *p == 0x7f) return "bad character in path";
    for (const char *seg = url; seg; seg = strchr(seg + 1, '/'))
        if (strncmp(seg, "/..", 3) == 0 && (seg[3] == '/' || seg[3] == 0)) return "path traversal";
    if (strstr(url, "%2e") || strstr(url, "%2E") || strstr(url, "%2f") || strstr(url, "%2F"))
        return "encoded dots or slashes in path";
    return NULL;
}

/* A 500 that SQLite's last error explains is the index's state, not a
 * bug: locked by another process (try again), or damaged (the indexer
 * checks it and rebuilds it). Either way the client gets a 503. */
static void index_failure(xpv_server *s, sqlite3 *db, xpv_reply *r)
{
    xpv_err err = {{0}};
    if (!db) db = xpv_server_db(s, &err); /* a route that reads no index */
    if (xpv_server_rebuilding(s)) {       /* the damage is known: no report */
        xpv_reply_free(r);
        xpv_reply_init(r);
        xpv_reply_error(r, 503, XPV_SERVER_REBUILDING);
        return;
    }
    int code = db ? sqlite3_errcode(db) & 0xff : SQLITE_CANTOPEN;
    if (code == SQLITE_BUSY || code == SQLITE_LOCKED) {
        xpv_reply_free(r);
        xpv_reply_init(r);
        xpv_reply_error(r, 503, "the index is locked by another process; try again");
    } else if (code == SQLITE_CORRUPT || code == SQLITE_NOTADB || code == SQLITE_IOERR ||
               code == SQLITE_CANTOPEN) {
        xpv_server_index_damaged(s);
        xpv_reply_free(r);
        xpv_reply_init(r);
        xpv_reply_error(r, 503, "the index is damaged and is being rebuilt; try again shortly");
    }
}

static void answer_row(xpv_route_req *q, const xpv_route_capture *caps, int ncaps, xpv_reply *r)
{
    const xpv_route *rt = q->route;
    int has_id = 0;
    if ((rt->flags & XPV_ROUTE_TB) && q->s->opts.ui == XPV_UI_PERFETTO) {
        xpv_reply_error(r, 404, "TensorBoard routes are served with --ui=tensorboard or both");
        return;
    }
    if (rt->cacheable && xpv_response_cache_get(q->s, q->c, q->path, r)) return;
    for (int i = 0; i < ncaps; i++) {
        if (caps[i].name_len == 2 && strncmp(caps[i].name, "id", 2) == 0) {
            if (xpv_route_profile_id(q->s, caps[i].value, caps[i].len, &q->id, r) != 0) goto done;
            has_id = 1;
        } else {
            assert(!caps[i].value[caps[i].len]); /* only {name*} is handed over, as text */
            q->rest = caps[i].value;
        }
    }
    if (!(rt->flags & XPV_ROUTE_NO_DB) && xpv_route_db(q->s, &q->db, r) != 0) goto done;
    if (xpv_route_read_params(q, r) == 0) rt->handler(q, r);
    if (has_id && !(rt->flags & XPV_ROUTE_NO_DB)) xpv_routes_damaged(q->s, &q->id, 1, r);
done:
    if (rt->cacheable) xpv_response_cache_put(q->s, q->c, q->path, r);
}

/* Answers from the route table: 1, or 0 when no row matches the path. */
static int route(xpv_server *s, struct MHD_Connection *c, const char *url, const char *method,
                 xpv_reply *r)
{
    xpv_route_capture caps[XPV_ROUTE_MAX_CAPTURES];
    int ncaps;
    xpv_route_req *q = xpv_xcalloc(1, sizeof *q);
    q->route = xpv_route_find(method, url, q->path, sizeof q->path, caps, &ncaps);
    if (q->route) {
        q->s = s;
        q->c = c;
        q->rest = "";
        answer_row(q, caps, ncaps, r);
        /* the connection the answer failed on says why, not a new one */
        if (r->status == 500) index_failure(s, q->db, r);
        xpv_route_free_params(q);
    }
    int found = q->route != NULL;
    free(q);
    return found;
}

static void answer(xpv_server *s, struct MHD_Connection *c, const char *url, const char *method,
                   xpv_reply *r)
{
    const char *problem;
    if (strlen(url) + xpv_http_query_bytes(c) > XPV_HTTP_MAX_URL) {
        xpv_reply_error(r, 414, "URL longer than %d bytes", XPV_HTTP_MAX_URL);
        return;
    }
    if (xpv_http_header_bytes(c) > XPV_HTTP_MAX_HEADERS) {
        xpv_reply_error(r, 431, "request headers larger than %d bytes", XPV_HTTP_MAX_HEADERS);
        return;
    }
    if (strcmp(method, "OPTIONS") == 0) {
        r->status = 204;
        r->allow = "GET, HEAD, OPTIONS";
        return;
    }
    if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
        xpv_reply_error(r, 405, "method %.20s not allowed: this server only reads", method);
        r->allow = "GET, HEAD, OPTIONS";
        return;
    }
    if ((problem = path_problem(url))) {
        xpv_reply_error(r, 400, "%s", problem);
        return;
    }
    if (route(s, c, url, method, r)) return;
    xpv_static_reply(url, r);
}

/* The API's answers are JSON; everything else is the UI's, whose 401 is a
 * page a person reads. */
static int is_page(const char *url)
{
    return strncmp(url, "/api", 4) != 0 && strncmp(url, "/data/", 6) != 0;
}

void xpv_router_answer(void *ctx, struct MHD_Connection *c, const char *url, const char *method,
                       xpv_reply *r)
{
    xpv_server *s = ctx;
    int from_query = 0;
    if (!xpv_access_host_ok(s, c, r) || !xpv_access_token_ok(s, c, is_page(url), &from_query, r))
        return;
    answer(s, c, url, method, r);
    /* After the answer: a handler may have started the reply afresh. */
    if (from_query) xpv_access_set_cookie(s, r);
}
