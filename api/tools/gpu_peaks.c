/*
 * gpu_peaks.c — the per-architecture FP32 rate table and the peak it
 * gives (see gpu_peaks.h for the table's source and what it covers).
 */
#include "gpu_peaks.h"

#include <ctype.h>
#include <stddef.h>

int xpv_gpu_fp32_per_clock_per_sm(int major, int minor)
{
    static const struct {
        int major, minor, rate;
    } RATES[] = {
        {6, 0, 64}, {6, 1, 128}, {6, 2, 128}, {7, 0, 64},  {7, 2, 64},
        {7, 5, 64}, {8, 0, 64},  {8, 6, 128}, {8, 9, 128}, {9, 0, 128},
    };
    for (size_t i = 0; i < sizeof RATES / sizeof RATES[0]; i++)
        if (RATES[i].major == major && RATES[i].minor == minor) return RATES[i].rate;
    return 0;
}

/* "Nvidia", "NVIDIA", "NVIDIA Corporation": the vendor's name, any case. */
static int is_nvidia(const char *vendor)
{
    static const char WORD[] = "nvidia";
    for (size_t i = 0; WORD[i]; i++)
        if (!vendor || tolower((unsigned char)vendor[i]) != WORD[i]) return 0;
    return 1;
}

int xpv_gpu_peak_fp32_flops(const char *vendor, int major, int minor, int64_t sms,
                            int64_t clock_khz, double *flops)
{
    int rate = xpv_gpu_fp32_per_clock_per_sm(major, minor);
    if (!is_nvidia(vendor) || !rate || sms <= 0 || clock_khz <= 0) return 0;
    *flops = (double)sms * rate * 2 * (double)clock_khz * 1000;
    return 1;
}
