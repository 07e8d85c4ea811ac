/*
 * chrome_json_classify.c — the Chrome JSON reader's process and thread
 * tables, and what each event is (chrome_json_internal.h says how the
 * reader is split).
 *
 * Tables:
 *  - pid/tid: integers in [-2^62, 2^62) and strings that spell such an
 *    integer (Chrome's viewer keys them as text, so "7" and 7 are one
 *    thread) are used as is; other strings, big or fractional numbers and
 *    booleans get ids from 2^62 up in order of appearance, and name their
 *    process/thread unless an M event names it. Missing or null is 0.
 *  - M events name, sort and label processes and threads; the names also
 *    say which processes are devices and what their threads hold. That
 *    needs the M events before the events they name, which is how JAX and
 *    TensorFlow write them.
 *
 * Producers:
 *  - PyTorch/Kineto: by category. Kernels' launch shape comes from
 *    grid/block/registers per thread/est. achieved occupancy %; "shared
 *    memory" (static + dynamic in Kineto) goes to static_shared_bytes and
 *    dynamic stays unknown. A device event marks its process as device
 *    args.device.
 *  - JAX: "/device:..." processes are devices; their threads' names
 *    (Stream #N(Kernel), (MemcpyH2D), XLA Ops, XLA Modules, Steps) say
 *    what their events are.
 *  - TensorFlow: per-stream "/device:GPU:N/stream:K Compute" processes
 *    hold kernels; "stream:all" repeats them and the executor's
 *    "/job:.../device:GPU:N Compute" row holds ops, so both are device
 *    rows of kind DEVICE_OTHER unless no per-stream row exists for N.
 *  - Steps: ProfilerStep#N, else a step_num arg, else the weaker names of
 *    step_names.c; other events take their step from a group_id arg.
 *
 * Invariants: an xpv_cj_proc pointer holds until the array of processes
 * next grows (it moves), so the last-track cache remembers which table its
 * pointer is into, and so do the recent tracks; an xpv_cj_track pointer
 * holds until track_get() grows the tracks.
 */
#include "chrome_json_internal.h"
#include "kernel_details.h"
#include "step_names.h"
#include "stream_kinds.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Process classes: which rows a process holds. */
enum {
    PC_HOST = 0,
    PC_JAX_DEVICE,
    PC_TF_STREAM,
    PC_TF_STREAM_ALL,
    PC_TF_EXECUTOR,
    PC_TF_MEMCPY,
    PC_TF_OTHER
};
/* Thread classes, from JAX device threads' names. */
enum {
    TC_OTHER = 0,
    TC_KERNEL_STREAM, /* "Stream #N(Kernel)": one kind, as below */
    TC_MEMCPY_STREAM, /* one Memcpy kind or P2P */
    TC_MEMSET_STREAM,
    TC_STREAM, /* several kinds, or none known */
    TC_XLA_OPS,
    TC_XLA_MODULES,
    TC_STEPS
};

struct xpv_cj_proc {
    int64_t pid;
    int named, device, pclass, devmarked;
};

/* ---- text and numbers ---- */

/* An integer from a number or from a string that spells one. */
static int member_int(xpv_cj_reader *r, const xpv_cj_member *m, int64_t *out)
{
    if (m->type == JV_INT && m->val.len <= 18) {
        *out = js_small_int(m->val.s, m->val.len);
        return 0;
    }
    if (m->type == JV_INT) return js_to_int64(m->val.s, m->val.len, out);
    if (m->type != JV_STR || m->val.esc || m->val.len == 0 || m->val.len > 20) return -1;
    const char *after;
    int is_int;
    (void)r;
    if (js_scan_number(m->val.s, m->val.s + m->val.len, 1, &after, &is_int, NULL) != JS_OK ||
        after != m->val.s + m->val.len || !is_int)
        return -1;
    return js_to_int64(m->val.s, m->val.len, out);
}

static const char *find_text(const char *s, size_t n, const char *needle)
{
    size_t k = strlen(needle);
    for (size_t i = 0; i + k <= n; i++)
        if (s[i] == needle[0] && memcmp(s + i, needle, k) == 0) return s + i;
    return NULL;
}

