/*
 * nsys_gpu.c — GPU activity of an nsys export: CUPTI_ACTIVITY_KIND_KERNEL,
 * _MEMCPY and _MEMSET rows become events on the (deviceId, streamId) track.
 *
 * Kernels are named by their demangled name (what `nsys stats
 * cuda_gpu_kern_sum` groups by), falling back to the short name, then to
 * an older `name` column; the other names, the launch shape and the ids go
 * into args. Durations are end - start in integer ns; dur_ps = dur_ns * 1000.
 * Launch fields a version lacks stay -1 (unknown), never 0.
 */
#include "nsys_reader.h"

#include <stdio.h>

enum {
    K_START,
    K_END,
    K_DEVICE,
    K_STREAM,
    K_CONTEXT,
    K_CORR,
    K_GPID,
    K_DEMANGLED,
    K_SHORT,
    K_MANGLED,
    K_NAME,
    K_REGS,
    K_GX,
    K_GY,
    K_GZ,
    K_BX,
    K_BY,
    K_BZ,
    K_SSHM,
    K_DSHM,
    K_GRAPH,
    K_NCOLS
};

static const char *const kernel_cols[K_NCOLS] = {"start",
                                                 "end",
                                                 "deviceId",
                                                 "streamId",
                                                 "contextId",
                                                 "correlationId",
                                                 "globalPid",
                                                 "demangledName",
                                                 "shortName",
                                                 "mangledName",
                                                 "name",
                                                 "registersPerThread",
                                                 "gridX",
                                                 "gridY",
                                                 "gridZ",
                                                 "blockX",
                                                 "blockY",
                                                 "blockZ",
                                                 "staticSharedMemory",
                                                 "dynamicSharedMemory",
                                                 "graphNodeId"};

static const char *const time_cols[] = {"start", "end", NULL};

typedef struct {
    uint32_t cat, short_name, mangled, grid, block, regs, sshm, dshm, corr, graph, device, stream,
        context, pid;
} kernel_keys;

static int64_t int_or(sqlite3_stmt *st, int col, int64_t dflt)
{
    return sqlite3_column_type(st, col) == SQLITE_NULL ? dflt : sqlite3_column_int64(st, col);
}

static int32_t int32_or_unknown(sqlite3_stmt *st, int col)
{
    int64_t v = int_or(st, col, -1);
    return v >= 0 && v <= INT32_MAX ? (int32_t)v : -1;
}

static void add_int(xpv_arg *args, uint32_t *n, uint32_t key, int64_t v)
{
    xpv_arg *a = &args[(*n)++];
    a->key = key;
    a->type = XPV_ARG_INT;
    a->v.i = v;
    a->text = NULL;
    a->len = 0;
}

static void add_int_col(xpv_arg *args, uint32_t *n, uint32_t key, sqlite3_stmt *st, int col)
{
    if (sqlite3_column_type(st, col) != SQLITE_NULL)
        add_int(args, n, key, sqlite3_column_int64(st, col));
}

static void add_str(xpv_arg *args, uint32_t *n, uint32_t key, uint32_t str)
{
    if (!str) return;
    xpv_arg *a = &args[(*n)++];
    a->key = key;
    a->type = XPV_ARG_STR;
    a->v.str = str;
    a->text = NULL;
    a->len = 0;
}

/* A dim3 as a JSON array, the way PyTorch traces write grid and block. */
static void add_dim3(xpv_arg *args, uint32_t *n, uint32_t key, const int32_t d[3], char *buf,
                     size_t bufsz)
{
    if (d[0] < 0 && d[1] < 0 && d[2] < 0) return;
    int len = snprintf(buf, bufsz, "[%d, %d, %d]", d[0], d[1], d[2]);
    xpv_arg *a = &args[(*n)++];
    a->key = key;
    a->type = XPV_ARG_JSON;
    a->text = buf;
    a->len = (uint32_t)len;
}

static void kernel_keys_init(xpv_nsys *x, kernel_keys *k)
{
    k->cat = xpv_nsys_intern(x, "kernel");
    k->short_name = xpv_nsys_intern(x, "shortName");
    k->mangled = xpv_nsys_intern(x, "mangledName");
    k->grid = xpv_nsys_intern(x, "grid");
    k->block = xpv_nsys_intern(x, "block");
    k->regs = xpv_nsys_intern(x, "registersPerThread");
    k->sshm = xpv_nsys_intern(x, "staticSharedMemory");
    k->dshm = xpv_nsys_intern(x, "dynamicSharedMemory");
    k->corr = xpv_nsys_intern(x, "correlationId");
    k->graph = xpv_nsys_intern(x, "graphNodeId");
    k->device = xpv_nsys_intern(x, "device");
    k->stream = xpv_nsys_intern(x, "stream");
    k->context = xpv_nsys_intern(x, "context");
    k->pid = xpv_nsys_intern(x, "pid");
}

