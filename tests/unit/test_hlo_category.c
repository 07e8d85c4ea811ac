/*
 * test_hlo_category.c — the category of an HLO op from its name
 * (api/hlo/hlo_category.c): each rule, their order, names from the fixtures
 * (ROCm MI300X kernels' hlo_op), and the ".<n>" suffixes XLA adds.
 */
#include "testutil.h"
#include "api/hlo/hlo_ops.h"

#include <string.h>

static const char *cat(const char *name)
{
    return xpv_hlo_category(name, strlen(name));
}

static void test_base_len(void)
{
    CU_ASSERT_EQUAL(xpv_hlo_base_len("cudnn-conv.1.0", 14), 10);
    CU_ASSERT_EQUAL(xpv_hlo_base_len("copy.1", 6), 4);
    CU_ASSERT_EQUAL(xpv_hlo_base_len("copy", 4), 4);
    CU_ASSERT_EQUAL(xpv_hlo_base_len("fusion.", 7), 7);   /* no digits: kept */
    CU_ASSERT_EQUAL(xpv_hlo_base_len("fusion.1a", 9), 9); /* not all digits */
    CU_ASSERT_EQUAL(xpv_hlo_base_len(".5", 2), 2);        /* nothing before the dot */
    CU_ASSERT_EQUAL(xpv_hlo_base_len("a.b.12", 6), 3);    /* only trailing digit groups go */
    CU_ASSERT_EQUAL(xpv_hlo_base_len("", 0), 0);
}

static void test_collectives(void)
{
    CU_ASSERT_STRING_EQUAL(cat("all-reduce.3"), "all-reduce");
    CU_ASSERT_STRING_EQUAL(cat("all-reduce-start.1"), "all-reduce");
    CU_ASSERT_STRING_EQUAL(cat("all-gather-done"), "all-gather");
    CU_ASSERT_STRING_EQUAL(cat("reduce-scatter.2"), "reduce-scatter"); /* not "reduce" */
    CU_ASSERT_STRING_EQUAL(cat("all-to-all"), "all-to-all");
    CU_ASSERT_STRING_EQUAL(cat("ragged-all-to-all.1"), "ragged-all-to-all");
    CU_ASSERT_STRING_EQUAL(cat("collective-permute-start.4"), "collective-permute");
    CU_ASSERT_STRING_EQUAL(cat("collective-broadcast"), "collective-broadcast");
}

static void test_convolution_and_dot(void)
{
    CU_ASSERT_STRING_EQUAL(cat("cudnn-conv.1.0"), "convolution"); /* conv fixture */
    CU_ASSERT_STRING_EQUAL(cat("convolution.4"), "convolution");
    CU_ASSERT_STRING_EQUAL(cat("fused_convolution"), "convolution");
    CU_ASSERT_STRING_EQUAL(cat("input_convert_fusion"), "input fusion"); /* "conv" of convert */
    CU_ASSERT_STRING_EQUAL(cat("gemm_fusion_dot_general.1"), "dot");     /* gemm fixture */
    CU_ASSERT_STRING_EQUAL(cat("cublas-gemm.2"), "dot");
    CU_ASSERT_STRING_EQUAL(cat("triton_gemm_dot"), "dot");
    CU_ASSERT_STRING_EQUAL(cat("dot.7"), "dot");
    CU_ASSERT_STRING_EQUAL(cat("matmul_fusion"), "dot");
}

static void test_custom_call_and_copies(void)
{
    CU_ASSERT_STRING_EQUAL(cat("custom-call.1"), "custom-call"); /* its target is unknown */
    CU_ASSERT_STRING_EQUAL(cat("copy.1"), "copy");
    CU_ASSERT_STRING_EQUAL(cat("copy-start.2"), "copy-start");
    CU_ASSERT_STRING_EQUAL(cat("copy-done"), "copy-done");
    CU_ASSERT_STRING_EQUAL(cat("copy_fusion.3"), "copy");
}

static void test_fusions(void)
{
    CU_ASSERT_STRING_EQUAL(cat("loop_transpose_fusion"), "loop fusion");
    CU_ASSERT_STRING_EQUAL(cat("loop_add_fusion.2"), "loop fusion");
    CU_ASSERT_STRING_EQUAL(cat("wrapped_broadcast"), "loop fusion");
    CU_ASSERT_STRING_EQUAL(cat("input_transpose_fusion.1"), "input fusion");
    CU_ASSERT_STRING_EQUAL(cat("input_reduce_fusion"), "input fusion");
    CU_ASSERT_STRING_EQUAL(cat("output_fusion.1"), "output fusion");
    CU_ASSERT_STRING_EQUAL(cat("broadcast_add_fusion"), "fusion");
    CU_ASSERT_STRING_EQUAL(cat("fusion.12"), "fusion");
    CU_ASSERT_STRING_EQUAL(cat("input_slice"), "other"); /* input_ alone is no fusion */
}

static void test_opcodes_and_other(void)
{
    CU_ASSERT_STRING_EQUAL(cat("broadcast.2"), "broadcast");
    CU_ASSERT_STRING_EQUAL(cat("reduce.1"), "reduce");
    CU_ASSERT_STRING_EQUAL(cat("dynamic-update-slice.3"), "dynamic-update-slice");
    CU_ASSERT_STRING_EQUAL(cat("while"), "while");
    CU_ASSERT_STRING_EQUAL(cat("transpose"), "transpose");
    CU_ASSERT_STRING_EQUAL(cat("reduces"), "other"); /* an opcode as prefix is not enough */
    CU_ASSERT_STRING_EQUAL(cat("Cijk_Ailk_Bljk"), "other");
    CU_ASSERT_STRING_EQUAL(cat(""), "other");
}

int main(void)
{
    static const xpv_test_case tests[] = {
        {"base name without .<n>", test_base_len},
        {"collectives", test_collectives},
        {"convolution and dot", test_convolution_and_dot},
        {"custom-call and copies", test_custom_call_and_copies},
        {"fusion kinds", test_fusions},
        {"opcodes, other", test_opcodes_and_other},
        {NULL, NULL},
    };
    return xpv_test_run("hlo_category", tests, 0);
}
