/*
 * xplane_attrib_order.c — the attribution's rules from the module's
 * schedule (xplane_attrib.h). A graph holds its commands in the order the
 * schedule runs them: on the H100 fixtures and fresh captures every kernel
 * that names one instruction alone ran in schedule order. So what runs
 * between two placed events of one computation was scheduled between
 * them, and a run of CUDA's memcpy kernels is the computation's copies in
 * schedule order.
 *
 * Invariants: a rule weighs an instruction only with its schedule
 * position; a window's two ends, and an event and the placed event beside
 * it that bounds it, lie in one computation with no loop, conditional or
 * call scheduled between them (their callees run there, from other
 * computations), and not in a loop the graph holds; an instruction an
 * async-start wraps counts at the async-start's place.
 */
#include "xplane_attrib_internal.h"

#include <stdlib.h>
#include <string.h>

/* Events looked at on each side of a gap for the window's ends. */
#define WINDOW_REACH 64

/* flow_before[] by instruction: the loops, conditionals and calls its
 * computation schedules before it; at_pos[first + k] of a computation:
 * the instruction it schedules k-th (NONE when none). */
static void count_flow(xpv_attrib_module *am)
{
    const xpv_hlo_module *m = &am->m;
    am->flow_before = xpv_xcalloc(m->ninstrs + 1, sizeof *am->flow_before);
    am->at_pos = xpv_xmalloc((m->ninstrs + 1) * sizeof *am->at_pos);
    for (uint32_t c = 0; c < m->ncomputations; c++) {
        const xpv_hlo_computation *comp = &m->computations[c];
        uint32_t *by_pos = am->at_pos + comp->first;
        for (uint32_t k = 0; k < comp->n; k++)
            by_pos[k] = NONE;
        for (uint32_t i = comp->first; i < comp->first + comp->n; i++)
            if (am->sched[i] < comp->n) by_pos[am->sched[i]] = i;
        uint32_t flows = 0;
        for (uint32_t k = 0; k < comp->n; k++) {
            if (by_pos[k] == NONE) continue;
            am->flow_before[by_pos[k]] = flows;
            flows += xpv_attrib_is_control_flow(m->instrs[by_pos[k]].opcode);
        }
    }
}

/* inner[] by instruction: the one launcher an async-start wraps, which
 * runs at the async-start's place in the schedule (NONE when it wraps
 * none or several). */
static void find_inner(xpv_attrib_module *am)
{
    const xpv_hlo_module *m = &am->m;
    uint8_t *several = xpv_xcalloc(m->ninstrs + 1, 1);
    am->inner = xpv_xmalloc((m->ninstrs + 1) * sizeof *am->inner);
    for (uint32_t i = 0; i <= m->ninstrs; i++)
        am->inner[i] = NONE;
    for (uint32_t l = 0; l < am->nlaunchers; l++) {
        uint32_t site = am->site[m->instrs[am->launchers[l]].computation];
        if (site == NONE) continue;
        several[site] |= am->inner[site] != NONE;
        am->inner[site] = l;
    }
    for (uint32_t i = 0; i < m->ninstrs; i++)
        if (several[i]) am->inner[i] = NONE;
    free(several);
}

void xpv_attrib_order_prepare(xpv_attrib_module *am)
{
    xpv_err ignored; /* a damaged schedule leaves every position unknown */
    am->sched = xpv_xmalloc((am->m.ninstrs + 1) * sizeof *am->sched);
    xpv_hlo_schedule_positions(&am->m, am->sched, &ignored);
    for (uint32_t i = 0; i < am->m.ninstrs && !am->scheduled; i++)
        am->scheduled = am->sched[i] != NONE;
    count_flow(am);
    find_inner(am);
    am->seen = xpv_xcalloc(am->m.ncomputations + 1, sizeof *am->seen);
}

void xpv_attrib_order_free(xpv_attrib_module *am)
{
    free(am->sched);
    free(am->flow_before);
    free(am->at_pos);
    free(am->inner);
    free(am->seen);
}

