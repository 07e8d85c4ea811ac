/*
 * xplane_attrib_links.c — the data-link rules of the attribution
 * (xplane_attrib.h): how close a candidate instruction sits, in a graph
 * execution's events, to what it reads and what reads it; and the gaps
 * no kernel name places (library calls, memsets, copies), split into
 * calls and placed one call at a time, or, for a gap of CUDA's memcpy
 * kernels, copy by copy in schedule order.
 *
 * Invariants: only events already placed count as links; a tie places
 * nothing; a call's events (a gap, or one call of a gap split at cuDNN
 * runs) go to one instruction or stay unplaced together; CUDA's memcpy
 * kernels go to copies only.
 */
#include "xplane_attrib_internal.h"

#include <limits.h>
#include <string.h>

/* 1 when launcher `to` reads what launcher `from` writes (inputs[], made
 * by prepare, follows tuples, bitcasts and get-tuple-element). */
static int feeds(const xpv_attrib_module *am, uint32_t from, uint32_t to)
{
    const uint32_t *in = am->inputs + am->input_at[to];
    for (uint32_t k = 0, n = am->input_at[to + 1] - am->input_at[to]; k < n; k++)
        if (in[k] == from) return 1;
    return 0;
}

#define LINK_WINDOW 8 /* events looked at on each side for a data link */

/* How close, in events, launcher l sits to what it is linked to by data:
 * *back the nearest placed event in [a - LINK_WINDOW, a) whose instruction
 * l reads, *fwd the nearest in [b, b + LINK_WINDOW) that reads l; INT_MAX
 * when none. */
static void link_distance(xpv_attrib_module *am, uint32_t l, size_t a, size_t b, size_t n,
                          int *back, int *fwd)
{
    *back = *fwd = INT_MAX;
    for (size_t d = 1; d <= LINK_WINDOW; d++) {
        if (*back == INT_MAX && d <= a && am->place[a - d] >= 0 &&
            feeds(am, (uint32_t)am->place[a - d], l))
            *back = (int)d;
        size_t j = b + d - 1;
        if (*fwd == INT_MAX && j < n && am->place[j] >= 0 && feeds(am, l, (uint32_t)am->place[j]))
            *fwd = (int)d;
    }
}

/* How well a candidate's data links place it, smaller better: linked on
 * both sides beats one side; nearer beats farther. INT_MAX: not linked. */
static long link_score(int back, int fwd)
{
    if (back != INT_MAX && fwd != INT_MAX) return back + fwd;
    int one = back < fwd ? back : fwd;
    return one == INT_MAX ? INT_MAX : 4L * LINK_WINDOW + one;
}

/* Of the candidates, the one whose data links to the events around [a, b)
 * score best; -1 when none is linked or two tie. */
int64_t xpv_attrib_nearest_linked(xpv_attrib_module *am, const uint32_t *cand, size_t ncand,
                                  size_t a, size_t b, size_t n)
{
    int64_t found = -1;
    long best = INT_MAX;
    int ties = 0;
    for (size_t k = 0; k < ncand; k++) {
        int back, fwd;
        link_distance(am, cand[k], a, b, n, &back, &fwd);
        long score = link_score(back, fwd);
        if (score < best)
            best = score, found = cand[k], ties = 0;
        else if (score == best && score != INT_MAX)
            ties++;
    }
    return ties ? -1 : found;
}

/* What launcher l calls in cuDNN: 0 nothing, 1 a convolution or other
 * graph (its kernels need not say cuDNN), 2 fused attention ("__cudnn$fmha",
 * whose kernels always do). */
static int cudnn_call(const xpv_attrib_module *am, uint32_t l)
{
    xpv_hlo_str t = am->m.instrs[am->launchers[l]].custom_call_target;
    if (t.n < 8 || memcmp(t.p, "__cudnn$", 8) != 0) return 0;
    return t.n >= 12 && memcmp(t.p + 8, "fmha", 4) == 0 ? 2 : 1;
}

/* The library call or copy, named by no kernel and not yet placed, whose
 * data link to the events around the gap [a, b) is nearest; -1 when none
 * or a tie. Kernels that all say cuDNN go to a cuDNN call; others never to
 * fused attention. The module's instruction order is a dependency order,
 * not the schedule, so positions alone would guess. */