/* Memcpy direction from a name such as "Memcpy HtoD", "MEMCPYDtoH" or
 * "MemcpyD2D"; -1 when the text names none. */
static int memcpy_kind_of(const char *s, size_t n)
{
    if (find_text(s, n, "HtoD") || find_text(s, n, "H2D")) return XPV_KIND_MEMCPY_H2D;
    if (find_text(s, n, "DtoH") || find_text(s, n, "D2H")) return XPV_KIND_MEMCPY_D2H;
    if (find_text(s, n, "DtoD") || find_text(s, n, "D2D")) return XPV_KIND_MEMCPY_D2D;
    if (find_text(s, n, "PtoP") || find_text(s, n, "P2P") || find_text(s, n, "Other"))
        return XPV_KIND_MEMCPY_OTHER;
    return -1;
}

/* "[x, y, z]" (1 to 3 non-negative ints) into dims; others stay -1. */
static void parse_dims(const xpv_cj_str *raw, int32_t dims[3])
{
    const char *p = raw->s, *end = raw->s + raw->len;
    if (p >= end || *p != '[') return;
    p++;
    for (int i = 0; i < 3; i++) {
        p = js_skip_ws(p, end);
        int64_t v = 0;
        const char *d = p;
        while (p < end && *p >= '0' && *p <= '9' && v <= INT32_MAX)
            v = v * 10 + (*p++ - '0');
        if (p == d || v > INT32_MAX) return;
        dims[i] = (int32_t)v;
        p = js_skip_ws(p, end);
        if (p >= end || *p != ',') return;
        p++;
    }
}

/* ---- pid/tid ids, processes and tracks ---- */

/* Maps a pid/tid value to an int64; *label gets the text when the id came
 * from a string (so it can name the process or thread). */
static int64_t map_id(xpv_cj_reader *r, const xpv_cj_member *m, xpv_cj_str *label)
{
    label->len = 0;
    int64_t v;
    if (m->type == JV_NONE) return 0;
    if (m->type == JV_INT && js_to_int64(m->val.s, m->val.len, &v) == 0 &&
        v >= -XPV_CJ_STRING_ID_BASE && v < XPV_CJ_STRING_ID_BASE)
        return v;
    if (m->type == JV_RAW && xpv_cj_str_is(&m->val, "null")) return 0;
    xpv_cj_str t = m->type == JV_STR ? xpv_cj_text_of(r, &m->val) : m->val;
    if (m->type == JV_STR && xpv_cj_spelled_int(&m->val, &v)) return v;
    *label = t;
    for (size_t i = 0; i < r->nstr_ids; i++)
        if (strlen(r->str_ids[i]) == t.len && memcmp(r->str_ids[i], t.s, t.len) == 0)
            return XPV_CJ_STRING_ID_BASE + (int64_t)i;
    r->str_ids = xpv_xrealloc(r->str_ids, (r->nstr_ids + 1) * sizeof *r->str_ids);
    r->str_ids[r->nstr_ids] = xpv_xstrndup(t.s, t.len);
    return XPV_CJ_STRING_ID_BASE + (int64_t)r->nstr_ids++;
}

static xpv_cj_proc *proc_get(xpv_cj_reader *r, int64_t pid)
{
    uint64_t *at = xpv_hindex_put(&r->proc_index, (uint64_t)pid, r->nprocs);
    if (*at < r->nprocs) return &r->procs[*at];
    r->procs = xpv_grow_to_index(r->procs, &r->cap_procs, r->nprocs, sizeof *r->procs, 0);
    xpv_cj_proc *p = &r->procs[r->nprocs++];
    *p = (xpv_cj_proc){.pid = pid, .device = -1};
    return p;
}

static xpv_cj_track *track_get(xpv_cj_reader *r, uint32_t track)
{
    r->tracks = xpv_grow_to_index(r->tracks, &r->ntracks, track, sizeof *r->tracks, 0);
    return &r->tracks[track];
}

