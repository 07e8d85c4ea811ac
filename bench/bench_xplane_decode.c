/*
 * bench_xplane_decode.c — the xplane reader alone: decodes a file into a
 * sink that only interns strings and counts events (defined here, so the
 * real sink, event store and analysis are not linked in). Shows what share
 * of the full ingest (run_xplane_ingest.sh) is the reader's.
 * usage: bench_xplane_decode FILE.xplane.pb
 * prints: decode_events=, decode_seconds=, decode_events_per_s=, decode_mb_per_s=
 */
#include "indexer/readers/readers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- a counting sink ---- */

static struct {
    char **strs;
    size_t nstrs, cap;
    uint32_t *slots;
    size_t nslots;
    long long events, args, kernels, skipped;
} sink;

uint32_t xpv_sink_intern(xpv_sink *s, const char *str, size_t len)
{
    (void)s;
    if (len == 0) return 0;
    if (sink.nstrs * 2 >= sink.nslots) { /* grow and rehash */
        size_t n = sink.nslots ? sink.nslots * 2 : 4096;
        uint32_t *slots = xpv_xcalloc(n, sizeof *slots);
        for (size_t id = 1; id < sink.nstrs; id++) {
            size_t h = xpv_hash64(sink.strs[id], strlen(sink.strs[id])) & (n - 1);
            while (slots[h])
                h = (h + 1) & (n - 1);
            slots[h] = (uint32_t)id;
        }
        free(sink.slots);
        sink.slots = slots;
        sink.nslots = n;
    }
    size_t h = xpv_hash64(str, len) & (sink.nslots - 1);
    for (; sink.slots[h]; h = (h + 1) & (sink.nslots - 1)) {
        const char *s2 = sink.strs[sink.slots[h]];
        if (strncmp(s2, str, len) == 0 && s2[len] == 0) return sink.slots[h];
    }
    if (sink.nstrs == sink.cap) {
        sink.cap = sink.cap ? sink.cap * 2 : 1024;
        sink.strs = xpv_xrealloc(sink.strs, sink.cap * sizeof *sink.strs);
        if (sink.nstrs == 0) sink.strs[sink.nstrs++] = xpv_xstrdup("");
    }
    sink.strs[sink.nstrs] = xpv_xstrndup(str, len);
    sink.slots[h] = (uint32_t)sink.nstrs;
    return (uint32_t)sink.nstrs++;
}

uint32_t xpv_sink_intern_value(xpv_sink *s, const char *str, size_t len)
{
    return len <= 256 ? xpv_sink_intern(s, str, len) : 0;
}

const char *xpv_sink_string(xpv_sink *s, uint32_t id, size_t *len)
{
    (void)s;
    const char *v = id < sink.nstrs ? sink.strs[id] : "";
    if (len) *len = strlen(v);
    return v;
}

uint32_t xpv_sink_track(xpv_sink *s, int64_t pid, int64_t tid)
{
    (void)s;
    return (uint32_t)((uint64_t)(pid * 1000003 + tid) & 0xFFFF);
}

void xpv_sink_process_name(xpv_sink *s, int64_t pid, const char *n, size_t l)
{
    (void)s, (void)pid, (void)n, (void)l;
}
void xpv_sink_process_sort(xpv_sink *s, int64_t pid, int64_t i)
{
    (void)s, (void)pid, (void)i;
}
void xpv_sink_process_label(xpv_sink *s, int64_t pid, const char *n, size_t l)
{
    (void)s, (void)pid, (void)n, (void)l;
}
void xpv_sink_process_device(xpv_sink *s, int64_t pid, int d)
{
    (void)s, (void)pid, (void)d;
}
void xpv_sink_thread_name(xpv_sink *s, int64_t pid, int64_t tid, const char *n, size_t l)
{
    (void)s, (void)pid, (void)tid, (void)n, (void)l;
}
void xpv_sink_thread_sort(xpv_sink *s, int64_t pid, int64_t tid, int64_t i)
{
    (void)s, (void)pid, (void)tid, (void)i;
}
void xpv_sink_event(xpv_sink *s, const xpv_event *ev)
{
    (void)s;
    sink.events++;
    sink.args += ev->nargs;
    sink.kernels += ev->kind == XPV_KIND_KERNEL;
}
void xpv_sink_device_work_done(xpv_sink *s)
{
    (void)s;
}
void xpv_sink_fact(xpv_sink *s, const char *k, const char *v)
{
    (void)s, (void)k, (void)v;
}
void xpv_sink_skipped(xpv_sink *s, const char *what)
{
    (void)s, (void)what, sink.skipped++;
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

int main(int argc, char **argv)
{
    if (argc != 2) return fprintf(stderr, "usage: bench_xplane_decode FILE.xplane.pb\n"), 2;
    struct stat st;
    if (stat(argv[1], &st) != 0) return perror(argv[1]), 1;
    xpv_err err = {{0}};
    double t0 = xpv_now_mono();
    if (xpv_reader_for(XPV_FMT_XPLANE)(argv[1], (xpv_sink *)&sink, &err) != 0)
        return fprintf(stderr, "%s\n", err.msg), 1;
    double secs = xpv_now_mono() - t0;
    printf("decode_events=%lld\ndecode_args=%lld\ndecode_kernels=%lld\ndecode_seconds=%.3f\n"
           "decode_events_per_s=%.0f\ndecode_mb_per_s=%.1f\n",
           sink.events, sink.args, sink.kernels, secs, sink.events / secs,
           (double)st.st_size / secs / (1 << 20));
    return 0;
}
