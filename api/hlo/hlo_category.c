/*
 * hlo_category.c — the category of an HLO op from its instruction name, for
 * profiles whose ops do not carry hlo_category (raw GPU planes).
 *
 * XLA names an instruction after its opcode, then ".<n>" to make it unique
 * ("all-reduce-start.1", "copy.3", "cudnn-conv.1.0"), and a fusion after
 * its kind and its root ("loop_add_fusion", "input_reduce_fusion.2",
 * "gemm_fusion_dot_general.1"); single instructions emitted as kernels are
 * "wrapped_<opcode>". Only the name is known here (the HLO graph is not in
 * the index), so the rules are few and say no more than the name does.
 * On the name without its ".<n>" groups, first match wins:
 *   1. a collective opcode as prefix (all-reduce, all-gather,
 *      reduce-scatter, all-to-all, ragged-all-to-all, collective-permute,
 *      collective-broadcast; -start/-done included) -> that opcode;
 *   2. "convolution" anywhere, or a "cudnn-conv" prefix -> "convolution";
 *   3. "gemm", "matmul", or a "dot"/"cublas" prefix -> "dot";
 *   4. "custom-call" prefix -> "custom-call" (its target is not known);
 *   5. "copy-start", "copy-done" -> themselves; a "copy" prefix -> "copy";
 *   6. "loop_" or "wrapped_" prefix -> "loop fusion"; "input_" prefix with
 *      "fusion" -> "input fusion"; "output_" likewise -> "output fusion";
 *      any other name holding "fusion" -> "fusion";
 *   7. a known HLO opcode -> the opcode;
 *   8. otherwise "other".
 */
#include "hlo_category.h"

#include <string.h>

static int has_prefix(const char *s, size_t n, const char *p)
{
    size_t k = strlen(p);
    return n >= k && memcmp(s, p, k) == 0;
}

static int holds(const char *s, size_t n, const char *p)
{
    size_t k = strlen(p);
    for (size_t i = 0; i + k <= n; i++)
        if (memcmp(s + i, p, k) == 0) return 1;
    return 0;
}

static int is_digits(const char *s, size_t n)
{
    if (n == 0) return 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9') return 0;
    return 1;
}

size_t xpv_hlo_base_len(const char *name, size_t n)
{
    for (;;) {
        size_t dot = n;
        while (dot > 0 && name[dot - 1] != '.')
            dot--;
        if (dot < 2 || !is_digits(name + dot, n - dot)) return n;
        n = dot - 1;
    }
}

static const char *const COLLECTIVES[] = {
    "all-reduce", "all-gather",         "reduce-scatter",       "ragged-all-to-all",
    "all-to-all", "collective-permute", "collective-broadcast",
};

/* Opcodes (xla/hlo/ir/hlo_opcode.h) a kernel or XLA op is commonly named after. */
static const char *const OPCODES[] = {
    "abs",
    "add",
    "and",
    "async-done",
    "async-start",
    "atan2",
    "batch-norm-grad",
    "batch-norm-inference",
    "batch-norm-training",
    "bitcast",
    "bitcast-convert",
    "broadcast",
    "call",
    "cholesky",
    "clamp",
    "compare",
    "concatenate",
    "conditional",
    "constant",
    "convert",
    "cosine",
    "divide",
    "dynamic-slice",
    "dynamic-update-slice",
    "exponential",
    "fft",
    "gather",
    "get-tuple-element",
    "infeed",
    "iota",
    "log",
    "maximum",
    "minimum",
    "multiply",
    "negate",
    "or",
    "outfeed",
    "pad",
    "parameter",
    "power",
    "recv",
    "recv-done",
    "reduce",
    "reduce-precision",
    "reduce-window",
    "reshape",
    "reverse",
    "rng",
    "rng-bit-generator",
    "rsqrt",
    "scatter",
    "select",
    "select-and-scatter",
    "send",
    "send-done",
    "sine",
    "slice",
    "sort",
    "sqrt",
    "subtract",
    "tanh",
    "transpose",
    "triangular-solve",
    "tuple",
    "while",
    "xor",
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const char *fusion_kind(const char *s, size_t n)
{
    if (has_prefix(s, n, "loop_") || has_prefix(s, n, "wrapped_")) return "loop fusion";
    if (!holds(s, n, "fusion")) return NULL;
    if (has_prefix(s, n, "input_")) return "input fusion";
    if (has_prefix(s, n, "output_")) return "output fusion";
    return "fusion";
}

const char *xpv_hlo_category(const char *name, size_t n)
{
    n = xpv_hlo_base_len(name, n);
    for (size_t i = 0; i < COUNT(COLLECTIVES); i++)
        if (has_prefix(name, n, COLLECTIVES[i])) return COLLECTIVES[i];
    if (holds(name, n, "convolution") || has_prefix(name, n, "cudnn-conv")) return "convolution";
    if (holds(name, n, "gemm") || holds(name, n, "matmul") || has_prefix(name, n, "dot") ||
        has_prefix(name, n, "cublas"))
        return "dot";
    if (has_prefix(name, n, "custom-call")) return "custom-call";
    if (n == 10 && memcmp(name, "copy-start", 10) == 0) return "copy-start";
    if (n == 9 && memcmp(name, "copy-done", 9) == 0) return "copy-done";
    if (has_prefix(name, n, "copy")) return "copy";
    const char *kind = fusion_kind(name, n);
    if (kind) return kind;
    for (size_t i = 0; i < COUNT(OPCODES); i++)
        if (strlen(OPCODES[i]) == n && memcmp(name, OPCODES[i], n) == 0) return OPCODES[i];
    return "other";
}
