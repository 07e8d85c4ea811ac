/*
 * xplane_testutil.h — what the xplane reader's tests share: a recording
 * sink (it replaces ingest.c's functions at link time, so every event, arg,
 * launch shape and fact the reader delivers can be checked) and builders of
 * protobuf bytes. Include it from one test_*.c per program only: the
 * sink's functions are not static.
 */
#ifndef XPV_XPLANE_TESTUTIL_H
#define XPV_XPLANE_TESTUTIL_H

#include "testutil.h"
#include "indexer/readers/readers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- a recording sink ---- */

typedef struct {
    char *key;
    uint8_t type;
    int64_t i;
    uint64_t u;
    double d;
    char *text; /* STR and TEXT values */
} rec_arg;

typedef struct {
    xpv_event ev;
    char *name;
    int64_t pid, tid;
    int has_launch;
    xpv_launch launch;
    char *op;
    rec_arg *args;
} rec_event;

typedef struct {
    int64_t pid, tid;
    char *thread_name;
    int64_t sort;
} rec_track;

static struct {
    char **strs;
    size_t nstrs;
    rec_track tracks[256];
    size_t ntracks;
    struct {
        int64_t pid, sort;
        int device;
        char *name, *label;
    } procs[64];
    size_t nprocs;
    rec_event *evs;
    size_t nevs;
    char facts[8192];
    int64_t skipped;
    int64_t device_work_done_at; /* events before the reader's promise, -1 none */
    int device_work_done_calls;
} rec;

static void rec_reset(void)
{
    for (size_t i = 0; i < rec.nstrs; i++)
        free(rec.strs[i]);
    free(rec.strs);
    for (size_t i = 0; i < rec.nevs; i++) {
        for (uint32_t a = 0; a < rec.evs[i].ev.nargs; a++) {
            free(rec.evs[i].args[a].key);
            free(rec.evs[i].args[a].text);
        }
        free(rec.evs[i].args);
        free(rec.evs[i].name);
        free(rec.evs[i].op);
    }
    free(rec.evs);
    for (size_t i = 0; i < rec.ntracks; i++)
        free(rec.tracks[i].thread_name);
    for (size_t i = 0; i < rec.nprocs; i++)
        free(rec.procs[i].name), free(rec.procs[i].label);
    memset(&rec, 0, sizeof rec);
    rec.device_work_done_at = -1;
}

uint32_t xpv_sink_intern(xpv_sink *s, const char *str, size_t len)
{
    (void)s;
    if (len == 0) return 0;
    if (rec.nstrs == 0) {
        rec.strs = calloc(1, sizeof *rec.strs);
        rec.strs[0] = strdup("");
        rec.nstrs = 1;
    }
    for (size_t i = 1; i < rec.nstrs; i++)
        if (strlen(rec.strs[i]) == len && memcmp(rec.strs[i], str, len) == 0) return (uint32_t)i;
    rec.strs = realloc(rec.strs, (rec.nstrs + 1) * sizeof *rec.strs);
    rec.strs[rec.nstrs] = strndup(str, len);
    return (uint32_t)rec.nstrs++;
}

uint32_t xpv_sink_intern_value(xpv_sink *s, const char *str, size_t len)
{
    return len <= 64 ? xpv_sink_intern(s, str, len) : 0; /* longer values stay inline */
}

const char *xpv_sink_string(xpv_sink *s, uint32_t id, size_t *len)
{
    (void)s;
    const char *v = id < rec.nstrs ? rec.strs[id] : "";
    if (len) *len = strlen(v);
    return v;
}

uint32_t xpv_sink_track(xpv_sink *s, int64_t pid, int64_t tid)
{
    (void)s;
    for (size_t i = 0; i < rec.ntracks; i++)
        if (rec.tracks[i].pid == pid && rec.tracks[i].tid == tid) return (uint32_t)i;
    CU_ASSERT_FATAL(rec.ntracks < 256);
    rec.tracks[rec.ntracks] = (rec_track){pid, tid, NULL, -1};
    return (uint32_t)rec.ntracks++;
}

