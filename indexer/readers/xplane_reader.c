/*
 * xplane_reader.c — reads an XSpace (`*.xplane.pb`) into the sink.
 *
 * The file is mapped and decoded in place, plane by plane: one pass over a
 * plane indexes its metadata by id (xplane_meta.c), then its lines are read
 * event by event straight into the sink. Nothing proportional to the number
 * of events is held, so memory stays flat however large the file.
 *
 * Mapping: one process per plane (pids as JAX's trace converter numbers
 * them: devices 1 + plane id, host 701; sort: host first, then devices by
 * ordinal), one thread per line (tid = display_id or id, name = display_name
 * or name, sort = line order). An event starts at line.timestamp_ns +
 * floor(offset_ps / 1000) ns and keeps its exact duration in ps. Stats become
 * args named by their metadata; the event metadata's own stats are merged in
 * (event stats win). Events with num_occurrences instead of a time are
 * aggregates, counted as skipped.
 *
 * Errors name the byte offset; planes read before an error are kept.
 */
#define _GNU_SOURCE
#include "readers.h"
#include "kernel_details.h"
#include "stream_kinds.h"
#include "xplane_attrib.h"
#include "xplane_meta.h"
#include "xplane_space.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define PID_HOST 701
#define PID_FIRST_DEVICE 1
#define PID_FIRST_CUSTOM 501
#define PID_OTHER 1000
#define PID_FALLBACK 100000

enum line_type { LINE_HOST, LINE_STREAM, LINE_XLA_OPS, LINE_XLA_MODULES, LINE_STEPS, LINE_DEVICE };

typedef struct {
    int type;            /* enum line_type */
    uint8_t stream_kind; /* the one kind a `Stream #N(...)` line lists, 0 if mixed */
    int stream_has_kernel;
    uint32_t track;
    int64_t ts_ns;
} line_info;

/* ---- small helpers ---- */

static int64_t floor_div_1000(int64_t v)
{
    int64_t q = v / 1000;
    return (v % 1000 < 0) ? q - 1 : q;
}

/* ---- classification ---- */

static void classify_stream_line(line_info *ln, const char *name, size_t n)
{
    xpv_stream_kinds k = xpv_stream_kinds_of(name, n);
    ln->type = LINE_STREAM;
    ln->stream_kind = k.one;
    ln->stream_has_kernel = k.has_kernel;
}

static void classify_line(reader *rd, line_info *ln, const char *name, size_t n)
{
    if (xpl_starts_with(name, n, "TensorFlow")) rd->tensorflow = 1;
    memset(ln, 0, sizeof *ln);
    if (rd->plane_type != PLANE_GPU && rd->plane_type != PLANE_TPU)
        ln->type = LINE_HOST;
    else if (xpl_starts_with(name, n, "Stream #"))
        classify_stream_line(ln, name, n);
    else if (xpl_equals(name, n, "XLA Ops") || xpl_equals(name, n, "Async XLA Ops"))
        ln->type = LINE_XLA_OPS;
    else if (xpl_equals(name, n, "XLA Modules"))
        ln->type = LINE_XLA_MODULES;
    else if (xpl_equals(name, n, "Steps"))
        ln->type = LINE_STEPS;
    else
        ln->type = LINE_DEVICE;
}

static uint8_t stream_event_kind(const line_info *ln, const xpl_meta *m, const xpl_info *info)
{
    uint8_t by_name = m ? m->memcpy_kind : 0;
    if (info->has_kernel_details) return XPV_KIND_KERNEL;
    if (info->has_memcpy_details) {
        if (by_name && by_name != XPV_KIND_MEMSET) return by_name;
        if (ln->stream_kind >= XPV_KIND_MEMCPY_H2D && ln->stream_kind <= XPV_KIND_MEMCPY_OTHER)
            return ln->stream_kind;
        return XPV_KIND_MEMCPY_OTHER;
    }
    if (ln->stream_kind == XPV_KIND_KERNEL) return XPV_KIND_KERNEL;
    if (by_name) return by_name;
    if (ln->stream_kind) return ln->stream_kind;
    return ln->stream_has_kernel ? XPV_KIND_KERNEL : XPV_KIND_DEVICE_OTHER;
}

