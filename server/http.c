/*
 * http.c — see http.h.
 */
#define _GNU_SOURCE
#include "http.h"
#include "slow_clients.h"
#include "../api/api.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

#define GZIP_MIN_BYTES 512
/* Above this, compress fast: on loopback the deflate time outweighs bytes. */
#define BIG_BODY (64 * 1024)

void xpv_reply_init(xpv_reply *r)
{
    memset(r, 0, sizeof *r);
    r->status = 200;
    r->content_type = "application/json";
}

void xpv_reply_free(xpv_reply *r)
{
    xpv_buf_free(&r->body);
    if (r->stream) MHD_destroy_response(r->stream);
    r->stream = NULL;
}

/* 1 when the request (and any body, read and dropped) is complete and can
 * be answered; otherwise the access handler returns MHD_YES and is called
 * again. Answering on libmicrohttpd's first call would make it close the
 * connection, losing keep-alive. */
static int request_complete(void **con_cls, size_t *upload_size)
{
    static int marker;
    if (*con_cls == NULL) {
        *con_cls = &marker;
        return 0;
    }
    if (*upload_size) {
        *upload_size = 0;
        return 0;
    }
    return 1;
}

/* A declared body over the limit is refused before it is read. */
static int body_too_large(struct MHD_Connection *c)
{
    const char *len =
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    return len && strtoull(len, NULL, 10) > XPV_HTTP_MAX_BODY;
}

enum MHD_Result xpv_http_on_request(void *cls, struct MHD_Connection *c, const char *url,
                                    const char *method, const char *version,
                                    const char *upload_data, size_t *upload_size, void **con_cls)
{
    (void)version;
    (void)upload_data;
    if (*con_cls == NULL && body_too_large(c)) {
        xpv_reply r;
        xpv_reply_init(&r);
        xpv_reply_error(&r, 413, "request body larger than %d bytes: this server only reads",
                        XPV_HTTP_MAX_BODY);
        return xpv_http_send(c, &r);
    }
    if (!request_complete(con_cls, upload_size)) return MHD_YES;
    xpv_slow_clients_answering(c);
    const xpv_http_site *site = cls;
    xpv_reply r;
    xpv_reply_init(&r);
    site->answer(site->ctx, c, url, method, &r);
    r.page_headers = site->page_headers;
    return xpv_http_send(c, &r);
}

unsigned xpv_http_daemon_flags(void)
{
    if (MHD_is_feature_supported(MHD_FEATURE_EPOLL) == MHD_YES)
        return MHD_USE_EPOLL_INTERNAL_THREAD;
    return MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO;
}

void xpv_reply_error(xpv_reply *r, int status, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    r->status = xpv_api_error(&r->body, status, "%s", msg);
    r->content_type = "application/json";
    r->cacheable = 0;
    r->static_data = NULL;
    r->disposition[0] = 0;
}

void xpv_reply_json(xpv_reply *r, int status)
{
    r->status = status;
    r->content_type = "application/json";
    r->cacheable = status == 200;
}

/* Is gzip listed in Accept-Encoding with a non-zero q? */
int xpv_http_accepts_gzip(struct MHD_Connection *c)
{
    const char *ae =
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT_ENCODING);
    if (!ae) return 0;
    const char *p = ae;
    while ((p = strcasestr(p, "gzip")) != NULL) {
        int starts = p == ae || p[-1] == ' ' || p[-1] == ',';
        const char *q = p + 4;
        while (*q == ' ')
            q++;
        if (starts && (*q == 0 || *q == ',')) return 1;
        if (starts && *q == ';') {
            const char *v = strstr(q, "q=");
            if (!v || strtod(v + 2, NULL) > 0) return 1;
            return 0;
        }
        p += 4;
    }
    return 0;
}

