/*
 * hlo_proto.h — XLA's compiled modules as profiles carry them: the
 * `Hlo Proto` stats of an XSpace's /host:metadata plane, each an
 * `xla.HloProto` (hlo_module and buffer_assignment), decoded with the
 * project's own wire decoder (protobuf.h). Field numbers are those of the
 * public xla/service/hlo.proto and xla/xla_data.proto.
 *
 * Why here, in indexer/readers/: these are bytes of the xplane format, read
 * by a decoder that knows no SQL nor HTTP. The indexer does not call it:
 * the api layer decodes a module when one is asked for (hlo_protos.c in
 * api/ says why), from the profile file, which is only ever read.
 *
 * Invariants: a decoded module points into the bytes it was decoded from
 * (strings are not copied), so those bytes must outlive it. Every count is
 * bounded by the bytes that carry it (a repeated field cannot hold more
 * elements than bytes), and decoding refuses a module whose structures
 * would take more than the caller's budget: a malformed or oversized proto
 * gives an error naming the module and the byte offset, for that module
 * only. Unknown values stay unknown (-1 / has_* = 0), never 0.
 */
#ifndef XPV_HLO_PROTO_H
#define XPV_HLO_PROTO_H

#include "protobuf.h"

typedef struct {
    const char *p; /* not NUL-terminated; NULL when absent */
    uint32_t n;
} xpv_hlo_str;

typedef struct xpv_hlo_shape {
    int32_t element_type; /* xla.PrimitiveType; 13 = TUPLE, 0 unknown */
    uint32_t ndims, ntuple;
    int64_t *dims;
    struct xpv_hlo_shape *tuple;
} xpv_hlo_shape;

typedef struct {
    int64_t *v;
    uint32_t n, cap;
} xpv_hlo_ints;

/* What only dots and convolutions carry, kept apart so that the many
 * other instructions do not pay for it. */
typedef struct {
    xpv_hlo_ints lhs_contracting, rhs_contracting, lhs_batch, rhs_batch;
    int has_conv_dims;
    int64_t kernel_input_feature_dim, feature_group_count, batch_group_count;
    xpv_hlo_ints kernel_spatial_dims;
} xpv_hlo_dims;

typedef struct {
    xpv_hlo_str name, opcode, op_type, op_name, source_file, custom_call_target;
    xpv_hlo_str backend_config; /* as XLA wrote it (JSON on GPU), not parsed here */
    xpv_hlo_str raw;            /* the serialized HloInstructionProto */
    int32_t source_line;        /* 0 unknown */
    int64_t stack_frame_id;     /* metadata's frame in the module's stack_frame_index, 0 none */
    uint32_t computation;       /* index of its computation in the module */
    int64_t id, parameter_number;
    xpv_hlo_shape shape;
    xpv_hlo_ints operands, called;
    xpv_hlo_dims *dims; /* NULL when the instruction carries none */
} xpv_hlo_instr;

typedef struct {
    xpv_hlo_str name;
    int64_t id, root_id;
    uint32_t first, n; /* instructions [first, first + n) of the module */
} xpv_hlo_computation;

typedef struct {
    int64_t id, size, instruction_id, color;
    xpv_hlo_ints shape_index;
} xpv_hlo_logical_buffer;

typedef struct {
    int64_t logical_buffer_id, offset, size;
} xpv_hlo_assigned;

typedef struct {
    int64_t index, size, parameter_number, color;
    int is_thread_local, is_tuple, is_entry_computation_parameter, is_constant, maybe_live_out;
    xpv_hlo_assigned *assigned;
    uint32_t nassigned;
} xpv_hlo_allocation;

enum { XPV_HLO_HEAP_ALLOC = 0, XPV_HLO_HEAP_FREE = 1, XPV_HLO_HEAP_SHARE_WITH = 2 };

typedef struct {
    int kind;
    int64_t buffer_id, share_with_canonical_id;
    xpv_hlo_str computation_name, instruction_name;
} xpv_hlo_heap_event;

typedef struct {
    xpv_hlo_heap_event *events;
    uint32_t nevents;
    int whole_module_simulation;
    int64_t buffer_allocation_index;
} xpv_hlo_heap_trace;

/* An item's id and its index, the lookup tables' entries. */
typedef struct {
    int64_t id;
    uint32_t index;
} xpv_hlo_id_index;

typedef struct {
    xpv_hlo_str name, entry_computation_name;
    int64_t id, entry_computation_id;
    xpv_hlo_computation *computations;
    uint32_t ncomputations;
    xpv_hlo_instr *instrs; /* every computation's, in computation order */
    uint32_t ninstrs;
    int has_buffer_assignment;
    xpv_hlo_logical_buffer *buffers;
    uint32_t nbuffers;
    xpv_hlo_allocation *allocations;
    uint32_t nallocations;
    xpv_hlo_heap_trace *traces;
    uint32_t ntraces;
    xpv_hlo_str stack_frame_index; /* the serialized StackFrameIndexProto, read by hlo_frames.c */
    xpv_hlo_str schedule;          /* the serialized HloScheduleProto, read by hlo_schedule.c */
    struct xpv_hlo_frames *frames; /* that index by position (hlo_frames.c), NULL when none */
    /* internal: instruction and computation indexes sorted by id, the
     * arena the structures live in, and its size against the budget */
    xpv_hlo_id_index *by_id, *comp_by_id;
    void *arena;
    size_t bytes, budget;
} xpv_hlo_module;