uint32_t xpv_cj_track_of(xpv_cj_reader *r, const xpv_cj_event *pe, xpv_cj_proc **pp,
                         xpv_cj_track **tp)
{
    xpv_cj_str plabel, tlabel;
    int64_t pid = map_id(r, &pe->pid, &plabel), tid = map_id(r, &pe->tid, &tlabel);
    if (r->last.valid && r->last.pid == pid && r->last.tid == tid && r->last.procs == r->procs) {
        *pp = r->last.proc;
        *tp = &r->tracks[r->last.track];
        return r->last.track;
    }
    uint32_t track = xpv_sink_track(r->sink, pid, tid);
    xpv_cj_proc *p = proc_get(r, pid);
    xpv_cj_track *t = track_get(r, track);
    r->last.valid = !plabel.len && !tlabel.len;
    r->last.pid = pid;
    r->last.tid = tid;
    r->last.track = track;
    r->last.proc = p;
    r->last.procs = r->procs;
    if (r->last.valid) {
        r->recent[xpv_cj_recent_slot(pid, tid)] =
            (xpv_cj_recent_track){pid, tid, track, p, r->procs};
    }
    if (plabel.len && !p->named) {
        xpv_sink_process_name(r->sink, pid, plabel.s, plabel.len);
        p->named = 1;
    }
    if (tlabel.len && !t->named) {
        xpv_sink_thread_name(r->sink, pid, tid, tlabel.s, tlabel.len);
        t->named = 1;
        t->memkind = -1;
    }
    *pp = p;
    *tp = t;
    return track;
}

/* ---- metadata (M) events ---- */

/* "/device:GPU:3..." -> 3 (also TPU); -1 when absent. */
static int device_ordinal(const xpv_cj_str *name, const char **kind)
{
    static const char *const kinds[] = {"/device:GPU:", "/device:TPU:", "/device:gpu:"};
    for (int k = 0; k < 3; k++) {
        const char *at = find_text(name->s, name->len, kinds[k]);
        if (!at) continue;
        const char *p = at + strlen(kinds[k]), *end = name->s + name->len;
        int v = 0, nd = 0;
        while (p < end && *p >= '0' && *p <= '9' && v < 100000)
            v = v * 10 + (*p++ - '0'), nd++;
        if (!nd) continue;
        if (kind) *kind = at;
        return v;
    }
    return -1;
}

static void classify_process(xpv_cj_reader *r, xpv_cj_proc *p, const xpv_cj_str *name)
{
    const char *at = NULL;
    int dev = device_ordinal(name, &at);
    p->pclass = PC_HOST;
    if (xpv_cj_ends_with(name, " Compute") || xpv_cj_ends_with(name, " Tensors") ||
        find_text(name->s, name->len, "/job:")) {
        r->tf_hint = 1;
        if (dev < 0 || xpv_cj_ends_with(name, " Tensors")) {
            p->pclass = dev < 0 ? PC_HOST : PC_TF_OTHER;
            return;
        }
        if (find_text(name->s, name->len, "/stream:all"))
            p->pclass = PC_TF_STREAM_ALL;
        else if (find_text(name->s, name->len, "/stream:")) {
            p->pclass = PC_TF_STREAM;
            if (dev < 64) r->tf_stream_devices[dev] = 1;
        } else if (find_text(name->s, name->len, "/memcpy"))
            p->pclass = PC_TF_MEMCPY;
        else
            p->pclass = PC_TF_EXECUTOR;
    } else if (dev >= 0 && at == name->s) {
        p->pclass = PC_JAX_DEVICE;
        r->jax_hint = 1;
        char buf[256];
        snprintf(buf, sizeof buf, "%.*s", (int)name->len, name->s);
        xpv_sink_fact(r->sink, "device", buf);
    } else if (xpv_cj_starts_with(name, "/host:")) {
        r->jax_hint = 1;
    }
    if (dev >= 0 && p->pclass != PC_HOST) {
        p->device = dev;
        xpv_sink_process_device(r->sink, p->pid, dev);
    }
}

/* A stream thread's class from the kinds its name lists (stream_kinds.h,
 * as the xplane reader reads the same line): one kind decides; several
 * leave each event to its details and name. */
