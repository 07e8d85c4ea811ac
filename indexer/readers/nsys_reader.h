/*
 * nsys_reader.h — state shared by the parts of the Nsight Systems export
 * reader: nsys_sqlite_reader.c (entry points, facts, names), nsys_gpu.c
 * (kernels, memcpy, memset), nsys_host.c (CUDA API calls, NVTX) and,
 * below those, nsys_tracks.c (tracks, row steps, durations).
 *
 * Track layout:
 *  - GPU activity: pid = XPV_NSYS_GPU_PID_BASE + deviceId (marked as device
 *    deviceId, named "GPU N (<name>)"), tid = streamId ("Stream N"). When
 *    the export holds CUDA streams of several processes (one report of an
 *    MPI job), stream numbers repeat across processes, so then
 *    tid = pid * XPV_NSYS_STREAM_PID_SCALE + streamId ("Stream N (pid P)");
 *  - host activity: pid and tid decoded from nsys' globalTid
 *    ((pid << 24) | tid, higher bits hold hardware/VM ids), named from the
 *    PROCESSES and ThreadNames tables after all events are read.
 */
#ifndef XPV_NSYS_READER_H
#define XPV_NSYS_READER_H

#include "nsys_db.h"

/* 1 when the SQLite file at path is an `nsys export` (has its tables),
 * 0 otherwise: a SQLite file that is not an nsys export is not claimed. */
int xpv_nsys_sniff(const char *path);

#define XPV_NSYS_GPU_PID_BASE 1000000000LL
#define XPV_NSYS_STREAM_PID_SCALE 1000000LL
/* Host processes sort first (sort index 0), then GPUs by ordinal. */
#define XPV_NSYS_GPU_SORT_BASE 1000000LL

static inline int64_t xpv_nsys_tid_of(int64_t global_tid)
{
    return global_tid & 0xFFFFFF;
}
static inline int64_t xpv_nsys_pid_of(int64_t global_id)
{
    return (global_id >> 24) & 0xFFFFFF;
}

typedef struct {
    sqlite3 *db;
    xpv_sink *sink;
    xpv_nsys_strings strings;
    unsigned char *named_tracks; /* track id -> 1 once named */
    size_t named_cap;
    int64_t *host_tids; /* globalTids with a host track, for naming */
    size_t nhost, host_cap;
    char **gpu_names; /* device ordinal -> name from TARGET_INFO_*, or NULL */
    size_t ngpu_names;
    unsigned char *gpu_used; /* device ordinal -> 1 once it has a track */
    size_t gpu_used_cap;
    int64_t negative_durations; /* rows with end < start, stored as 0 */
    int multi_process;          /* CUDA streams of more than one process */
} xpv_nsys;

/* Sink id of a key/name given as a C string (interned on each call: use
 * for per-table constants, not per row). */
static inline uint32_t xpv_nsys_intern(xpv_nsys *x, const char *s)
{
    return xpv_sink_intern_cstr(x->sink, s);
}

/* Track of GPU `device`, stream `stream` of the process with nsys
 * globalPid `global_pid` (-1 unknown); names it on first use. */
uint32_t xpv_nsys_gpu_track(xpv_nsys *x, int64_t device, int64_t stream, int64_t global_pid);
/* Track of host thread `global_tid`; remembered for naming. */
uint32_t xpv_nsys_host_track(xpv_nsys *x, int64_t global_tid);
/* Duration end - start, counting and clamping a negative one to 0. */
int64_t xpv_nsys_duration(xpv_nsys *x, int64_t start, int64_t end);

/* Table readers: each reads its table if it exists (a missing table is
 * empty) and returns 0, or -1 with err on a SQLite error. */
int xpv_nsys_read_kernels(xpv_nsys *x, xpv_err *err);
int xpv_nsys_read_memcpy(xpv_nsys *x, xpv_err *err);
int xpv_nsys_read_memset(xpv_nsys *x, xpv_err *err);
int xpv_nsys_read_runtime(xpv_nsys *x, xpv_err *err);
int xpv_nsys_read_nvtx(xpv_nsys *x, xpv_err *err);

/* Names of the tables the readers above consume (for the skipped count). */
extern const char *const xpv_nsys_read_tables[];

/* Steps through st, returning SQLITE_ROW/SQLITE_DONE, or -1 with err
 * naming the table on any other result. */
int xpv_nsys_step(xpv_nsys *x, sqlite3_stmt *st, const char *table, xpv_err *err);

#endif
