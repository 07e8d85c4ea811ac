/*
 * trace_stream.c — see trace_stream.h.
 */
#define _GNU_SOURCE
#include "trace_stream.h"
#include "../api/api_util.h"
#include "../api/trace_export.h"
#include "../store/index_db.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define STREAM_BLOCK (64 * 1024)

typedef struct {
    sqlite3 *db;
    xpv_trace_cursor *cursor;
    int gzip;
    z_stream z;
    xpv_buf piece;   /* JSON from the cursor */
    xpv_buf pending; /* bytes ready to send */
    size_t sent;     /* of pending */
    int finished;    /* the cursor is done and everything is in pending */
} trace_stream;

static void stream_free(void *cls)
{
    trace_stream *t = cls;
    xpv_trace_cursor_free(t->cursor);
    sqlite3_close(t->db);
    if (t->gzip) deflateEnd(&t->z);
    xpv_buf_free(&t->piece);
    xpv_buf_free(&t->pending);
    free(t);
}

static int deflate_into(trace_stream *t, const char *data, size_t len, int finish)
{
    t->z.next_in = (Bytef *)data;
    t->z.avail_in = (uInt)len;
    int rc;
    do {
        xpv_buf_reserve(&t->pending, STREAM_BLOCK);
        t->z.next_out = (Bytef *)t->pending.data + t->pending.len;
        t->z.avail_out = (uInt)(t->pending.cap - t->pending.len - 1);
        size_t room = t->z.avail_out;
        rc = deflate(&t->z, finish ? Z_FINISH : Z_NO_FLUSH);
        t->pending.len += room - t->z.avail_out;
        if (rc == Z_STREAM_ERROR) return -1;
    } while (t->z.avail_out == 0 || (finish && rc != Z_STREAM_END));
    return 0;
}

/* Refills pending with the next piece; returns -1 on failure. */
static int refill(trace_stream *t)
{
    xpv_buf_reset(&t->pending);
    t->sent = 0;
    while (!t->finished && t->pending.len == 0) {
        xpv_err err = {{0}};
        xpv_buf_reset(&t->piece);
        int more = xpv_trace_cursor_next(t->cursor, &t->piece, &err);
        if (more < 0) {
            fprintf(stderr, "xprof-view: trace export: %s\n", err.msg);
            return -1;
        }
        if (more == 0) t->finished = 1;
        if (!t->gzip) {
            xpv_buf tmp = t->pending;
            t->pending = t->piece;
            t->piece = tmp;
        } else if (deflate_into(t, t->piece.data ? t->piece.data : "", t->piece.len, t->finished) !=
                   0) {
            return -1;
        }
    }
    return 0;
}

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    trace_stream *t = cls;
    if (t->sent == t->pending.len) {
        if (t->finished) return MHD_CONTENT_READER_END_OF_STREAM;
        if (refill(t) != 0) return MHD_CONTENT_READER_END_WITH_ERROR;
        if (t->pending.len == 0) return MHD_CONTENT_READER_END_OF_STREAM;
    }
    size_t n = t->pending.len - t->sent;
    if (n > max) n = max;
    memcpy(buf, t->pending.data + t->sent, n);
    t->sent += n;
    return (ssize_t)n;
}

/* "host.xplane.pb" -> "host.xplane.trace.json", "x.trace.json.gz" -> "x.trace.json". */
static void download_name(const xpv_api_profile_state *ps, int64_t id, char *out, size_t n)
{
    char hex[17], base[256];
    xpv_profile_id_hex(id, hex);
    snprintf(base, sizeof base, "%s", ps->file_name);
    size_t len = strlen(base);
    if (len > 3 && (strcmp(base + len - 3, ".gz") == 0 || strcmp(base + len - 3, ".pb") == 0))
        base[len -= 3] = 0;
    for (size_t i = 0; i < len; i++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", base[i]))
            base[i] = '_';
    int is_json = len >= 5 && strcmp(base + len - 5, ".json") == 0;
    if (!len)
        snprintf(out, n, "%s.trace.json", hex);
    else
        snprintf(out, n, "%s%s", base, is_json ? "" : ".trace.json");
}

void xpv_trace_stream_reply(xpv_server *s, struct MHD_Connection *c, int64_t id, int attachment,
                            const xpv_trace_window *window, xpv_reply *r)
{
    xpv_err err = {{0}};
    sqlite3 *db = xpv_server_db(s, &err);
    if (!db) {
        xpv_reply_error(r, 503, "index unavailable: %s", err.msg);
        return;
    }
    xpv_api_profile_state ps;
    int status = xpv_api_profile_state_get(db, id, &ps, &r->body);
    if (status != 200) {
        xpv_reply_json(r, status);
        return;
    }
    if (strcmp(ps.status, "pending") == 0)
        return xpv_reply_error(r, 409, "this profile is still being indexed; try again shortly");
    uint64_t version = xpv_hash64(&id, sizeof id) ^ (uint64_t)ps.mtime_ns ^
                       (uint64_t)(ps.indexed_at * 1000) ^ (uint64_t)ps.events * 31;
    if (window) version ^= xpv_hash64(window, sizeof *window);
    snprintf(r->etag, sizeof r->etag, "W/\"t%016llx\"", (unsigned long long)version);
    r->content_type = "application/json";
    if (attachment) {
        char name[280];
        download_name(&ps, id, name, sizeof name);
        snprintf(r->disposition, sizeof r->disposition, "attachment; filename=\"%.250s\"", name);
    }
    if (xpv_http_etag_matches(c, r->etag)) return; /* xpv_http_send answers 304 */
    trace_stream *t = xpv_xcalloc(1, sizeof *t);
    if (xpv_server_open_reader(s, &t->db, &err) < 0 ||
        !(t->cursor = xpv_trace_cursor_open(t->db, id, &err))) {
        stream_free(t);
        {
            xpv_reply_error(r, 500, "trace export: %s", err.msg);
            return;
        }
    }
    if (window) xpv_trace_cursor_window(t->cursor, window->a_ns, window->b_ns);
    t->gzip = xpv_http_accepts_gzip(c);
    if (t->gzip && deflateInit2(&t->z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        t->gzip = 0;
    r->stream = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, STREAM_BLOCK, stream_read, t,
                                                  stream_free);
    if (!r->stream) {
        xpv_reply_error(r, 500, "cannot create the response");
        return;
    }
    if (t->gzip) MHD_add_response_header(r->stream, MHD_HTTP_HEADER_CONTENT_ENCODING, "gzip");
    MHD_add_response_header(r->stream, MHD_HTTP_HEADER_VARY, "Accept-Encoding");
}
