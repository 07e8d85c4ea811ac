/*
 * perfetto_listener.c — see perfetto_listener.h.
 */
#define _GNU_SOURCE
#include "perfetto_listener.h"
#include "http.h"
#include "listen.h"
#include "route_table.h"
#include "trace_stream.h"

#include <string.h>
#include <unistd.h>

static struct MHD_Daemon *perfetto_daemon;

static void answer(void *ctx, struct MHD_Connection *c, const char *url, const char *method,
                   xpv_reply *r)
{
    xpv_server *s = ctx;
    if (strcmp(method, "OPTIONS") == 0) {
        r->status = 204;
        r->allow = "GET, HEAD, OPTIONS";
        return;
    }
    if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
        /* Perfetto's trace_processor probe: "not here", so it fetches the URL. */
        xpv_reply_error(r, 404, "this is not a trace_processor; fetch /<profile-id>.json");
        return;
    }
    const char *name = url[0] == '/' ? url + 1 : url;
    size_t len = strlen(name);
    if (len > 5 && strcmp(name + len - 5, ".json") == 0) len -= 5;
    if (strlen(url) > 64 || len == 0 || memchr(name, '/', len)) {
        xpv_reply_error(r, 404, "GET /<profile-id>.json or /latest.json");
        return;
    }
    int64_t id;
    if (xpv_route_profile_id(s, name, len, &id, r) != 0) {
        if (r->status == 400) xpv_reply_error(r, 404, "no such trace: GET /<profile-id>.json");
        return;
    }
    xpv_trace_stream_reply(s, c, id, 0, NULL, r);
}

int xpv_perfetto_start(xpv_server *s, int port, xpv_err *err)
{
    int ipv6, bound, busy;
    int fd = xpv_listen_open("127.0.0.1", port, &ipv6, &bound, &busy, err);
    if (fd < 0) return -1;
    s->perfetto_site = (xpv_http_site){answer, s, 1};
    perfetto_daemon = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO, 0, NULL, NULL, xpv_http_on_request,
        &s->perfetto_site, MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_THREAD_POOL_SIZE, (unsigned)2,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)120, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
        (size_t)(128 * 1024), MHD_OPTION_END);
    if (!perfetto_daemon) {
        close(fd);
        return xpv_err_set(err, "cannot start the Perfetto listener on 127.0.0.1:%d", port);
    }
    s->perfetto_port = bound;
    return 0;
}

void xpv_perfetto_stop(void)
{
    if (perfetto_daemon) MHD_stop_daemon(perfetto_daemon);
    perfetto_daemon = NULL;
}
