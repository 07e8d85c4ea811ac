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
#include "xplane_meta.h"

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

enum plane_type { PLANE_HOST, PLANE_GPU, PLANE_TPU, PLANE_CUSTOM, PLANE_OTHER };
enum line_type { LINE_HOST, LINE_STREAM, LINE_XLA_OPS, LINE_XLA_MODULES, LINE_STEPS, LINE_DEVICE };

typedef struct {
    int type;            /* enum line_type */
    uint8_t stream_kind; /* the one kind a `Stream #N(...)` line lists, 0 if mixed */
    int stream_has_kernel;
    uint32_t track;
    int64_t ts_ns;
} line_info;

/* Device planes' peak figures, kept as profile facts for the roofline
 * (api/tools/tool_roofline_model.c) when every device plane stating one states the
 * same: one figure per host, never one device's for another's. */
static const char *const PEAK_STATS[] = {"peak_teraflops_per_second",
                                         "peak_hbm_bw_gigabytes_per_second"};
#define NPEAKS (sizeof PEAK_STATS / sizeof PEAK_STATS[0])

typedef struct {
    char text[64];
    int state; /* 0: no plane stated it, 1: stated (text), -1: planes disagree */
} peak_fact;

typedef struct {
    xpv_sink *sink;
    xpl_plane pl;
    peak_fact peaks[NPEAKS];
    int plane_type; /* enum plane_type */
    int64_t pid;
    xpv_arg *args;
    uint8_t *roles;
    size_t cap_args;
    int64_t *pids; /* pids given so far, to keep them distinct */
    size_t npids;
    int tensorflow;
    int saw_xspace_field;
    xpv_buf hostnames;
} reader;

/* ---- small helpers ---- */

static int starts_with(const char *s, size_t n, const char *prefix)
{
    size_t k = strlen(prefix);
    return n >= k && memcmp(s, prefix, k) == 0;
}

static int equals(const char *s, size_t n, const char *word)
{
    return strlen(word) == n && memcmp(s, word, n) == 0;
}

static int64_t floor_div_1000(int64_t v)
{
    int64_t q = v / 1000;
    return (v % 1000 < 0) ? q - 1 : q;
}

static void ensure_args(reader *rd, size_t n)
{
    if (n <= rd->cap_args) return;
    while (rd->cap_args < n)
        rd->cap_args = rd->cap_args ? rd->cap_args * 2 : 64;
    rd->args = xpv_xrealloc(rd->args, rd->cap_args * sizeof *rd->args);
    rd->roles = xpv_xrealloc(rd->roles, rd->cap_args);
}

/* Writes an arg's value as text (for facts and labels). */
static void arg_to_text(reader *rd, const xpv_arg *a, char *out, size_t n)
{
    size_t len = 0;
    const char *s = xpl_arg_text(&rd->pl, a, &len);
    if (s)
        snprintf(out, n, "%.*s", (int)(len < n ? len : n - 1), s);
    else if (a->type == XPV_ARG_INT)
        snprintf(out, n, "%lld", (long long)a->v.i);
    else if (a->type == XPV_ARG_UINT)
        snprintf(out, n, "%llu", (unsigned long long)a->v.u);
    else
        snprintf(out, n, "%.17g", a->v.d);
}

/* ---- classification ---- */