static size_t proc_index(int64_t pid)
{
    for (size_t i = 0; i < rec.nprocs; i++)
        if (rec.procs[i].pid == pid) return i;
    rec.procs[rec.nprocs].pid = pid;
    rec.procs[rec.nprocs].device = -1;
    return rec.nprocs++;
}

void xpv_sink_process_name(xpv_sink *s, int64_t pid, const char *name, size_t len)
{
    (void)s;
    size_t i = proc_index(pid);
    free(rec.procs[i].name);
    rec.procs[i].name = strndup(name, len);
}

void xpv_sink_process_sort(xpv_sink *s, int64_t pid, int64_t sort_index)
{
    (void)s;
    rec.procs[proc_index(pid)].sort = sort_index;
}

void xpv_sink_process_label(xpv_sink *s, int64_t pid, const char *labels, size_t len)
{
    (void)s;
    size_t i = proc_index(pid);
    free(rec.procs[i].label);
    rec.procs[i].label = strndup(labels, len);
}

void xpv_sink_process_device(xpv_sink *s, int64_t pid, int device_id)
{
    (void)s;
    rec.procs[proc_index(pid)].device = device_id;
}

void xpv_sink_thread_name(xpv_sink *s, int64_t pid, int64_t tid, const char *name, size_t len)
{
    rec_track *t = &rec.tracks[xpv_sink_track(s, pid, tid)];
    free(t->thread_name);
    t->thread_name = strndup(name, len);
}

void xpv_sink_thread_sort(xpv_sink *s, int64_t pid, int64_t tid, int64_t sort_index)
{
    rec.tracks[xpv_sink_track(s, pid, tid)].sort = sort_index;
}

/* When set, the first event cuts this file to nothing: another process
 * truncating a profile while it is read. */
static const char *cut_on_first_event;

void xpv_sink_event(xpv_sink *s, const xpv_event *ev)
{
    if (cut_on_first_event) {
        CU_ASSERT_FATAL(truncate(cut_on_first_event, 0) == 0);
        cut_on_first_event = NULL;
    }
    rec.evs = realloc(rec.evs, (rec.nevs + 1) * sizeof *rec.evs);
    rec_event *r = &rec.evs[rec.nevs++];
    memset(r, 0, sizeof *r);
    r->ev = *ev;
    r->name = strdup(xpv_sink_string(s, ev->name, NULL));
    r->pid = rec.tracks[ev->track].pid;
    r->tid = rec.tracks[ev->track].tid;
    if (ev->launch) {
        r->has_launch = 1;
        r->launch = *ev->launch;
        r->op = strdup(xpv_sink_string(s, ev->launch->op, NULL));
    }
    r->args = calloc(ev->nargs + 1, sizeof *r->args);
    for (uint32_t i = 0; i < ev->nargs; i++) {
        const xpv_arg *a = &ev->args[i];
        rec_arg *o = &r->args[i];
        o->key = strdup(xpv_sink_string(s, a->key, NULL));
        o->type = a->type;
        o->i = a->v.i, o->u = a->v.u, o->d = a->v.d;
        if (a->type == XPV_ARG_STR) o->text = strdup(xpv_sink_string(s, a->v.str, NULL));
        if (a->type == XPV_ARG_TEXT) o->text = strndup(a->text, a->len);
    }
    r->ev.args = NULL;
    r->ev.launch = NULL;
}

void xpv_sink_device_work_done(xpv_sink *s)
{
    (void)s;
    rec.device_work_done_at = (int64_t)rec.nevs;
    rec.device_work_done_calls++;
}

void xpv_sink_fact(xpv_sink *s, const char *key, const char *value)
{
    (void)s;
    size_t n = strlen(rec.facts);
    snprintf(rec.facts + n, sizeof rec.facts - n, "%s=%s\n", key, value);
}

void xpv_sink_skipped(xpv_sink *s, const char *what)
{
    (void)s;
    if (strcmp(what, "aggregated events") == 0) rec.skipped++;
}