static void classify_stream(xpv_cj_track *t, const xpv_cj_str *name)
{
    xpv_stream_kinds k = xpv_stream_kinds_of(name->s, name->len);
    t->has_kernel = k.has_kernel;
    t->memkind = -1;
    if (k.one == XPV_KIND_KERNEL) {
        t->tclass = TC_KERNEL_STREAM;
    } else if (k.one >= XPV_KIND_MEMCPY_H2D && k.one <= XPV_KIND_MEMCPY_OTHER) {
        t->tclass = TC_MEMCPY_STREAM;
        t->memkind = k.one;
    } else {
        t->tclass = k.one == XPV_KIND_MEMSET ? TC_MEMSET_STREAM : TC_STREAM;
    }
}

static void classify_thread(xpv_cj_track *t, const xpv_cj_str *name)
{
    t->has_kernel = 0;
    t->memkind = -1;
    if (xpv_cj_str_is(name, "XLA Ops"))
        t->tclass = TC_XLA_OPS;
    else if (xpv_cj_str_is(name, "XLA Modules"))
        t->tclass = TC_XLA_MODULES;
    else if (xpv_cj_str_is(name, "Steps"))
        t->tclass = TC_STEPS;
    else if (xpv_cj_starts_with(name, "Stream #"))
        classify_stream(t, name);
    else
        t->tclass = TC_OTHER;
}

static const xpv_cj_member *arg_named(xpv_cj_reader *r, const xpv_cj_event *pe, const char *key)
{
    for (uint32_t i = 0; i < pe->nargs; i++)
        if (xpv_cj_str_is(&r->members[pe->args_at + i].key, key))
            return &r->members[pe->args_at + i];
    return NULL;
}

void xpv_cj_metadata(xpv_cj_reader *r, xpv_cj_event *pe)
{
    xpv_cj_str label, name = xpv_cj_text_of(r, &pe->name.val);
    if (pe->name.type != JV_STR) return;
    int64_t pid = map_id(r, &pe->pid, &label), tid = map_id(r, &pe->tid, &label), v;
    const xpv_cj_member *a;
    if (xpv_cj_str_is(&name, "process_name") && (a = arg_named(r, pe, "name")) &&
        a->type == JV_STR) {
        xpv_cj_str t = xpv_cj_text_of(r, &a->val);
        xpv_cj_proc *p = proc_get(r, pid);
        xpv_sink_process_name(r->sink, pid, t.s, t.len);
        p->named = 1;
        classify_process(r, p, &t);
    } else if (xpv_cj_str_is(&name, "thread_name") && (a = arg_named(r, pe, "name")) &&
               a->type == JV_STR) {
        xpv_cj_str t = xpv_cj_text_of(r, &a->val);
        xpv_cj_track *ti = track_get(r, xpv_sink_track(r->sink, pid, tid));
        xpv_sink_thread_name(r->sink, pid, tid, t.s, t.len);
        ti->named = 1;
        classify_thread(ti, &t);
    } else if (xpv_cj_str_is(&name, "process_sort_index") && (a = arg_named(r, pe, "sort_index")) &&
               member_int(r, a, &v) == 0) {
        xpv_sink_process_sort(r->sink, pid, v);
    } else if (xpv_cj_str_is(&name, "thread_sort_index") && (a = arg_named(r, pe, "sort_index")) &&
               member_int(r, a, &v) == 0) {
        xpv_sink_thread_sort(r->sink, pid, tid, v);
    } else if (xpv_cj_str_is(&name, "process_labels") && (a = arg_named(r, pe, "labels")) &&
               a->type == JV_STR) {
        xpv_cj_str t = xpv_cj_text_of(r, &a->val);
        xpv_sink_process_label(r->sink, pid, t.s, t.len);
    }
}

/* ---- what an event is ---- */

static uint32_t text_id(xpv_cj_reader *r, const xpv_cj_member *m)
{
    if (!m || m->type != JV_STR) return 0;
    xpv_cj_str t = xpv_cj_text_of(r, &m->val);
    return xpv_cj_intern(r, t.s, t.len, 0);
}