/* Decodes one serialized xla.HloProto ([data, data + len), offsets in
 * errors counted from base). budget caps the bytes the decoded structures
 * take (0: no cap). Returns 0, or -1 with err (and *m freed). */
int xpv_hlo_decode(const uint8_t *base, const uint8_t *data, size_t len, size_t budget,
                   xpv_hlo_module *m, xpv_err *err);
void xpv_hlo_module_free(xpv_hlo_module *m);

/* The instruction with this id, NULL when none. */
const xpv_hlo_instr *xpv_hlo_instr_by_id(const xpv_hlo_module *m, int64_t id);
/* 1 with the index of the computation with this id, 0 when none. */
int xpv_hlo_computation_by_id(const xpv_hlo_module *m, int64_t id, uint32_t *index);
/* The logical buffer with this id, NULL when none. */
const xpv_hlo_logical_buffer *xpv_hlo_buffer_by_id(const xpv_hlo_module *m, int64_t id);
/* The sub-shape at shape_index, NULL when the index leaves the shape. */
const xpv_hlo_shape *xpv_hlo_subshape(const xpv_hlo_shape *s, const xpv_hlo_ints *index);
/* "f32", "bf16", ... ; NULL for a type this decoder does not name. */
const char *xpv_hlo_type_name(int32_t element_type);
/* Writes a shape as HLO text does: f32[2,3], (f32[2], s32[]), token[]. */
void xpv_hlo_put_shape(xpv_buf *b, const xpv_hlo_shape *s);

/* FLOPs of a dot or convolution from its operand and result shapes:
 *   dot:  2 * prod(result dims) * prod(lhs contracting dim sizes)
 *   conv: 2 * prod(result dims) * prod(kernel spatial dim sizes)
 *           * kernel input features (= input features / feature_group_count)
 * Returns 1 with *flops, 0 when the instruction is neither or a shape it
 * needs is missing (unknown, never 0). */
int xpv_hlo_instr_flops(const xpv_hlo_module *m, const xpv_hlo_instr *in, long double *flops);
/* The same formulas on shapes given apart (library calls, whose result is
 * a tuple and whose operands a convolution's gradients may swap): out is
 * the dot's or the forward convolution's result, lhs the dot's left
 * operand, kernel the convolution's kernel. 1 with *flops, 0 unknown. */
int xpv_hlo_dot_flops(const xpv_hlo_shape *out, const xpv_hlo_shape *lhs,
                      const xpv_hlo_ints *lhs_contracting, long double *flops);
int xpv_hlo_conv_flops(const xpv_hlo_shape *out, const xpv_hlo_shape *kernel,
                       const xpv_hlo_dims *dd, long double *flops);
/* Bytes of an array of s (elements times the type's width), summed over a
 * tuple's elements; 0 when a type has no whole-byte width (s4, token, ...). */
int xpv_hlo_shape_bytes(const xpv_hlo_shape *s, long double *bytes);

/* Where an instruction comes from in the user's program: its metadata's
 * source_file:source_line, or else the innermost frame of its stack_frame_id
 * in the module's stack_frame_index (newer JAX writes only that). 1 with
 * *file, *line (0 unknown) and *function (n = 0 unknown), 0 when neither
 * is known or the frame index is malformed (hlo_frames.c). */
int xpv_hlo_source(const xpv_hlo_module *m, const xpv_hlo_instr *in, xpv_hlo_str *file,
                   int32_t *line, xpv_hlo_str *function);
typedef struct xpv_hlo_frames xpv_hlo_frames;
/* Reads the module's stack_frame_index into m->frames (xpv_hlo_decode does). */
void xpv_hlo_frames_build(xpv_hlo_module *m);
void xpv_hlo_frames_free(xpv_hlo_frames *fr);

/* Each instruction's position in its computation's scheduled sequence
 * (pos has ninstrs entries): 0 for the first to run, UINT32_MAX for an
 * instruction no sequence holds, every entry when the module has no
 * schedule. Returns 0, or -1 with err when the schedule is damaged (then
 * no instruction has a position) (hlo_schedule.c). */
int xpv_hlo_schedule_positions(const xpv_hlo_module *m, uint32_t *pos, xpv_err *err);

/* ---- locating the Hlo Proto stats of an XSpace ---- */

typedef struct {
    xpv_hlo_str name;    /* the metadata's name, e.g. "jit_dot(79)" */
    uint64_t program_id; /* the event metadata id */
    const uint8_t *data; /* the serialized HloProto */
    size_t len;
} xpv_hlo_blob;

/* Finds every `Hlo Proto` stat of the /host:metadata plane of the XSpace
 * in [data, data + size): *out gets a malloc'ed array in metadata order,
 * *n its length (0 and NULL when none). Only the metadata plane is walked:
 * other planes are skipped by their length. Returns 0, or -1 with err. */
int xpv_hlo_find_blobs(const uint8_t *data, size_t size, xpv_hlo_blob **out, size_t *n,
                       xpv_err *err);

#endif