static int64_t gap_candidate(xpv_attrib_module *am, size_t a, size_t b, size_t n, int cudnn)
{
    size_t ncand = 0;
    for (uint32_t l = 0; l < am->nlaunchers; l++) {
        if (am->is_fusion[l] || am->named[l] == am->gen || am->used[l] == am->gen ||
            !xpv_attrib_in_scope(am, l))
            continue;
        int calls = cudnn_call(am, l);
        if (cudnn ? calls > 0 : calls < 2) am->cand[ncand++] = l;
    }
    return xpv_attrib_nearest_linked(am, am->cand, ncand, a, b, n);
}

/* What a device event of a gap is to the rule that splits gaps into calls. */
enum { EV_COPY_OR_SET, EV_KERNEL, EV_CUDNN, EV_CUDNN_ENGINE };

/* A memset or copy a library call may add around its kernel; a kernel of
 * cuDNN's (its helpers are `cudnn::...`, the engine it generated for the
 * call `cudnn_generated_...`); another kernel. */
static int classify_event(xpv_sink *sink, uint32_t name)
{
    size_t len;
    const char *s = xpv_sink_string(sink, name, &len);
    if (!s) return EV_KERNEL;
    if (len >= 6 && (memcmp(s, "Memset", 6) == 0 || memcmp(s, "Memcpy", 6) == 0))
        return EV_COPY_OR_SET;
    if (len >= 15 && memcmp(s, "cudnn_generated", 15) == 0) return EV_CUDNN_ENGINE;
    for (size_t i = 0; i + 5 <= len; i++)
        if (memcmp(s + i, "cudnn", 5) == 0) return EV_CUDNN;
    return EV_KERNEL;
}

/* CUDA's own kernel for a memcpy node of a graph: `memcpy` and a width
 * (`memcpy128`, `memcpy32_post` seen on an H100). */
static int is_graph_copy(xpv_sink *sink, uint32_t name)
{
    size_t len;
    const char *s = xpv_sink_string(sink, name, &len);
    return s && len > 6 && memcmp(s, "memcpy", 6) == 0 && s[6] >= '0' && s[6] <= '9';
}

#define GRAPH_COPY 16 /* beside the class in event_cls */

/* classify_event, once per name (the rules see every gap on every pass),
 * with GRAPH_COPY set for CUDA's memcpy kernels. */
static int event_class(xpv_attrib *a, uint32_t name)
{
    uint64_t *v = xpv_hindex_put(&a->event_cls, name, 0);
    if (!*v)
        *v = ((uint64_t)classify_event(a->sink, name) |
              (is_graph_copy(a->sink, name) ? GRAPH_COPY : 0)) +
             1;
    return (int)*v - 1;
}

/* Places the events [a, b) of a gap as one call: 1 when placed. A call of
 * one kernel (and its copies and memsets), or of one cuDNN engine and the
 * cuDNN helpers beside it (fused attention's backward pass launches
 * three kernels), can be told apart; two kernels that are neither may be
 * two calls, and are not placed. */
static int place_call(xpv_attrib_module *am, const uint8_t *cls, size_t a, size_t b, size_t n)
{
    size_t kernels = 0, engines = 0, cudnn = 0;
    for (size_t j = a; j < b; j++) {
        kernels += cls[j] != EV_COPY_OR_SET;
        engines += cls[j] == EV_CUDNN_ENGINE;
        cudnn += cls[j] == EV_CUDNN || cls[j] == EV_CUDNN_ENGINE;
    }
    int one_call = kernels <= 1 || (cudnn == kernels && engines == 1);
    int64_t l = one_call ? gap_candidate(am, a, b, n, cudnn > 0 && cudnn == kernels) : -1;
    if (l < 0) return 0;
    am->used[l] = am->gen;
    for (size_t j = a; j < b; j++)
        am->place[j] = l;
    return 1;
}

/* 1 when the gap [a, b) is to be split into calls at its runs of cuDNN
 * kernels: it holds some, and each run has exactly one engine. A run
 * without one (a convolution's layout helpers around an `sm80_xmma_...`
 * engine whose name does not say cuDNN) would split one call in three. */
static int split_at_cudnn(const uint8_t *cls, size_t a, size_t b)
{
    int runs = 0;
    for (size_t j = a; j < b;) {
        if (cls[j] < EV_CUDNN) {
            j++;
            continue;
        }
        int engines = 0;
        for (; j < b && cls[j] != EV_KERNEL; j++)
            engines += cls[j] == EV_CUDNN_ENGINE;
        if (engines != 1) return 0;
        runs++;
    }
    return runs > 0;
}

/* The computation whose schedule orders launcher l: its own, or for an
 * instruction an async-start wraps, the async-start's; *at gets its
 * position there (UINT32_MAX unknown). */
