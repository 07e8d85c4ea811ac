/*
 * trace_export.c — Chrome trace JSON from the index (see trace_export.h).
 *
 * A cursor walks its stages: the header with every track's M events,
 * the event blocks in storage order (one block decoded per step, so memory
 * is bounded by a block, never by the profile), and the closing bracket.
 * Strings are looked up through a small cache, not loaded whole.
 *
 * A GPU of a JAX profile also gets the rows XProf derives for it
 * (device_rows.h: Steps, XLA Modules, XLA Ops) as threads of its process,
 * after the stored events: fresh tids above every stored small tid, sort
 * indexes -3..-1 so trace viewers list them first, X events with the
 * rows' args, written a piece at a time like the blocks. They are built
 * whole with the header, so their memory grows with the device's events.
 */
#include "trace_export.h"
#include "api_util.h"
#include "event_json.h"
#include "device_rows.h"
#include "../store/event_store.h"
#include "../store/tracks.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PIECE_BYTES (256 * 1024)

typedef struct {
    int64_t pid, tid;
} track_ids;

enum stage { STAGE_HEAD, STAGE_BLOCKS, STAGE_DERIVED, STAGE_TAIL, STAGE_DONE };

struct xpv_trace_cursor {
    sqlite3 *db;
    int64_t profile_id;
    enum stage stage;
    sqlite3_stmt *blocks;
    track_ids *tracks;
    size_t ntracks;
    xpv_api_strings *strings;
    xpv_buf *out; /* the piece being filled, during a block decode */
    int64_t events;
    int wrote_any;
    int64_t a_ns, b_ns; /* the window: INT64_MIN, INT64_MAX for all */
    int64_t next_tid;   /* the first tid above every stored small one */
    xpv_devrows dev;
    size_t drow, dspan; /* the next derived span to write */
};

/* ---- header: process and thread metadata ---- */

static void comma(xpv_trace_cursor *c, xpv_buf *b)
{
    if (c->wrote_any) xpv_buf_puts(b, ",\n");
    c->wrote_any = 1;
}

/* Opens an M event of the track's process (or thread, with_tid). */
static void meta_head(xpv_trace_cursor *c, xpv_buf *b, const char *what, track_ids t, int with_tid)
{
    comma(c, b);
    xpv_buf_printf(b, "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%lld", what, (long long)t.pid);
    if (with_tid) xpv_buf_printf(b, ",\"tid\":%lld", (long long)t.tid);
}

/* A name (or the process labels) unless unknown. */
static void put_meta_name(xpv_trace_cursor *c, xpv_buf *b, const char *what, track_ids t,
                          int with_tid, xpv_store_text v)
{
    if (!v.s) return;
    meta_head(c, b, what, t, with_tid);
    xpv_buf_printf(b, ",\"args\":{\"%s\":", strcmp(what, "process_labels") ? "name" : "labels");
    xpv_api_put_text_opt(b, v.s, v.n);
    xpv_buf_puts(b, "}}");
}

/* A sort index (field of r) unless unknown. */
static void put_meta_sort(xpv_trace_cursor *c, xpv_buf *b, const char *what, track_ids t,
                          int with_tid, const xpv_store_track *r, int field)
{
    if (!xpv_store_track_known(r, field)) return;
    meta_head(c, b, what, t, with_tid);
    xpv_buf_puts(b, ",\"args\":{\"sort_index\":");
    xpv_api_put_int(b, r->num[field]);
    xpv_buf_puts(b, "}}");
}

/* Chrome JSON readers (Perfetto, browsers) hold pid/tid as doubles, and
 * readers give string ids numbers above 2^53; such ids get fresh small
 * numbers above every small one, so no two processes or threads merge. */
#define SMALL_ID_LIMIT (1LL << 31)

typedef struct {
    int64_t from, to;
} id_map;

static int64_t map_id(id_map **maps, size_t *n, int64_t from, int64_t *next)
{
    if (from >= 0 && from < SMALL_ID_LIMIT) return from;
    for (size_t i = 0; i < *n; i++)
        if ((*maps)[i].from == from) return (*maps)[i].to;
    *maps = xpv_xrealloc(*maps, (*n + 1) * sizeof **maps);
    (*maps)[*n] = (id_map){from, (*next)++};
    return (*maps)[(*n)++].to;
}

