/*
 * gen.h — the sample-profile generator (`xpv-gen`): realistic synthetic
 * profiles of any size, for the demo, tests and benchmarks. Output is
 * deterministic for a given seed.
 *
 *   xpv-gen --out DIR [--kind jax|pytorch] [--runs N] [--hosts N] [--devices N]
 *           [--steps N] [--size BYTES[KB|MB|GB]] [--seed N] [--no-steps] [--no-json]
 *
 * jax:     DIR/plugins/profile/<run>/<host>.xplane.pb and <host>.trace.json.gz
 *          (gen_jax.c)
 * pytorch: DIR/<worker>.<timestamp>.pt.trace.json.gz with large args
 *          (gen_pytorch.c)
 * --plant LIST (none, or a comma-separated list of recompile, input-stall,
 *          exposed-collectives, sync-copy, slow-step, tiny-kernels): a small
 *          clean PyTorch trace with those patterns planted, for the findings
 *          (gen_plant.c); --steps applies, --size does not
 */
#ifndef XPV_GEN_H
#define XPV_GEN_H

#include <stdint.h>

typedef struct {
    const char *out_dir;
    const char *kind;
    int runs, hosts, devices, steps;
    int64_t size_bytes; /* approximate size of each main output file */
    uint64_t seed;
    int no_steps; /* omit step markers (exercises the module fallback) */
    int no_json;  /* jax: write only xplane.pb */
    int plant;    /* -1: no --plant; else XPV_PLANT_* bits (0: the clean trace) */
} xpv_gen_opts;

enum {
    XPV_PLANT_RECOMPILE = 1,
    XPV_PLANT_INPUT_STALL = 2,
    XPV_PLANT_EXPOSED_COLLECTIVES = 4,
    XPV_PLANT_SYNC_COPY = 8,
    XPV_PLANT_SLOW_STEP = 16,
    XPV_PLANT_TINY_KERNELS = 32,
};

int xpv_gen_jax(const xpv_gen_opts *o);
int xpv_gen_pytorch(const xpv_gen_opts *o);
int xpv_gen_plant(const xpv_gen_opts *o);

/* xorshift64*: small, fast, deterministic. */
static inline uint64_t xpv_gen_rand(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545F4914F6CDD1DULL;
}

#endif
