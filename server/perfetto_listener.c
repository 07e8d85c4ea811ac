/*
 * perfetto_listener.c — see perfetto_listener.h.
 */
#define _GNU_SOURCE
#include "perfetto_listener.h"
#include "access.h"
#include "http.h"
#include "listen.h"
#include "route_table.h"
#include "slow_clients.h"
#include "trace_stream.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Perfetto UI holds one or two connections; the rest is headroom for a
 * flood, which the watchdog thins out (slow_clients.h). */
#define PERFETTO_MAX_CONNECTIONS 256
#define PERFETTO_HEADER_S 5
#define PERFETTO_IDLE_S 120

static struct MHD_Daemon *perfetto_daemon;
static xpv_slow_clients *perfetto_watch;

static void answer_trace(xpv_server *s, struct MHD_Connection *c, const char *url,
                         const char *method, xpv_reply *r)
{
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

void xpv_perfetto_answer(void *ctx, struct MHD_Connection *c, const char *url, const char *method,
                         xpv_reply *r)
{
    xpv_server *s = ctx;
    if (xpv_access_host_ok(s, c, r)) answer_trace(s, c, url, method, r);
    /* Every answer, errors too, so the granted page can read why. */
    const char *origin = xpv_access_granted_origin(s, c);
    r->vary_origin = 1;
    if (origin && strlen(origin) < sizeof r->cors_origin) {
        snprintf(r->cors_origin, sizeof r->cors_origin, "%s", origin);
        r->preflight = strcmp(method, "OPTIONS") == 0;
    }
}

int xpv_perfetto_start(xpv_server *s, int port, xpv_err *err)
{
    int ipv6, bound, busy;
    int fd = xpv_listen_open("127.0.0.1", port, &ipv6, &bound, &busy, err);
    if (fd < 0) return -1;
    perfetto_watch =
        xpv_slow_clients_start(PERFETTO_HEADER_S, PERFETTO_IDLE_S, PERFETTO_MAX_CONNECTIONS, err);
    if (!perfetto_watch) {
        close(fd);
        return -1;
    }
    s->perfetto_site = (xpv_http_site){xpv_perfetto_answer, s, 0};
    perfetto_daemon = MHD_start_daemon(
        xpv_http_daemon_flags(), 0, NULL, NULL, xpv_http_on_request, &s->perfetto_site,
        MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_THREAD_POOL_SIZE, (unsigned)2,
        MHD_OPTION_CONNECTION_LIMIT,
        (unsigned)(PERFETTO_MAX_CONNECTIONS + XPV_SLOW_CLIENTS_HEADROOM),
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)PERFETTO_IDLE_S,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(128 * 1024), MHD_OPTION_NOTIFY_CONNECTION,
        xpv_slow_clients_on_connection, perfetto_watch, MHD_OPTION_NOTIFY_COMPLETED,
        xpv_slow_clients_on_completed, perfetto_watch, MHD_OPTION_END);
    if (!perfetto_daemon) {
        close(fd);
        xpv_slow_clients_stop(perfetto_watch);
        perfetto_watch = NULL;
        return xpv_err_set(err, "cannot start the Perfetto listener on 127.0.0.1:%d", port);
    }
    s->perfetto_port = bound;
    return 0;
}

void xpv_perfetto_stop(void)
{
    if (perfetto_daemon) MHD_stop_daemon(perfetto_daemon);
    perfetto_daemon = NULL;
    xpv_slow_clients_stop(perfetto_watch);
    perfetto_watch = NULL;
}