/* Pass 1: every track's exported pid/tid. */
static int map_tracks(xpv_trace_cursor *c, xpv_err *err)
{
    xpv_store_cursor cur;
    xpv_store_track r;
    int rc;
    if (xpv_store_tracks_open_by_pid(&cur, c->db, c->profile_id, err) != 0) return -1;
    int64_t next_pid = 1, next_tid = 1;
    while ((rc = xpv_store_tracks_next(&cur, &r, err)) == 1) {
        if (r.pid >= next_pid && r.pid < SMALL_ID_LIMIT) next_pid = r.pid + 1;
        if (r.tid >= next_tid && r.tid < SMALL_ID_LIMIT) next_tid = r.tid + 1;
    }
    xpv_store_cursor_close(&cur);
    if (rc != 0 || xpv_store_tracks_open_by_pid(&cur, c->db, c->profile_id, err) != 0) return -1;
    id_map *pids = NULL, *tids = NULL;
    size_t npids = 0, ntids = 0;
    while ((rc = xpv_store_tracks_next(&cur, &r, err)) == 1) {
        if (r.id < 0 || r.id >= (1 << 24)) continue;
        if ((size_t)r.id >= c->ntracks) {
            size_t n = (size_t)r.id + 1;
            c->tracks = xpv_xrealloc(c->tracks, n * sizeof *c->tracks);
            memset(c->tracks + c->ntracks, 0, (n - c->ntracks) * sizeof *c->tracks);
            c->ntracks = n;
        }
        c->tracks[r.id].pid = map_id(&pids, &npids, r.pid, &next_pid);
        c->tracks[r.id].tid = map_id(&tids, &ntids, r.tid, &next_tid);
    }
    free(pids);
    free(tids);
    xpv_store_cursor_close(&cur);
    c->next_tid = next_tid;
    return rc;
}

/* The derived row i's exported pid and tid. */
static track_ids derived_ids(const xpv_trace_cursor *c, size_t i)
{
    int64_t t = c->dev.rows[i].device_track;
    int64_t pid = t >= 0 && (size_t)t < c->ntracks ? c->tracks[t].pid : 0;
    return (track_ids){pid, c->next_tid + (int64_t)i};
}

static void write_derived_head(xpv_trace_cursor *c, xpv_buf *b)
{
    for (size_t i = 0; i < c->dev.nrows; i++) {
        const xpv_devrow *row = &c->dev.rows[i];
        track_ids t = derived_ids(c, i);
        const char *title = xpv_devrow_title(row->kind);
        put_meta_name(c, b, "thread_name", t, 1, (xpv_store_text){title, strlen(title)});
        meta_head(c, b, "thread_sort_index", t, 1);
        xpv_buf_printf(b, ",\"args\":{\"sort_index\":%d}}", row->kind - XPV_DEVROW_KINDS);
    }
}

