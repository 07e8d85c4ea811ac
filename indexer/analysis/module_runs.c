/*
 * module_runs.c — the runs of one XLA module as the host saw them, for the
 * module step fallback (steps.c).
 *
 * XLA's GPU executable annotates each run on the host thread that launches
 * it: an event named "<module>:XLA GPU module" (JAX on ROCm and on CUDA,
 * xplane and trace JSON alike). Device work belongs to the run whose window
 * holds its launch, found by correlation id. This is exact where the gaps
 * between kernels are not: a module whose while loop comes back to the
 * host on every trip leaves gaps inside one run as long as those between
 * runs.
 *
 * Invariants: each thread numbers its runs 0, 1, ... in start order, so
 * that the n-th run of every thread (one per device where PjRt runs the
 * devices apart) is step n, as unnumbered step markers are; a launch is
 * looked up only among the runs of its own thread, so runs that overlap in
 * time on two threads never take each other's launches.
 */
#include "analysis_internal.h"

#include <stdlib.h>
#include <string.h>

#define RUN_SUFFIX ":XLA GPU module"

typedef struct {
    int64_t start, end; /* ps since base, end inclusive: a launch may end a run */
    uint32_t track;
    uint32_t number; /* in start order on its track */
} host_run;

struct xpv_module_runs {
    const xpv_analysis_input *in;
    int64_t base_ns;
    xpv_hindex is_run; /* name id -> 1 when it is the run annotation */
    char *name;        /* "<module>:XLA GPU module" */
    const char *names[2];
    host_run *run; /* by (track, start) once found */
    size_t nrun, cap;
    xpv_hindex run_of; /* launch correlation id -> run number + 1 */
};

static int run_visit(void *ctx, const xpv_event *ev, int64_t block_id, uint32_t index)
{
    (void)block_id, (void)index;
    xpv_module_runs *r = ctx;
    if (ev->dur_ps <= 0 || !xpv_analysis_string_is(r->in, &r->is_run, ev->name, r->names)) return 0;
    int64_t start = xpv_ps_since(r->base_ns, ev->ts_ns);
    r->run = xpv_grow_to_index(r->run, &r->cap, r->nrun, sizeof *r->run, 0);
    r->run[r->nrun++] = (host_run){start, xpv_sat_add_i64(start, ev->dur_ps), ev->track, 0};
    return 0;
}

static int run_by_track(const void *pa, const void *pb)
{
    const host_run *a = pa, *b = pb;
    if (a->track != b->track) return a->track < b->track ? -1 : 1;
    return a->start < b->start ? -1 : a->start > b->start;
}

/* The run of r's track `track` whose window holds t; NULL when none. */
static const host_run *run_at(const xpv_module_runs *r, uint32_t track, int64_t t)
{
    size_t lo = 0, hi = r->nrun; /* the first run past (track, t) */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const host_run *m = &r->run[mid];
        if (m->track < track || (m->track == track && m->start <= t))
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0) return NULL;
    const host_run *h = &r->run[lo - 1];
    return h->track == track && t <= h->end ? h : NULL;
}

static int launch_visit(void *ctx, const xpv_event *ev, int64_t block_id, uint32_t index)
{
    (void)block_id, (void)index;
    xpv_module_runs *r = ctx;
    if (ev->corr < 0) return 0;
    const host_run *h = run_at(r, ev->track, xpv_ps_since(r->base_ns, ev->ts_ns));
    if (h) *xpv_hindex_put(&r->run_of, (uint64_t)ev->corr, 0) = (uint64_t)h->number + 1;
    return 0;
}

/* Both passes read only host tracks with launches: a run on a thread that
 * launches nothing holds no device work. */
static int scan_host(xpv_module_runs *r, const uint8_t *launch_tracks, int launches, xpv_err *err)
{
    for (size_t t = 0; t < r->in->ntracks; t++) {
        if (r->in->tracks[t].device_id >= 0 || !launch_tracks[t]) continue;
        xpv_store_query q;
        xpv_store_query_all(&q, r->in->profile_id);
        q.track = (int64_t)t;
        q.kinds = XPV_KIND_BIT(launches ? XPV_KIND_LAUNCH : XPV_KIND_OTHER);
        q.skip_args = 1;
        if (xpv_analysis_scan(r->in, &q, launches ? launch_visit : run_visit, r, err) < 0)
            return -1;
    }
    return 0;
}

void xpv_module_runs_free(xpv_module_runs *r)
{
    if (!r) return;
    xpv_hindex_free(&r->is_run);
    xpv_hindex_free(&r->run_of);
    free(r->name);
    free(r->run);
    free(r);
}

int xpv_module_runs_find(xpv_module_runs **out, const xpv_analysis_input *in, uint32_t module,
                         const uint8_t *launch_tracks, int64_t base_ns, xpv_err *err)
{
    *out = NULL;
    if (!launch_tracks) return 0;
    size_t len;
    const char *m = in->string(in->string_ctx, module, &len);
    xpv_module_runs *r = xpv_xcalloc(1, sizeof *r);
    r->in = in, r->base_ns = base_ns;
    r->name = xpv_xmalloc(len + sizeof RUN_SUFFIX);
    memcpy(r->name, m, len);
    memcpy(r->name + len, RUN_SUFFIX, sizeof RUN_SUFFIX);
    r->names[0] = r->name;
    int rc = scan_host(r, launch_tracks, 0, err);
    if (rc == 0 && r->nrun) {
        xpv_sort(r->run, r->nrun, sizeof *r->run, run_by_track);
        for (size_t i = 0; i < r->nrun; i++)
            r->run[i].number =
                i && r->run[i].track == r->run[i - 1].track ? r->run[i - 1].number + 1 : 0;
        rc = scan_host(r, launch_tracks, 1, err);
    }
    if (rc != 0 || !xpv_hindex_count(&r->run_of)) {
        xpv_module_runs_free(r);
        return rc;
    }
    *out = r;
    return 0;
}

int64_t xpv_module_runs_of(const xpv_module_runs *r, int64_t corr)
{
    const uint64_t *v = corr >= 0 ? xpv_hindex_get(&r->run_of, (uint64_t)corr) : NULL;
    return v ? (int64_t)*v - 1 : -1;
}
