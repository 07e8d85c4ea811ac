/*
 * hlo_frames.c — an instruction's place in the user's source (see
 * xpv_hlo_source in hlo_proto.h).
 *
 * Older JAX wrote OpMetadata.source_file/source_line; newer JAX writes a
 * stack_frame_id into the module's StackFrameIndexProto instead: frames
 * point to file locations, which point to file and function names, all by
 * 1-based position in their repeated field. The index is small and read on
 * demand (callers cache per instruction), so nothing is decoded ahead.
 *
 * Invariant: a position that leads outside its field, or a damaged message,
 * gives "unknown", never a wrong name.
 */
#include "hlo_proto.h"

/* The k-th (1-based) occurrence of field num in msg, as a sub-message. */
static int nth(xpv_pb msg, uint32_t num, int64_t k, xpv_pb_field *out)
{
    xpv_err ignored;
    int64_t seen = 0;
    if (k < 1) return 0;
    while (xpv_pb_next(&msg, out, &ignored) == 1)
        if (out->num == num && ++seen == k) return out->wire == XPV_PB_LEN;
    return 0;
}

/* The varint field num of a message (0 when absent). */
static int64_t varint_of(const xpv_pb *parent, const xpv_pb_field *f, uint32_t num)
{
    xpv_pb m = xpv_pb_sub(parent, f);
    xpv_pb_field g;
    xpv_err ignored;
    int64_t v = 0;
    while (xpv_pb_next(&m, &g, &ignored) == 1)
        if (g.num == num && g.wire == XPV_PB_VARINT) v = (int64_t)g.v;
    return v;
}

static xpv_hlo_str text_of(const xpv_pb_field *f)
{
    xpv_hlo_str s = {(const char *)f->data, (uint32_t)(f->len > UINT32_MAX ? UINT32_MAX : f->len)};
    return s;
}

int xpv_hlo_source(const xpv_hlo_module *m, const xpv_hlo_instr *in, xpv_hlo_str *file,
                   int32_t *line, xpv_hlo_str *function)
{
    *line = 0;
    function->p = NULL, function->n = 0;
    if (in->source_file.n) {
        *file = in->source_file, *line = in->source_line;
        return 1;
    }
    if (in->stack_frame_id <= 0 || !m->stack_frame_index.n) return 0;
    xpv_pb index = xpv_pb_open(m->stack_frame_index.p, m->stack_frame_index.n);
    xpv_pb_field frame, loc, name;
    if (!nth(index, 4, in->stack_frame_id, &frame)) return 0;
    if (!nth(index, 3, varint_of(&index, &frame, 1), &loc)) return 0;
    if (!nth(index, 1, varint_of(&index, &loc, 1), &name)) return 0;
    *file = text_of(&name);
    *line = (int32_t)varint_of(&index, &loc, 3);
    if (nth(index, 2, varint_of(&index, &loc, 2), &name)) *function = text_of(&name);
    return 1;
}
