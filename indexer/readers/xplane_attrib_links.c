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
 * kernels go to copies only (a gap that mixes them with other kernels
 * stays unplaced).
 */
#include "xplane_attrib_internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* 1 when launcher `to` reads what launcher `from` writes (inputs[], made
 * by prepare, follows tuples, bitcasts and get-tuple-element; NULL when no
 * launcher reads another's). */
static int feeds(const xpv_attrib_module *am, uint32_t from, uint32_t to)
{
    for (uint32_t k = am->input_at[to]; k < am->input_at[to + 1]; k++)
        if (am->inputs[k] == from) return 1;
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

/* 1 when launcher l is a collective: its kernels (NCCL's) run on a stream
 * of their own, or as its own commands, never another call's. */
static int is_collective(const xpv_attrib_module *am, uint32_t l)
{
    static const char *const PREFIXES[] = {"all-", "reduce-scatter",    "collective-", "send",
                                           "recv", "ragged-all-to-all", NULL};
    xpv_hlo_str op = am->m.instrs[am->launchers[l]].opcode;
    for (const char *const *p = PREFIXES; *p; p++)
        if (op.n >= strlen(*p) && memcmp(op.p, *p, strlen(*p)) == 0) return 1;
    return 0;
}

/* What may have run a call: its kernels all say cuDNN, all say NCCL, or
 * neither (cuBLAS, cutlass, a memset). */
enum { CALL_PLAIN, CALL_CUDNN, CALL_NCCL };

/* 1 when launcher l may have run a call of this kind. */
static int may_call(const xpv_attrib_module *am, uint32_t l, int kind)
{
    int calls = cudnn_call(am, l);
    if (kind == CALL_CUDNN) return calls > 0;
    if (kind == CALL_NCCL) return is_collective(am, l);
    return calls < 2 && !is_collective(am, l);
}

/* The library call or copy, named by no kernel and not yet placed, whose
 * data link to the events around the gap [a, b) is nearest; -1 when none
 * or a tie. Kernels that all say cuDNN go to a cuDNN call, others never to
 * fused attention; NCCL's go to a collective, others never. When the gap
 * lies between placed events of one
 * computation, only what the schedule puts between them may have run it:
 * one such call, when nothing else there is left to place, is the one. */
static int64_t gap_candidate(xpv_attrib_module *am, size_t a, size_t b, size_t n, int kind)
{
    size_t ncand = 0, open = 0;
    xpv_attrib_window w;
    xpv_attrib_bounds bd;
    xpv_attrib_bounds_of(am, a, b, n, &bd);
    int windowed = xpv_attrib_window_of(am, &bd, &w);
    for (uint32_t l = 0; l < am->nlaunchers; l++) {
        if (am->used[l] == am->gen || !xpv_attrib_in_scope(am, l) ||
            (windowed && !xpv_attrib_in_window(am, &w, l)))
            continue;
        open += kind == CALL_NCCL || !is_collective(am, l); /* NCCL runs on its own stream */
        if (am->is_fusion[l] || am->named[l] == am->gen || !xpv_attrib_allows(am, &bd, l)) continue;
        if (may_call(am, l, kind)) am->cand[ncand++] = l;
    }
    if (windowed && ncand == 1 && open == 1) return am->cand[0];
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

/* A device-to-device copy as the profiler records a graph's memcpy node
 * (`MemcpyD2D`): in a graph, where a library call adds memsets, such a
 * copy alone is a copy instruction's, as CUDA's memcpy kernels are. */
static int is_d2d_copy(xpv_sink *sink, uint32_t name)
{
    size_t len;
    const char *s = xpv_sink_string(sink, name, &len);
    return s && len == 9 && memcmp(s, "MemcpyD2D", 9) == 0;
}

#define GRAPH_COPY 16 /* beside the class in event_cls */
#define D2D_COPY 32

/* classify_event, once per name (the rules see every gap on every pass),
 * with GRAPH_COPY set for CUDA's memcpy kernels, D2D_COPY for copies. */
static int event_class(xpv_attrib *a, uint32_t name)
{
    uint64_t *v = xpv_hindex_put(&a->event_cls, name, 0);
    if (!*v)
        *v = ((uint64_t)classify_event(a->sink, name) |
              (is_graph_copy(a->sink, name) ? GRAPH_COPY : 0) |
              (is_d2d_copy(a->sink, name) ? D2D_COPY : 0)) +
             1;
    return (int)*v - 1;
}

/* Classifies the events [a, b) into am->cls (event_class, without the
 * copy bits); returns how many are CUDA's memcpy kernels, and *d2d how
 * many are device-to-device copies (may be NULL). */
static size_t classify(xpv_attrib_module *am, const uint32_t *names, size_t a, size_t b,
                       size_t *d2d)
{
    size_t copies = 0, d2d_copies = 0;
    for (size_t j = a; j < b; j++) {
        int c = event_class(am->owner, names[j]);
        copies += (c & GRAPH_COPY) != 0;
        d2d_copies += (c & D2D_COPY) != 0;
        am->cls[j] = (uint8_t)(c & ~(GRAPH_COPY | D2D_COPY));
    }
    if (d2d) *d2d = d2d_copies;
    return copies;
}

/* 1 when the events [a, b) can be told apart as one call: one kernel (and
 * its copies and memsets), or one cuDNN engine and the cuDNN helpers
 * beside it (fused attention's backward pass launches three kernels);
 * *cudnn: its kernels all say cuDNN. */
static int one_call(const uint8_t *cls, size_t a, size_t b, int *cudnn)
{
    size_t kernels = 0, engines = 0, says = 0;
    for (size_t j = a; j < b; j++) {
        kernels += cls[j] != EV_COPY_OR_SET;
        engines += cls[j] == EV_CUDNN_ENGINE;
        says += cls[j] == EV_CUDNN || cls[j] == EV_CUDNN_ENGINE;
    }
    *cudnn = says > 0 && says == kernels;
    return kernels <= 1 || (says == kernels && engines == 1);
}

/* The kind of the call [a, b) (cudnn: one_call's). */
static int call_kind(xpv_attrib_module *am, const uint32_t *names, const uint8_t *cls, size_t a,
                     size_t b, int cudnn)
{
    if (cudnn) return CALL_CUDNN;
    size_t kernels = 0, nccl = 0, len;
    for (size_t j = a; j < b; j++) {
        if (cls[j] == EV_COPY_OR_SET) continue;
        const char *s = xpv_sink_string(am->owner->sink, names[j], &len);
        kernels++;
        for (size_t k = 0; s && k + 4 <= len; k++)
            if (memcmp(s + k, "nccl", 4) == 0) {
                nccl++;
                break;
            }
    }
    return kernels && nccl == kernels ? CALL_NCCL : CALL_PLAIN;
}

/* Places the events [a, b) of a gap as one call: 1 when placed. A call of
 * one kernel (and its copies and memsets), or of one cuDNN engine and the
 * cuDNN helpers beside it (fused attention's backward pass launches
 * three kernels), can be told apart; two kernels that are neither may be
 * two calls, and are not placed. With a schedule, a gap waits until the
 * kernels beside it are placed. */
static int place_call(xpv_attrib_module *am, const uint32_t *names, const uint8_t *cls, size_t a,
                      size_t b, size_t n, int wait)
{
    int cudnn;
    /* with a schedule, a kernel beside the gap may still be placed and
     * bound where the call can lie: a data link alone once put a cuBLAS
     * kernel on a call scheduled after the fusion that ran next */
    if (wait && am->scheduled &&
        ((a > 0 && am->at[a - 1] >= 0 && am->place[a - 1] < 0) ||
         (b < n && am->at[b] >= 0 && am->place[b] < 0)))
        return 0;
    int64_t l = one_call(cls, a, b, &cudnn)
                    ? gap_candidate(am, a, b, n, call_kind(am, names, cls, a, b, cudnn))
                    : -1;
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

/* The end of the call that starts at c, in a gap [c, b) split at its runs
 * of cuDNN kernels: each run, with the copies and memsets just before it,
 * is one call, and what lies between runs is another. */
static size_t call_end(const uint8_t *cls, size_t c, size_t b)
{
    size_t k = c, d; /* the call's first kernel */
    while (k < b && cls[k] == EV_COPY_OR_SET)
        k++;
    int cudnn_run = k < b && cls[k] >= EV_CUDNN;
    for (d = k < b ? k + 1 : b; d < b; d++)
        if (cudnn_run ? cls[d] == EV_KERNEL : cls[d] >= EV_CUDNN) break;
    while (d < b && d > k + 1 && cls[d - 1] == EV_COPY_OR_SET)
        d--; /* the copies just before a call are that call's */
    return d;
}

/* 1 when the events [a, b) hold two kernels or more, none of cuDNN's. */
static int plain_kernels(const uint8_t *cls, size_t a, size_t b)
{
    size_t kernels = 0;
    for (size_t j = a; j < b; j++) {
        if (cls[j] >= EV_CUDNN) return 0;
        kernels += cls[j] == EV_KERNEL;
    }
    return kernels > 1;
}

/* The end of the call that starts at c, in a gap [c, b) of plain kernels
 * split one call per kernel: its kernel, with the copies and memsets just
 * before it (cuBLAS's memset precedes its GEMM in a graph), and those
 * after it when no kernel follows. Only the schedule's alignment splits
 * so, where a call of two kernels leaves more pieces than instructions. */
static size_t plain_end(const uint8_t *cls, size_t c, size_t b)
{
    size_t k = c, d;
    while (k < b && cls[k] == EV_COPY_OR_SET)
        k++;
    for (d = k + 1; d < b && cls[d] == EV_COPY_OR_SET;)
        d++;
    return d < b ? k + 1 : b;
}

/* ---- the schedule's placements ---- */

/* A piece of a run of unplaced events: a named kernel (x >= 0), or the
 * unnamed events [a, b) of one library call; early and late, the
 * instructions the earliest and the latest order-keeping match give it. */
typedef struct {
    size_t a, b;
    int64_t x;
    int kind; /* of a call: CALL_* */
    uint32_t early, late;
} piece;

/* 1 when launcher l may be the library call of a piece inside w. */
static int call_fits(const xpv_attrib_module *am, uint32_t l, int kind)
{
    return l != NONE && !am->is_fusion[l] && am->named[l] != am->gen && am->used[l] != am->gen &&
           xpv_attrib_in_scope(am, l) && may_call(am, l, kind);
}

/* The call that fits nearest after position `from` (dir +1) or before it
 * (dir -1) inside w, its position in *at; NONE when none. */
static uint32_t next_call(const xpv_attrib_module *am, const xpv_attrib_window *w, int kind,
                          uint32_t from, int dir, uint32_t *at)
{
    for (int64_t p = (int64_t)from + dir; dir > 0 ? p < w->hi : p > w->lo; p += dir) {
        uint32_t l = xpv_attrib_launcher_at(am, w->home, (uint32_t)p);
        if (call_fits(am, l, kind)) {
            *at = (uint32_t)p;
            return l;
        }
    }
    return NONE;
}

/* Splits the unplaced events [s, t) into pieces, a run of unnamed ones
 * into calls as the gap rule does: 0 when a call may be two (cuDNN's
 * kernels and others), or the run holds CUDA's memcpy kernels (one copy
 * each: the copies' rule places them). A run of plain kernels is cut into
 * one call each, a guess at the cut that align() checks by needing as
 * many instructions left as pieces: 2 when it was made, else 1. */
static int split_pieces(xpv_attrib_module *am, const uint32_t *names, size_t s, size_t t, piece *pc,
                        size_t *np)
{
    uint8_t *cls = am->cls;
    int guessed = 0;
    *np = 0;
    for (size_t i = s, j; i < t; i = j) {
        if (am->at[i] >= 0) {
            pc[(*np)++] = (piece){i, i + 1, am->at[i], 0, NONE, NONE};
            j = i + 1;
            continue;
        }
        for (j = i; j < t && am->at[j] < 0;)
            j++;
        if (classify(am, names, i, j, NULL)) return 0;
        int split = split_at_cudnn(cls, i, j), plain = !split && plain_kernels(cls, i, j), cudnn;
        guessed |= plain;
        for (size_t c = i, d; c < j; c = d) {
            d = split ? call_end(cls, c, j) : plain ? plain_end(cls, c, j) : j;
            if (!one_call(cls, c, d, &cudnn)) return 0;
            pc[(*np)++] = (piece){c, d, -1, call_kind(am, names, cls, c, d, cudnn), NONE, NONE};
        }
    }
    return guessed ? 2 : 1;
}

/* The instruction that fits a piece nearest `from` in direction dir. */
static uint32_t next_fit(const xpv_attrib_module *am, const xpv_attrib_window *w, const piece *q,
                         uint32_t from, int dir, uint32_t *at)
{
    return q->x >= 0 ? xpv_attrib_next_member(am, w, (uint32_t)q->x, from, dir, at)
                     : next_call(am, w, q->kind, from, dir, at);
}

/* Each piece ran one instruction scheduled inside w, in order: the pieces
 * embed in the schedule as a subsequence, and one that the earliest
 * embedding and the latest put on the same instruction can go nowhere
 * else. Returns how many pieces it placed. */
static int align(xpv_attrib_module *am, piece *pc, size_t np, const xpv_attrib_window *w)
{
    uint32_t at = w->lo;
    for (size_t k = 0; k < np; k++)
        if ((pc[k].early = next_fit(am, w, &pc[k], at, 1, &at)) == NONE) return 0;
    at = w->hi;
    for (size_t k = np; k-- > 0;)
        if ((pc[k].late = next_fit(am, w, &pc[k], at, -1, &at)) == NONE) return 0;
    /* sound only when each piece's instruction can be matched: every
     * instruction left in w ran one piece, none ran nothing (a collective
     * on another stream) or something no piece can match (a fusion's
     * memset) */
    size_t open = 0;
    int nccl = 0; /* a collective left in w counts only when NCCL kernels are among the pieces:
                     else they ran on a stream of their own */
    for (size_t k = 0; k < np; k++)
        nccl |= pc[k].x < 0 && pc[k].kind == CALL_NCCL;
    for (uint32_t p = w->lo + 1; p < w->hi && open <= np; p++) {
        uint32_t l = xpv_attrib_launcher_at(am, w->home, p);
        open += l != NONE && am->used[l] != am->gen && xpv_attrib_in_scope(am, l) &&
                (nccl || !is_collective(am, l));
    }
    if (open != np) return 0;
    int placed = 0;
    for (size_t k = 0; k < np; k++) {
        if (pc[k].early != pc[k].late) continue;
        for (size_t i = pc[k].a; i < pc[k].b; i++)
            am->place[i] = pc[k].early;
        am->used[pc[k].early] = am->gen;
        placed++;
    }
    return placed;
}

/* The named events of [s, t) whose group has one member alone inside w. */
static int place_single(xpv_attrib_module *am, size_t s, size_t t, const xpv_attrib_window *w)
{
    int placed = 0;
    for (size_t i = s; i < t; i++) {
        if (am->at[i] < 0) continue;
        uint32_t x = (uint32_t)am->at[i], only = NONE, members = 0;
        for (uint32_t l = am->group_head[x]; l != NONE && members < 2; l = am->group_next[l])
            if (xpv_attrib_fits(am, w, x, l) != NONE) members++, only = l;
        if (members != 1) continue;
        am->place[i] = only, am->used[only] = am->gen;
        placed++;
    }
    return placed;
}

int xpv_attrib_place_by_schedule(xpv_attrib_module *am, const uint32_t *names, size_t n)
{
    int placed = 0;
    xpv_attrib_window w;
    xpv_attrib_bounds bd;
    piece *pc = NULL;
    size_t cap = 0, np;
    for (size_t s = 0, t; s < n; s = t) {
        for (t = s + 1; am->place[s] < 0 && t < n && am->place[t] < 0;)
            t++;
        if (am->place[s] >= 0) continue;
        xpv_attrib_bounds_of(am, s, t, n, &bd);
        if (!xpv_attrib_window_of(am, &bd, &w) &&
            !(t == n && xpv_attrib_tail_window(am, bd.before, &w)))
            continue;
        if (cap < t - s) pc = xpv_xrealloc(pc, (cap = t - s) * sizeof *pc);
        /* a run that cannot be cut into pieces, or whose guessed cut does
         * not align, still gets its kernels with one member in w; one with
         * no order-keeping match gets nothing (the window misleads) */
        int cut = split_pieces(am, names, s, t, pc, &np), got = cut ? align(am, pc, np, &w) : 0;
        placed += !cut || (cut == 2 && !got) ? place_single(am, s, t, &w) : got;
    }
    free(pc);
    return placed;
}

/* Events no name places (library kernels, memsets, copies), a gap at a
 * time, by what the placed events on either side read and write. A gap
 * of CUDA's memcpy kernels alone, or of device-to-device copies alone,
 * goes copy by copy (xplane_attrib_order.c).
 * A gap holding runs of cuDNN kernels, each with one engine, is split into
 * calls first: each run, with the copies and memsets just before it, is
 * one call, and what lies between runs is another. Returns how many calls
 * it placed. */
int xpv_attrib_place_gaps(xpv_attrib_module *am, const uint32_t *names, size_t n, int wait)
{
    int placed = 0;
    for (size_t a = 0, b; a < n; a = b) {
        for (b = a + 1; am->at[a] < 0 && b < n && am->at[b] < 0;)
            b++;
        if (am->at[a] >= 0) continue;
        uint8_t *cls = am->cls;
        size_t d2d, copies = classify(am, names, a, b, &d2d);
        if ((copies == b - a || d2d == b - a) && am->place[a] < 0)
            placed += xpv_attrib_place_graph_copies(am, a, b, n);
        if (copies) continue; /* CUDA's memcpy kernels go to copies only */
        if (!split_at_cudnn(cls, a, b)) {
            if (am->place[a] < 0) placed += place_call(am, names, cls, a, b, n, wait);
            continue;
        }
        for (size_t c = a, d; c < b; c = d) {
            d = call_end(cls, c, b);
            if (am->place[c] < 0) placed += place_call(am, names, cls, c, d, n, wait);
        }
    }
    return placed;
}
