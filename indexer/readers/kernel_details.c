/*
 * kernel_details.c — see kernel_details.h.
 */
#include "kernel_details.h"

#include <stdlib.h>
#include <string.h>

/* Parses a non-negative decimal integer that must fill [p, end). */
static int parse_count(const char *p, const char *end, int32_t *out)
{
    if (p == end) return -1;
    int64_t v = 0;
    for (; p < end; p++) {
        if (*p < '0' || *p > '9') return -1;
        v = v * 10 + (*p - '0');
        if (v > INT32_MAX) return -1;
    }
    *out = (int32_t)v;
    return 0;
}

static int parse_dim3(const char *p, const char *end, int32_t out[3])
{
    int32_t v[3];
    for (int i = 0; i < 3; i++) {
        const char *comma = i < 2 ? memchr(p, ',', (size_t)(end - p)) : end;
        if (!comma || parse_count(p, comma, &v[i]) != 0) return -1;
        p = comma + 1;
    }
    memcpy(out, v, sizeof v);
    return 0;
}

static int parse_percent(const char *p, const char *end, double *out)
{
    char tmp[32];
    size_t n = (size_t)(end - p);
    if (n == 0 || n >= sizeof tmp) return -1;
    memcpy(tmp, p, n);
    tmp[n] = 0;
    char *stop;
    double v = strtod(tmp, &stop);
    if (*stop || v < 0 || v > 100.0001) return -1;
    *out = v;
    return 0;
}

static int apply_field(const char *key, size_t klen, const char *v, const char *end,
                       xpv_launch *out)
{
#define KEY_IS(s) (klen == sizeof(s) - 1 && memcmp(key, s, klen) == 0)
    if (KEY_IS("regs")) return parse_count(v, end, &out->registers_per_thread) == 0;
    if (KEY_IS("static_shared") || KEY_IS("shm"))
        return parse_count(v, end, &out->static_shared_bytes) == 0;
    if (KEY_IS("dynamic_shared")) return parse_count(v, end, &out->dynamic_shared_bytes) == 0;
    if (KEY_IS("grid")) return parse_dim3(v, end, out->grid) == 0;
    if (KEY_IS("block")) return parse_dim3(v, end, out->block) == 0;
    if (KEY_IS("occ_pct")) return parse_percent(v, end, &out->occupancy_pct) == 0;
#undef KEY_IS
    return 0;
}

int xpv_kernel_details_parse(const char *text, size_t len, xpv_launch *out)
{
    const char *p = text, *end = text + len;
    int found = 0;
    while (p < end) {
        while (p < end && (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r'))
            p++;
        const char *tok = p;
        while (p < end && *p != ' ' && *p != '\n' && *p != '\t' && *p != '\r')
            p++;
        const char *colon = memchr(tok, ':', (size_t)(p - tok));
        if (colon) found += apply_field(tok, (size_t)(colon - tok), colon + 1, p, out);
    }
    return found;
}