static void classify_stream_line(line_info *ln, const char *name, size_t n)
{
    const char *open = memchr(name, '(', n);
    ln->type = LINE_STREAM;
    if (!open) return;
    const char *p = open + 1, *end = name + n;
    if (end > p && end[-1] == ')') end--;
    int kinds = 0;
    uint8_t kind = 0;
    while (p < end) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        if (!comma) comma = end;
        size_t k = (size_t)(comma - p);
        uint8_t this_kind = XPV_KIND_DEVICE_OTHER;
        if (equals(p, k, "Kernel"))
            this_kind = XPV_KIND_KERNEL, ln->stream_has_kernel = 1;
        else if (equals(p, k, "MemcpyH2D"))
            this_kind = XPV_KIND_MEMCPY_H2D;
        else if (equals(p, k, "MemcpyD2H"))
            this_kind = XPV_KIND_MEMCPY_D2H;
        else if (equals(p, k, "MemcpyD2D"))
            this_kind = XPV_KIND_MEMCPY_D2D;
        else if (starts_with(p, k, "Memcpy") || equals(p, k, "P2P"))
            this_kind = XPV_KIND_MEMCPY_OTHER;
        else if (equals(p, k, "Memset"))
            this_kind = XPV_KIND_MEMSET;
        kind = this_kind;
        kinds++;
        p = comma + 1;
    }
    ln->stream_kind = kinds == 1 ? kind : 0;
}

static void classify_line(reader *rd, line_info *ln, const char *name, size_t n)
{
    if (starts_with(name, n, "TensorFlow")) rd->tensorflow = 1;
    memset(ln, 0, sizeof *ln);
    if (rd->plane_type != PLANE_GPU && rd->plane_type != PLANE_TPU)
        ln->type = LINE_HOST;
    else if (starts_with(name, n, "Stream #"))
        classify_stream_line(ln, name, n);
    else if (equals(name, n, "XLA Ops") || equals(name, n, "Async XLA Ops"))
        ln->type = LINE_XLA_OPS;
    else if (equals(name, n, "XLA Modules"))
        ln->type = LINE_XLA_MODULES;
    else if (equals(name, n, "Steps"))
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
    ensure_args(rd, (size_t)n + m->nargs);
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

static void emit_event(reader *rd, const line_info *ln, int64_t meta_id, int64_t offset_ps,
                       int64_t dur_ps, uint32_t nargs, xpl_info *info, xpv_err *err, int *failed)
{
    xpl_plane *pl = &rd->pl;
    xpl_meta *m = xpl_event_meta(pl, meta_id, err, failed);
    if (*failed) return;
    xpv_event ev;
    xpv_event_init(&ev);
    if (m) {
        ev.name = m->name;
        if (m->nargs) nargs = merge_meta_args(rd, m, nargs, info);
    } else {
        char tmp[24];
        int k = snprintf(tmp, sizeof tmp, "%lld", (long long)meta_id);
        ev.name = xpv_sink_intern(rd->sink, tmp, (size_t)k);
        pl->missing_event_meta++;
    }
    xpl_fix_texts(pl, rd->args, nargs);
    ev.track = ln->track;
    if (__builtin_add_overflow(ln->ts_ns, floor_div_1000(offset_ps), &ev.ts_ns))
        ev.ts_ns = ln->ts_ns;
    ev.dur_ps = dur_ps < 0 ? 0 : dur_ps;
    ev.dur_ns = ev.dur_ps / 1000;
    ev.args = nargs ? rd->args : NULL;
    ev.nargs = nargs;
    classify_event(rd, ln, m, info, &ev);
    xpv_launch launch;
    if (ev.kind == XPV_KIND_KERNEL) {
        kernel_launch(rd, info, nargs, &launch);
        ev.launch = &launch;
    }
    xpv_sink_event(rd->sink, &ev);
}

static int read_event(reader *rd, const line_info *ln, const xpv_pb_field *ef, xpv_err *err)
{
    xpl_plane *pl = &rd->pl;
    xpv_pb m = xpv_pb_sub(&pl->msg, ef);
    xpv_pb_field f;
    int64_t meta_id = 0, offset_ps = 0, dur_ps = 0;
    int aggregated = 0, rc, failed = 0;
    uint32_t n = 0;
    xpl_info info;
    xpl_info_reset(&info);
    pl->scratch.len = 0;
    while ((rc = xpv_pb_next(&m, &f, err)) == 1) {
        if (f.num == 4) {
            if (f.wire != XPV_PB_LEN) return xpv_pb_wrong_wire(&m, &f, "XEvent", 2, err);
            ensure_args(rd, (size_t)n + 1);
            rd->roles[n] = 0;
            if (xpl_stat_decode(pl, &f, &rd->args[n], &rd->roles[n], &info, err) != 0) return -1;
            if (rd->args[n].key) n++;
        } else if (f.num >= 1 && f.num <= 5) {
            if (f.wire != XPV_PB_VARINT) return xpv_pb_wrong_wire(&m, &f, "XEvent", 0, err);
            if (f.num == 1)
                meta_id = (int64_t)f.v;
            else if (f.num == 2)
                offset_ps = (int64_t)f.v;
            else if (f.num == 3)
                dur_ps = (int64_t)f.v;
            else
                aggregated = 1;
        }
    }
    if (rc < 0) return -1;
    if (aggregated) {
        xpv_sink_skipped(rd->sink, "aggregated events");
        return 0;
    }
    emit_event(rd, ln, meta_id, offset_ps, dur_ps, n, &info, err, &failed);
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
    xpv_pb_field f;
    int rc;
    while ((rc = xpv_pb_next(&line, &f, err)) == 1)
        if (f.num == 4 && read_event(rd, &ln, &f, err) != 0) return -1;
    return rc;
}

/* ---- planes ---- */

typedef struct {
    int64_t id;
    const char *name;
    size_t name_len;
    int nstats, nlines;
} plane_head;

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
    return starts_with(name, len, "/device:GPU:") || starts_with(name, len, "/device:TPU:");
}