static void pytorch_launch(const xpv_cj_known_args *k, xpv_launch *l)
{
    int64_t v;
    if (k->grid && k->grid->type == JV_RAW) parse_dims(&k->grid->val, l->grid);
    if (k->block && k->block->type == JV_RAW) parse_dims(&k->block->val, l->block);
    if (k->regs && k->regs->type == JV_INT &&
        js_to_int64(k->regs->val.s, k->regs->val.len, &v) == 0 && v >= 0 && v <= INT32_MAX)
        l->registers_per_thread = (int32_t)v;
    if (k->shmem && k->shmem->type == JV_INT &&
        js_to_int64(k->shmem->val.s, k->shmem->val.len, &v) == 0 && v >= 0 && v <= INT32_MAX)
        l->static_shared_bytes = (int32_t)v;
    double d;
    if (k->occupancy && (k->occupancy->type == JV_INT || k->occupancy->type == JV_NUM) &&
        js_to_double(k->occupancy->val.s, k->occupancy->val.len, &d) == 0 && d >= 0)
        l->occupancy_pct = d;
}

/* Marks the process of a PyTorch device event as device args.device. */
static void pytorch_device(xpv_cj_reader *r, xpv_cj_proc *p, const xpv_cj_known_args *k)
{
    int64_t dev;
    if (!k->device || member_int(r, k->device, &dev) != 0 || dev < 0 || dev > 1000000) return;
    if (p->devmarked && p->device == dev) return;
    p->devmarked = 1;
    p->device = (int)dev;
    xpv_sink_process_device(r->sink, p->pid, (int)dev);
}

/* "Memset 0" on "Stream #14(Memset,Compute)": a memset, as the xplane
 * reader names it (its arg is Memset_details, not memcpy_details). */
static int names_memset(const xpv_cj_str *name)
{
    return find_text(name->s, name->len, "Memset") || find_text(name->s, name->len, "memset");
}

/* Kineto categories that are never device work, though some of them sit
 * on device rows or carry args.device (cuda_sync: a wait, not work). */
static int kineto_not_work(const xpv_cj_str *cat)
{
    static const char *const cats[] = {"cpu_op",
                                       "Operator",
                                       "user_annotation",
                                       "python_function",
                                       "cuda_sync",
                                       "ac2g",
                                       "async",
                                       "Trace",
                                       "overhead",
                                       "cpu_instant_event",
                                       "collective_comm",
                                       "external_correlation",
                                       NULL};
    for (const char *const *c = cats; *c; c++)
        if (xpv_cj_str_is(cat, *c)) return 1;
    return 0;
}

/* Device work of an accelerator whose Kineto category is not `kernel`
 * (MTIA's mtia_ccp_events, ...): a timed event with args.device in a
 * category that is neither a launch nor host-side. A copy or memset when
 * its name or category says so, else a kernel. */
static int pytorch_other_device_work(xpv_cj_reader *r, xpv_event *ev, const xpv_cj_str *cat,
                                     const xpv_cj_str *name, const xpv_cj_known_args *k,
                                     xpv_cj_proc *p, xpv_launch *l)
{
    if (ev->ph != 'X' || ev->dur_ps <= 0 || !k->device || !cat->len || kineto_not_work(cat))
        return 0;
    int mk = memcpy_kind_of(name->s, name->len);
    if (names_memset(name) || find_text(cat->s, cat->len, "memset"))
        ev->kind = XPV_KIND_MEMSET;
    else if (mk >= 0 || find_text(name->s, name->len, "Memcpy") ||
             find_text(name->s, name->len, "memcpy") || find_text(cat->s, cat->len, "memcpy"))
        ev->kind = (uint8_t)(mk >= 0 ? mk : XPV_KIND_MEMCPY_OTHER);
    else {
        ev->kind = XPV_KIND_KERNEL;
        pytorch_launch(k, l);
        ev->launch = l;
    }
    pytorch_device(r, p, k);
    return 1;
}

