/*
 * test_gpu_peaks.c — the FP32 rate table against the CUDA C++ Programming
 * Guide's figures, the peak it gives (an H100 SXM and an A100), and the
 * devices it must not guess for: AMD planes (whose compute capability 9.0
 * is gfx90a, no CUDA capability), capabilities the table lacks, and
 * missing SM counts or clocks.
 */
#include "testutil.h"
#include "api/tools/gpu_peaks.h"

static void test_table(void)
{
    static const int rows[][3] = {{6, 0, 64}, {6, 1, 128}, {6, 2, 128}, {7, 0, 64},  {7, 2, 64},
                                  {7, 5, 64}, {8, 0, 64},  {8, 6, 128}, {8, 9, 128}, {9, 0, 128}};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        CU_ASSERT_EQUAL(xpv_gpu_fp32_per_clock_per_sm(rows[i][0], rows[i][1]), rows[i][2]);
    CU_ASSERT_EQUAL(xpv_gpu_fp32_per_clock_per_sm(9, 4), 0); /* AMD MI300X states 9.4 */
    CU_ASSERT_EQUAL(xpv_gpu_fp32_per_clock_per_sm(5, 0), 0); /* not in the table */
    CU_ASSERT_EQUAL(xpv_gpu_fp32_per_clock_per_sm(10, 0), 0);
}

static void test_peak(void)
{
    double f = 0;
    /* H100 SXM: 132 SMs at 1980 MHz: 132 x 128 x 2 x 1.98e9 */
    CU_ASSERT_EQUAL(xpv_gpu_peak_fp32_flops("Nvidia", 9, 0, 132, 1980000, &f), 1);
    CU_ASSERT_DOUBLE_EQUAL(f, 66908160000000.0, 0.5);
    /* A100: 108 SMs at 1410 MHz: 19.5 TFLOP/s */
    CU_ASSERT_EQUAL(xpv_gpu_peak_fp32_flops("NVIDIA", 8, 0, 108, 1410000, &f), 1);
    CU_ASSERT_DOUBLE_EQUAL(f, 19491840000000.0, 0.5);
    f = -1;
    CU_ASSERT_EQUAL(xpv_gpu_peak_fp32_flops("AMD", 9, 0, 304, 2100000, &f), 0);
    CU_ASSERT_EQUAL(xpv_gpu_peak_fp32_flops(NULL, 9, 0, 132, 1980000, &f), 0);
    CU_ASSERT_EQUAL(xpv_gpu_peak_fp32_flops("", 9, 0, 132, 1980000, &f), 0);
    CU_ASSERT_EQUAL(xpv_gpu_peak_fp32_flops("Nvidia", 9, 4, 132, 1980000, &f), 0);
    CU_ASSERT_EQUAL(xpv_gpu_peak_fp32_flops("Nvidia", 9, 0, 0, 1980000, &f), 0);
    CU_ASSERT_EQUAL(xpv_gpu_peak_fp32_flops("Nvidia", 9, 0, 132, 0, &f), 0);
    CU_ASSERT_EQUAL(f, -1); /* untouched when unknown */
}

int main(void)
{
    static const xpv_test_case tests[] = {
        {"FP32 results per clock per SM by compute capability", test_table},
        {"peak FP32 FLOP/s, and no guess for other devices", test_peak},
        {NULL, NULL},
    };
    return xpv_test_run("gpu_peaks", tests, 0);
}