/* Type, ordinal, pid and sort index of a plane, named as JAX's converter does. */
static void place_plane(reader *rd, const plane_head *h, int64_t index, int *ordinal, int64_t *sort)
{
    const char *n = h->name;
    size_t len = h->name_len;
    int id_ok = h->id >= 0 && h->id < 500;
    *ordinal = -1;
    if (equals(n, len, "/host:CPU"))
        rd->plane_type = PLANE_HOST, rd->pid = PID_HOST, *sort = 0;
    else if (is_device_plane(n, len)) {
        rd->plane_type = n[9] == 'G' ? PLANE_GPU : PLANE_TPU;
        *ordinal = parse_ordinal(n + 12, len - 12);
        rd->pid = PID_FIRST_DEVICE + (id_ok ? h->id : *ordinal);
        *sort = 1 + *ordinal;
    } else if (starts_with(n, len, "/device:") || starts_with(n, len, "/custom:")) {
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

/* Looks up a plane stat by name among the decoded ones. */
static const xpv_arg *find_stat(reader *rd, uint32_t n, const char *name)
{
    for (uint32_t i = 0; i < n; i++) {
        size_t len;
        const char *k = xpv_sink_string(rd->sink, rd->args[i].key, &len);
        if (equals(k, len, name)) return &rd->args[i];
    }
    return NULL;
}

/* "GPU:0 (AMD, compute capability 9.4)", "TPU:1 (TPU v6 Lite)", or the plane name. */
static void device_fact(reader *rd, const plane_head *h, uint32_t n)
{
    char model[160] = "", major[24] = "", minor[24] = "", fact[400];
    const xpv_arg *a = find_stat(rd, n, "device_type_string");
    if (!a) a = find_stat(rd, n, "device_model");
    if (!a) a = find_stat(rd, n, "device_name");
    if (a)
        arg_to_text(rd, a, model, sizeof model);
    else if ((a = find_stat(rd, n, "device_vendor")) != NULL) {
        arg_to_text(rd, a, model, sizeof model);
        const xpv_arg *ma = find_stat(rd, n, "compute_cap_major");
        const xpv_arg *mi = find_stat(rd, n, "compute_cap_minor");
        if (ma && mi) {
            arg_to_text(rd, ma, major, sizeof major);
            arg_to_text(rd, mi, minor, sizeof minor);
            size_t k = strlen(model);
            snprintf(model + k, sizeof model - k, ", compute capability %s.%s", major, minor);
        }
    }
    const char *short_name = h->name_len > 8 ? h->name + 8 : h->name; /* after "/device:" */
    int len = (int)(h->name_len > 8 ? h->name_len - 8 : h->name_len);
    if (model[0])
        snprintf(fact, sizeof fact, "%.*s (%s)", len, short_name, model);
    else
        snprintf(fact, sizeof fact, "%.*s", (int)h->name_len, h->name);
    xpv_sink_fact(rd->sink, "device", fact);
    if (model[0]) xpv_sink_process_label(rd->sink, rd->pid, model, strlen(model));
}

static int printable(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e) return 0;
    return n > 0;
}

/* Every scalar stat of a device plane as a fact "device.GPU:0.<stat>"
 * (core_count, clock_rate, memory_size, memory_bandwidth, TPU peak FLOP/s
 * and bandwidths, ...): the run environment and the roofline read them.
 * Byte stats come as hex, as in event args; unprintable text is left out. */
static void device_stat_facts(reader *rd, const plane_head *h, uint32_t n)
{
    const char *short_name = h->name_len > 8 ? h->name + 8 : h->name; /* after "/device:" */
    int len = (int)(h->name_len > 8 ? h->name_len - 8 : h->name_len);
    for (uint32_t i = 0; i < n; i++) {
        const xpv_arg *a = &rd->args[i];
        size_t tlen = 0;
        const char *text = xpl_arg_text(&rd->pl, a, &tlen);
        if (text && !printable(text, tlen)) continue;
        char key[200], value[256];
        snprintf(key, sizeof key, "device.%.*s.%s", len, short_name,
                 xpv_sink_string(rd->sink, a->key, NULL));
        arg_to_text(rd, a, value, sizeof value);
        xpv_sink_fact(rd->sink, key, value);
    }
}

static void note_peaks(reader *rd, uint32_t n)
{
    for (size_t i = 0; i < NPEAKS; i++) {
        const xpv_arg *a = find_stat(rd, n, PEAK_STATS[i]);
        peak_fact *f = &rd->peaks[i];
        char text[64];
        if (!a || f->state < 0) continue;
        if (a->type == XPV_ARG_DOUBLE) { /* the shortest text that reads back the same */
            xpv_buf b = {0};
            xpv_buf_json_double(&b, a->v.d);
            snprintf(text, sizeof text, "%.*s", (int)b.len, b.data ? b.data : "");
            xpv_buf_free(&b);
        } else {
            arg_to_text(rd, a, text, sizeof text);
        }
        if (f->state == 0)
            memcpy(f->text, text, sizeof text), f->state = 1;
        else if (strcmp(f->text, text) != 0)
            f->state = -1;
    }
}

/* Plane stats: device descriptions and the Task Environment's facts. */
static int read_plane_stats(reader *rd, const plane_head *h, xpv_err *err)
{
    xpl_plane *pl = &rd->pl;
    xpv_pb r = pl->msg;
    xpv_pb_field f;
    uint32_t n = 0;
    int rc;
    pl->scratch.len = 0;
    while ((rc = xpv_pb_next(&r, &f, err)) == 1) {
        if (f.num != 6) continue;
        ensure_args(rd, (size_t)n + 1);
        if (xpl_stat_decode(pl, &f, &rd->args[n], &rd->roles[n], NULL, err) != 0) return -1;
        if (rd->args[n].key) n++;
    }
    if (rc < 0) return -1;
    xpl_fix_texts(pl, rd->args, n);
    if (rd->plane_type == PLANE_GPU || rd->plane_type == PLANE_TPU) {
        device_fact(rd, h, n);
        device_stat_facts(rd, h, n);
        note_peaks(rd, n);
    }
    if (!equals(h->name, h->name_len, "Task Environment")) return 0;
    for (uint32_t i = 0; i < n; i++) {
        char value[256];
        arg_to_text(rd, &rd->args[i], value, sizeof value);
        xpv_sink_fact(rd->sink, xpv_sink_string(rd->sink, rd->args[i].key, NULL), value);
    }
    return 0;
}

static void plane_warnings(reader *rd, const plane_head *h)
{
    char msg[512];
    xpl_plane *pl = &rd->pl;
    int nl = (int)(h->name_len < 200 ? h->name_len : 200);
    if (pl->missing_event_meta) {
        snprintf(msg, sizeof msg,
                 "plane %.*s: %lld events refer to missing event metadata "
                 "(their ids are used as names)",
                 nl, h->name, (long long)pl->missing_event_meta);
        xpv_sink_fact(rd->sink, "warning", msg);
    }
    if (pl->missing_stat_meta) {
        snprintf(msg, sizeof msg,
                 "plane %.*s: %lld stats refer to missing stat metadata "
                 "(their ids are used as names)",
                 nl, h->name, (long long)pl->missing_stat_meta);
        xpv_sink_fact(rd->sink, "warning", msg);
    }
    if (pl->bad_map_entries) {
        snprintf(msg, sizeof msg,
                 "plane %.*s: %lld metadata map entries without key or value "
                 "(first at byte offset %zu)",
                 nl, h->name, (long long)pl->bad_map_entries, pl->first_bad_map_offset);
        xpv_sink_fact(rd->sink, "warning", msg);
    }
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
        read_plane_stats(rd, &h, err) != 0)
        return -1;
    xpv_pb r = pl->msg;
    xpv_pb_field f;
    int rc;
    int64_t line_index = 0;
    while ((rc = xpv_pb_next(&r, &f, err)) == 1)
        if (f.num == 3 && read_line(rd, &f, line_index++, err) != 0) return -1;
    if (rc < 0) return -1;
    plane_warnings(rd, &h);
    return 0;
}