/* The launch shape of a kernel from its stats. */
static void kernel_launch(reader *rd, const xpl_info *info, uint32_t nargs, xpv_launch *l)
{
    xpv_launch_init(l);
    if (info->kd_ref) {
        *l = *xpl_ref_launch(&rd->pl, (xpl_meta *)info->kd_ref);
    } else if (info->has_kernel_details) {
        for (uint32_t i = 0; i < nargs; i++)
            if (rd->roles[i] == XPL_ROLE_KERNEL_DETAILS) {
                size_t len = 0;
                const char *s = xpl_arg_text(&rd->pl, &rd->args[i], &len);
                if (s) xpv_kernel_details_parse(s, len, l);
                break;
            }
    }
    if (info->has_occupancy) l->occupancy_pct = info->occupancy;
    l->op = info->hlo_op ? info->hlo_op : info->tf_op;
}

static void classify_event(reader *rd, const line_info *ln, const xpl_meta *m, const xpl_info *info,
                           xpv_event *ev)
{
    ev->corr = info->has_corr ? info->corr : -1;
    ev->flow = (uint8_t)info->has_flow;
    ev->step = info->has_step ? info->step_num : info->has_group ? info->group_id : -1;
    switch (ln->type) {
    case LINE_HOST:
        if (info->has_step)
            ev->kind = XPV_KIND_STEP, ev->step_src = XPV_STEP_ANNOTATION;
        else if (info->has_corr)
            ev->kind = XPV_KIND_LAUNCH;
        break;
    case LINE_STREAM:
        ev->kind = stream_event_kind(ln, m, info);
        break;
    case LINE_XLA_OPS:
        ev->kind = XPV_KIND_XLA_OP;
        break;
    case LINE_XLA_MODULES:
        ev->kind = XPV_KIND_XLA_MODULE;
        break;
    case LINE_STEPS:
        ev->kind = XPV_KIND_STEP;
        ev->step_src = XPV_STEP_STEPS_LINE;
        if (ev->step < 0 && m) ev->step = m->name_number;
        break;
    default:
        ev->kind = XPV_KIND_DEVICE_OTHER;
        break;
    }
    (void)rd;
}

/* ---- events ---- */

/* Appends the metadata's args whose keys the event's own stats lack. */
static uint32_t merge_meta_args(reader *rd, const xpl_meta *m, uint32_t n, xpl_info *info)
{
    uint32_t own = n;
    xpl_ensure_args(rd, (size_t)n + m->nargs);
    for (uint32_t i = 0; i < m->nargs; i++) {
        uint32_t j = 0;
        while (j < own && rd->args[j].key != m->args[i].key)
            j++;
        if (j < own) continue;
        rd->args[n] = m->args[i];
        rd->roles[n] = m->roles[i];
        if (m->roles[i]) xpl_info_note(&rd->pl, info, &m->args[i], m->roles[i], NULL);
        n++;
    }
    return n;
}

/* An XEvent as decoded, before it is emitted: its stats are in rd->args. */
typedef struct {
    int64_t meta_id, offset_ps, dur_ps;
    uint32_t nargs;
    int aggregated;
    xpl_info info;
} raw_event;

/* Adds an arg with an interned string value. */
static uint32_t add_str_arg(reader *rd, uint32_t n, uint32_t key, uint32_t value)
{
    xpl_ensure_args(rd, (size_t)n + 1);
    memset(&rd->args[n], 0, sizeof rd->args[n]);
    rd->args[n].key = key, rd->args[n].type = XPV_ARG_STR, rd->args[n].v.str = value;
    rd->roles[n] = 0;
    return n + 1;
}

/* What a device event ran, from the compiled module: a graph execution's
 * event gets its placed instruction as hlo_op (the command buffer kept as
 * `command_buffer`); any event whose hlo_op names an instruction gets the
 * instruction's JAX op name and source line. */
