/*
 * xplane_attrib_internal.h — what the attribution's files share
 * (xplane_attrib.c: modules and the rules that place by name;
 * xplane_attrib_links.c: the rules that place by data links): its state,
 * per module and per space.
 *
 * Invariants: arrays "by launcher" have nlaunchers + 1 entries; scratch
 * stamps equal gen only for the graph execution being placed.
 */
#ifndef XPV_XPLANE_ATTRIB_INTERNAL_H
#define XPV_XPLANE_ATTRIB_INTERNAL_H

#include "hlo_proto.h"
#include "../ingest.h"
#include "../../common/xpv_hindex.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* As xplane_attrib.h names them; not included here, so that the rules'
 * files depend on this state alone, not on the module that calls them. */
typedef struct xpv_attrib xpv_attrib;
typedef struct xpv_attrib_module xpv_attrib_module;
struct xpv_attrib_op;

#define NONE UINT32_MAX

/* 1 for control flow: an instruction whose callees run as the caller's
 * steps, once (call, conditional) or again and again (while). */
static inline int xpv_attrib_is_control_flow(xpv_hlo_str op)
{
    static const char *const FLOW[] = {"while", "conditional", "call", NULL};
    for (const char *const *f = FLOW; *f; f++)
        if (op.n == strlen(*f) && memcmp(op.p, *f, op.n) == 0) return 1;
    return 0;
}

struct xpv_attrib_module {
    xpv_attrib *owner;
    const xpv_hlo_blob *blob;
    uint64_t prog;
    uint32_t name;  /* interned module name */
    int state;      /* 0: not decoded, 1: ready to name, -1: failed */
    int runs_ready; /* what graph executions need is built (prepare_runs) */
    xpv_hlo_module m;
    uint32_t *launchers; /* instruction indexes, module order */
    uint32_t nlaunchers;
    uint8_t *is_fusion;    /* by launcher */
    uint8_t *ambiguous;    /* by launcher: another launcher's name spells its kernel too */
    uint8_t *is_copy;      /* by launcher: XLA may run it as a copy (may_copy) */
    uint32_t *sched;       /* by instruction: its position in its computation's schedule */
    uint32_t *flow_before; /* by instruction: loops, conditionals, calls scheduled before it */
    uint32_t *at_pos;      /* by computation's first + position: the instruction scheduled there */
    uint32_t *inner;       /* by instruction: an async-start's one wrapped launcher, else NONE */
    uint32_t *seen;        /* by computation: seen_gen when a placed event of the run lies there */
    uint32_t seen_gen;
    int scheduled;               /* some instruction has a schedule position */
    uint32_t *cand;              /* scratch: the launchers a rule weighs */
    uint32_t *launcher_of_instr; /* by instruction: its launcher, NONE when none */
    uint32_t *inputs;            /* by launcher, from input_at[l] to input_at[l + 1]: */
    uint32_t *input_at;          /*   the launchers whose results it reads */
    uint32_t *group_next;        /* by launcher: next of its reuse group, NONE at the end */
    uint32_t *group_head;        /* by launcher: the first of its reuse group */
    uint32_t *callee_at;         /* by computation, from callee_at[c] to callee_at[c + 1]: */
    uint32_t *callees;           /*   the computations its control flow calls */
    uint32_t *caller;            /* by computation: one whose control flow calls it, or NONE */
    uint32_t *call_site;         /* by computation: the instruction of its caller that runs it */
    uint32_t *site;              /* by computation: the async-start that runs it, or NONE */
    uint8_t *looped;             /* by computation: a while runs it */
    uint32_t *scope;             /* by computation: the run's generation when in its scope */
    uint32_t *repeats;           /* by computation: the run's generation when a loop body
                                    that the run's graph ran more than once */
    int scoped;                  /* the run has a scope (in_scope) */
    uint32_t entry;              /* the entry computation's index */
    xpv_hindex by_name;          /* hash of the exact name -> instruction index */
    xpv_hindex by_kernel;        /* hash of the kernel spelling -> launcher */
    xpv_hindex kernel_of;        /* interned kernel name -> launcher + 1 (0: none) */
    xpv_hindex instr_of;         /* interned hlo_op -> instruction + 1 (0: none) */
    struct xpv_attrib_op *ops;   /* by instruction, interned on first use */
    uint8_t *op_ready;
    /* run scratch, by launcher: generation stamps and counts */
    uint32_t *named, *used, *count;
    uint32_t gen;
    int64_t *at, *place; /* by event: the launcher its name spells, and where it is placed */
    uint8_t *cls;        /* by event: its class to the gap rule (event_class) */
    size_t at_cap;
};

struct xpv_attrib {
    xpv_sink *sink;
    const uint8_t *data;
    xpv_hlo_blob *blobs;
    size_t nblobs;
    xpv_attrib_module *mods;
    xpv_hindex cmdbuf;    /* interned hlo_op -> 1 command buffer, 2 not */
    xpv_hindex event_cls; /* interned event name -> its event_class + 1 */
    uint32_t unattributed;
    size_t last;                         /* the module found last, checked first */
    int64_t placed, by_name_order, left; /* graph events placed (by name order alone), not */
    int64_t by_schedule;                 /* graph copies placed by schedule order alone */
};

/* 1 when launcher l lies in the run's scope (xplane_attrib.c's mark_scope),
 * or the run has none. */