static void kernel_launch(sqlite3_stmt *st, xpv_launch *l)
{
    xpv_launch_init(l);
    for (int i = 0; i < 3; i++) {
        l->grid[i] = int32_or_unknown(st, K_GX + i);
        l->block[i] = int32_or_unknown(st, K_BX + i);
    }
    l->registers_per_thread = int32_or_unknown(st, K_REGS);
    l->static_shared_bytes = int32_or_unknown(st, K_SSHM);
    l->dynamic_shared_bytes = int32_or_unknown(st, K_DSHM);
}

/* The kernel's display name: demangled, else short, else the old `name`. */
static uint32_t kernel_name(xpv_nsys *x, sqlite3_stmt *st, uint32_t *short_name)
{
    *short_name = xpv_nsys_strings_column(&x->strings, st, K_SHORT);
    uint32_t name = xpv_nsys_strings_column(&x->strings, st, K_DEMANGLED);
    if (!name) name = *short_name;
    if (!name) name = xpv_nsys_strings_column(&x->strings, st, K_NAME);
    return name;
}

/* Where, in a row of one activity table, the columns every GPU activity
 * has are. */
typedef struct {
    int start, end, device, stream, gpid, corr;
} gpu_cols;

/* Fills what every GPU activity row shares: times, the (device, stream)
 * track, category and correlation id; hands back device and stream. */
static void gpu_row_head(xpv_nsys *x, sqlite3_stmt *st, const gpu_cols *c, uint32_t cat,
                         xpv_event *ev, int64_t *device, int64_t *stream)
{
    xpv_event_init(ev);
    int64_t start = sqlite3_column_int64(st, c->start);
    *device = int_or(st, c->device, 0);
    *stream = int_or(st, c->stream, 0);
    ev->ts_ns = start;
    ev->dur_ns = xpv_nsys_duration(x, start, sqlite3_column_int64(st, c->end));
    ev->dur_ps = ev->dur_ns * 1000;
    ev->track = xpv_nsys_gpu_track(x, *device, *stream, int_or(st, c->gpid, -1));
    ev->cat = cat;
    ev->corr = int_or(st, c->corr, -1);
}

static void kernel_row(xpv_nsys *x, const kernel_keys *k, sqlite3_stmt *st)
{
    static const gpu_cols cols = {K_START, K_END, K_DEVICE, K_STREAM, K_GPID, K_CORR};
    xpv_launch launch;
    xpv_arg args[16];
    uint32_t n = 0;
    char grid[48], block[48];
    xpv_event ev;
    int64_t device, stream;
    gpu_row_head(x, st, &cols, k->cat, &ev, &device, &stream);
    ev.kind = XPV_KIND_KERNEL;
    uint32_t short_name;
    ev.name = kernel_name(x, st, &short_name);
    kernel_launch(st, &launch);
    ev.launch = &launch;
    if (short_name != ev.name) add_str(args, &n, k->short_name, short_name);
    add_str(args, &n, k->mangled, xpv_nsys_strings_column(&x->strings, st, K_MANGLED));
    add_dim3(args, &n, k->grid, launch.grid, grid, sizeof grid);
    add_dim3(args, &n, k->block, launch.block, block, sizeof block);
    add_int_col(args, &n, k->regs, st, K_REGS);
    add_int_col(args, &n, k->sshm, st, K_SSHM);
    add_int_col(args, &n, k->dshm, st, K_DSHM);
    add_int_col(args, &n, k->corr, st, K_CORR);
    add_int_col(args, &n, k->graph, st, K_GRAPH);
    add_int(args, &n, k->device, device);
    add_int(args, &n, k->stream, stream);
    add_int_col(args, &n, k->context, st, K_CONTEXT);
    if (sqlite3_column_type(st, K_GPID) != SQLITE_NULL)
        add_int(args, &n, k->pid, xpv_nsys_pid_of(sqlite3_column_int64(st, K_GPID)));
    ev.args = args;
    ev.nargs = n;
    xpv_sink_event(x->sink, &ev);
}

int xpv_nsys_read_kernels(xpv_nsys *x, xpv_err *err)
{
    static const char table[] = "CUPTI_ACTIVITY_KIND_KERNEL";
    sqlite3_stmt *st;
    if (xpv_nsys_db_select(x->db, table, kernel_cols, K_NCOLS, time_cols, NULL, &st, err) != 0)
        return -1;
    if (!st) return 0;
    kernel_keys keys;
    kernel_keys_init(x, &keys);
    int rc;
    while ((rc = xpv_nsys_step(x, st, table, err)) == SQLITE_ROW)
        kernel_row(x, &keys, st);
    sqlite3_finalize(st);
    return rc < 0 ? -1 : 0;
}