static uint32_t attribute(reader *rd, xpl_info *info, const xpv_attrib_op *placed, uint32_t n)
{
    xpv_attrib_op named;
    const xpv_attrib_op *op = placed;
    if (!op && info->hlo_op && !xpv_attrib_is_command_buffer(rd->attrib, info->hlo_op)) {
        xpv_attrib_module *am =
            xpv_attrib_module_of(rd->attrib, info->has_prog, info->prog, info->hlo_module);
        if (am && xpv_attrib_named(am, info->hlo_op, &named)) op = &named;
    }
    if (!op) return n;
    for (uint32_t i = 0; placed && i < n; i++)
        if (rd->roles[i] == XPL_ROLE_HLO_OP) {
            xpl_ensure_args(rd, (size_t)n + 1);
            rd->args[n] = rd->args[i], rd->roles[n] = 0;
            rd->args[n++].key = rd->key_command_buffer;
            memset(&rd->args[i].v, 0, sizeof rd->args[i].v);
            rd->args[i].type = XPV_ARG_STR, rd->args[i].v.str = op->hlo_op;
            rd->args[i].text = NULL, rd->args[i].len = 0;
            info->hlo_op = op->hlo_op;
            break;
        }
    if (op->jax_op) n = add_str_arg(rd, n, rd->key_jax_op, op->jax_op);
    if (op->source) n = add_str_arg(rd, n, rd->key_source, op->source);
    return n;
}

static void emit_event(reader *rd, const line_info *ln, raw_event *e, const xpv_attrib_op *placed,
                       xpv_err *err, int *failed)
{
    xpl_plane *pl = &rd->pl;
    xpl_meta *m = xpl_event_meta(pl, e->meta_id, err, failed);
    if (*failed) return;
    xpv_event ev;
    xpv_event_init(&ev);
    uint32_t nargs = e->nargs;
    if (m) {
        ev.name = m->name;
        if (m->nargs) nargs = merge_meta_args(rd, m, nargs, &e->info);
    } else {
        char tmp[24];
        int k = snprintf(tmp, sizeof tmp, "%lld", (long long)e->meta_id);
        ev.name = xpv_sink_intern(rd->sink, tmp, (size_t)k);
        pl->missing_event_meta++;
    }
    xpl_fix_texts(pl, rd->args, nargs);
    if (rd->attrib && ln->type == LINE_STREAM) nargs = attribute(rd, &e->info, placed, nargs);
    ev.track = ln->track;
    if (__builtin_add_overflow(ln->ts_ns, floor_div_1000(e->offset_ps), &ev.ts_ns))
        ev.ts_ns = ln->ts_ns;
    ev.dur_ps = e->dur_ps < 0 ? 0 : e->dur_ps;
    ev.dur_ns = ev.dur_ps / 1000;
    ev.args = nargs ? rd->args : NULL;
    ev.nargs = nargs;
    classify_event(rd, ln, m, &e->info, &ev);
    xpv_launch launch;
    if (ev.kind == XPV_KIND_KERNEL) {
        kernel_launch(rd, &e->info, nargs, &launch);
        ev.launch = &launch;
    }
    xpv_sink_event(rd->sink, &ev);
}

/* 1 for the stats that say which graph execution an event belongs to. */
static int is_execution_role(uint8_t role)
{
    return role == XPL_ROLE_HLO_OP || role == XPL_ROLE_CORRELATION_ID ||
           role == XPL_ROLE_PROGRAM_ID || role == XPL_ROLE_HLO_MODULE;
}

/* Decodes an XEvent into e, its stats into rd->args. With execution_only
 * (the first pass over a graph execution), only the stats that say which
 * execution it belongs to are decoded; the rest wait for the second. */
