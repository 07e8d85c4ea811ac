/*
 * router.c — the first look at every request on the main listener: size
 * limits, method, a path that cannot escape (traversal, encoded dots or
 * slashes, control bytes), then the API, the TensorBoard plugin routes or
 * the embedded frontend. It reads only the request; a handler it calls
 * fills the reply.
 */
#include "router.h"
#include "routes.h"
#include "static_files.h"
#include "tensorboard_routes.h"

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
static void index_failure(xpv_server *s, xpv_reply *r)
{
    xpv_err err = {{0}};
    sqlite3 *db = xpv_server_db(s, &err);
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

void xpv_router_answer(void *ctx, struct MHD_Connection *c, const char *url, const char *method,
                       xpv_reply *r)
{
    xpv_server *s = ctx;
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
    if (strncmp(url, "/api/", 5) == 0 || strcmp(url, "/api") == 0) {
        xpv_routes_api(s, c, url, r);
        if (r->status == 500) index_failure(s, r);
        return;
    }
    if (strncmp(url, "/data/plugin/profile/", 21) == 0) {
        xpv_tensorboard_reply(s, c, url, r);
        if (r->status == 500) index_failure(s, r);
        return;
    }
    xpv_static_reply(url, r);
}
