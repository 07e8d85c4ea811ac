/*
 * xpv_event.h — the event model every format reader produces and every
 * consumer (event store, analysis, export) reads.
 *
 * One event is a slice, instant, counter sample, async or flow record on one
 * track (a process/thread pair). Times are integer nanoseconds in the
 * source's own clock; dur_ps keeps the exact picosecond duration for sources
 * that have it (xplane), so sums in the analysis are exact.
 *
 * Strings are interned per profile (uint32 ids, 0 = none/empty). Args are a
 * flat list of key/value pairs; nested JSON values are kept as raw text.
 */
#ifndef XPV_EVENT_H
#define XPV_EVENT_H

#include <stdint.h>
#include <stddef.h>

/* What a device or host event is, decided by the reader that knows the format. */
enum xpv_kind {
    XPV_KIND_OTHER = 0,
    XPV_KIND_KERNEL = 1, /* device compute kernel (collectives too: see analysis) */
    XPV_KIND_MEMCPY_H2D = 2,
    XPV_KIND_MEMCPY_D2H = 3,
    XPV_KIND_MEMCPY_D2D = 4,
    XPV_KIND_MEMCPY_OTHER = 5, /* peer-to-peer or unknown direction */
    XPV_KIND_MEMSET = 6,
    XPV_KIND_LAUNCH = 7,        /* host runtime call that launched device work (has corr) */
    XPV_KIND_STEP = 8,          /* step marker; step number in xpv_event.step */
    XPV_KIND_XLA_OP = 9,        /* TPU / derived `XLA Ops` line event */
    XPV_KIND_XLA_MODULE = 10,   /* `XLA Modules` line event or module execution */
    XPV_KIND_DEVICE_OTHER = 11, /* other device activity (sync, markers) */
    XPV_KIND_COUNT
};

/* Where a step marker came from, in order of preference (lower wins). */
enum xpv_step_source {
    XPV_STEP_NONE = 0,
    XPV_STEP_ANNOTATION = 1,    /* JAX StepTraceAnnotation (step_num) */
    XPV_STEP_PROFILER_STEP = 2, /* PyTorch ProfilerStep#N */
    XPV_STEP_STEPS_LINE = 3,    /* xplane `Steps` line */
    XPV_STEP_NVTX = 4,          /* nsys NVTX range with a step number */
    XPV_STEP_TF = 5,            /* TensorFlow step marker */
    XPV_STEP_TRAINING_STEP = 6, /* a `training_step` / `train_step` annotation (Lightning) */
    XPV_STEP_OPTIMIZER = 7,     /* PyTorch `Optimizer.step#…`: steps end where it ends */
    XPV_STEP_MODULE = 8,        /* fallback: repeated top-level XLA module */
};

enum xpv_arg_type {
    XPV_ARG_INT = 1,    /* v.i */
    XPV_ARG_UINT = 2,   /* v.u */
    XPV_ARG_DOUBLE = 3, /* v.d */
    XPV_ARG_STR = 4,    /* v.str: interned string id */
    XPV_ARG_TEXT = 5,   /* text/len: a string kept inline (long or unique) */
    XPV_ARG_JSON = 6,   /* text/len: raw JSON value (object, array, bool, null) */
};

typedef struct {
    uint32_t key; /* interned */
    uint8_t type; /* enum xpv_arg_type */
    union {
        int64_t i;
        uint64_t u;
        double d;
        uint32_t str;
    } v;
    const char *text;
    uint32_t len;
} xpv_arg;

/* Launch shape of a kernel; -1 (or < 0 occupancy) means unknown, never 0. */
typedef struct {
    int32_t grid[3];
    int32_t block[3];
    int32_t registers_per_thread;
    int32_t static_shared_bytes;
    int32_t dynamic_shared_bytes;
    double occupancy_pct;
    uint32_t op; /* interned name of the op that launched it (hlo_op / tf_op / cpu op) */
    /* Nonzero when launches with the same key have the same grid, block,
     * registers and shared memory (xplane: the interned kernel_details text
     * they were parsed from), so a consumer can skip comparing them; 0 none. */
    uint32_t shape_key;
} xpv_launch;

typedef struct {
    int64_t ts_ns;
    int64_t dur_ns; /* -1 for events without duration (instants, counters, flows) */
    int64_t dur_ps; /* exact duration in ps; readers without ps set dur_ns * 1000 */
    uint32_t track;
    uint32_t name;
    uint32_t cat;
    char ph;          /* Chrome phase letter: X i C b e n s t f B E (B/E only when unmatched) */
    uint8_t kind;     /* enum xpv_kind */
    uint8_t step_src; /* enum xpv_step_source, for kind == XPV_KIND_STEP */
    int64_t corr;     /* correlation id linking launch and device event, -1 none */
    int64_t step;     /* step number (step markers, or step_num/group_id args), -1 none */
    uint8_t flow;     /* 1: its args link it to other events (Chrome bind_id/flow_in/flow_out,
                         the xplane `flow` stat); not stored per event, only per block */
    uint8_t counter;  /* 1: an instant whose numeric args are counter samples (PyTorch
                         `[memory]`); like flow, kept per block */
    const xpv_launch *launch; /* kernels only, may be NULL */
    const xpv_arg *args;
    uint32_t nargs;
} xpv_event;

static inline void xpv_launch_init(xpv_launch *l)
{
    l->grid[0] = l->grid[1] = l->grid[2] = -1;
    l->block[0] = l->block[1] = l->block[2] = -1;
    l->registers_per_thread = l->static_shared_bytes = l->dynamic_shared_bytes = -1;
    l->occupancy_pct = -1.0;
    l->op = 0;
    l->shape_key = 0;
}

static inline void xpv_event_init(xpv_event *e)
{
    e->ts_ns = 0;
    e->dur_ns = -1;
    e->dur_ps = -1;
    e->track = 0;
    e->name = e->cat = 0;
    e->ph = 'X';
    e->kind = XPV_KIND_OTHER;
    e->step_src = XPV_STEP_NONE;
    e->corr = -1;
    e->step = -1;
    e->flow = 0;
    e->counter = 0;
    e->launch = NULL;
    e->args = NULL;
    e->nargs = 0;
}

#endif