static int decode_event(reader *rd, const xpv_pb_field *ef, raw_event *e, int execution_only,
                        xpv_err *err)
{
    xpl_plane *pl = &rd->pl;
    xpv_pb m = xpv_pb_sub(&pl->msg, ef);
    xpv_pb_field f;
    int rc;
    memset(e, 0, sizeof *e);
    xpl_info_reset(&e->info);
    pl->scratch.len = 0;
    while ((rc = xpv_pb_next(&m, &f, err)) == 1) {
        if (f.num == 4) {
            if (f.wire != XPV_PB_LEN) return xpv_pb_wrong_wire(&m, &f, "XEvent", 2, err);
            if (execution_only && !is_execution_role(xpl_stat_role(pl, &f))) continue;
            uint32_t n = e->nargs;
            xpl_ensure_args(rd, (size_t)n + 1);
            rd->roles[n] = 0;
            if (xpl_stat_decode(pl, &f, &rd->args[n], &rd->roles[n], &e->info, err) != 0) return -1;
            if (rd->args[n].key) e->nargs++;
        } else if (f.num >= 1 && f.num <= 5) {
            if (f.wire != XPV_PB_VARINT) return xpv_pb_wrong_wire(&m, &f, "XEvent", 0, err);
            if (f.num == 1)
                e->meta_id = (int64_t)f.v;
            else if (f.num == 2)
                e->offset_ps = (int64_t)f.v;
            else if (f.num == 3)
                e->dur_ps = (int64_t)f.v;
            else
                e->aggregated = 1;
        }
    }
    return rc < 0 ? -1 : 0;
}

static int read_event(reader *rd, const line_info *ln, const xpv_pb_field *ef,
                      const xpv_attrib_op *placed, xpv_err *err)
{
    raw_event e;
    int failed = 0;
    if (decode_event(rd, ef, &e, 0, err) != 0) return -1;
    if (e.aggregated) {
        xpv_sink_skipped(rd->sink, "aggregated events");
        return 0;
    }
    emit_event(rd, ln, &e, placed, err, &failed);
    return failed ? -1 : 0;
}

/* ---- lines ---- */

typedef struct {
    int64_t id, display_id, ts_ns;
    const char *name, *display_name;
    size_t name_len, display_len;
} line_head;

static int read_line_head(const xpv_pb *line, line_head *h, xpv_err *err)
{
    xpv_pb r = *line;
    xpv_pb_field f;
    int rc;
    memset(h, 0, sizeof *h);
    h->name = h->display_name = "";
    while ((rc = xpv_pb_next(&r, &f, err)) == 1) {
        int want = (f.num == 2 || f.num == 4 || f.num == 11) ? XPV_PB_LEN : XPV_PB_VARINT;
        if (f.num > 4 && f.num != 9 && f.num != 10 && f.num != 11) continue;
        if ((int)f.wire != want) return xpv_pb_wrong_wire(&r, &f, "XLine", (uint32_t)want, err);
        if (f.num == 1)
            h->id = (int64_t)f.v;
        else if (f.num == 2)
            h->name = (const char *)f.data, h->name_len = f.len;
        else if (f.num == 3)
            h->ts_ns = (int64_t)f.v;
        else if (f.num == 10)
            h->display_id = (int64_t)f.v;
        else if (f.num == 11)
            h->display_name = (const char *)f.data, h->display_len = f.len;
    }
    return rc;
}

/* ---- graph executions ---- */

/* The event's name, with what its metadata's stats say of its execution
 * (hlo_op, correlation id, program, module) noted where its own stats say
 * nothing, as emit_event merges them: both passes over a graph execution
 * see the same. A damaged metadata entry gives 0 here; emit_event meets it
 * again and reports it. */
static uint32_t peek_meta(reader *rd, raw_event *e)
{
    xpv_err ignored;
    int failed = 0;
    xpl_meta *m = xpl_event_meta(&rd->pl, e->meta_id, &ignored, &failed);
    if (!m) return 0;
    xpl_info *in = &e->info;
    for (uint32_t i = 0; i < m->nargs; i++) {
        uint8_t r = m->roles[i];
        int lacks = (r == XPL_ROLE_HLO_OP && !in->hlo_op) ||
                    (r == XPL_ROLE_CORRELATION_ID && !in->has_corr) ||
                    (r == XPL_ROLE_PROGRAM_ID && !in->has_prog) ||
                    (r == XPL_ROLE_HLO_MODULE && !in->hlo_module);
        if (lacks) xpl_info_note(&rd->pl, in, &m->args[i], r, NULL);
    }
    return m->name;
}

