/*
 * nsys_host.c — host activity of an nsys export: CUDA runtime/driver calls
 * (CUPTI_ACTIVITY_KIND_RUNTIME) and NVTX annotations (NVTX_EVENTS), on the
 * track of the calling thread.
 *
 * CUDA API calls are XPV_KIND_LAUNCH with corr = correlationId, which links
 * them to the kernels and copies they started.
 *
 * NVTX: push/pop (eventType 59) and start/end (60) ranges are slices on the
 * thread that opened them; marks (34) are instants. A range without an end
 * (the process stopped inside it) is kept as an instant at its start with
 * arg unterminated=1, never as a slice of made-up length and never as a
 * step. A complete range whose name carries a step number (see
 * nsys_step_name.h) is an XPV_KIND_STEP event with that number. Other
 * eventTypes (domain and category definitions, thread names) are not
 * timeline events: counted as skipped ("NVTX_EVENTS metadata").
 */
#include "nsys_reader.h"
#include "nsys_step_name.h"

enum { NVTX_MARK = 34, NVTX_PUSH_POP = 59, NVTX_START_END = 60 };

static int64_t int_or(sqlite3_stmt *st, int col, int64_t dflt)
{
    return sqlite3_column_type(st, col) == SQLITE_NULL ? dflt : sqlite3_column_int64(st, col);
}

static void set_int_arg(xpv_arg *a, uint32_t key, int64_t v)
{
    a->key = key;
    a->type = XPV_ARG_INT;
    a->v.i = v;
    a->text = NULL;
    a->len = 0;
}

/* ---- CUDA runtime / driver API ---- */

enum { R_START, R_END, R_TID, R_CORR, R_NAMEID, R_NAME, R_RET, R_NCOLS };

static const char *const runtime_cols[R_NCOLS] = {"start",  "end",  "globalTid",  "correlationId",
                                                  "nameId", "name", "returnValue"};
static const char *const runtime_required[] = {"start", "end", "globalTid", NULL};

int xpv_nsys_read_runtime(xpv_nsys *x, xpv_err *err)
{
    static const char table[] = "CUPTI_ACTIVITY_KIND_RUNTIME";
    sqlite3_stmt *st;
    if (xpv_nsys_db_select(x->db, table, runtime_cols, R_NCOLS, runtime_required, NULL, &st, err) !=
        0)
        return -1;
    if (!st) return 0;
    uint32_t cat = xpv_nsys_intern(x, "cuda_api");
    uint32_t k_corr = xpv_nsys_intern(x, "correlationId");
    uint32_t k_ret = xpv_nsys_intern(x, "returnValue");
    int rc;
    while ((rc = xpv_nsys_step(x, st, table, err)) == SQLITE_ROW) {
        xpv_arg args[2];
        uint32_t n = 0;
        xpv_event ev;
        xpv_event_init(&ev);
        ev.ts_ns = sqlite3_column_int64(st, R_START);
        ev.dur_ns = xpv_nsys_duration(x, ev.ts_ns, sqlite3_column_int64(st, R_END));
        ev.dur_ps = ev.dur_ns * 1000;
        ev.track = xpv_nsys_host_track(x, sqlite3_column_int64(st, R_TID));
        ev.kind = XPV_KIND_LAUNCH;
        ev.cat = cat;
        ev.corr = int_or(st, R_CORR, -1);
        ev.name = xpv_nsys_strings_column(&x->strings, st, R_NAMEID);
        if (!ev.name) ev.name = xpv_nsys_strings_column(&x->strings, st, R_NAME);
        if (ev.corr >= 0) set_int_arg(&args[n++], k_corr, ev.corr);
        if (sqlite3_column_type(st, R_RET) != SQLITE_NULL)
            set_int_arg(&args[n++], k_ret, sqlite3_column_int64(st, R_RET));
        ev.args = args;
        ev.nargs = n;
        xpv_sink_event(x->sink, &ev);
    }
    sqlite3_finalize(st);
    return rc < 0 ? -1 : 0;
}

/* ---- NVTX ---- */

enum { N_START, N_END, N_TYPE, N_TEXT, N_TEXTID, N_TID, N_END_TID, N_DOMAIN, N_NCOLS };

static const char *const nvtx_cols[N_NCOLS] = {"start",  "end",       "eventType",    "text",
                                               "textId", "globalTid", "endGlobalTid", "domainId"};
static const char *const nvtx_required[] = {"start", "eventType", NULL};

typedef struct {
    uint32_t cat, domain, unterminated;
} nvtx_keys;

/* The thread an NVTX row belongs to: its opener, else its closer; -1 none. */
static int64_t nvtx_thread(sqlite3_stmt *st)
{
    int64_t tid = int_or(st, N_TID, -1);
    return tid >= 0 ? tid : int_or(st, N_END_TID, -1);
}

static void nvtx_row(xpv_nsys *x, const nvtx_keys *k, sqlite3_stmt *st)
{
    int64_t type = sqlite3_column_int64(st, N_TYPE);
    int64_t global_tid = nvtx_thread(st);
    if (type != NVTX_MARK && type != NVTX_PUSH_POP && type != NVTX_START_END) {
        xpv_sink_skipped(x->sink, "NVTX_EVENTS metadata");
        return;
    }
    if (global_tid < 0) {
        xpv_sink_skipped(x->sink, "NVTX_EVENTS without a thread");
        return;
    }
    xpv_arg args[2];
    uint32_t n = 0;
    xpv_event ev;
    xpv_event_init(&ev);
    ev.ts_ns = sqlite3_column_int64(st, N_START);
    ev.track = xpv_nsys_host_track(x, global_tid);
    ev.cat = k->cat;
    ev.name = xpv_nsys_strings_column(&x->strings, st, N_TEXT);
    if (!ev.name) ev.name = xpv_nsys_strings_column(&x->strings, st, N_TEXTID);
    int64_t domain = int_or(st, N_DOMAIN, 0);
    if (domain != 0) set_int_arg(&args[n++], k->domain, domain);
    int has_end = sqlite3_column_type(st, N_END) != SQLITE_NULL;
    if (type == NVTX_MARK || !has_end) {
        ev.ph = 'i';
        if (type != NVTX_MARK) set_int_arg(&args[n++], k->unterminated, 1);
    } else {
        ev.dur_ns = xpv_nsys_duration(x, ev.ts_ns, sqlite3_column_int64(st, N_END));
        ev.dur_ps = ev.dur_ns * 1000;
        size_t len = 0;
        const char *name = xpv_sink_string(x->sink, ev.name, &len);
        if (xpv_nsys_step_number(name, len, &ev.step)) {
            ev.kind = XPV_KIND_STEP;
            ev.step_src = XPV_STEP_NVTX;
        }
    }
    ev.args = args;
    ev.nargs = n;
    xpv_sink_event(x->sink, &ev);
}

int xpv_nsys_read_nvtx(xpv_nsys *x, xpv_err *err)
{
    static const char table[] = "NVTX_EVENTS";
    sqlite3_stmt *st;
    if (xpv_nsys_db_select(x->db, table, nvtx_cols, N_NCOLS, nvtx_required, NULL, &st, err) != 0)
        return -1;
    if (!st) return 0;
    nvtx_keys keys = {xpv_nsys_intern(x, "nvtx"), xpv_nsys_intern(x, "domainId"),
                      xpv_nsys_intern(x, "unterminated")};
    int rc;
    while ((rc = xpv_nsys_step(x, st, table, err)) == SQLITE_ROW)
        nvtx_row(x, &keys, st);
    sqlite3_finalize(st);
    return rc < 0 ? -1 : 0;
}
