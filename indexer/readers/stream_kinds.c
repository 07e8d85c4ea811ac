/*
 * stream_kinds.c — the kinds a JAX GPU stream line's name lists (see
 * stream_kinds.h).
 */
#include "stream_kinds.h"
#include "../../store/xpv_event.h"

#include <string.h>

static int word_is(const char *p, size_t n, const char *word)
{
    return strlen(word) == n && memcmp(p, word, n) == 0;
}

/* XPV_KIND_* of one listed word. */
static uint8_t kind_of_word(const char *p, size_t n)
{
    if (word_is(p, n, "Kernel")) return XPV_KIND_KERNEL;
    if (word_is(p, n, "MemcpyH2D")) return XPV_KIND_MEMCPY_H2D;
    if (word_is(p, n, "MemcpyD2H")) return XPV_KIND_MEMCPY_D2H;
    if (word_is(p, n, "MemcpyD2D")) return XPV_KIND_MEMCPY_D2D;
    if ((n >= 6 && memcmp(p, "Memcpy", 6) == 0) || word_is(p, n, "P2P"))
        return XPV_KIND_MEMCPY_OTHER;
    if (word_is(p, n, "Memset")) return XPV_KIND_MEMSET;
    return XPV_KIND_DEVICE_OTHER;
}

xpv_stream_kinds xpv_stream_kinds_of(const char *name, size_t n)
{
    xpv_stream_kinds k = {0, 0};
    const char *p = memchr(name, '(', n), *end = name + n;
    int kinds = 0;
    for (p = p ? p + 1 : end; p < end && *p != ')';) {
        const char *q = p;
        while (q < end && *q != ',' && *q != ')')
            q++;
        uint8_t kind = kind_of_word(p, (size_t)(q - p));
        k.has_kernel |= kind == XPV_KIND_KERNEL;
        k.one = kind;
        kinds++;
        p = q < end && *q == ',' ? q + 1 : end;
    }
    if (kinds != 1) k.one = 0;
    return k;
}
