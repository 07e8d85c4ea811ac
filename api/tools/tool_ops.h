/*
 * tool_ops.h — the pure logic under the framework_op_stats and
 * input_pipeline_analyzer tools: which op encloses which on a thread (self
 * time), a framework op's name and type from a TensorFlow/JAX op name,
 * which event names are input work, and lengths of interval unions. No
 * SQL, no I/O: unit-tested alone (tests/unit/test_tool_ops.c).
 *
 * Times are integers in one unit the caller chooses (picoseconds in the
 * tools); intervals are [start, end).
 */
#ifndef XPV_TOOL_OPS_H
#define XPV_TOOL_OPS_H

#include <stddef.h>
#include <stdint.h>

/* ---- nesting by containment ---- */

/* A span on one thread (track), or a point (a kernel launch) to place
 * inside the spans. A child lies inside its parent: it starts at or after
 * the parent's start and ends at or before the parent's end. */
typedef struct {
    uint32_t track;
    int point;          /* 1: a point at start (end == start): it gets a parent, is nobody's */
    int64_t start, end; /* end >= start */
    uint64_t seq;       /* delivery order: decides between spans with equal start and end */
    uint32_t ref;       /* the caller's: what this span stands for */
    int32_t parent;     /* out: index in the sorted array of the innermost span holding it, -1 */
    int64_t child_time; /* out (spans): the union of the direct child spans, never > end - start */
} xpv_tool_span;

/* Sorts by track, start, end descending (outer before inner), spans before
 * points, then seq: the order xpv_tool_nest needs. */
void xpv_tool_spans_sort(xpv_tool_span *v, size_t n);
/* Fills parent and child_time of every item of v (sorted as above). A
 * span's self time is end - start - child_time. */
void xpv_tool_nest(xpv_tool_span *v, size_t n);

/* ---- framework op names ---- */

/* An op's name and type from a framework op name as profiles carry it:
 * TensorFlow's "scope/name:Type", JAX's name stack "jit(f)/jit(main)/
 * dot_general:" (type left empty), or a plain name. An empty type is the
 * last component of the name stack without its "[params]". Both point
 * into s. */
typedef struct {
    const char *name, *type;
    size_t name_len, type_len;
} xpv_tool_op;
void xpv_tool_op_parse(const char *s, size_t n, xpv_tool_op *out);

/* ---- input work ---- */

enum xpv_tool_input {
    XPV_TOOL_INPUT_NONE = 0,
    XPV_TOOL_INPUT_LOADER = 1, /* data loading: tf.data iterators, PyTorch DataLoader, next */
    XPV_TOOL_INPUT_FEED = 2,   /* XLA/TPU infeed and outfeed */
};
/* What an event of this name is, as input work. Call stacks (names with ';'
 * or a line break) are never input work. */
enum xpv_tool_input xpv_tool_input_class(const char *name, size_t n);

/* ---- intervals ---- */

typedef struct {
    int64_t start, end;
} xpv_tool_ival;

/* Sorts v and merges overlapping or touching intervals, dropping empty
 * ones; returns the new count. */
size_t xpv_tool_ivals_normalize(xpv_tool_ival *v, size_t n);
/* Total length of normalized v inside [w0, w1). */
int64_t xpv_tool_ivals_len_in(const xpv_tool_ival *v, size_t n, int64_t w0, int64_t w1);
/* Length, inside [w0, w1), of the time in a but not in b, or in c: the
 * time the device waits for input when a is the host's input work, b the
 * device's other work and c its infeed. All three normalized. */
int64_t xpv_tool_wait_len(const xpv_tool_ival *a, size_t na, const xpv_tool_ival *b, size_t nb,
                          const xpv_tool_ival *c, size_t nc, int64_t w0, int64_t w1);

#endif
