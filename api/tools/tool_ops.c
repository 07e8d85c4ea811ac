/*
 * tool_ops.c — see tool_ops.h.
 *
 * Nesting walks each item's would-be parents through the parent links of
 * the item before it (an implicit stack): in start order, whatever does not
 * hold the previous item's ancestors cannot hold a later item either.
 * Direct children of one span have increasing ends (a later child ending
 * earlier would lie inside the earlier one), so the union of a span's
 * children grows from the end of the last one: no interval lists needed.
 */
#include "tool_ops.h"
#include "../../common/xpv_common.h"
#include "../../common/xpv_lower_bound.h"

#include <stdlib.h>
#include <string.h>

/* ---- nesting ---- */

static int span_cmp(const void *pa, const void *pb)
{
    const xpv_tool_span *a = pa, *b = pb;
    if (a->track != b->track) return a->track < b->track ? -1 : 1;
    if (a->start != b->start) return a->start < b->start ? -1 : 1;
    if (a->end != b->end) return a->end > b->end ? -1 : 1;
    if (a->point != b->point) return a->point - b->point;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

void xpv_tool_spans_sort(xpv_tool_span *v, size_t n)
{
    xpv_sort(v, n, sizeof *v, span_cmp);
}

void xpv_tool_nest(xpv_tool_span *v, size_t n)
{
    int64_t *cover = xpv_xmalloc((n ? n : 1) * sizeof *cover); /* end of the last child */
    for (size_t i = 0; i < n; i++) {
        int32_t top = -1;
        if (i > 0 && v[i - 1].track == v[i].track)
            top = v[i - 1].point ? v[i - 1].parent : (int32_t)(i - 1);
        /* the sort puts every candidate's start at or before v[i]'s */
        while (top >= 0 && v[i].end > v[top].end)
            top = v[top].parent;
        v[i].parent = top;
        v[i].child_time = 0;
        if (v[i].point) continue;
        cover[i] = v[i].start;
        if (top < 0) continue;
        int64_t from = v[i].start > cover[top] ? v[i].start : cover[top];
        if (v[i].end > from) v[top].child_time += v[i].end - from;
        if (v[i].end > cover[top]) cover[top] = v[i].end;
    }
    free(cover);
}

/* ---- framework op names ---- */

/* The last component of a name stack, without its "[params]". */
static void op_type_of(const char *s, size_t n, xpv_tool_op *out)
{
    size_t from = 0, depth = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '(' || s[i] == '[' || s[i] == '{')
            depth++;
        else if ((s[i] == ')' || s[i] == ']' || s[i] == '}') && depth)
            depth--;
        else if (s[i] == '/' && !depth)
            from = i + 1;
    }
    size_t to = from;
    while (to < n && s[to] != '[')
        to++;
    if (to == from) from = 0, to = n; /* "a/" or "[x]": keep the whole name */
    out->type = s + from;
    out->type_len = to - from;
}

void xpv_tool_op_parse(const char *s, size_t n, xpv_tool_op *out)
{
    size_t sep = n, depth = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '(' || c == '[' || c == '{') {
            depth++;
        } else if ((c == ')' || c == ']' || c == '}') && depth) {
            depth--;
        } else if (depth == 0 && c == '/') {
            sep = n; /* "a:b/c": the colon was part of a scope name */
        } else if (depth == 0 && c == ':') {
            if (i + 1 < n && s[i + 1] == ':')
                i++; /* "aten::mm": a C++ namespace, not a type */
            else
                sep = i;
        }
    }
    out->name = s;
    out->name_len = sep;
    out->type = sep < n ? s + sep + 1 : s + n;
    out->type_len = sep < n ? n - sep - 1 : 0;
    if (out->type_len == 0) op_type_of(s, sep, out);
}

/* ---- input work ---- */

static int has(const char *s, size_t n, const char *needle)
{
    size_t m = strlen(needle);
    for (size_t i = 0; i + m <= n; i++)
        if (memcmp(s + i, needle, m) == 0) return 1;
    return 0;
}

/* "infeed" or "infeed.<anything>" for op "infeed". */
static int xla_feed(const char *s, size_t n, const char *op)
{
    size_t m = strlen(op);
    return n >= m && memcmp(s, op, m) == 0 && (n == m || s[m] == '.');
}