/* The module whose graph execution this event belongs to, NULL when it is
 * not a command-buffer event that can be placed. */
static xpv_attrib_module *execution_module(reader *rd, raw_event *e)
{
    if (e->aggregated || !e->info.hlo_op || !e->info.has_corr) return NULL;
    if (!xpv_attrib_is_command_buffer(rd->attrib, e->info.hlo_op)) return NULL;
    return xpv_attrib_module_of(rd->attrib, e->info.has_prog, e->info.prog, e->info.hlo_module);
}

/* One graph execution, from *line on: the consecutive events of one
 * correlation id and module are read for their names, placed together,
 * then read again and emitted with what they ran. */
static int read_run(reader *rd, const line_info *ln, xpv_pb *line, xpv_attrib_module *am,
                    int64_t corr, xpv_err *err)
{
    xpv_pb cur = *line;
    xpv_pb_field f;
    raw_event e;
    size_t n = 0;
    while (xpv_pb_next(&cur, &f, err) == 1) {
        if (f.num != 4) continue;
        if (decode_event(rd, &f, &e, 1, err) != 0) return -1;
        uint32_t name = peek_meta(rd, &e);
        if (execution_module(rd, &e) != am || e.info.corr != corr) break;
        if (n == rd->run_cap) {
            rd->run_cap = rd->run_cap ? rd->run_cap * 2 : 256;
            rd->run_names = xpv_xrealloc(rd->run_names, rd->run_cap * sizeof *rd->run_names);
            rd->run_ops = xpv_xrealloc(rd->run_ops, rd->run_cap * sizeof *rd->run_ops);
        }
        rd->run_names[n++] = name;
    }
    if (n) xpv_attrib_run(am, rd->run_names, n, rd->run_ops);
    cur = *line;
    /* Both passes classify an event alike (peek_meta), so n > 0; were it
     * not, the first event is emitted as it is, so the line still moves. */
    for (size_t i = 0; i < (n ? n : 1);) {
        if (xpv_pb_next(&cur, &f, err) != 1) return -1; /* read once already: cannot end */
        if (f.num == 4 && read_event(rd, ln, &f, n ? &rd->run_ops[i] : NULL, err) != 0) return -1;
        i += f.num == 4;
    }
    *line = cur;
    return 0;
}

/* A stream line of a GPU plane in a space with compiled modules. */
static int read_stream_line(reader *rd, const line_info *ln, xpv_pb line, xpv_err *err)
{
    xpv_pb before = line;
    xpv_pb_field f;
    int rc;
    while (before = line, (rc = xpv_pb_next(&line, &f, err)) == 1) {
        if (f.num != 4) continue;
        raw_event e;
        int failed = 0;
        int64_t missing = rd->pl.missing_stat_meta; /* read_run decodes the event again */
        if (decode_event(rd, &f, &e, 0, err) != 0) return -1;
        peek_meta(rd, &e);
        xpv_attrib_module *am = execution_module(rd, &e);
        if (am) {
            line = before, rd->pl.missing_stat_meta = missing;
            if (read_run(rd, ln, &line, am, e.info.corr, err) != 0) return -1;
        } else if (e.aggregated) {
            xpv_sink_skipped(rd->sink, "aggregated events");
        } else {
            if (e.info.hlo_op && xpv_attrib_is_command_buffer(rd->attrib, e.info.hlo_op))
                rd->unplaceable++; /* no correlation id or no module: kept as it is */
            emit_event(rd, ln, &e, NULL, err, &failed);
            if (failed) return -1;
        }
    }
    return rc;
}

