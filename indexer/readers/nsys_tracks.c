/*
 * nsys_tracks.c — what the parts of the nsys reader share (nsys_reader.h):
 * the GPU and host tracks, named on first use, a row step that names its
 * table on error, and clamped durations. The entry points
 * (nsys_sqlite_reader.c) run the table readers (nsys_gpu.c, nsys_host.c),
 * which call these, so they sit below both.
 */
#include "nsys_reader.h"

#include <stdio.h>
#include <string.h>

int xpv_nsys_step(xpv_nsys *x, sqlite3_stmt *st, const char *table, xpv_err *err)
{
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW || rc == SQLITE_DONE) return rc;
    return xpv_err_set(err, "reading %s: %s", table, sqlite3_errmsg(x->db));
}

int64_t xpv_nsys_duration(xpv_nsys *x, int64_t start, int64_t end)
{
    if (end >= start) return end - start;
    x->negative_durations++;
    return 0;
}

/* 1 the first time track id is seen (so it gets named once). */
static int first_use(xpv_nsys *x, uint32_t track)
{
    if (track >= x->named_cap) {
        size_t cap = x->named_cap ? x->named_cap : 64;
        while (cap <= track)
            cap *= 2;
        x->named_tracks = xpv_xrealloc(x->named_tracks, cap);
        memset(x->named_tracks + x->named_cap, 0, cap - x->named_cap);
        x->named_cap = cap;
    }
    if (x->named_tracks[track]) return 0;
    x->named_tracks[track] = 1;
    return 1;
}

static void name_gpu(xpv_nsys *x, int64_t device)
{
    int64_t pid = XPV_NSYS_GPU_PID_BASE + device;
    const char *model = device >= 0 && (size_t)device < x->ngpu_names ? x->gpu_names[device] : NULL;
    char name[320];
    if (model)
        snprintf(name, sizeof name, "GPU %lld (%s)", (long long)device, model);
    else
        snprintf(name, sizeof name, "GPU %lld", (long long)device);
    xpv_sink_process_name(x->sink, pid, name, strlen(name));
    xpv_sink_process_device(x->sink, pid, (int)device);
    xpv_sink_process_sort(x->sink, pid, XPV_NSYS_GPU_SORT_BASE + device);
    if (device >= 0 && device < 65536) {
        if ((size_t)device >= x->gpu_used_cap) {
            size_t cap = (size_t)device + 1;
            x->gpu_used = xpv_xrealloc(x->gpu_used, cap);
            memset(x->gpu_used + x->gpu_used_cap, 0, cap - x->gpu_used_cap);
            x->gpu_used_cap = cap;
        }
        x->gpu_used[device] = 1;
    }
}

uint32_t xpv_nsys_gpu_track(xpv_nsys *x, int64_t device, int64_t stream, int64_t global_pid)
{
    int64_t pid = XPV_NSYS_GPU_PID_BASE + device, tid = stream;
    int by_process = x->multi_process && global_pid >= 0;
    if (by_process) tid = xpv_nsys_pid_of(global_pid) * XPV_NSYS_STREAM_PID_SCALE + stream;
    uint32_t track = xpv_sink_track(x->sink, pid, tid);
    if (first_use(x, track)) {
        char name[80];
        if (by_process)
            snprintf(name, sizeof name, "Stream %lld (pid %lld)", (long long)stream,
                     (long long)xpv_nsys_pid_of(global_pid));
        else
            snprintf(name, sizeof name, "Stream %lld", (long long)stream);
        xpv_sink_thread_name(x->sink, pid, tid, name, strlen(name));
        xpv_sink_thread_sort(x->sink, pid, tid, tid);
        int gpu_named = device >= 0 && (size_t)device < x->gpu_used_cap && x->gpu_used[device];
        if (!gpu_named) name_gpu(x, device);
    }
    return track;
}

uint32_t xpv_nsys_host_track(xpv_nsys *x, int64_t global_tid)
{
    int64_t pid = xpv_nsys_pid_of(global_tid), tid = xpv_nsys_tid_of(global_tid);
    uint32_t track = xpv_sink_track(x->sink, pid, tid);
    if (first_use(x, track)) {
        if (x->nhost == x->host_cap) {
            x->host_cap = x->host_cap ? x->host_cap * 2 : 16;
            x->host_tids = xpv_xrealloc(x->host_tids, x->host_cap * sizeof *x->host_tids);
        }
        x->host_tids[x->nhost++] = global_tid;
        xpv_sink_thread_sort(x->sink, pid, tid, tid == pid ? 0 : tid);
        xpv_sink_process_sort(x->sink, pid, 0);
    }
    return track;
}
