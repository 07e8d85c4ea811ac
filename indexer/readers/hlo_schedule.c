/*
 * hlo_schedule.c — the order XLA runs each computation's instructions in:
 * the module's `schedule` (HloScheduleProto: sequences = 1, a map from a
 * computation id (key = 1) to an InstructionSequence (value = 2) whose
 * instruction_ids = 1 list the computation's instructions in run order).
 *
 * Why: a graph execution's copies (CUDA's own kernels for memcpy nodes)
 * name no instruction; the command buffer holds its commands in this
 * order, so the order places them (xplane_attrib_order.c).
 *
 * Invariants: a position is given only to an instruction of the sequence's
 * own computation, and only once; a damaged schedule gives no position at
 * all, never a partial one.
 */
#include "hlo_proto.h"

#include <string.h>

/* Gives instruction `id` of computation c the next position, *at. */
static int place_id(const xpv_hlo_module *m, uint64_t id, uint32_t c, uint32_t *pos, uint32_t *at,
                    xpv_err *err)
{
    const xpv_hlo_instr *in = xpv_hlo_instr_by_id(m, (int64_t)id);
    if (!in || in->computation != c) return xpv_err_set(err, "schedule: stray id");
    uint32_t i = (uint32_t)(in - m->instrs);
    if (pos[i] != UINT32_MAX) return xpv_err_set(err, "schedule: id twice");
    pos[i] = (*at)++;
    return 0;
}

/* Positions from one InstructionSequence of computation c: its ids one
 * field each, or packed. */
static int read_sequence(const xpv_hlo_module *m, xpv_pb seq, uint32_t c, uint32_t *pos,
                         xpv_err *err)
{
    xpv_pb_field f;
    uint32_t at = 0;
    int rc;
    while ((rc = xpv_pb_next(&seq, &f, err)) == 1) {
        if (f.num != 1) continue;
        if (f.wire == XPV_PB_VARINT) {
            if (place_id(m, f.v, c, pos, &at, err) != 0) return -1;
            continue;
        }
        if (f.wire != XPV_PB_LEN) return xpv_err_set(err, "schedule: bad id");
        uint64_t id;
        for (xpv_pb ids = xpv_pb_sub(&seq, &f); ids.p < ids.end;)
            if (xpv_pb_varint(&ids, &id, err) != 0 || place_id(m, id, c, pos, &at, err) != 0)
                return -1;
    }
    return rc < 0 ? -1 : 0;
}

/* One map entry: the computation (key) and its sequence (value). */
static int read_entry(const xpv_hlo_module *m, xpv_pb entry, uint32_t *pos, xpv_err *err)
{
    xpv_pb_field f;
    int64_t comp_id = -1;
    xpv_pb seq = {0};
    int rc, has_seq = 0;
    while ((rc = xpv_pb_next(&entry, &f, err)) == 1) {
        if (f.num == 1 && f.wire == XPV_PB_VARINT) comp_id = (int64_t)f.v;
        if (f.num == 2 && f.wire == XPV_PB_LEN) seq = xpv_pb_sub(&entry, &f), has_seq = 1;
    }
    uint32_t c;
    if (rc < 0) return -1;
    if (!has_seq || !xpv_hlo_computation_by_id(m, comp_id, &c)) return 0;
    return read_sequence(m, seq, c, pos, err);
}

int xpv_hlo_schedule_positions(const xpv_hlo_module *m, uint32_t *pos, xpv_err *err)
{
    for (uint32_t i = 0; i < m->ninstrs; i++)
        pos[i] = UINT32_MAX;
    if (!m->schedule.n) return 0;
    xpv_pb sched = xpv_pb_open(m->schedule.p, m->schedule.n);
    xpv_pb_field f;
    int rc;
    while ((rc = xpv_pb_next(&sched, &f, err)) == 1)
        if (f.num == 1 && f.wire == XPV_PB_LEN &&
            read_entry(m, xpv_pb_sub(&sched, &f), pos, err) != 0) {
            rc = -1;
            break;
        }
    if (rc < 0)
        for (uint32_t i = 0; i < m->ninstrs; i++)
            pos[i] = UINT32_MAX;
    return rc < 0 ? -1 : 0;
}