/* The attribution of this space, looked for at its first GPU stream. */
static int wants_attribution(reader *rd, const line_info *ln)
{
    if (ln->type != LINE_STREAM || rd->plane_type != PLANE_GPU) return 0;
    if (!rd->attrib_state) {
        rd->attrib = xpv_attrib_open(rd->data, rd->size, rd->sink);
        rd->attrib_state = rd->attrib ? 1 : -1;
        if (rd->attrib) {
            rd->key_command_buffer = xpv_sink_intern_cstr(rd->sink, "command_buffer");
            rd->key_jax_op = xpv_sink_intern_cstr(rd->sink, "jax_op");
            rd->key_source = xpv_sink_intern_cstr(rd->sink, "source");
        }
    }
    return rd->attrib_state > 0;
}

static int read_line(reader *rd, const xpv_pb_field *lf, int64_t index, xpv_err *err)
{
    xpv_pb line = xpv_pb_sub(&rd->pl.msg, lf);
    line_head h;
    if (read_line_head(&line, &h, err) != 0) return -1;
    int64_t tid = h.display_id ? h.display_id : h.id;
    const char *name = h.display_len ? h.display_name : h.name;
    size_t name_len = h.display_len ? h.display_len : h.name_len;
    line_info ln;
    classify_line(rd, &ln, h.name, h.name_len);
    ln.track = xpv_sink_track(rd->sink, rd->pid, tid);
    ln.ts_ns = h.ts_ns;
    xpv_sink_thread_name(rd->sink, rd->pid, tid, name, name_len);
    xpv_sink_thread_sort(rd->sink, rd->pid, tid, index);
    if (wants_attribution(rd, &ln)) return read_stream_line(rd, &ln, line, err);
    xpv_pb_field f;
    int rc;
    while ((rc = xpv_pb_next(&line, &f, err)) == 1)
        if (f.num == 4 && read_event(rd, &ln, &f, NULL, err) != 0) return -1;
    return rc;
}

/* ---- planes ---- */

/* First pass: id, name, and the metadata maps indexed by id. */
static int read_plane_head(reader *rd, plane_head *h, xpv_err *err)
{
    xpv_pb r = rd->pl.msg;
    xpv_pb_field f;
    int rc;
    memset(h, 0, sizeof *h);
    h->name = "";
    while ((rc = xpv_pb_next(&r, &f, err)) == 1) {
        if (f.num > 6) continue;
        int want = f.num == 1 ? XPV_PB_VARINT : XPV_PB_LEN;
        if ((int)f.wire != want) return xpv_pb_wrong_wire(&r, &f, "XPlane", (uint32_t)want, err);
        if (f.num == 1)
            h->id = (int64_t)f.v;
        else if (f.num == 2)
            h->name = (const char *)f.data, h->name_len = f.len;
        else if (f.num == 3)
            h->nlines++;
        else if (f.num == 6)
            h->nstats++;
        else if (xpl_table_add_entry(&rd->pl, f.num == 4 ? &rd->pl.events : &rd->pl.stats, &r, &f,
                                     err) != 0)
            return -1;
    }
    if (rc < 0) return -1;
    xpl_table_finish(&rd->pl.events);
    xpl_table_finish(&rd->pl.stats);
    return 0;
}

static int pid_taken(reader *rd, int64_t pid)
{
    for (size_t i = 0; i < rd->npids; i++)
        if (rd->pids[i] == pid) return 1;
    return 0;
}

/* The device number after "/device:GPU:" (the name is not NUL-terminated). */
static int parse_ordinal(const char *s, size_t n)
{
    int v = 0;
    for (size_t i = 0; i < n && i < 6 && s[i] >= '0' && s[i] <= '9'; i++)
        v = v * 10 + (s[i] - '0');
    return v;
}

/* GPU and TPU planes are the only ones whose lines hold device work. */
static int is_device_plane(const char *name, size_t len)
{
    return xpl_starts_with(name, len, "/device:GPU:") || xpl_starts_with(name, len, "/device:TPU:");
}