static int write_head(xpv_trace_cursor *c, xpv_buf *b, xpv_err *err)
{
    if (map_tracks(c, err) != 0) return -1;
    xpv_store_cursor cur;
    xpv_store_track r;
    if (xpv_store_tracks_open_by_pid(&cur, c->db, c->profile_id, err) != 0) return -1;
    xpv_buf_puts(b, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
    int rc, first = 1;
    int64_t last_pid = 0;
    while ((rc = xpv_store_tracks_next(&cur, &r, err)) == 1) {
        if (r.id < 0 || (size_t)r.id >= c->ntracks) continue;
        track_ids t = c->tracks[r.id];
        if (first || r.pid != last_pid) {
            put_meta_name(c, b, "process_name", t, 0, r.process_name);
            put_meta_sort(c, b, "process_sort_index", t, 0, &r, XPV_STORE_TRACK_PROCESS_SORT);
            put_meta_name(c, b, "process_labels", t, 0, r.process_labels);
            first = 0;
            last_pid = r.pid;
        }
        put_meta_name(c, b, "thread_name", t, 1, r.thread_name);
        put_meta_sort(c, b, "thread_sort_index", t, 1, &r, XPV_STORE_TRACK_THREAD_SORT);
    }
    xpv_store_cursor_close(&cur);
    if (rc != 0 || xpv_devrows_build(c->db, c->profile_id, &c->dev, err) != 0) return -1;
    write_derived_head(c, b);
    return 0;
}

/* ---- events ---- */

static int is_identity_phase(char ph)
{
    return ph && strchr("benstfSTFpNODv", ph) != NULL;
}

static int identity_key(const xpv_event *ev, const char *key)
{
    if (is_identity_phase(ev->ph))
        return strcmp(key, "id") == 0 || strcmp(key, "id2") == 0 || strcmp(key, "bind_id") == 0 ||
               strcmp(key, "scope") == 0 || strcmp(key, "bp") == 0;
    if (ev->ph == 'i' || ev->ph == 'I') return strcmp(key, "s") == 0;
    return 0;
}

static void put_identity(xpv_trace_cursor *c, xpv_buf *b, const xpv_event *ev)
{
    for (uint32_t i = 0; i < ev->nargs; i++) {
        size_t klen;
        const char *key = xpv_api_string(c->strings, ev->args[i].key, &klen);
        if (!identity_key(ev, key)) continue;
        xpv_buf_putc(b, ',');
        xpv_buf_json_str(b, key, klen);
        xpv_buf_putc(b, ':');
        xpv_api_put_arg_value(b, &ev->args[i], c->strings);
    }
}

static int put_event(void *ctx, const xpv_event *ev, int64_t block_id, uint32_t index)
{
    (void)block_id;
    (void)index;
    xpv_trace_cursor *c = ctx;
    int64_t end = ev->ts_ns + (ev->dur_ns > 0 ? ev->dur_ns : 0);
    if (ev->ts_ns > c->b_ns || end < c->a_ns) return 0;
    xpv_buf *b = c->out;
    track_ids t = ev->track < c->ntracks ? c->tracks[ev->track] : (track_ids){0, ev->track};
    char ph = ev->ph > ' ' && ev->ph < 127 && ev->ph != '"' && ev->ph != '\\' ? ev->ph : 'X';
    comma(c, b);
    char phase[] = ",\"ph\":\"?\",\"ts\":";
    phase[7] = ph;
    xpv_buf_puts(b, "{\"pid\":");
    xpv_api_put_int(b, t.pid);
    xpv_buf_puts(b, ",\"tid\":");
    xpv_api_put_int(b, t.tid);
    xpv_buf_append(b, phase, sizeof phase - 1);
    xpv_api_put_us(b, ev->ts_ns);
    if (ph == 'X') {
        xpv_buf_puts(b, ",\"dur\":");
        xpv_api_put_us(b, ev->dur_ns > 0 ? ev->dur_ns : 0);
    }
    size_t len;
    const char *name = xpv_api_string(c->strings, ev->name, &len);
    xpv_buf_puts(b, ",\"name\":");
    xpv_buf_json_str(b, name, len);
    if (ev->cat) {
        const char *cat = xpv_api_string(c->strings, ev->cat, &len);
        xpv_buf_puts(b, ",\"cat\":");
        xpv_buf_json_str(b, cat, len);
    }
    put_identity(c, b, ev);
    if (ev->nargs) {
        size_t before = b->len;
        xpv_buf_puts(b, ",\"args\":");
        xpv_api_put_args(b, ev, c->strings, identity_key);
        if (b->len - before == 10) b->len = before, b->data[b->len] = 0; /* all hoisted: {} */
    }
    xpv_buf_putc(b, '}');
    c->events++;
    return 0;
}

xpv_trace_cursor *xpv_trace_cursor_open(sqlite3 *db, int64_t id, xpv_err *err)
{
    xpv_trace_cursor *c = xpv_xcalloc(1, sizeof *c);
    c->db = db;
    c->profile_id = id;
    if (sqlite3_prepare_v2(db,
                           "SELECT id, track, data FROM blocks WHERE profile_id=?1 AND"
                           " t_min <= ?3 AND t_max >= ?2 ORDER BY id",
                           -1, &c->blocks, NULL) != SQLITE_OK) {
        xpv_err_set(err, "index: %s", sqlite3_errmsg(db));
        free(c);
        return NULL;
    }
    sqlite3_bind_int64(c->blocks, 1, id);
    xpv_trace_cursor_window(c, INT64_MIN, INT64_MAX);
    c->strings = xpv_api_strings_open(db, id);
    return c;
}

void xpv_trace_cursor_window(xpv_trace_cursor *c, int64_t a_ns, int64_t b_ns)
{
    assert(c->stage == STAGE_HEAD);
    c->a_ns = a_ns, c->b_ns = b_ns;
    sqlite3_bind_int64(c->blocks, 2, a_ns);
    sqlite3_bind_int64(c->blocks, 3, b_ns);
}

static int next_blocks(xpv_trace_cursor *c, xpv_buf *out, xpv_err *err)
{
    size_t start = out->len;
    while (out->len - start < PIECE_BYTES) {
        int rc = sqlite3_step(c->blocks);
        if (rc == SQLITE_DONE) {
            c->stage = STAGE_DERIVED;
            return 0;
        }
        if (rc != SQLITE_ROW) return xpv_err_set(err, "index: %s", sqlite3_errmsg(c->db));
        c->out = out;
        int64_t block = sqlite3_column_int64(c->blocks, 0);
        uint32_t track = (uint32_t)sqlite3_column_int64(c->blocks, 1);
        const void *blob = sqlite3_column_blob(c->blocks, 2);
        size_t len = (size_t)sqlite3_column_bytes(c->blocks, 2);
        if (xpv_store_decode(blob, len, track, block, put_event, c, err) != 0) return -1;
    }
    return 0;
}

static void put_derived(xpv_trace_cursor *c, xpv_buf *b, size_t i, const xpv_devrow_span *s)
{
    const xpv_devrow *row = &c->dev.rows[i];
    track_ids t = derived_ids(c, i);
    size_t len;
    const char *name = xpv_devrows_name(&c->dev, s->name, &len);
    comma(c, b);
    xpv_buf_puts(b, "{\"pid\":");
    xpv_api_put_int(b, t.pid);
    xpv_buf_puts(b, ",\"tid\":");
    xpv_api_put_int(b, t.tid);
    xpv_buf_puts(b, ",\"ph\":\"X\",\"ts\":");
    xpv_api_put_us(b, s->start);
    xpv_buf_puts(b, ",\"dur\":");
    xpv_api_put_us(b, s->end - s->start);
    xpv_buf_puts(b, ",\"name\":");
    xpv_buf_json_str(b, name, len);
    xpv_buf_puts(b, ",\"args\":");
    xpv_devrows_put_args(b, &c->dev, row, s);
    xpv_buf_putc(b, '}');
    c->events++;
}

/* The derived rows' spans in the window, a piece at a time. */
static void next_derived(xpv_trace_cursor *c, xpv_buf *out)
{
    size_t start = out->len;
    for (; c->drow < c->dev.nrows; c->drow++, c->dspan = 0) {
        const xpv_devrow *row = &c->dev.rows[c->drow];
        for (; c->dspan < row->n; c->dspan++) {
            const xpv_devrow_span *s = &row->spans[c->dspan];
            if (out->len - start >= PIECE_BYTES) return;
            if (s->start <= c->b_ns && s->end >= c->a_ns) put_derived(c, out, c->drow, s);
        }
    }
    c->stage = STAGE_TAIL;
}

int xpv_trace_cursor_next(xpv_trace_cursor *c, xpv_buf *out, xpv_err *err)
{
    switch (c->stage) {
    case STAGE_HEAD:
        if (write_head(c, out, err) != 0) return -1;
        c->stage = STAGE_BLOCKS;
        return 1;
    case STAGE_BLOCKS:
        if (next_blocks(c, out, err) != 0) return -1;
        return 1;
    case STAGE_DERIVED:
        next_derived(c, out);
        return 1;
    case STAGE_TAIL:
        xpv_buf_puts(out, "\n]}\n");
        c->stage = STAGE_DONE;
        return 0;
    case STAGE_DONE:
        return 0;
    }
    return 0;
}

int64_t xpv_trace_cursor_events(const xpv_trace_cursor *c)
{
    return c->events;
}

void xpv_trace_cursor_free(xpv_trace_cursor *c)
{
    if (!c) return;
    sqlite3_finalize(c->blocks);
    xpv_api_strings_free(c->strings);
    xpv_devrows_free(&c->dev);
    free(c->tracks);
    free(c);
}

int xpv_export_trace(sqlite3 *db, int64_t id, xpv_export_write write, void *ctx, xpv_err *err)
{
    xpv_trace_cursor *c = xpv_trace_cursor_open(db, id, err);
    if (!c) return -1;
    xpv_buf piece = {0};
    int more, rc = 0;
    do {
        xpv_buf_reset(&piece);
        more = xpv_trace_cursor_next(c, &piece, err);
        if (more < 0)
            rc = -1;
        else if (piece.len && write(ctx, piece.data, piece.len) != 0)
            rc = xpv_err_set(err, "writing the trace failed");
    } while (rc == 0 && more > 0);
    xpv_buf_free(&piece);
    xpv_trace_cursor_free(c);
    return rc;
}
