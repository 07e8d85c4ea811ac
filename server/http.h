/*
 * http.h — building and sending HTTP answers with libmicrohttpd: JSON
 * errors, content types, ETag / If-None-Match (304), gzip for clients that
 * accept it, and the headers every answer carries (with the web UI's
 * security policy on the main listener's, and the CORS grant that the
 * Perfetto listener decides).
 *
 * A handler fills an xpv_reply; xpv_http_send turns it into a response.
 * Cacheable answers get a weak ETag (the same for the gzip and plain forms
 * of one body) from the body's hash unless the handler set one.
 */
#ifndef XPV_HTTP_H
#define XPV_HTTP_H

#include "../common/xpv_common.h"

#include <microhttpd.h>

#define XPV_HTTP_MAX_URL 8192
#define XPV_HTTP_MAX_HEADERS (32 * 1024)
#define XPV_HTTP_MAX_BODY (64 * 1024) /* bodies are read and dropped: nothing takes one */

typedef struct {
    int status;
    const char *content_type;
    xpv_buf body;                     /* owned, unless static_data is set */
    const unsigned char *static_data; /* persistent body (embedded asset) */
    size_t static_len;
    const unsigned char *static_gz; /* its precompressed form, or NULL */
    size_t static_gz_len;
    int cacheable;
    char etag[48];               /* set by the handler, or computed when cacheable */
    const char *allow;           /* Allow header (405, OPTIONS) */
    char disposition[300];       /* Content-Disposition, "" none */
    char cors_origin[300];       /* the origin granted (Access-Control-Allow-Origin), "" none */
    int preflight;               /* a granted CORS preflight: say what may follow */
    int vary_origin;             /* the answer depends on the request's Origin */
    char cookie[200];            /* Set-Cookie, "" none */
    int page_headers;            /* the web UI's security headers (set by the listener) */
    struct MHD_Response *stream; /* a streamed body, sent as is */
} xpv_reply;

void xpv_reply_init(xpv_reply *r);
void xpv_reply_free(xpv_reply *r);
/* Sets a JSON error answer. */
void xpv_reply_error(xpv_reply *r, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A JSON answer from an api/ call's status and buffer (cacheable on 200). */
void xpv_reply_json(xpv_reply *r, int status);

/* 1 when the request's Accept-Encoding allows gzip. */
int xpv_http_accepts_gzip(struct MHD_Connection *c);
/* 1 when If-None-Match names etag (or is "*"). */
int xpv_http_etag_matches(struct MHD_Connection *c, const char *etag);
/* gzip-compresses data into out (replacing its contents). Returns 0 or -1. */
int xpv_http_gzip(const void *data, size_t len, int level, xpv_buf *out);
/* Content type for a file name, by extension. */
const char *xpv_http_content_type(const char *path);
/* The request's total header size in bytes. */
size_t xpv_http_header_bytes(struct MHD_Connection *c);
/* The decoded query string's size in bytes (names and values). */
size_t xpv_http_query_bytes(struct MHD_Connection *c);

/* Queues the reply (and frees it). */
enum MHD_Result xpv_http_send(struct MHD_Connection *c, xpv_reply *r);
/* Fills r with the answer to one complete request. */
typedef void (*xpv_http_answer_fn)(void *ctx, struct MHD_Connection *c, const char *url,
                                   const char *method, xpv_reply *r);

/* What one listener answers with; it must outlive the daemon. */
typedef struct {
    xpv_http_answer_fn answer;
    void *ctx;
    int page_headers; /* the UI's headers: Content-Security-Policy and the like */
} xpv_http_site;

/* The daemon flags of every listener: an internal polling thread with
 * epoll where libmicrohttpd has it (thousands of sockets, where select()
 * stops at 1024), else the best poller it has. */
unsigned xpv_http_daemon_flags(void);

/* The libmicrohttpd access handler of every listener; cls is its
 * xpv_http_site. */
enum MHD_Result xpv_http_on_request(void *cls, struct MHD_Connection *c, const char *url,
                                    const char *method, const char *version,
                                    const char *upload_data, size_t *upload_size, void **con_cls);

#endif
