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

/* As xplane_attrib.h names them; not included here, so that the rules'
 * files depend on this state alone, not on the module that calls them. */
typedef struct xpv_attrib xpv_attrib;
typedef struct xpv_attrib_module xpv_attrib_module;
struct xpv_attrib_op;

#define NONE UINT32_MAX

struct xpv_attrib_module {
    xpv_attrib *owner;
    const xpv_hlo_blob *blob;
    uint64_t prog;
    uint32_t name; /* interned module name */
    int state;     /* 0: not decoded, 1: ready, -1: failed */
    xpv_hlo_module m;
    uint32_t *launchers; /* instruction indexes, module order */
    uint32_t nlaunchers;
    uint8_t *is_fusion;          /* by launcher */
    uint8_t *ambiguous;          /* by launcher: another launcher's name spells its kernel too */
    uint8_t *is_copy;            /* by launcher: XLA may run it as a copy (may_copy) */
    uint32_t *sched;             /* by instruction: its position in its computation's schedule */
    uint32_t *cand;              /* scratch: the launchers a rule weighs */
    uint32_t *launcher_of_instr; /* by instruction: its launcher, NONE when none */
    uint32_t *inputs;            /* by launcher, from input_at[l] to input_at[l + 1]: */
    uint32_t *input_at;          /*   the launchers whose results it reads */
    uint32_t *group_next;        /* by launcher: next of its reuse group, NONE at the end */
    uint32_t *group_head;        /* by launcher: the first of its reuse group */
    uint32_t *callee_at;         /* by computation, from callee_at[c] to callee_at[c + 1]: */
    uint32_t *callees;           /*   the computations its control flow calls */
    uint32_t *caller;            /* by computation: one whose control flow calls it, or NONE */
    uint32_t *site;              /* by computation: the async-start that runs it, or NONE */
    uint32_t *scope;             /* by computation: the run's generation when in its scope */
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

/* Of the candidates, the one whose data links to the placed events around
 * the events [a, b) of a run of n score best; -1 when none is linked or two
 * tie. */
int64_t xpv_attrib_nearest_linked(xpv_attrib_module *am, const uint32_t *cand, size_t ncand,
                                  size_t a, size_t b, size_t n);

/* Places the run's gaps (events no name places), a call at a time; returns
 * how many calls it placed. */
int xpv_attrib_place_gaps(xpv_attrib_module *am, const uint32_t *names, size_t n);

#endif
