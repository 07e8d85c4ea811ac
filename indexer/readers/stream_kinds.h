/*
 * stream_kinds.h — what the name of a JAX GPU stream line says its events
 * are: "Stream #14(Memset,MemcpyD2D,Compute)" lists every kind the stream
 * ran. Shared by the xplane and trace-JSON readers, which JAX writes the
 * same names into, so that both read a line alike.
 *
 * The kinds are the comma-separated words between '(' and the first ')'
 * (or the name's end). One kind decides what the line's events are; with
 * several, each event is what its own details and name say.
 */
#ifndef XPV_STREAM_KINDS_H
#define XPV_STREAM_KINDS_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint8_t one;    /* the kind, when the name lists exactly one (XPV_KIND_DEVICE_OTHER
                       for a word it does not know); 0 for several or none */
    int has_kernel; /* "Kernel" is among them */
} xpv_stream_kinds;

/* The kinds the line name [name, name + n) lists. */
xpv_stream_kinds xpv_stream_kinds_of(const char *name, size_t n);

#endif
