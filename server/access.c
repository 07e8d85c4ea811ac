/*
 * access.c — see access.h.
 *
 * A DNS-rebinding page reaches this server under the page's own name, so
 * the Host header gives it away; an IP address in Host cannot be rebound
 * (the browser connected to exactly that address), so any address passes.
 * The token is compared in constant time, and only ever printed by app/.
 */
#define _GNU_SOURCE
#include "access.h"
#include "listen.h"

#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <unistd.h>

#define NAME_MAX_BYTES 256

/* Splits "name", "name:port", "[v6]" or "[v6]:port" into name (without
 * the brackets) and *bracketed. Returns 0, or -1 when malformed. */
static int split_host(const char *host, size_t len, char *name, size_t cap, int *bracketed)
{
    const char *end = host + len, *name_end, *rest;
    *bracketed = len && host[0] == '[';
    if (*bracketed) {
        name_end = memchr(host, ']', len);
        if (!name_end) return -1;
        host++;
        rest = name_end + 1;
    } else {
        name_end = memchr(host, ':', len);
        if (!name_end) name_end = end;
        rest = name_end;
    }
    if (rest < end) {
        if (*rest != ':' || end - rest < 2 || end - rest > 6) return -1;
        for (const char *p = rest + 1; p < end; p++)
            if (*p < '0' || *p > '9') return -1;
    }
    size_t n = (size_t)(name_end - host);
    if (n == 0 || n >= cap) return -1;
    memcpy(name, host, n);
    name[n] = 0;
    return 0;
}

static int same_name(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    if (n && a[n - 1] == '.') n--; /* "localhost." is "localhost" */
    if (m && b[m - 1] == '.') m--;
    return n == m && strncasecmp(a, b, n) == 0;
}

static int is_address(const char *name, int bracketed)
{
    unsigned char addr[16];
    return bracketed ? inet_pton(AF_INET6, name, addr) == 1 : inet_pton(AF_INET, name, addr) == 1;
}

static int name_ok(const xpv_server *s, const char *name, int bracketed)
{
    const xpv_server_options *o = &s->opts;
    if (is_address(name, bracketed)) return 1;
    if (bracketed) return 0;
    if (same_name(name, "localhost") || (o->host && same_name(name, o->host))) return 1;
    for (int i = 0; i < o->n_allow_hosts; i++)
        if (strcmp(o->allow_hosts[i], "*") == 0 || same_name(name, o->allow_hosts[i])) return 1;
    char self[NAME_MAX_BYTES];
    if (o->host && !xpv_listen_is_loopback(o->host) && gethostname(self, sizeof self) == 0) {
        self[sizeof self - 1] = 0;
        if (same_name(name, self)) return 1;
    }
    return 0;
}

int xpv_access_host_ok(const xpv_server *s, struct MHD_Connection *c, xpv_reply *r)
{
    const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
    char name[NAME_MAX_BYTES];
    int bracketed;
    if (!host) return 1;
    int parsed = split_host(host, strlen(host), name, sizeof name, &bracketed) == 0;
    if (parsed && name_ok(s, name, bracketed)) return 1;
    xpv_reply_error(r, 403,
                    "this server does not answer to the name '%.100s' (the Host header), which "
                    "guards against DNS rebinding; if that name is this machine, start "
                    "xprof-view with --allow-host=%.100s",
                    host, parsed ? name : "NAME");
    return 0;
}

const char *xpv_access_granted_origin(const xpv_server *s, struct MHD_Connection *c)
{
    const char *origin = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
    if (!origin) return NULL;
    if (strcmp(origin, XPV_ACCESS_PERFETTO_ORIGIN) == 0) return origin;
    if (strncmp(origin, "http://", 7) != 0 || !s->port) return NULL;
    const char *host = origin + 7, *colon = strrchr(host, ':');
    char name[NAME_MAX_BYTES], port[8];
    int bracketed;
    if (!colon || strchr(host, '/')) return NULL;
    snprintf(port, sizeof port, ":%d", s->port);
    if (strcmp(colon, port) != 0) return NULL;
    if (split_host(host, strlen(host), name, sizeof name, &bracketed) != 0) return NULL;
    return name_ok(s, name, bracketed) ? origin : NULL;
}