/* Compares entity tags weakly: W/"x" matches "x". */
static int same_tag(const char *a, size_t alen, const char *b)
{
    if (alen > 2 && strncmp(a, "W/", 2) == 0) a += 2, alen -= 2;
    if (strncmp(b, "W/", 2) == 0) b += 2;
    return alen == strlen(b) && strncmp(a, b, alen) == 0;
}

int xpv_http_etag_matches(struct MHD_Connection *c, const char *etag)
{
    const char *inm =
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_IF_NONE_MATCH);
    if (!inm || !etag || !*etag) return 0;
    const char *p = inm;
    while (*p) {
        while (*p == ' ' || *p == ',')
            p++;
        const char *end = p;
        while (*end && *end != ',')
            end++;
        size_t n = (size_t)(end - p);
        while (n && p[n - 1] == ' ')
            n--;
        if ((n == 1 && *p == '*') || (n && same_tag(p, n, etag))) return 1;
        p = end;
    }
    return 0;
}

int xpv_http_gzip(const void *data, size_t len, int level, xpv_buf *out)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return -1;
    xpv_buf_reset(out);
    xpv_buf_reserve(out, deflateBound(&z, (uLong)len));
    z.next_in = (Bytef *)data;
    z.avail_in = (uInt)len;
    z.next_out = (Bytef *)out->data;
    z.avail_out = (uInt)(out->cap - 1);
    int rc = deflate(&z, Z_FINISH);
    out->len = z.total_out;
    out->data[out->len] = 0;
    deflateEnd(&z);
    return rc == Z_STREAM_END ? 0 : -1;
}

const char *xpv_http_content_type(const char *path)
{
    static const struct {
        const char *ext, *type;
    } types[] = {
        {".html", "text/html; charset=utf-8"},
        {".js", "text/javascript; charset=utf-8"},
        {".mjs", "text/javascript; charset=utf-8"},
        {".css", "text/css; charset=utf-8"},
        {".json", "application/json"},
        {".map", "application/json"},
        {".svg", "image/svg+xml"},
        {".png", "image/png"},
        {".ico", "image/x-icon"},
        {".woff2", "font/woff2"},
        {".wasm", "application/wasm"},
        {".txt", "text/plain; charset=utf-8"},
        {".csv", "text/csv; charset=utf-8"},
    };
    const char *dot = strrchr(path, '.');
    for (size_t i = 0; dot && i < sizeof types / sizeof types[0]; i++)
        if (strcasecmp(dot, types[i].ext) == 0) return types[i].type;
    return "application/octet-stream";
}

static int compressible(const char *type)
{
    return strncmp(type, "text/", 5) == 0 || strncmp(type, "application/json", 16) == 0 ||
           strncmp(type, "image/svg", 9) == 0 || strncmp(type, "application/wasm", 16) == 0;
}

static enum MHD_Result count_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                    const char *value)
{
    (void)kind;
    size_t *total = cls;
    *total += strlen(key) + (value ? strlen(value) : 0) + 4;
    return MHD_YES;
}

size_t xpv_http_header_bytes(struct MHD_Connection *c)
{
    size_t total = 0;
    MHD_get_connection_values(c, MHD_HEADER_KIND, count_header, &total);
    return total;
}

size_t xpv_http_query_bytes(struct MHD_Connection *c)
{
    size_t total = 0;
    MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, count_header, &total);
    return total;
}

/* The UI loads nothing from elsewhere and runs no inline script; style
 * attributes stay allowed (the charts set some). Opening ui.perfetto.dev
 * with window.open and postMessage is not something a CSP governs. */
#define PAGE_POLICY                                                                                \
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "                    \
    "img-src 'self' data: blob:; connect-src 'self'; font-src 'self'; object-src 'none'; "         \
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