void xpv_sink_count_read(xpv_sink *s, char ph)
{
    (void)s, (void)ph;
}

const xpv_input_limits *xpv_sink_limits(const xpv_sink *s)
{
    static const xpv_input_limits none = {0, 0};
    (void)s;
    return &none;
}

static const rec_arg *arg_of(const rec_event *e, const char *key)
{
    for (uint32_t i = 0; i < e->ev.nargs; i++)
        if (strcmp(e->args[i].key, key) == 0) return &e->args[i];
    return NULL;
}

static const rec_event *event_named(const char *name)
{
    for (size_t i = 0; i < rec.nevs; i++)
        if (strcmp(rec.evs[i].name, name) == 0) return &rec.evs[i];
    return NULL;
}

/* ---- building protobuf bytes ---- */

typedef struct {
    uint8_t b[1 << 16];
    size_t n;
} msg;

static void put_varint(msg *m, uint64_t v)
{
    do {
        m->b[m->n++] = (uint8_t)((v & 0x7F) | (v > 0x7F ? 0x80 : 0));
        v >>= 7;
    } while (v);
}

static void put_int(msg *m, int num, int64_t v)
{
    put_varint(m, (uint64_t)num << 3);
    put_varint(m, (uint64_t)v);
}

static void put_bytes(msg *m, int num, const void *p, size_t n)
{
    put_varint(m, (uint64_t)num << 3 | 2);
    put_varint(m, n);
    memcpy(m->b + m->n, p, n);
    m->n += n;
}

static void put_str(msg *m, int num, const char *s)
{
    put_bytes(m, num, s, strlen(s));
}

static void put_msg(msg *m, int num, const msg *sub)
{
    put_bytes(m, num, sub->b, sub->n);
}

static void put_double(msg *m, int num, double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    put_varint(m, (uint64_t)num << 3 | 1);
    for (int i = 0; i < 8; i++)
        m->b[m->n++] = (uint8_t)(u >> (8 * i));
}

/* A map entry {1: id, 2: {1: id, 2: name, [4: display]}} into field `num`. */
static void put_meta(msg *plane, int num, int64_t id, const char *name, const char *display,
                     const msg *stats)
{
    static msg value, entry;
    value.n = entry.n = 0;
    put_int(&value, 1, id);
    put_str(&value, 2, name);
    if (display) put_str(&value, 4, display);
    if (stats) memcpy(value.b + value.n, stats->b, stats->n), value.n += stats->n;
    put_int(&entry, 1, id);
    put_msg(&entry, 2, &value);
    put_msg(plane, num, &entry);
}

static void stat_int(msg *ev, int num, int64_t meta, int value_field, int64_t v)
{
    msg st = {.n = 0};
    put_int(&st, 1, meta);
    put_int(&st, value_field, v);
    put_msg(ev, num, &st);
}

static void stat_bytes(msg *ev, int num, int64_t meta, int value_field, const void *p, size_t n)
{
    msg st = {.n = 0};
    put_int(&st, 1, meta);
    put_bytes(&st, value_field, p, n);
    put_msg(ev, num, &st);
}

static void stat_double(msg *ev, int64_t meta, double d)
{
    msg st = {.n = 0};
    put_int(&st, 1, meta);
    put_double(&st, 2, d);
    put_msg(ev, 4, &st);
}

static int read_bytes(const void *data, size_t n, xpv_err *err)
{
    const char *dir = xpv_test_tmpdir();
    CU_ASSERT_FATAL(xpv_test_write(dir, "t.xplane.pb", data, n) == 0);
    char path[512];
    snprintf(path, sizeof path, "%s/t.xplane.pb", dir);
    rec_reset();
    memset(err, 0, sizeof *err);
    return xpv_reader_for(XPV_FMT_XPLANE)(path, (xpv_sink *)&rec, err);
}

static void space_of(msg *space, const msg *plane)
{
    space->n = 0;
    put_msg(space, 1, plane);
}

#endif