/* PyTorch/Kineto categories; returns 1 when the category decided. */
static int classify_pytorch(xpv_cj_reader *r, xpv_event *ev, const xpv_cj_str *cat,
                            const xpv_cj_str *name, const xpv_cj_known_args *k, xpv_cj_proc *p,
                            xpv_launch *l)
{
    int64_t corr;
    int has_corr = k->correlation && member_int(r, k->correlation, &corr) == 0;
    if (xpv_cj_str_is(cat, "kernel") || xpv_cj_str_is(cat, "Kernel")) {
        ev->kind = XPV_KIND_KERNEL;
        pytorch_launch(k, l);
        ev->launch = l;
        pytorch_device(r, p, k);
    } else if (xpv_cj_str_is(cat, "gpu_memcpy") || xpv_cj_str_is(cat, "Memcpy")) {
        int kind = memcpy_kind_of(name->s, name->len);
        ev->kind = (uint8_t)(kind < 0 ? XPV_KIND_MEMCPY_OTHER : kind);
        pytorch_device(r, p, k);
    } else if (xpv_cj_str_is(cat, "gpu_memset") || xpv_cj_str_is(cat, "Memset")) {
        ev->kind = XPV_KIND_MEMSET;
        pytorch_device(r, p, k);
    } else if (xpv_cj_str_is(cat, "Runtime") || xpv_cj_ends_with(cat, "_runtime") ||
               xpv_cj_ends_with(cat, "_driver")) {
        /* cuda_runtime, cuda_driver, and other accelerators' (mtia_runtime) */
        if (!has_corr) return 1;
        ev->kind = XPV_KIND_LAUNCH;
    } else if (xpv_cj_str_is(cat, "gpu_user_annotation")) {
        ev->kind = XPV_KIND_DEVICE_OTHER;
        return 1;
    } else if (!pytorch_other_device_work(r, ev, cat, name, k, p, l)) {
        return 0;
    }
    if (has_corr) ev->corr = corr;
    return 1;
}

static void jax_kernel(xpv_cj_reader *r, xpv_event *ev, const xpv_cj_known_args *k, xpv_launch *l)
{
    ev->kind = XPV_KIND_KERNEL;
    if (k->kernel_details && k->kernel_details->type == JV_STR) {
        xpv_cj_str t = xpv_cj_text_of(r, &k->kernel_details->val);
        xpv_kernel_details_parse(t.s, t.len, l);
    }
    l->op = text_id(r, k->hlo_op);
    if (!l->op) l->op = text_id(r, k->tf_op);
    ev->launch = l;
}

/* A JAX device row: the thread's name says what its events are. */
static void classify_jax_row(xpv_cj_reader *r, xpv_event *ev, const xpv_cj_str *name,
                             const xpv_cj_known_args *k, const xpv_cj_track *t, xpv_launch *l)
{
    int64_t v;
    int mk = memcpy_kind_of(name->s, name->len);
    int stream = t->tclass >= TC_KERNEL_STREAM && t->tclass <= TC_STREAM;
    if (k->kernel_details || t->tclass == TC_KERNEL_STREAM)
        jax_kernel(r, ev, k, l);
    else if (k->memcpy_details)
        ev->kind = (uint8_t)(mk >= 0 ? mk : t->memkind > 0 ? t->memkind : XPV_KIND_MEMCPY_OTHER);
    else if (stream && names_memset(name)) /* "Memset 0" on a Memset,MemcpyD2D stream */
        ev->kind = XPV_KIND_MEMSET;
    else if (stream && mk >= 0)
        ev->kind = (uint8_t)mk;
    else if (t->tclass == TC_MEMCPY_STREAM)
        ev->kind = (uint8_t)t->memkind;
    else if (t->tclass == TC_MEMSET_STREAM)
        ev->kind = XPV_KIND_MEMSET;
    else if (t->tclass == TC_STREAM && t->has_kernel)
        jax_kernel(r, ev, k, l);
    else if (t->tclass == TC_XLA_OPS)
        ev->kind = XPV_KIND_XLA_OP;
    else if (t->tclass == TC_XLA_MODULES)
        ev->kind = XPV_KIND_XLA_MODULE;
    else if (t->tclass == TC_STEPS) {
        ev->kind = XPV_KIND_STEP;
        ev->step_src = XPV_STEP_STEPS_LINE;
        xpv_cj_member nm = {.type = JV_STR, .val = *name};
        if (member_int(r, &nm, &v) == 0) ev->step = v;
    } else
        ev->kind = XPV_KIND_DEVICE_OTHER;
    if (k->correlation_id && member_int(r, k->correlation_id, &v) == 0) ev->corr = v;
}

