/*
 * serve.c — the serve command: the server started on the index (server/),
 * the background indexer on its own thread (background_index.c), the
 * printed URLs, and a clean shutdown on SIGINT/SIGTERM.
 *
 * A server other machines can reach asks a token of every request
 * (server/access.h): --token's, or 128 random bits, printed only in the
 * URL on stdout.
 *
 * Signals are blocked in every thread and taken synchronously with
 * sigwait by the main thread, so no handler runs at a random point.
 */
#define _GNU_SOURCE
#include "serve.h"
#include "background_index.h"
#include "../server/access.h"
#include "../server/listen.h"
#include "../server/server.h"

#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

/* ---- start-up output ---- */

static void print_urls(const xpv_server *s, const xpv_options *o, const char *url, size_t nfound)
{
    char self[256] = "";
    printf("xprof-view %s: %zu profile file%s under %s\n", XPV_VERSION, nfound,
           nfound == 1 ? "" : "s", s->root_abs);
    printf("serving at %s   (Ctrl-C to stop)\n", url);
    if (o->bind_all && gethostname(self, sizeof self - 1) == 0 && self[0])
        printf("on the network: http://%s:%d/%s%s\n", self, s->port, s->opts.token ? "?token=" : "",
               s->opts.token ? s->opts.token : "");
    /* latest.json, not an id: "latest" is decided when the link is opened,
     * after indexing has told a good capture from a broken newer one. */
    if (s->perfetto_port && nfound)
        printf("open the latest profile in Perfetto UI (needs internet):\n"
               "  https://ui.perfetto.dev/#!/?url=http://127.0.0.1:%d/latest.json\n",
               s->perfetto_port);
    if (!o->quiet && nfound)
        printf("indexing runs in the background; profiles show as pending until done\n");
    fflush(stdout);
}

static void open_browser(const char *url)
{
    pid_t pid;
    char *argv[] = {"xdg-open", (char *)url, NULL};
    if (posix_spawnp(&pid, "xdg-open", NULL, NULL, argv, environ) != 0)
        fprintf(stderr, "xprof-view: --open: cannot run xdg-open; open %s yourself\n", url);
}

static void make_url(const char *host, int port, int ipv6, const char *token, char *out, size_t n)
{
    const char *q = token ? "?token=" : "", *t = token ? token : "";
    if (strcmp(host, "0.0.0.0") == 0 || strcmp(host, "::") == 0)
        snprintf(out, n, "http://127.0.0.1:%d/%s%s", port, q, t);
    else if (ipv6)
        snprintf(out, n, "http://[%s]:%d/%s%s", host, port, q, t);
    else
        snprintf(out, n, "http://%s:%d/%s%s", host, port, q, t);
}

/* The token asked of every request: --token's; on the network, unless
 * --no-token, a random one. Returns 0, or -1 after saying why. */
static int pick_token(const xpv_options *o, char *buf, size_t cap, const char **token)
{
    xpv_err err = {{0}};
    *token = o->token;
    if (o->token || o->no_token || xpv_listen_is_loopback(o->host)) return 0;
    if (xpv_access_new_token(buf, cap, &err) != 0) {
        fprintf(stderr, "xprof-view: cannot make an access token: %s (or use --token=T)\n",
                err.msg);
        return -1;
    }
    *token = buf;
    return 0;
}

static void warn_exposure(const xpv_options *o, const char *token)
{
    if (xpv_listen_is_loopback(o->host)) return;
    if (token) {
        fprintf(stderr,
                "xprof-view: listening on %s: other machines can connect; they need the "
                "access token in the URL below\n",
                o->host);
        return;
    }
    fprintf(stderr,
            "xprof-view: WARNING: --no-token: listening on %s port %d with NO access token.\n"
            "xprof-view: WARNING: anyone who can reach this machine can read every profile "
            "served here\n"
            "xprof-view: WARNING: (kernel names, source paths, host names, model structure).\n",
            o->host, o->port);
}

/* ---- the whole run ---- */

static int wait_for_signal(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    int sig = 0;
    sigwait(&set, &sig);
    return sig;
}

static void block_signals(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
}

static xpv_server_options server_options(const xpv_options *o)
{
    return (xpv_server_options){.host = o->host,
                                .port = o->port,
                                .perfetto_port = o->perfetto_port,
                                .ui = o->ui,
                                .max_connections = o->max_connections,
                                .client_timeout_s = o->client_timeout_s,
                                .settle_ms = o->settle_ms,
                                .findings = o->findings,
                                .allow_hosts = o->allow_hosts,
                                .n_allow_hosts = o->n_allow_hosts};
}

int xpv_serve(const xpv_options *o, const char *db_path, const char *profile_arg,
              xpv_found_list *found)
{
    static xpv_server server;
    xpv_server *s = &server;
    static char token_buf[XPV_ACCESS_TOKEN_HEX + 1];
    xpv_err err = {{0}};
    xpv_server_options so = server_options(o);
    if (pick_token(o, token_buf, sizeof token_buf, &so.token) != 0) return 1;
    xpv_server_init(s, &so, db_path, found->root_abs, profile_arg);
    xpv_bg_index_attach(s);
    block_signals();
    warn_exposure(o, so.token);
    int ipv6 = 0, busy = 0;
    if (xpv_server_start(s, &ipv6, &busy, &err) != 0) {
        fprintf(stderr, "xprof-view: %s\n", err.msg);
        return busy ? 3 : 1;
    }
    if (xpv_bg_index_start(s, o, found, &err) != 0)
        fprintf(stderr, "xprof-view: background indexing is off: %s\n", err.msg);
    char url[512];
    make_url(o->host, s->port, ipv6, s->opts.token, url, sizeof url);
    print_urls(s, o, url, found->n);
    if (o->open_browser) open_browser(url);
    int sig = wait_for_signal();
    fprintf(stderr, "\nxprof-view: %s received, shutting down\n",
            sig == SIGINT ? "SIGINT" : "SIGTERM");
    if (!xpv_bg_index_stop(s, 3.0))
        fprintf(stderr, "xprof-view: indexing was interrupted; it resumes on the next start\n");
    xpv_server_stop(s);
    return 0;
}