static inline int xpv_attrib_in_scope(const xpv_attrib_module *am, uint32_t l)
{
    return !am->scoped || am->scope[am->m.instrs[am->launchers[l]].computation] == am->gen;
}

/* 1 when launcher l may run the kernel named after launcher x: l is x, or
 * a member of x's reuse group that no kernel of the run names, and within
 * the run's scope. The kernel is named after the instruction XLA compiled
 * first, which need not be the first to run: x gets no precedence. */
static inline int xpv_attrib_may_run(const xpv_attrib_module *am, uint32_t x, uint32_t l)
{
    return (l == x || (am->group_head[l] == am->group_head[x] && am->named[l] != am->gen)) &&
           xpv_attrib_in_scope(am, l);
}

/* ---- the schedule's rules (xplane_attrib_order.c) ---- */

/* Schedule positions (exclusive) between two placed events of one
 * computation, home. */
typedef struct {
    uint32_t home, lo, hi;
} xpv_attrib_window;

/* Reads the module's schedule into sched[] and flow_before[]. */
void xpv_attrib_order_prepare(xpv_attrib_module *am);
/* Notes, before a pass of the rules, the computations the run's placed
 * events lie in: a window or bound in a loop's body or condition, or in
 * what it calls, whose caller above the loop has one may span two runs
 * of a loop the graph holds, and is not used. */
void xpv_attrib_order_pass(xpv_attrib_module *am, size_t n);
void xpv_attrib_order_free(xpv_attrib_module *am);
/* The computation whose schedule orders launcher l, and in *instr the
 * instruction that stands for l there (l's, or the async-start's that
 * wraps it). */
uint32_t xpv_attrib_home(const xpv_attrib_module *am, uint32_t l, uint32_t *instr);
/* The placed events nearest to some events on either side (launchers,
 * -1 none), which bound by the schedule what may have run them. */
typedef struct {
    int64_t before, after;
} xpv_attrib_bounds;
void xpv_attrib_bounds_of(const xpv_attrib_module *am, size_t a, size_t b, size_t n,
                          xpv_attrib_bounds *bd);
/* 1 with *w when the placed events of bd, around some events, lie in one
 * computation, in order, with no control flow between. */
int xpv_attrib_window_of(const xpv_attrib_module *am, const xpv_attrib_bounds *bd,
                         xpv_attrib_window *w);
/* 1 with *w when placed launcher `before` ends a graph's placed events:
 * from it to the next control flow of its computation, or its end, which
 * ends the graph's commands there (a loop that is a command holds what
 * follows). */
int xpv_attrib_tail_window(const xpv_attrib_module *am, int64_t before, xpv_attrib_window *w);
/* 1 when launcher l is scheduled inside w. */
int xpv_attrib_in_window(const xpv_attrib_module *am, const xpv_attrib_window *w, uint32_t l);
/* Launcher l's position when it may run the kernel named after x inside w
 * and is not placed yet; NONE otherwise. */
uint32_t xpv_attrib_fits(const xpv_attrib_module *am, const xpv_attrib_window *w, uint32_t x,
                         uint32_t l);
/* The member of x's group that fits nearest after position `from` (dir
 * +1) or before it (dir -1), its position in *at; NONE when none. */
uint32_t xpv_attrib_next_member(const xpv_attrib_module *am, const xpv_attrib_window *w, uint32_t x,
                                uint32_t from, int dir, uint32_t *at);
/* The launcher computation home schedules at pos; NONE when none. */
uint32_t xpv_attrib_launcher_at(const xpv_attrib_module *am, uint32_t home, uint32_t pos);
/* 0 when bd shows, by the schedule, that launcher l cannot have run the
 * events; 1 otherwise. */
int xpv_attrib_allows(const xpv_attrib_module *am, const xpv_attrib_bounds *bd, uint32_t l);
/* Events placed by the schedule between their placed neighbours (the
 * run's names classify the unnamed ones; xplane_attrib_links.c): a run of
 * named kernels and single calls on the instruction each order-keeping
 * match gives it; else a kernel on the one member of its group that fits
 * between. Returns how many it placed. */
int xpv_attrib_place_by_schedule(xpv_attrib_module *am, const uint32_t *names, size_t n);
/* A gap [a, b) of CUDA's memcpy kernels: one memcpy node each, so one copy
 * each. The copies of the computation the placed events beside it ran in
 * (may_copy), in scope, named by no kernel and not yet placed, go to its
 * events in schedule order when there are exactly as many; otherwise
 * nothing is placed. Returns 1 when placed. */
int xpv_attrib_place_graph_copies(xpv_attrib_module *am, size_t a, size_t b, size_t n);

/* Of the candidates, the one whose data links to the placed events around
 * the events [a, b) of a run of n score best; -1 when none is linked or two
 * tie. */
int64_t xpv_attrib_nearest_linked(xpv_attrib_module *am, const uint32_t *cand, size_t ncand,
                                  size_t a, size_t b, size_t n);

/* Places the run's gaps (events no name places), a call at a time; with
 * wait, a call waits while a kernel beside it is unplaced (with a
 * schedule). Returns how many calls it placed. */
int xpv_attrib_place_gaps(xpv_attrib_module *am, const uint32_t *names, size_t n, int wait);

#endif