enum xpv_tool_input xpv_tool_input_class(const char *name, size_t n)
{
    if (memchr(name, ';', n) || memchr(name, '\n', n)) return XPV_TOOL_INPUT_NONE;
    /* XLA instructions "infeed", "outfeed.3"; TensorFlow and runtime names in
     * CamelCase (InfeedEnqueueTuple, TransferToInfeedLocked). Not XLA's
     * compiler passes (infeed-token-propagation, infeed_flattener). */
    if (xla_feed(name, n, "infeed") || xla_feed(name, n, "outfeed") || has(name, n, "Infeed") ||
        has(name, n, "Outfeed"))
        return XPV_TOOL_INPUT_FEED;
    /* PyTorch: enumerate(DataLoader)#..., _MultiProcessingDataLoaderIter.__next__,
     * the Python tracer's frames of torch/utils/data/dataloader.py; tf.data:
     * IteratorGetNext (TF ops), Iterator::... (tf.data's own events). */
    if (has(name, n, "DataLoader") || has(name, n, "dataloader.py(") ||
        has(name, n, "IteratorGetNext") || (n >= 10 && memcmp(name, "Iterator::", 10) == 0) ||
        (n == 4 && memcmp(name, "next", 4) == 0))
        return XPV_TOOL_INPUT_LOADER;
    return XPV_TOOL_INPUT_NONE;
}

/* ---- intervals ---- */

static int ival_cmp(const void *pa, const void *pb)
{
    const xpv_tool_ival *a = pa, *b = pb;
    if (a->start != b->start) return a->start < b->start ? -1 : 1;
    return (a->end > b->end) - (a->end < b->end);
}

size_t xpv_tool_ivals_normalize(xpv_tool_ival *v, size_t n)
{
    xpv_sort(v, n, sizeof *v, ival_cmp);
    size_t out = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i].end <= v[i].start) continue;
        if (out && v[i].start <= v[out - 1].end) {
            if (v[i].end > v[out - 1].end) v[out - 1].end = v[i].end;
        } else {
            v[out++] = v[i];
        }
    }
    return out;
}

/* The first interval of normalized v that ends after t. */
static size_t first_ending_after(const xpv_tool_ival *v, size_t n, int64_t t)
{
    return xpv_upper_bound_i64(v, n, sizeof *v, offsetof(xpv_tool_ival, end), t);
}

int64_t xpv_tool_ivals_len_in(const xpv_tool_ival *v, size_t n, int64_t w0, int64_t w1)
{
    int64_t len = 0;
    for (size_t i = first_ending_after(v, n, w0); i < n && v[i].start < w1; i++) {
        int64_t s = v[i].start > w0 ? v[i].start : w0, e = v[i].end < w1 ? v[i].end : w1;
        if (e > s) len += e - s;
    }
    return len;
}

/* A cursor on a normalized list: whether t is inside, and the next instant
 * after t at which that changes (INT64_MAX: never). */
typedef struct {
    const xpv_tool_ival *v;
    size_t n, i;
} cursor;

static int64_t cursor_at(cursor *c, int64_t t, int *inside)
{
    while (c->i < c->n && c->v[c->i].end <= t)
        c->i++;
    if (c->i == c->n) return *inside = 0, INT64_MAX;
    *inside = c->v[c->i].start <= t;
    return *inside ? c->v[c->i].end : c->v[c->i].start;
}

int64_t xpv_tool_wait_len(const xpv_tool_ival *a, size_t na, const xpv_tool_ival *b, size_t nb,
                          const xpv_tool_ival *c, size_t nc, int64_t w0, int64_t w1)
{
    cursor ca = {a, na, first_ending_after(a, na, w0)};
    cursor cb = {b, nb, first_ending_after(b, nb, w0)};
    cursor cc = {c, nc, first_ending_after(c, nc, w0)};
    int64_t len = 0;
    for (int64_t t = w0; t < w1;) {
        int in_a, in_b, in_c;
        int64_t next = w1, x;
        if ((x = cursor_at(&ca, t, &in_a)) < next) next = x;
        if ((x = cursor_at(&cb, t, &in_b)) < next) next = x;
        if ((x = cursor_at(&cc, t, &in_c)) < next) next = x;
        if ((in_a && !in_b) || in_c) len += next - t;
        t = next;
    }
    return len;
}