/* ---- memcpy and memset ---- */

enum { M_START, M_END, M_DEVICE, M_STREAM, M_CORR, M_BYTES, M_KIND, M_VALUE, M_GPID, M_NCOLS };

static const char *const memory_cols[M_NCOLS] = {"start",    "end",           "deviceId",
                                                 "streamId", "correlationId", "bytes",
                                                 "copyKind", "value",         "globalPid"};

/* CUPTI_ActivityMemcpyKind values, as nsys stores them in copyKind. */
static const char *copy_kind_label(int64_t kind)
{
    static const char *const labels[] = {"Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                         "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP"};
    return kind >= 0 && kind <= 10 ? labels[kind] : "Unknown";
}

static uint8_t copy_kind_to_event_kind(int64_t kind)
{
    switch (kind) {
    case 1:
        return XPV_KIND_MEMCPY_H2D;
    case 2:
        return XPV_KIND_MEMCPY_D2H;
    case 8:
        return XPV_KIND_MEMCPY_D2D;
    default:
        return XPV_KIND_MEMCPY_OTHER;
    }
}

typedef struct {
    uint32_t cat, bytes, copy_kind, value, corr, device, stream;
    uint32_t names[11]; /* "[CUDA memcpy <kind>]" by copyKind */
    uint32_t memset_name;
    int is_memset;
} memory_keys;

static void memory_keys_init(xpv_nsys *x, memory_keys *k, int is_memset)
{
    k->is_memset = is_memset;
    k->cat = xpv_nsys_intern(x, is_memset ? "gpu_memset" : "gpu_memcpy");
    k->bytes = xpv_nsys_intern(x, "bytes");
    k->copy_kind = xpv_nsys_intern(x, "copyKind");
    k->value = xpv_nsys_intern(x, "value");
    k->corr = xpv_nsys_intern(x, "correlationId");
    k->device = xpv_nsys_intern(x, "device");
    k->stream = xpv_nsys_intern(x, "stream");
    k->memset_name = xpv_nsys_intern(x, "[CUDA memset]");
    for (int i = 0; i <= 10; i++) {
        char name[40];
        snprintf(name, sizeof name, "[CUDA memcpy %s]", copy_kind_label(i));
        k->names[i] = xpv_nsys_intern(x, name);
    }
}

static void memory_row(xpv_nsys *x, const memory_keys *k, sqlite3_stmt *st)
{
    static const gpu_cols cols = {M_START, M_END, M_DEVICE, M_STREAM, M_GPID, M_CORR};
    xpv_arg args[8];
    uint32_t n = 0;
    xpv_event ev;
    int64_t device, stream;
    gpu_row_head(x, st, &cols, k->cat, &ev, &device, &stream);
    if (k->is_memset) {
        ev.kind = XPV_KIND_MEMSET;
        ev.name = k->memset_name;
        add_int_col(args, &n, k->value, st, M_VALUE);
    } else {
        int64_t kind = int_or(st, M_KIND, 0);
        ev.kind = copy_kind_to_event_kind(kind);
        ev.name = k->names[kind >= 0 && kind <= 10 ? kind : 0];
        add_int_col(args, &n, k->copy_kind, st, M_KIND);
    }
    add_int_col(args, &n, k->bytes, st, M_BYTES);
    add_int_col(args, &n, k->corr, st, M_CORR);
    add_int(args, &n, k->device, device);
    add_int(args, &n, k->stream, stream);
    ev.args = args;
    ev.nargs = n;
    xpv_sink_event(x->sink, &ev);
}

static int read_memory(xpv_nsys *x, const char *table, int is_memset, xpv_err *err)
{
    sqlite3_stmt *st;
    if (xpv_nsys_db_select(x->db, table, memory_cols, M_NCOLS, time_cols, NULL, &st, err) != 0)
        return -1;
    if (!st) return 0;
    memory_keys keys;
    memory_keys_init(x, &keys, is_memset);
    int rc;
    while ((rc = xpv_nsys_step(x, st, table, err)) == SQLITE_ROW)
        memory_row(x, &keys, st);
    sqlite3_finalize(st);
    return rc < 0 ? -1 : 0;
}

int xpv_nsys_read_memcpy(xpv_nsys *x, xpv_err *err)
{
    return read_memory(x, "CUPTI_ACTIVITY_KIND_MEMCPY", 0, err);
}

int xpv_nsys_read_memset(xpv_nsys *x, xpv_err *err)
{
    return read_memory(x, "CUPTI_ACTIVITY_KIND_MEMSET", 1, err);
}