/* Compares a secret without an early exit: the time taken does not say
 * how much of a guess was right. */
static int same_secret(const char *guess, size_t n, const char *secret)
{
    size_t m = strlen(secret);
    unsigned diff = n != m;
    for (size_t i = 0; i < m; i++)
        diff |= (unsigned char)secret[i] ^ (unsigned char)(i < n ? guess[i] : 0);
    return diff == 0;
}

static void cookie_name(const xpv_server *s, char *out, size_t cap)
{
    snprintf(out, cap, "xpv_token_%d", s->port);
}

/* The value of our cookie in a Cookie header ("a=1; b=2"), or NULL. */
static const char *cookie_value(const xpv_server *s, const char *header, size_t *len)
{
    char name[32];
    cookie_name(s, name, sizeof name);
    size_t n = strlen(name);
    for (const char *p = header; p && *p;) {
        while (*p == ' ' || *p == ';')
            p++;
        if (strncmp(p, name, n) == 0 && p[n] == '=') {
            *len = strcspn(p + n + 1, ";");
            return p + n + 1;
        }
        p = strchr(p, ';');
    }
    return NULL;
}

static int carries_token(const xpv_server *s, struct MHD_Connection *c, int *from_query)
{
    const char *t = s->opts.token, *v;
    size_t len;
    if ((v = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_COOKIE)) &&
        (v = cookie_value(s, v, &len)) && same_secret(v, len, t))
        return 1;
    v = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    if (v && strncasecmp(v, "Bearer ", 7) == 0 && same_secret(v + 7, strlen(v + 7), t)) return 1;
    v = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "token");
    if (v && same_secret(v, strlen(v), t)) return *from_query = 1;
    return 0;
}

static const char TOKEN_PAGE[] =
    "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
    "<title>xprof-view: access token needed</title></head><body>\n"
    "<h1>This xprof-view asks for its access token</h1>\n"
    "<p>It serves these profiles to the network, so it answers only browsers that hold the "
    "token it printed when it started. Open the URL it printed (it ends in "
    "<code>?token=&hellip;</code>); this browser then keeps the token for this server.</p>\n"
    "</body></html>\n";

int xpv_access_token_ok(const xpv_server *s, struct MHD_Connection *c, int page, int *from_query,
                        xpv_reply *r)
{
    *from_query = 0;
    if (!s->opts.token || carries_token(s, c, from_query)) return 1;
    if (!page) {
        xpv_reply_error(r, 401,
                        "this server asks for its access token: open the URL xprof-view printed "
                        "at start-up (it ends in ?token=...), or send Authorization: Bearer TOKEN");
        return 0;
    }
    xpv_buf_reset(&r->body);
    xpv_buf_puts(&r->body, TOKEN_PAGE);
    r->status = 401;
    r->content_type = "text/html; charset=utf-8";
    r->cacheable = 0;
    return 0;
}

void xpv_access_set_cookie(const xpv_server *s, xpv_reply *r)
{
    char name[32];
    cookie_name(s, name, sizeof name);
    snprintf(r->cookie, sizeof r->cookie, "%s=%s; Path=/; HttpOnly; SameSite=Strict", name,
             s->opts.token);
}

int xpv_access_new_token(char *out, size_t cap, xpv_err *err)
{
    unsigned char bits[XPV_ACCESS_TOKEN_HEX / 2];
    size_t got = 0;
    assert(cap > XPV_ACCESS_TOKEN_HEX);
    while (got < sizeof bits) {
        ssize_t n = getrandom(bits + got, sizeof bits - got, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return xpv_err_set(err, "cannot read random bytes: %s", strerror(errno));
        got += (size_t)n;
    }
    for (size_t i = 0; i < sizeof bits; i++)
        snprintf(out + 2 * i, cap - 2 * i, "%02x", bits[i]);
    return 0;
}

int xpv_access_token_valid(const char *token)
{
    size_t n = strlen(token);
    if (n < 8 || n > 128) return 0;
    return strspn(token, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~") == n;
}