/* Type, ordinal, pid and sort index of a plane, named as JAX's converter does. */
static void place_plane(reader *rd, const plane_head *h, int64_t index, int *ordinal, int64_t *sort)
{
    const char *n = h->name;
    size_t len = h->name_len;
    int id_ok = h->id >= 0 && h->id < 500;
    *ordinal = -1;
    if (xpl_equals(n, len, "/host:CPU"))
        rd->plane_type = PLANE_HOST, rd->pid = PID_HOST, *sort = 0;
    else if (is_device_plane(n, len)) {
        rd->plane_type = n[8] == 'G' ? PLANE_GPU : PLANE_TPU; /* "/device:GPU:" */
        *ordinal = parse_ordinal(n + 12, len - 12);
        rd->pid = PID_FIRST_DEVICE + (id_ok ? h->id : *ordinal);
        *sort = 1 + *ordinal;
    } else if (xpl_starts_with(n, len, "/device:") || xpl_starts_with(n, len, "/custom:")) {
        rd->plane_type = PLANE_CUSTOM;
        rd->pid = PID_FIRST_CUSTOM + (id_ok ? h->id : 0);
        *sort = PID_FIRST_CUSTOM + index;
    } else {
        rd->plane_type = PLANE_OTHER;
        rd->pid = PID_OTHER + index;
        *sort = PID_OTHER + index;
    }
    if (pid_taken(rd, rd->pid)) rd->pid = PID_FALLBACK + index;
    rd->pids = xpv_xrealloc(rd->pids, (rd->npids + 1) * sizeof *rd->pids);
    rd->pids[rd->npids++] = rd->pid;
}

static int read_plane(reader *rd, const xpv_pb *space, const xpv_pb_field *pf, int64_t index,
                      xpv_err *err)
{
    xpl_plane *pl = &rd->pl;
    xpl_plane_reset(pl);
    pl->msg = xpv_pb_sub(space, pf);
    plane_head h;
    if (read_plane_head(rd, &h, err) != 0) return -1;
    int ordinal;
    int64_t sort;
    place_plane(rd, &h, index, &ordinal, &sort);
    xpv_sink_process_name(rd->sink, rd->pid, h.name, h.name_len);
    xpv_sink_process_sort(rd->sink, rd->pid, sort);
    if (ordinal >= 0) xpv_sink_process_device(rd->sink, rd->pid, ordinal);
    if ((h.nstats || rd->plane_type == PLANE_GPU || rd->plane_type == PLANE_TPU) &&
        xpl_facts_read_plane_stats(rd, &h, err) != 0)
        return -1;
    xpv_pb r = pl->msg;
    xpv_pb_field f;
    int rc;
    int64_t line_index = 0;
    while ((rc = xpv_pb_next(&r, &f, err)) == 1)
        if (f.num == 3 && read_line(rd, &f, line_index++, err) != 0) return -1;
    if (rc < 0) return -1;
    xpl_facts_plane_warnings(rd, &h);
    return 0;
}

/* ---- the space ---- */

/* The index of the last GPU or TPU plane (-1: none), from the planes' names
 * alone; what cannot be parsed is left to read_space to report. */
static int64_t last_device_plane(const uint8_t *data, size_t size)
{
    xpv_pb space = xpv_pb_open(data, size);
    xpv_pb_field f;
    xpv_err ignored;
    int64_t planes = 0, last = -1;
    while (xpv_pb_next(&space, &f, &ignored) == 1) {
        if (f.num != 1 || f.wire != XPV_PB_LEN) continue;
        xpv_pb plane = xpv_pb_sub(&space, &f);
        xpv_pb_field pf;
        const char *name = "";
        size_t len = 0;
        while (xpv_pb_next(&plane, &pf, &ignored) == 1) /* the last name wins, as in protobuf */
            if (pf.num == 2 && pf.wire == XPV_PB_LEN) name = (const char *)pf.data, len = pf.len;
        if (is_device_plane(name, len)) last = planes;
        planes++;
    }
    return last;
}