static uint32_t home_of(const xpv_attrib_module *am, uint32_t l, uint32_t *at)
{
    uint32_t i = am->launchers[l], c = am->m.instrs[i].computation;
    if (am->site[c] != NONE) i = am->site[c], c = am->m.instrs[i].computation;
    *at = am->sched[i];
    return c;
}

/* Sorts cand[0, n) by schedule position: 0 when two share one. */
static int by_schedule(const xpv_attrib_module *am, uint32_t *cand, size_t n)
{
    uint32_t at, other;
    for (size_t k = 1; k < n; k++)
        for (size_t j = k; j > 0; j--) {
            home_of(am, cand[j - 1], &other);
            home_of(am, cand[j], &at);
            if (at == other) return 0;
            if (at > other) break;
            uint32_t t = cand[j];
            cand[j] = cand[j - 1], cand[j - 1] = t;
        }
    return 1;
}

/* A gap [a, b) of CUDA's memcpy kernels: one memcpy node each, so one
 * copy each. The copies of the computation the placed events beside it
 * ran in (may_copy), in scope, named by no kernel and not yet placed, go
 * to its events in schedule order (the graph holds its commands in that
 * order) when there are exactly as many; otherwise nothing is placed.
 * Returns 1 when placed. */
static int place_graph_copies(xpv_attrib_module *am, size_t a, size_t b, size_t n)
{
    uint32_t at, home = NONE;
    if (a > 0 && am->place[a - 1] >= 0) home = home_of(am, (uint32_t)am->place[a - 1], &at);
    if (b < n && am->place[b] >= 0) {
        uint32_t after = home_of(am, (uint32_t)am->place[b], &at);
        if (home != NONE && after != home) return 0;
        home = after;
    }
    size_t ncand = 0;
    for (uint32_t l = 0; l < am->nlaunchers && home != NONE && ncand <= b - a; l++) {
        if (!am->is_copy[l] || am->named[l] == am->gen || am->used[l] == am->gen ||
            !xpv_attrib_in_scope(am, l) || home_of(am, l, &at) != home)
            continue;
        if (at == UINT32_MAX) return 0;
        am->cand[ncand++] = l;
    }
    if (home == NONE || ncand != b - a || !by_schedule(am, am->cand, ncand)) return 0;
    for (size_t k = 0; k < ncand; k++)
        am->place[a + k] = am->cand[k], am->used[am->cand[k]] = am->gen;
    am->owner->by_schedule += (int64_t)ncand;
    return 1;
}

/* Events no name places (library kernels, memsets, copies), a gap at a
 * time, by what the placed events on either side read and write. A gap
 * of CUDA's memcpy kernels alone goes copy by copy (place_graph_copies).
 * A gap holding runs of cuDNN kernels, each with one engine, is split into
 * calls first: each run, with the copies and memsets just before it, is
 * one call, and what lies between runs is another. Returns how many calls
 * it placed. */
int xpv_attrib_place_gaps(xpv_attrib_module *am, const uint32_t *names, size_t n)
{
    int placed = 0;
    for (size_t a = 0, b; a < n; a = b) {
        for (b = a + 1; am->at[a] < 0 && b < n && am->at[b] < 0;)
            b++;
        if (am->at[a] >= 0) continue;
        uint8_t *cls = am->cls;
        int copies = 1;
        for (size_t j = a; j < b; j++) {
            int c = event_class(am->owner, names[j]);
            copies &= (c & GRAPH_COPY) != 0;
            cls[j] = (uint8_t)(c & ~GRAPH_COPY);
        }
        if (copies) {
            if (am->place[a] < 0) placed += place_graph_copies(am, a, b, n);
            continue;
        }
        if (!split_at_cudnn(cls, a, b)) {
            if (am->place[a] < 0) placed += place_call(am, cls, a, b, n);
            continue;
        }
        for (size_t c = a, d; c < b; c = d) {
            size_t k = c; /* the call's first kernel */
            while (k < b && cls[k] == EV_COPY_OR_SET)
                k++;
            int cudnn_run = k < b && cls[k] >= EV_CUDNN;
            for (d = k < b ? k + 1 : b; d < b; d++)
                if (cudnn_run ? cls[d] == EV_KERNEL : cls[d] >= EV_CUDNN) break;
            while (d < b && d > k + 1 && cls[d - 1] == EV_COPY_OR_SET)
                d--; /* the copies just before a call are that call's */
            if (am->place[c] < 0) placed += place_call(am, cls, c, d, n);
        }
    }
    return placed;
}