uint32_t xpv_attrib_home(const xpv_attrib_module *am, uint32_t l, uint32_t *instr)
{
    uint32_t i = am->launchers[l], c = am->m.instrs[i].computation;
    if (am->site[c] != NONE) i = am->site[c], c = am->m.instrs[i].computation;
    *instr = i;
    return c;
}

void xpv_attrib_order_pass(xpv_attrib_module *am, size_t n)
{
    if (++am->seen_gen == 0) { /* the stamps wrapped: forget them all */
        memset(am->seen, 0, (am->m.ncomputations + 1) * sizeof *am->seen);
        am->seen_gen = 1;
    }
    uint32_t instr;
    for (size_t i = 0; i < n; i++)
        if (am->place[i] >= 0)
            am->seen[xpv_attrib_home(am, (uint32_t)am->place[i], &instr)] = am->seen_gen;
}

/* 1 when home lies in a loop (a while runs it, or what calls it) whose
 * caller, or one above, has a placed event of the run, or whose body ran
 * a kernel named after it more than once (repeats[]): the graph then
 * holds the loop, home may run twice in it, and positions in home do not
 * order its events. A branch or a call runs once. */
static int may_repeat(const xpv_attrib_module *am, uint32_t home)
{
    int in_loop = 0;
    for (int depth = 0; home != NONE && depth < 64; home = am->caller[home], depth++) {
        if (am->repeats[home] == am->gen) return 1;
        if (in_loop && am->seen[home] == am->seen_gen) return 1;
        in_loop |= am->looped[home];
    }
    return 0;
}

/* 1 when the schedule orders instructions i and j of computation home:
 * both have a position, no loop, conditional or call lies between them,
 * and home does not run twice in the graph (may_repeat). */
static int ordered(const xpv_attrib_module *am, uint32_t home, uint32_t i, uint32_t j)
{
    return am->sched[i] != NONE && am->sched[j] != NONE &&
           am->flow_before[i] == am->flow_before[j] && !may_repeat(am, home);
}

/* The placed event nearest to [a, b) on one side (dir -1 before a, +1 at
 * or after b), within WINDOW_REACH events; -1 when none. */
static int64_t nearest_placed(const xpv_attrib_module *am, size_t a, size_t b, size_t n, int dir)
{
    for (size_t d = 0; d < WINDOW_REACH; d++) {
        if (dir < 0 ? d + 1 > a : b + d >= n) return -1;
        size_t j = dir < 0 ? a - 1 - d : b + d;
        if (am->place[j] >= 0) return am->place[j];
    }
    return -1;
}

int xpv_attrib_window_of(const xpv_attrib_module *am, const xpv_attrib_bounds *bd,
                         xpv_attrib_window *w)
{
    int64_t before = bd->before, after = bd->after;
    if (before < 0 || after < 0) return 0;
    uint32_t ip, iq;
    uint32_t home = xpv_attrib_home(am, (uint32_t)before, &ip);
    if (xpv_attrib_home(am, (uint32_t)after, &iq) != home || !ordered(am, home, ip, iq) ||
        am->sched[ip] >= am->sched[iq])
        return 0;
    *w = (xpv_attrib_window){home, am->sched[ip], am->sched[iq]};
    return 1;
}

int xpv_attrib_tail_window(const xpv_attrib_module *am, int64_t before, xpv_attrib_window *w)
{
    uint32_t ip;
    if (before < 0) return 0;
    uint32_t home = xpv_attrib_home(am, (uint32_t)before, &ip);
    const xpv_hlo_computation *comp = &am->m.computations[home];
    if (am->sched[ip] == NONE || may_repeat(am, home)) return 0;
    uint32_t hi = am->sched[ip] + 1;
    for (; hi < comp->n; hi++) {
        uint32_t i = am->at_pos[comp->first + hi];
        if (i != NONE && xpv_attrib_is_control_flow(am->m.instrs[i].opcode)) break;
    }
    *w = (xpv_attrib_window){home, am->sched[ip], hi};
    return 1;
}