static int read_space(reader *rd, const uint8_t *data, size_t size, xpv_err *err)
{
    int64_t last_device = last_device_plane(data, size);
    xpv_pb space = xpv_pb_open(data, size);
    xpv_pb_field f;
    int rc;
    int64_t planes = 0;
    while ((rc = xpv_pb_next(&space, &f, err)) == 1) {
        if (f.num < 1 || f.num > 4) continue;
        if (f.wire != XPV_PB_LEN) return xpv_pb_wrong_wire(&space, &f, "XSpace", 2, err);
        rd->saw_xspace_field = 1;
        if (f.num == 1 && read_plane(rd, &space, &f, planes++, err) != 0) return -1;
        if (f.num == 1 && planes - 1 == last_device) xpv_sink_device_work_done(rd->sink);
        if (f.num == 2 || f.num == 3) xpl_facts_text(rd, f.num == 2 ? "error" : "warning", &f);
        if (f.num == 4) {
            if (rd->hostnames.len) xpv_buf_puts(&rd->hostnames, ",");
            xpv_buf_append(&rd->hostnames, f.data, f.len);
        }
    }
    if (rc < 0) return -1;
    if (!rd->saw_xspace_field)
        return xpv_err_set(err, "byte offset 0: no XSpace fields (planes, hostnames) found; "
                                "not an xplane.pb protobuf");
    return 0;
}

/* XPV_ATTRIBUTION=off leaves kernels as the profile names them: for the
 * benchmark that measures what attribution costs (bench/run_attribution.sh). */
static int attribution_off(void)
{
    const char *v = getenv("XPV_ATTRIBUTION");
    return v && strcmp(v, "off") == 0;
}

/* The name decides: an XSpace has no magic bytes to sniff. */
int xpv_claims_xplane(const xpv_sniff_input *in)
{
    return xpv_sniff_name_ends(in, ".xplane.pb");
}

/* A file cut shorter or rewritten while mapped: its pages past the new
 * end read as zeros (see app/shrunk_maps.h), others as the new bytes, so
 * whatever was decoded from it is not one file. */
static int changed_while_read(int fd, const struct stat *before, xpv_err *err)
{
    struct stat now;
    if (fstat(fd, &now) != 0) {
        xpv_err_set(err, "cannot stat after reading: %s", strerror(errno));
        return 1;
    }
    if (now.st_size == before->st_size && xpv_mtime_ns(&now) == xpv_mtime_ns(before)) return 0;
    xpv_err_set(err, "the file changed while it was read (%lld bytes, now %lld)",
                (long long)before->st_size, (long long)now.st_size);
    return 1;
}

int xpv_read_xplane(const char *path, xpv_sink *sink, xpv_err *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return xpv_err_set(err, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        xpv_err_set(err, "%s: cannot stat: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    if (st.st_size == 0) {
        close(fd);
        return xpv_err_set(err, "%s: byte offset 0: empty file (0 bytes), not an XSpace", path);
    }
    void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
        xpv_err_set(err, "%s: cannot map: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    madvise(map, (size_t)st.st_size, MADV_SEQUENTIAL);
    reader rd;
    memset(&rd, 0, sizeof rd);
    rd.sink = sink;
    rd.data = map, rd.size = (size_t)st.st_size;
    if (attribution_off()) rd.attrib_state = -1;
    xpl_plane_init(&rd.pl, sink);
    int rc = read_space(&rd, map, (size_t)st.st_size, err);
    if (changed_while_read(fd, &st, err)) rc = -1;
    close(fd);
    if (rc == 0) xpv_attrib_report(rd.attrib, rd.unplaceable);
    if (rc == 0)
        xpl_facts_finish(&rd);
    else
        xpv_err_prefix(err, "%s", path);
    xpl_plane_free(&rd.pl);
    free(rd.args);
    free(rd.roles);
    free(rd.pids);
    xpv_attrib_free(rd.attrib);
    free(rd.run_names);
    free(rd.run_ops);
    xpv_buf_free(&rd.hostnames);
    munmap(map, (size_t)st.st_size);
    return rc;
}