/* A TensorFlow device row: the process's name says what its events are. */
static void classify_tf_row(xpv_cj_reader *r, xpv_event *ev, const xpv_cj_str *name,
                            const xpv_cj_known_args *k, const xpv_cj_proc *p, xpv_launch *l)
{
    int mk = memcpy_kind_of(name->s, name->len);
    int exec_kernels = p->pclass == PC_TF_EXECUTOR &&
                       !(p->device >= 0 && p->device < 64 && r->tf_stream_devices[p->device]);
    if (p->pclass == PC_TF_STREAM || p->pclass == PC_TF_MEMCPY || exec_kernels) {
        if (xpv_cj_starts_with(name, "MEMCPY") || xpv_cj_starts_with(name, "Memcpy") ||
            p->pclass == PC_TF_MEMCPY)
            ev->kind = (uint8_t)(mk >= 0 ? mk : XPV_KIND_MEMCPY_OTHER);
        else {
            ev->kind = XPV_KIND_KERNEL;
            l->op = text_id(r, k->name);
            if (!l->op) l->op = text_id(r, k->op);
            ev->launch = l;
        }
    } else {
        ev->kind = XPV_KIND_DEVICE_OTHER;
    }
}

void xpv_cj_classify(xpv_cj_reader *r, xpv_event *ev, const xpv_cj_str *cat, const xpv_cj_str *name,
                     const xpv_cj_known_args *k, xpv_cj_proc *p, const xpv_cj_track *t,
                     xpv_launch *l)
{
    int64_t v;
    int src;
    xpv_launch_init(l);
    if (xpv_cj_starts_with(name, "ProfilerStep#")) {
        xpv_cj_member nm = {.type = JV_STR, .val = {name->s + 13, name->len - 13, 0}};
        r->pytorch_hint = 1;
        if (member_int(r, &nm, &v) == 0) {
            ev->kind = XPV_KIND_STEP;
            ev->step = v;
            ev->step_src = XPV_STEP_PROFILER_STEP;
            return;
        }
    }
    if (!classify_pytorch(r, ev, cat, name, k, p, l)) {
        if (p->pclass == PC_JAX_DEVICE) {
            classify_jax_row(r, ev, name, k, t, l);
        } else if (p->pclass != PC_HOST && p->pclass != PC_TF_OTHER) {
            classify_tf_row(r, ev, name, k, p, l);
        } else if (k->kernel_details) {
            jax_kernel(r, ev, k, l);
        } else if (k->step_num && member_int(r, k->step_num, &v) == 0) {
            ev->kind = XPV_KIND_STEP;
            ev->step = v;
            ev->step_src = XPV_STEP_ANNOTATION;
        } else if ((src = xpv_step_name_source(name->s, name->len, &v)) != 0) {
            ev->kind = XPV_KIND_STEP; /* a weaker source: used without ProfilerStep#N */
            ev->step = v;
            ev->step_src = (uint8_t)src;
        } else if (k->correlation_id && member_int(r, k->correlation_id, &v) == 0) {
            ev->kind = XPV_KIND_LAUNCH;
            ev->corr = v;
        }
    }
    if (ev->step < 0 && k->group_id && member_int(r, k->group_id, &v) == 0) ev->step = v;
}

/* ---- the end ---- */

const char *xpv_cj_producer(const xpv_cj_reader *r)
{
    if (r->pytorch_hint) return "PyTorch";
    if (r->tf_hint) return "TensorFlow";
    if (r->jax_hint || (r->ns_unit && r->highres)) return "JAX/XLA";
    return "unknown";
}

void xpv_cj_tables_free(xpv_cj_reader *r)
{
    for (size_t i = 0; i < r->nstr_ids; i++)
        free(r->str_ids[i]);
    free(r->str_ids);
    free(r->tracks);
    free(r->procs);
    xpv_hindex_free(&r->proc_index);
}