int xpv_attrib_in_window(const xpv_attrib_module *am, const xpv_attrib_window *w, uint32_t l)
{
    uint32_t i;
    if (xpv_attrib_home(am, l, &i) != w->home) return 0;
    return am->sched[i] != NONE && am->sched[i] > w->lo && am->sched[i] < w->hi;
}

uint32_t xpv_attrib_fits(const xpv_attrib_module *am, const xpv_attrib_window *w, uint32_t x,
                         uint32_t l)
{
    uint32_t i;
    if (!xpv_attrib_may_run(am, x, l) || am->used[l] == am->gen || !xpv_attrib_in_window(am, w, l))
        return NONE;
    xpv_attrib_home(am, l, &i);
    return am->sched[i];
}

uint32_t xpv_attrib_next_member(const xpv_attrib_module *am, const xpv_attrib_window *w, uint32_t x,
                                uint32_t from, int dir, uint32_t *at)
{
    uint32_t best = NONE;
    int tie = 0; /* two members at one place (in one async-start): no order between them */
    for (uint32_t l = am->group_head[x]; l != NONE; l = am->group_next[l]) {
        uint32_t p = xpv_attrib_fits(am, w, x, l);
        if (p == NONE || (dir > 0 ? p <= from : p >= from)) continue;
        if (best != NONE && p == *at) tie = 1;
        if (best == NONE || (dir > 0 ? p < *at : p > *at)) best = l, *at = p, tie = 0;
    }
    return tie ? NONE : best;
}

uint32_t xpv_attrib_launcher_at(const xpv_attrib_module *am, uint32_t home, uint32_t pos)
{
    const xpv_hlo_computation *comp = &am->m.computations[home];
    if (pos >= comp->n || am->at_pos[comp->first + pos] == NONE) return NONE;
    uint32_t i = am->at_pos[comp->first + pos];
    return am->launcher_of_instr[i] != NONE ? am->launcher_of_instr[i] : am->inner[i];
}

void xpv_attrib_bounds_of(const xpv_attrib_module *am, size_t a, size_t b, size_t n,
                          xpv_attrib_bounds *bd)
{
    bd->before = nearest_placed(am, a, b, n, -1);
    bd->after = nearest_placed(am, a, b, n, 1);
}

#define CALL_DEPTH 64 /* control flow nests shallowly; deeper is not ordered */

/* The computations from launcher l's up through those whose control flow
 * runs it, each with the instruction there that runs l (l's own first):
 * their count. */
static size_t call_chain(const xpv_attrib_module *am, uint32_t l, uint32_t *comp, uint32_t *instr)
{
    size_t n = 0;
    uint32_t i, c = xpv_attrib_home(am, l, &i);
    for (; c != NONE && n < CALL_DEPTH; i = am->call_site[c], c = am->caller[c])
        comp[n] = c, instr[n++] = i;
    return n;
}

/* 1 when instruction j of computation c, on side dir of an event, lies by
 * c's schedule on the wrong side of instruction i (never when i is j). */
static int wrong_side(const xpv_attrib_module *am, uint32_t c, uint32_t i, uint32_t j, int dir)
{
    return ordered(am, c, i, j) &&
           (dir < 0 ? am->sched[j] > am->sched[i] : am->sched[j] < am->sched[i]);
}

/* 1 when placed launcher `near`, on side dir of an event, lies by the
 * schedule on the wrong side of launcher l. Where the two lie in
 * different computations, each counts at the place of the loop,
 * conditional or call that runs it in the lowest computation above both:
 * a kernel after a loop body's cannot be an instruction that the
 * computation running the loop schedules before it (seen in a fori_loop
 * body's graph, whose last kernels bear the names of identical fusions
 * of the computation that runs the loop, and of a loop inside the body). */
