/*
 * xplane_space.h — the state of one XSpace read, shared by the parts of
 * the xplane reader (internal to indexer/readers/): xplane_reader.c reads
 * planes, lines and events; xplane_facts.c turns plane stats into profile
 * facts.
 *
 * Invariants: args/roles hold cap_args entries; everything the reader points
 * to in the file lives as long as the mapping (data, size).
 */
#ifndef XPV_XPLANE_SPACE_H
#define XPV_XPLANE_SPACE_H

#include "xplane_attrib.h"
#include "xplane_meta.h"

#include <string.h>

enum plane_type { PLANE_HOST, PLANE_GPU, PLANE_TPU, PLANE_CUSTOM, PLANE_OTHER };

#define NPEAKS 2 /* the peak figures xplane_facts.c keeps (PEAK_STATS there) */

typedef struct {
    char text[64];
    int state; /* 0: no plane stated it, 1: stated (text), -1: planes disagree */
} peak_fact;

typedef struct {
    xpv_sink *sink;
    xpl_plane pl;
    peak_fact peaks[NPEAKS];
    int plane_type; /* enum plane_type */
    int64_t pid;
    xpv_arg *args;
    uint8_t *roles;
    size_t cap_args;
    int64_t *pids; /* pids given so far, to keep them distinct */
    size_t npids;
    int tensorflow;
    int saw_xspace_field;
    xpv_buf hostnames;
    const uint8_t *data; /* the mapped file */
    size_t size;
    xpv_attrib *attrib; /* kernels to HLO instructions; NULL before the first GPU stream */
    int attrib_state;   /* 0: not looked for, 1: attrib set, -1: no compiled module */
    uint32_t key_command_buffer, key_jax_op, key_source;
    uint32_t *run_names; /* one graph execution's event names (read_run) */
    xpv_attrib_op *run_ops;
    int64_t unplaceable; /* command-buffer events with no correlation id or module */
    size_t run_cap;
} reader;

typedef struct {
    int64_t id;
    const char *name;
    size_t name_len;
    int nstats, nlines;
} plane_head;

static inline int xpl_starts_with(const char *s, size_t n, const char *prefix)
{
    size_t k = strlen(prefix);
    return n >= k && memcmp(s, prefix, k) == 0;
}

static inline int xpl_equals(const char *s, size_t n, const char *word)
{
    return strlen(word) == n && memcmp(s, word, n) == 0;
}

static inline void xpl_ensure_args(reader *rd, size_t n)
{
    if (n <= rd->cap_args) return;
    while (rd->cap_args < n)
        rd->cap_args = rd->cap_args ? rd->cap_args * 2 : 64;
    rd->args = xpv_xrealloc(rd->args, rd->cap_args * sizeof *rd->args);
    rd->roles = xpv_xrealloc(rd->roles, rd->cap_args);
}

/* ---- xplane_facts.c ---- */

/* Device descriptions, device stats and peaks of a GPU/TPU plane, and the
 * Task Environment's facts. 0, or -1 with err. */
int xpl_facts_read_plane_stats(reader *rd, const plane_head *h, xpv_err *err);
/* Warnings for what a plane lacked (missing metadata, bad map entries). */
void xpl_facts_plane_warnings(reader *rd, const plane_head *h);
/* The XSpace's own errors and warnings (key "error" or "warning"). */
void xpl_facts_text(reader *rd, const char *key, const xpv_pb_field *f);
/* The facts kept until the end: agreed peaks, producer, host names. */
void xpl_facts_finish(reader *rd);

#endif