static void add_security_headers(struct MHD_Response *resp, const xpv_reply *r)
{
    if (r->page_headers) {
        MHD_add_response_header(resp, "Content-Security-Policy", PAGE_POLICY);
        MHD_add_response_header(resp, "X-Frame-Options", "DENY");
        MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
    }
    if (r->cookie[0]) MHD_add_response_header(resp, MHD_HTTP_HEADER_SET_COOKIE, r->cookie);
    if (r->cors_origin[0]) {
        MHD_add_response_header(resp, MHD_HTTP_HEADER_ACCESS_CONTROL_ALLOW_ORIGIN, r->cors_origin);
        if (r->preflight) {
            MHD_add_response_header(resp, "Access-Control-Allow-Methods", "GET, HEAD, OPTIONS");
            MHD_add_response_header(resp, "Access-Control-Allow-Headers", "*");
            MHD_add_response_header(resp, "Access-Control-Allow-Private-Network", "true");
            MHD_add_response_header(resp, "Access-Control-Max-Age", "600");
        }
    }
}

static void add_common_headers(struct MHD_Response *resp, const xpv_reply *r, int vary_encoding)
{
    static const char *const vary[2][2] = {{NULL, "Accept-Encoding"},
                                           {"Origin", "Origin, Accept-Encoding"}};
    const char *v = vary[r->vary_origin != 0][vary_encoding != 0];
    if (v) MHD_add_response_header(resp, MHD_HTTP_HEADER_VARY, v);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, r->content_type);
    MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    if (r->etag[0]) {
        MHD_add_response_header(resp, MHD_HTTP_HEADER_ETAG, r->etag);
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    } else {
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    }
    if (r->allow) MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, r->allow);
    if (r->disposition[0])
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_DISPOSITION, r->disposition);
    add_security_headers(resp, r);
}

static enum MHD_Result queue(struct MHD_Connection *c, int status, struct MHD_Response *resp)
{
    if (!resp) return MHD_NO;
    enum MHD_Result rc = MHD_queue_response(c, (unsigned)status, resp);
    MHD_destroy_response(resp);
    return rc;
}

enum MHD_Result xpv_http_send(struct MHD_Connection *c, xpv_reply *r)
{
    const unsigned char *data =
        r->static_data ? r->static_data : (const unsigned char *)r->body.data;
    size_t len = r->static_data ? r->static_len : r->body.len;
    if (r->cacheable && r->status == 200 && !r->etag[0] && !r->stream)
        snprintf(r->etag, sizeof r->etag, "W/\"%016llx\"",
                 (unsigned long long)xpv_hash64(data ? (const void *)data : "", len));
    struct MHD_Response *resp;
    int status = r->status, vary_encoding = 0;
    if (r->etag[0] && status == 200 && xpv_http_etag_matches(c, r->etag)) {
        status = MHD_HTTP_NOT_MODIFIED;
        resp = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
        if (r->stream) MHD_destroy_response(r->stream), r->stream = NULL;
    } else if (r->stream) {
        resp = r->stream;
        r->stream = NULL;
    } else {
        int gz = xpv_http_accepts_gzip(c) && compressible(r->content_type) && len >= GZIP_MIN_BYTES;
        xpv_buf zbuf = {0};
        if (gz && r->static_gz) {
            resp = MHD_create_response_from_buffer(r->static_gz_len, (void *)r->static_gz,
                                                   MHD_RESPMEM_PERSISTENT);
        } else if (gz && xpv_http_gzip(data, len, len > BIG_BODY ? 1 : 5, &zbuf) == 0) {
            resp = MHD_create_response_from_buffer(zbuf.len, zbuf.data, MHD_RESPMEM_MUST_COPY);
        } else {
            gz = 0;
            resp = MHD_create_response_from_buffer(len, (void *)(data ? (const void *)data : ""),
                                                   r->static_data ? MHD_RESPMEM_PERSISTENT
                                                                  : MHD_RESPMEM_MUST_COPY);
        }
        xpv_buf_free(&zbuf);
        if (resp && gz) MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_ENCODING, "gzip");
        vary_encoding = compressible(r->content_type);
    }
    if (resp) add_common_headers(resp, r, vary_encoding);
    xpv_reply_free(r);
    return queue(c, status, resp);
}
