/*
 * fuzz_hlo_proto.c — the HloProto decoder (indexer/readers/hlo_proto.c),
 * as the memory and HLO views use it: the input is taken both as one
 * serialized xla.HloProto and as an XSpace whose /host:metadata plane
 * carries such protos. Whatever decodes is then walked the way the views
 * walk it (ids, sub-shapes, shapes as text, FLOPs) and as attribution reads
 * its schedule (each position within its computation), since a decoded
 * module that is unsafe to walk is as bad as a crash in the decoder.
 */
#include "fuzz.h"

#include "indexer/readers/hlo_proto.h"

#include <stdlib.h>
#include <string.h>

#define BUDGET ((size_t)64 << 20)

static void walk(const xpv_hlo_module *m)
{
    xpv_buf text = {0};
    for (uint32_t i = 0; i < m->ninstrs; i++) {
        const xpv_hlo_instr *in = &m->instrs[i];
        long double flops;
        xpv_hlo_instr_flops(m, in, &flops);
        xpv_hlo_put_shape(&text, &in->shape);
        for (uint32_t k = 0; k < in->operands.n; k++)
            xpv_hlo_instr_by_id(m, in->operands.v[k]);
        text.len = 0;
    }
    uint32_t *pos =
        malloc((m->ninstrs + 1) * sizeof *pos); /* the schedule, as attribution reads it */
    xpv_err err = {{0}};
    if (pos) xpv_hlo_schedule_positions(m, pos, &err);
    for (uint32_t i = 0; pos && i < m->ninstrs; i++)
        if (pos[i] != UINT32_MAX && pos[i] >= m->computations[m->instrs[i].computation].n) abort();
    free(pos);
    for (uint32_t b = 0; b < m->nbuffers; b++) {
        const xpv_hlo_logical_buffer *lb = &m->buffers[b];
        const xpv_hlo_instr *def = xpv_hlo_instr_by_id(m, lb->instruction_id);
        if (def) xpv_hlo_subshape(&def->shape, &lb->shape_index);
        xpv_hlo_buffer_by_id(m, lb->id);
    }
    xpv_buf_free(&text);
}

static void decode_one(const uint8_t *base, const uint8_t *data, size_t size)
{
    xpv_hlo_module m;
    xpv_err err = {{0}};
    if (xpv_hlo_decode(base, data, size, BUDGET, &m, &err) != 0) return;
    walk(&m);
    xpv_hlo_module_free(&m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* An exact-size copy, so that reading one byte past the input is caught. */
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy) return 0;
    memcpy(copy, data, size);
    decode_one(copy, copy, size);
    xpv_hlo_blob *blobs = NULL;
    size_t n = 0;
    xpv_err err = {{0}};
    if (xpv_hlo_find_blobs(copy, size, &blobs, &n, &err) == 0)
        for (size_t i = 0; i < n; i++)
            decode_one(copy, blobs[i].data, blobs[i].len);
    free(blobs);
    free(copy);
    return 0;
}