/* ---- the space ---- */

static void text_fact(reader *rd, const char *key, const xpv_pb_field *f)
{
    char value[480];
    snprintf(value, sizeof value, "%s%.*s",
             strcmp(key, "warning") == 0 ? "profiler warning: " : "profiler error: ",
             (int)(f->len < 400 ? f->len : 400), (const char *)f->data);
    xpv_sink_fact(rd->sink, "warning", value);
}

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
        if (f.num == 2 || f.num == 3) text_fact(rd, f.num == 2 ? "error" : "warning", &f);
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

static void finish_facts(reader *rd)
{
    for (size_t i = 0; i < NPEAKS; i++) {
        char msg[160];
        if (rd->peaks[i].state > 0) xpv_sink_fact(rd->sink, PEAK_STATS[i], rd->peaks[i].text);
        if (rd->peaks[i].state >= 0) continue;
        snprintf(msg, sizeof msg, "device planes state different %s; none is kept", PEAK_STATS[i]);
        xpv_sink_fact(rd->sink, "warning", msg);
    }
    xpv_sink_fact(rd->sink, "producer", rd->tensorflow ? "TensorFlow" : "JAX/XLA");
    if (rd->hostnames.len) xpv_sink_fact(rd->sink, "hostname", rd->hostnames.data);
}

/* The name decides: an XSpace has no magic bytes to sniff. */
int xpv_claims_xplane(const xpv_sniff_input *in)
{
    return xpv_sniff_name_ends(in, ".xplane.pb");
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
    close(fd);
    if (map == MAP_FAILED) return xpv_err_set(err, "%s: cannot map: %s", path, strerror(errno));
    madvise(map, (size_t)st.st_size, MADV_SEQUENTIAL);
    reader rd;
    memset(&rd, 0, sizeof rd);
    rd.sink = sink;
    xpl_plane_init(&rd.pl, sink);
    int rc = read_space(&rd, map, (size_t)st.st_size, err);
    if (rc == 0)
        finish_facts(&rd);
    else
        xpv_err_prefix(err, "%s", path);
    xpl_plane_free(&rd.pl);
    free(rd.args);
    free(rd.roles);
    free(rd.pids);
    xpv_buf_free(&rd.hostnames);
    munmap(map, (size_t)st.st_size);
    return rc;
}
