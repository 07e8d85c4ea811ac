/*
 * xplane_meta.h — one XPlane's metadata tables and stat decoding, shared by
 * the parts of the xplane reader (internal to indexer/readers/).
 *
 * An XPlane keeps event and stat metadata in maps keyed by id, usually after
 * its lines. The tables here index those map entries by id in one pass over
 * the plane (no decoding), and decode an entry the first time an event
 * refers to it; so a 1 GB file is never turned into objects, and metadata
 * nobody refers to (the `Hlo Proto` blobs on /host:metadata) is never read.
 *
 * Invariants: pointers into the mapped file stay valid for the whole read;
 * everything decoded for a plane lives in its arena until the plane is done,
 * except what depends on an interned text alone (launch shapes), which is
 * kept for the whole read.
 * A stat is identified by its metadata's name (ids are per plane).
 */
#ifndef XPV_XPLANE_META_H
#define XPV_XPLANE_META_H

#include "protobuf.h"
#include "../ingest.h"
#include "../../common/xpv_hindex.h"

/* What a stat means to the reader (decided once per stat metadata name). */
enum xpl_role {
    XPL_ROLE_OTHER = 0,
    XPL_ROLE_CORRELATION_ID,
    XPL_ROLE_KERNEL_DETAILS,
    XPL_ROLE_MEMCPY_DETAILS,
    XPL_ROLE_HLO_OP,
    XPL_ROLE_TF_OP,
    XPL_ROLE_STEP_NUM,
    XPL_ROLE_GROUP_ID,
    XPL_ROLE_OCCUPANCY, /* theoretical_occupancy_pct */
    XPL_ROLE_FLOW,      /* `flow`: links the event to others (id, direction) */
    XPL_ROLE_PROGRAM_ID,
    XPL_ROLE_HLO_MODULE,
};

typedef struct xpl_arena_chunk xpl_arena_chunk;

typedef struct {
    const uint8_t *data; /* the metadata message in the file */
    size_t len;
    int64_t id;
    int decoded;
    uint32_t name; /* interned name (display name for events) */
    uint8_t role;
    /* stat metadata used as a ref_value kernel_details: parsed once */
    xpv_launch *launch;
    /* event metadata: its own stats and `name#k=v#` args, decoded once */
    xpv_arg *args;
    uint8_t *roles;
    uint32_t nargs;
    uint8_t memcpy_kind; /* XPV_KIND_MEMCPY_* or MEMSET by the event name, 0 if neither */
    int64_t name_number; /* trailing number of the name (`Steps` lines), -1 none */
} xpl_meta;

typedef struct {
    xpl_meta *items; /* sorted by id, one per id (the last map entry wins) */
    size_t n, cap;
    uint32_t *dense; /* id -> index + 1 when ids are small, else NULL */
    size_t ndense;
} xpl_table;

/* What the stats of one event say, for classifying it. */
typedef struct {
    int64_t corr, step_num, group_id;
    double occupancy;
    int has_corr, has_step, has_group, has_occupancy, has_kernel_details, has_memcpy_details;
    int has_flow;
    const char *kernel_details; /* text when not a ref (else kd_ref) */
    size_t kernel_details_len;
    const xpl_meta *kd_ref;
    uint32_t hlo_op, tf_op, hlo_module;
    uint64_t prog;
    int has_prog;
} xpl_info;

typedef struct {
    xpv_sink *sink;
    xpv_pb msg; /* for error offsets */
    xpl_table events, stats;
    xpl_arena_chunk *arena;
    xpv_buf scratch;  /* text made while decoding one event (inflated, hex) */
    xpv_buf inflated; /* zlib output buffer */
    int64_t missing_event_meta, missing_stat_meta, bad_map_entries;
    size_t first_bad_map_offset;
    /* Kept across planes, since a host's GPUs run the same kernels: each
     * kernel_details text parsed once per file, not once per plane. */
    xpv_hindex launch_of; /* interned kernel_details text -> index in launches */
    xpv_launch *launches;
    size_t nlaunches, cap_launches;
} xpl_plane;

void xpl_plane_init(xpl_plane *pl, xpv_sink *sink);
/* Forgets the previous plane's tables (keeps buffers). */
void xpl_plane_reset(xpl_plane *pl);
void xpl_plane_free(xpl_plane *pl);

/* Records one map entry (field 4 or 5 of XPlane) in its table. */
int xpl_table_add_entry(xpl_plane *pl, xpl_table *t, const xpv_pb *plane, const xpv_pb_field *f,
                        xpv_err *err);
/* Sorts a table after its last entry. */
void xpl_table_finish(xpl_table *t);
/* The metadata with this id in t when it is decoded already, else NULL. */
static inline xpl_meta *xpl_meta_ready(const xpl_table *t, int64_t id)
{
    if (!t->dense || id < 0 || (uint64_t)id >= t->ndense || !t->dense[id]) return NULL;
    xpl_meta *m = &t->items[t->dense[id] - 1];
    return m->decoded ? m : NULL;
}

/* The first lookup of an id, which decodes it, and lookups in sparse tables. */
xpl_meta *xpl_event_meta_slow(xpl_plane *pl, int64_t id, xpv_err *err, int *failed);
xpl_meta *xpl_stat_meta_slow(xpl_plane *pl, int64_t id, xpv_err *err, int *failed);

/* The metadata with this id, decoded; NULL when the plane has none. Inline:
 * a large XSpace asks it for every event and every stat. */
static inline xpl_meta *xpl_event_meta(xpl_plane *pl, int64_t id, xpv_err *err, int *failed)
{
    xpl_meta *m = xpl_meta_ready(&pl->events, id);
    return m ? m : xpl_event_meta_slow(pl, id, err, failed);
}

static inline xpl_meta *xpl_stat_meta(xpl_plane *pl, int64_t id, xpv_err *err, int *failed)
{
    xpl_meta *m = xpl_meta_ready(&pl->stats, id);
    return m ? m : xpl_stat_meta_slow(pl, id, err, failed);
}

/* Decodes one XStat message into *arg (+ its role), noting what it says in
 * info (may be NULL). TEXT values made here are appended to pl->scratch and
 * marked by text == NULL, v.u = offset: call xpl_fix_texts() before use. */
int xpl_stat_decode(xpl_plane *pl, const xpv_pb_field *f, xpv_arg *arg, uint8_t *role,
                    xpl_info *info, xpv_err *err);
void xpl_fix_texts(xpl_plane *pl, xpv_arg *args, uint32_t n);
/* The role of one XStat by its metadata, its value left undecoded (for a
 * pass that looks at a few stats only); OTHER when the stat is damaged,
 * which the full decode then reports. */
uint8_t xpl_stat_role(xpl_plane *pl, const xpv_pb_field *sf);
/* Notes one decoded arg in info (used for metadata args merged into an event). */
void xpl_info_note(xpl_plane *pl, xpl_info *info, const xpv_arg *arg, uint8_t role,
                   const xpl_meta *ref);
static inline void xpl_info_reset(xpl_info *i)
{
    memset(i, 0, sizeof *i);
}

/* The launch shape in a kernel_details stat metadata's name, parsed once. */
const xpv_launch *xpl_ref_launch(xpl_plane *pl, xpl_meta *ref);

/* Role of a stat (or `name#k=v#` key) by its name. */
uint8_t xpl_role_for(const char *name, size_t len);

/* The text of an arg (STR or TEXT); NULL for numbers. */
const char *xpl_arg_text(xpl_plane *pl, const xpv_arg *a, size_t *len);

#endif
