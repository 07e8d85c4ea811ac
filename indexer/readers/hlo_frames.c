/*
 * hlo_frames.c — an instruction's place in the user's source (see
 * xpv_hlo_source in hlo_proto.h).
 *
 * Older JAX wrote OpMetadata.source_file/source_line; newer JAX writes a
 * stack_frame_id into the module's StackFrameIndexProto instead: frames
 * point to file locations, which point to file and function names, all by
 * 1-based position in their repeated field. The index is read once, when
 * the module is decoded, into arrays by position, so a lookup is O(1).
 *
 * Invariant: a position that leads outside its field, or a damaged message,
 * gives "unknown", never a wrong name.
 */
#include "hlo_proto.h"

#include <stdlib.h>
#include <string.h>

struct xpv_hlo_frames {
    xpv_hlo_str *files, *functions;
    int64_t (*locations)[3]; /* file id, function id, line */
    int64_t *frame_location;
    uint32_t nfiles, nfunctions, nlocations, nframes;
};

static xpv_hlo_str text_of(const xpv_pb_field *f)
{
    xpv_hlo_str s = {(const char *)f->data, (uint32_t)(f->len > UINT32_MAX ? UINT32_MAX : f->len)};
    return s;
}

/* The varint fields 1..3 of a sub-message (0 when absent). */
static void varints_of(const xpv_pb *parent, const xpv_pb_field *f, int64_t v[3])
{
    xpv_pb m = xpv_pb_sub(parent, f);
    xpv_pb_field g;
    xpv_err ignored;
    v[0] = v[1] = v[2] = 0;
    while (xpv_pb_next(&m, &g, &ignored) == 1)
        if (g.num >= 1 && g.num <= 3 && g.wire == XPV_PB_VARINT) v[g.num - 1] = (int64_t)g.v;
}

static void *grow(void *p, uint32_t n, size_t size)
{
    return (n & (n - 1)) == 0 ? xpv_xrealloc(p, (n ? 2 * (size_t)n : 1) * size) : p;
}

/* One pass over the index: every repeated field's entries, by position. */
void xpv_hlo_frames_build(xpv_hlo_module *m)
{
    if (!m->stack_frame_index.n) return;
    xpv_hlo_frames *fr = xpv_xcalloc(1, sizeof *fr);
    xpv_pb index = xpv_pb_open(m->stack_frame_index.p, m->stack_frame_index.n);
    xpv_pb_field f;
    xpv_err ignored;
    while (xpv_pb_next(&index, &f, &ignored) == 1) {
        if (f.wire != XPV_PB_LEN) continue;
        int64_t v[3];
        if (f.num == 1) {
            fr->files = grow(fr->files, fr->nfiles, sizeof *fr->files);
            fr->files[fr->nfiles++] = text_of(&f);
        } else if (f.num == 2) {
            fr->functions = grow(fr->functions, fr->nfunctions, sizeof *fr->functions);
            fr->functions[fr->nfunctions++] = text_of(&f);
        } else if (f.num == 3) {
            varints_of(&index, &f, v);
            fr->locations = grow(fr->locations, fr->nlocations, sizeof *fr->locations);
            memcpy(fr->locations[fr->nlocations++], v, sizeof v);
        } else if (f.num == 4) {
            varints_of(&index, &f, v);
            fr->frame_location = grow(fr->frame_location, fr->nframes, sizeof *fr->frame_location);
            fr->frame_location[fr->nframes++] = v[0];
        }
    }
    m->frames = fr;
}

void xpv_hlo_frames_free(xpv_hlo_frames *fr)
{
    if (!fr) return;
    free(fr->files), free(fr->functions), free(fr->locations), free(fr->frame_location);
    free(fr);
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
    const xpv_hlo_frames *fr = m->frames;
    int64_t id = in->stack_frame_id;
    if (!fr || id <= 0 || id > fr->nframes) return 0;
    int64_t loc = fr->frame_location[id - 1];
    if (loc <= 0 || loc > fr->nlocations) return 0;
    const int64_t *l = fr->locations[loc - 1];
    if (l[0] <= 0 || l[0] > fr->nfiles) return 0;
    *file = fr->files[l[0] - 1];
    *line = (int32_t)l[2];
    if (l[1] > 0 && l[1] <= fr->nfunctions) *function = fr->functions[l[1] - 1];
    return 1;
}