static int crosses(const xpv_attrib_module *am, int64_t near, int dir, uint32_t l)
{
    uint32_t lc[CALL_DEPTH], li[CALL_DEPTH], nc[CALL_DEPTH], ni[CALL_DEPTH];
    if (near < 0) return 0;
    uint32_t i, j, c = xpv_attrib_home(am, l, &i);
    if (xpv_attrib_home(am, (uint32_t)near, &j) == c) /* the common case, at no cost */
        return wrong_side(am, c, i, j, dir);
    size_t ln = call_chain(am, l, lc, li), nn = call_chain(am, (uint32_t)near, nc, ni);
    for (size_t a = 0; a < ln; a++)
        for (size_t b = 0; b < nn; b++)
            if (lc[a] == nc[b]) return wrong_side(am, lc[a], li[a], ni[b], dir);
    return 0;
}

int xpv_attrib_allows(const xpv_attrib_module *am, const xpv_attrib_bounds *bd, uint32_t l)
{
    uint32_t i;
    xpv_attrib_home(am, l, &i);
    return am->sched[i] == NONE ||
           (!crosses(am, bd->before, -1, l) && !crosses(am, bd->after, 1, l));
}

/* Sorts cand[0, n) by schedule position: 0 when two share one. */
static int by_schedule(const xpv_attrib_module *am, uint32_t *cand, size_t n)
{
    uint32_t i, j;
    for (size_t k = 1; k < n; k++)
        for (size_t s = k; s > 0; s--) {
            xpv_attrib_home(am, cand[s - 1], &j);
            xpv_attrib_home(am, cand[s], &i);
            if (am->sched[i] == am->sched[j]) return 0;
            if (am->sched[i] > am->sched[j]) break;
            uint32_t t = cand[s];
            cand[s] = cand[s - 1], cand[s - 1] = t;
        }
    return 1;
}

/* The computation of the placed events beside [a, b): NONE when none is
 * placed or the two sides disagree. */
static uint32_t home_beside(const xpv_attrib_module *am, size_t a, size_t b, size_t n)
{
    uint32_t i, home = NONE;
    if (a > 0 && am->place[a - 1] >= 0) home = xpv_attrib_home(am, (uint32_t)am->place[a - 1], &i);
    if (b < n && am->place[b] >= 0) {
        uint32_t after = xpv_attrib_home(am, (uint32_t)am->place[b], &i);
        if (home != NONE && after != home) return NONE;
        home = after;
    }
    return home;
}

/* 1 when a kernel of the run is named after a member of l's reuse group:
 * l may have run that kernel rather than a copy. */
static int group_named(const xpv_attrib_module *am, uint32_t l)
{
    for (uint32_t m = am->group_head[l]; m != NONE; m = am->group_next[m])
        if (am->named[m] == am->gen) return 1;
    return 0;
}

int xpv_attrib_place_graph_copies(xpv_attrib_module *am, size_t a, size_t b, size_t n)
{
    uint32_t i, home = home_beside(am, a, b, n);
    size_t ncand = 0;
    xpv_attrib_bounds bd;
    xpv_attrib_bounds_of(am, a, b, n, &bd);
    for (uint32_t l = 0; l < am->nlaunchers && home != NONE && ncand <= b - a; l++) {
        if (!am->is_copy[l] || group_named(am, l) || am->used[l] == am->gen ||
            !xpv_attrib_in_scope(am, l) || xpv_attrib_home(am, l, &i) != home ||
            !xpv_attrib_allows(am, &bd, l))
            continue;
        if (am->sched[i] == NONE) return 0;
        am->cand[ncand++] = l;
    }
    if (home == NONE || ncand != b - a || !by_schedule(am, am->cand, ncand)) return 0;
    for (size_t k = 0; k < ncand; k++)
        am->place[a + k] = am->cand[k], am->used[am->cand[k]] = am->gen;
    am->owner->by_schedule += (int64_t)ncand;
    return 1;
}
