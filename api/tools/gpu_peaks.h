/*
 * gpu_peaks.h — a GPU's peak FP32 FLOP/s from what its device plane states
 * (vendor, compute capability, SM count, clock rate), where a documented
 * per-architecture table makes it exact.
 *
 * The table: FP32 add / multiply / multiply-add results per clock cycle per
 * multiprocessor, by compute capability, from the NVIDIA CUDA C++
 * Programming Guide, "Arithmetic Instructions" (Throughput of Native
 * Arithmetic Instructions): 6.0: 64, 6.1: 128, 6.2: 128, 7.0: 64, 7.2: 64,
 * 7.5: 64, 8.0: 64, 8.6: 128, 8.9: 128, 9.0: 128. A multiply-add is two
 * FLOPs, so peak = SMs x results x 2 x clock. This is the FP32 peak of the
 * CUDA cores: tensor-core work (bf16/fp16/fp8/TF32 GEMMs) can exceed it.
 * A capability the table lacks, and every non-NVIDIA device (AMD planes
 * state a compute capability too, e.g. 9.4 for MI300X, which is no CUDA
 * capability), has no peak: unknown, never guessed.
 */
#ifndef XPV_GPU_PEAKS_H
#define XPV_GPU_PEAKS_H

#include <stdint.h>

/* FP32 results per clock per SM for NVIDIA compute capability
 * major.minor; 0 when the table has no row for it. */
int xpv_gpu_fp32_per_clock_per_sm(int major, int minor);
/* The peak FP32 FLOP/s of a device: 1 with *flops, 0 when the vendor is
 * not NVIDIA, the capability is not in the table, or sms / clock are not
 * positive. clock_khz is the plane's clock_rate (kHz). */
int xpv_gpu_peak_fp32_flops(const char *vendor, int major, int minor, int64_t sms,
                            int64_t clock_khz, double *flops);

#endif
