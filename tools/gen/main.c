/*
 * main.c — xpv-gen's command line; the writers are gen_jax.c and
 * gen_pytorch.c.
 */
#include "gen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int64_t parse_size(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || v < 0) return -1;
    if (strcmp(end, "KB") == 0 || strcmp(end, "K") == 0)
        v *= 1024;
    else if (strcmp(end, "MB") == 0 || strcmp(end, "M") == 0)
        v *= 1024 * 1024;
    else if (strcmp(end, "GB") == 0 || strcmp(end, "G") == 0)
        v *= 1024.0 * 1024 * 1024;
    else if (*end)
        return -1;
    return (int64_t)v;
}

/* "none" or a comma-separated list of pattern names; -1 when one is unknown. */
static int parse_plant(const char *v)
{
    static const char *const NAMES[] = {"recompile", "input-stall", "exposed-collectives",
                                        "sync-copy", "slow-step",   "tiny-kernels"};
    if (strcmp(v, "none") == 0) return 0;
    int bits = 0;
    while (*v) {
        size_t n = strcspn(v, ","), i;
        for (i = 0; i < sizeof NAMES / sizeof NAMES[0]; i++)
            if (strlen(NAMES[i]) == n && strncmp(v, NAMES[i], n) == 0) break;
        if (i == sizeof NAMES / sizeof NAMES[0]) return -1;
        bits |= 1 << i;
        v += n;
        if (*v == ',') v++;
    }
    return bits;
}

static void usage(void)
{
    fprintf(stderr, "usage: xpv-gen --out DIR [--kind jax|pytorch] [--runs N] [--hosts N]\n"
                    "               [--devices N] [--steps N] [--size BYTES[KB|MB|GB]] [--seed N]\n"
                    "               [--no-steps] [--no-json]\n"
                    "       xpv-gen --out DIR --plant none|PATTERN[,PATTERN...] [--steps N]\n"
                    "               patterns: recompile, input-stall, exposed-collectives,\n"
                    "               sync-copy, slow-step, tiny-kernels\n");
}

int main(int argc, char **argv)
{
    xpv_gen_opts o = {.kind = "jax",
                      .runs = 1,
                      .hosts = 1,
                      .devices = 2,
                      .steps = 10,
                      .size_bytes = 4 << 20,
                      .seed = 42,
                      .plant = -1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--no-steps") == 0)
            o.no_steps = 1;
        else if (strcmp(a, "--no-json") == 0)
            o.no_json = 1;
        else if (!v)
            return usage(), 2;
        else if (strcmp(a, "--out") == 0)
            o.out_dir = v, i++;
        else if (strcmp(a, "--kind") == 0)
            o.kind = v, i++;
        else if (strcmp(a, "--runs") == 0)
            o.runs = atoi(v), i++;
        else if (strcmp(a, "--hosts") == 0)
            o.hosts = atoi(v), i++;
        else if (strcmp(a, "--devices") == 0)
            o.devices = atoi(v), i++;
        else if (strcmp(a, "--steps") == 0)
            o.steps = atoi(v), i++;
        else if (strcmp(a, "--plant") == 0) {
            if ((o.plant = parse_plant(v)) < 0) return usage(), 2;
            i++;
        } else if (strcmp(a, "--seed") == 0)
            o.seed = strtoull(v, NULL, 10), i++;
        else if (strcmp(a, "--size") == 0) {
            if ((o.size_bytes = parse_size(v)) < 0) return usage(), 2;
            i++;
        } else
            return usage(), 2;
    }
    if (!o.out_dir || o.runs < 1 || o.hosts < 1 || o.devices < 1 || o.steps < 1) return usage(), 2;
    if (o.seed == 0) o.seed = 1;
    if (o.plant >= 0) return xpv_gen_plant(&o) == 0 ? 0 : 1;
    if (strcmp(o.kind, "jax") == 0) return xpv_gen_jax(&o) == 0 ? 0 : 1;
    if (strcmp(o.kind, "pytorch") == 0) return xpv_gen_pytorch(&o) == 0 ? 0 : 1;
    usage();
    return 2;
}
