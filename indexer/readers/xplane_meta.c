/*
 * xplane_meta.c — metadata tables and stat decoding for one XPlane; see
 * xplane_meta.h.
 */
#include "xplane_meta.h"
#include "kernel_details.h"
#include "../../common/xpv_lower_bound.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>

#define ARENA_CHUNK (64u << 10)
#define INFLATE_MAX (64u << 20)
#define BYTES_HEX_MAX 32

/* ---- arena: per-plane allocations, freed together ---- */

struct xpl_arena_chunk {
    xpl_arena_chunk *next;
    size_t used, cap;
    max_align_t data[];
};

static void *arena_alloc(xpl_plane *pl, size_t n)
{
    n = (n + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);
    xpl_arena_chunk *c = pl->arena;
    if (!c || c->cap - c->used < n) {
        size_t cap = n > ARENA_CHUNK ? n : ARENA_CHUNK;
        c = xpv_xmalloc(sizeof *c + cap);
        c->next = pl->arena;
        c->used = 0;
        c->cap = cap;
        pl->arena = c;
    }
    void *p = (char *)c->data + c->used;
    c->used += n;
    return p;
}

static void arena_free(xpl_plane *pl)
{
    while (pl->arena) {
        xpl_arena_chunk *next = pl->arena->next;
        free(pl->arena);
        pl->arena = next;
    }
}

/* ---- plane lifecycle ---- */

void xpl_plane_init(xpl_plane *pl, xpv_sink *sink)
{
    memset(pl, 0, sizeof *pl);
    pl->sink = sink;
}

static void table_clear(xpl_table *t)
{
    t->n = 0;
    free(t->dense);
    t->dense = NULL;
    t->ndense = 0;
}

void xpl_plane_reset(xpl_plane *pl)
{
    table_clear(&pl->events);
    table_clear(&pl->stats);
    arena_free(pl);
    pl->missing_event_meta = pl->missing_stat_meta = pl->bad_map_entries = 0;
    pl->first_bad_map_offset = 0;
}

void xpl_plane_free(xpl_plane *pl)
{
    xpl_plane_reset(pl);
    free(pl->events.items);
    free(pl->stats.items);
    xpv_buf_free(&pl->scratch);
    xpv_buf_free(&pl->inflated);
    xpv_hindex_free(&pl->launch_of);
    free(pl->launches);
}

/* ---- tables ---- */

static void note_bad_entry(xpl_plane *pl, const xpv_pb *plane, const uint8_t *at)
{
    if (pl->bad_map_entries++ == 0) pl->first_bad_map_offset = xpv_pb_offset(plane, at);
}

/* Reads the id (field 1) of a metadata message, if it has one. */
static int message_id(const xpv_pb *plane, const uint8_t *data, size_t len, int64_t *id,
                      xpv_err *err)
{
    xpv_pb m = {plane->base, data, data + len};
    xpv_pb_field f;
    int rc;
    while ((rc = xpv_pb_next(&m, &f, err)) == 1)
        if (f.num == 1 && f.wire == XPV_PB_VARINT) {
            *id = (int64_t)f.v;
            return 1;
        }
    return rc;
}

int xpl_table_add_entry(xpl_plane *pl, xpl_table *t, const xpv_pb *plane, const xpv_pb_field *f,
                        xpv_err *err)
{
    xpv_pb e = xpv_pb_sub(plane, f);
    xpv_pb_field kv;
    int rc, has_key = 0;
    int64_t key = 0;
    const uint8_t *value = NULL;
    size_t value_len = 0;
    while ((rc = xpv_pb_next(&e, &kv, err)) == 1) {
        if (kv.num == 1) {
            if (kv.wire != XPV_PB_VARINT) return xpv_pb_wrong_wire(&e, &kv, "map entry", 0, err);
            key = (int64_t)kv.v, has_key = 1;
        } else if (kv.num == 2) {
            if (kv.wire != XPV_PB_LEN) return xpv_pb_wrong_wire(&e, &kv, "map entry", 2, err);
            value = kv.data, value_len = kv.len;
        }
    }
    if (rc < 0) return -1;
    if (!value) { /* a key without metadata names nothing: events fall back to the id */
        note_bad_entry(pl, plane, f->at);
        return 0;
    }
    if (!has_key) {
        int got = message_id(plane, value, value_len, &key, err);
        if (got < 0) return -1;
        if (got == 0) note_bad_entry(pl, plane, f->at);
    }
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 256;
        t->items = xpv_xrealloc(t->items, t->cap * sizeof *t->items);
    }
    xpl_meta *m = &t->items[t->n++];
    memset(m, 0, sizeof *m);
    m->id = key;
    m->data = value;
    m->len = value_len;
    m->name_number = -1;
    return 0;
}

static int meta_cmp(const void *a, const void *b)
{
    const xpl_meta *x = a, *y = b;
    if (x->id != y->id) return x->id < y->id ? -1 : 1;
    /* same id: keep file order, so the last entry ends up last */
    return x->data < y->data ? -1 : x->data > y->data;
}

void xpl_table_finish(xpl_table *t)
{
    if (t->n == 0) return;
    xpv_sort(t->items, t->n, sizeof *t->items, meta_cmp);
    size_t out = 0;
    for (size_t i = 0; i < t->n; i++) {
        if (out && t->items[out - 1].id == t->items[i].id) out--;
        t->items[out++] = t->items[i];
    }
    t->n = out;
    int64_t lo = t->items[0].id, hi = t->items[t->n - 1].id;
    if (lo >= 0 && (uint64_t)hi < 4 * (uint64_t)t->n + 1024) {
        t->ndense = (size_t)hi + 1;
        t->dense = xpv_xcalloc(t->ndense, sizeof *t->dense);
        for (size_t i = 0; i < t->n; i++)
            t->dense[t->items[i].id] = (uint32_t)i + 1;
    }
}

static xpl_meta *table_find(xpl_table *t, int64_t id)
{
    if (t->dense) {
        if (id < 0 || (uint64_t)id >= t->ndense || !t->dense[id]) return NULL;
        return &t->items[t->dense[id] - 1];
    }
    size_t i = xpv_lower_bound_i64(t->items, t->n, sizeof *t->items, offsetof(xpl_meta, id), id);
    return i < t->n && t->items[i].id == id ? &t->items[i] : NULL;
}

/* ---- roles ---- */

uint8_t xpl_role_for(const char *name, size_t len)
{
    static const struct {
        const char *name;
        uint8_t role;
    } roles[] = {
        {"correlation_id", XPL_ROLE_CORRELATION_ID},
        {"kernel_details", XPL_ROLE_KERNEL_DETAILS},
        {"memcpy_details", XPL_ROLE_MEMCPY_DETAILS},
        {"hlo_op", XPL_ROLE_HLO_OP},
        {"tf_op", XPL_ROLE_TF_OP},
        {"step_num", XPL_ROLE_STEP_NUM},
        {"group_id", XPL_ROLE_GROUP_ID},
        {"theoretical_occupancy_pct", XPL_ROLE_OCCUPANCY},
        {"flow", XPL_ROLE_FLOW},
        {"program_id", XPL_ROLE_PROGRAM_ID},
        {"hlo_module", XPL_ROLE_HLO_MODULE},
    };
    if (len < 4 || len > 25) return XPL_ROLE_OTHER; /* "flow" .. "theoretical_occupancy_pct" */
    for (size_t i = 0; i < sizeof roles / sizeof roles[0]; i++)
        if (strlen(roles[i].name) == len && memcmp(roles[i].name, name, len) == 0)
            return roles[i].role;
    return XPL_ROLE_OTHER;
}

/* ---- stat metadata ---- */

static int decode_stat_meta(xpl_plane *pl, xpl_meta *m, xpv_err *err)
{
    xpv_pb r = {pl->msg.base, m->data, m->data + m->len};
    xpv_pb_field f;
    int rc;
    const uint8_t *name = NULL;
    size_t name_len = 0;
    while ((rc = xpv_pb_next(&r, &f, err)) == 1)
        if (f.num == 2) {
            if (f.wire != XPV_PB_LEN) return xpv_pb_wrong_wire(&r, &f, "XStatMetadata", 2, err);
            name = f.data, name_len = f.len;
        }
    if (rc < 0) return -1;
    m->name = name_len ? xpv_sink_intern(pl->sink, (const char *)name, name_len) : 0;
    m->role = xpl_role_for((const char *)name, name_len);
    m->decoded = 1;
    return 0;
}

xpl_meta *xpl_stat_meta_slow(xpl_plane *pl, int64_t id, xpv_err *err, int *failed)
{
    xpl_meta *m = table_find(&pl->stats, id);
    if (m && !m->decoded && decode_stat_meta(pl, m, err) != 0) {
        *failed = 1;
        return NULL;
    }
    return m;
}

static uint32_t intern_id_name(xpl_plane *pl, int64_t id)
{
    char tmp[24];
    int n = snprintf(tmp, sizeof tmp, "%lld", (long long)id);
    return xpv_sink_intern(pl->sink, tmp, (size_t)n);
}

/* ---- stat values ---- */

static void scratch_text(xpl_plane *pl, xpv_arg *arg, const char *s, size_t n)
{
    arg->type = XPV_ARG_TEXT;
    arg->text = NULL;
    arg->v.u = pl->scratch.len;
    arg->len = (uint32_t)n;
    xpv_buf_append(&pl->scratch, s, n);
}

static void bytes_value(xpl_plane *pl, xpv_arg *arg, const uint8_t *p, size_t n)
{
    char tmp[2 * BYTES_HEX_MAX + 1];
    if (n > BYTES_HEX_MAX) {
        int k = snprintf(tmp, sizeof tmp, "<%zu bytes>", n);
        scratch_text(pl, arg, tmp, (size_t)k);
        return;
    }
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        tmp[2 * i] = hex[p[i] >> 4];
        tmp[2 * i + 1] = hex[p[i] & 15];
    }
    scratch_text(pl, arg, tmp, 2 * n);
}

/* Inflates a gzip (or zlib) compressed string into the scratch buffer. */
static void compressed_value(xpl_plane *pl, xpv_arg *arg, const uint8_t *p, size_t n)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    int ok = inflateInit2(&z, 15 + 32) == Z_OK;
    pl->inflated.len = 0;
    z.next_in = (Bytef *)p;
    z.avail_in = (uInt)n;
    int zr = Z_OK;
    while (ok && zr == Z_OK && pl->inflated.len < INFLATE_MAX) {
        xpv_buf_reserve(&pl->inflated, 64 << 10);
        z.next_out = (Bytef *)pl->inflated.data + pl->inflated.len;
        z.avail_out = (uInt)(pl->inflated.cap - pl->inflated.len - 1);
        zr = inflate(&z, Z_NO_FLUSH);
        pl->inflated.len = (size_t)((char *)z.next_out - pl->inflated.data);
        if (zr == Z_BUF_ERROR && z.avail_in == 0) break;
    }
    if (ok) inflateEnd(&z);
    if (!ok || zr != Z_STREAM_END) {
        char note[96];
        int k = snprintf(note, sizeof note, "<undecodable compressed string, %zu bytes>", n);
        scratch_text(pl, arg, note, (size_t)k);
        return;
    }
    scratch_text(pl, arg, pl->inflated.data, pl->inflated.len);
}

static void string_value(xpl_plane *pl, xpv_arg *arg, const uint8_t *p, size_t n)
{
    uint32_t id = xpv_sink_intern_value(pl->sink, (const char *)p, n);
    if (id || n == 0) {
        arg->type = XPV_ARG_STR;
        arg->v.str = id;
        return;
    }
    arg->type = XPV_ARG_TEXT;
    arg->text = (const char *)p; /* the mapped file outlives the event */
    arg->len = (uint32_t)n;
}

const char *xpl_arg_text(xpl_plane *pl, const xpv_arg *a, size_t *len)
{
    if (a->type == XPV_ARG_STR) return xpv_sink_string(pl->sink, a->v.str, len);
    if (a->type != XPV_ARG_TEXT && a->type != XPV_ARG_JSON) return NULL;
    *len = a->len;
    return a->text ? a->text : pl->scratch.data + a->v.u;
}

static int64_t arg_int(xpl_plane *pl, const xpv_arg *a, int *ok)
{
    *ok = 1;
    if (a->type == XPV_ARG_INT) return a->v.i;
    if (a->type == XPV_ARG_UINT) return (int64_t)a->v.u;
    if (a->type == XPV_ARG_DOUBLE) return (int64_t)a->v.d;
    size_t len = 0;
    const char *s = xpl_arg_text(pl, a, &len);
    int64_t v = 0;
    *ok = s && len > 0 && len < 19;
    for (size_t i = 0; *ok && i < len; i++) {
        if (s[i] < '0' || s[i] > '9') *ok = 0;
        v = v * 10 + (s[i] - '0');
    }
    return *ok ? v : 0;
}

static uint32_t arg_string_id(xpl_plane *pl, const xpv_arg *a)
{
    if (a->type == XPV_ARG_STR) return a->v.str;
    size_t len = 0;
    const char *s = xpl_arg_text(pl, a, &len);
    return s ? xpv_sink_intern(pl->sink, s, len) : 0;
}

void xpl_info_note(xpl_plane *pl, xpl_info *info, const xpv_arg *arg, uint8_t role,
                   const xpl_meta *ref)
{
    int ok;
    switch (role) {
    case XPL_ROLE_CORRELATION_ID:
        info->corr = arg_int(pl, arg, &ok), info->has_corr = ok;
        break;
    case XPL_ROLE_STEP_NUM:
        info->step_num = arg_int(pl, arg, &ok), info->has_step = ok;
        break;
    case XPL_ROLE_GROUP_ID:
        info->group_id = arg_int(pl, arg, &ok), info->has_group = ok;
        break;
    case XPL_ROLE_OCCUPANCY:
        info->has_occupancy = arg->type == XPV_ARG_DOUBLE;
        info->occupancy = arg->v.d;
        break;
    case XPL_ROLE_KERNEL_DETAILS:
        info->has_kernel_details = 1;
        info->kd_ref = ref;
        info->kernel_details = ref ? NULL : xpl_arg_text(pl, arg, &info->kernel_details_len);
        break;
    case XPL_ROLE_MEMCPY_DETAILS:
        info->has_memcpy_details = 1;
        break;
    case XPL_ROLE_FLOW:
        info->has_flow = 1;
        break;
    case XPL_ROLE_HLO_OP:
        info->hlo_op = arg_string_id(pl, arg);
        break;
    case XPL_ROLE_TF_OP:
        info->tf_op = arg_string_id(pl, arg);
        break;
    case XPL_ROLE_HLO_MODULE:
        info->hlo_module = arg_string_id(pl, arg);
        break;
    case XPL_ROLE_PROGRAM_ID:
        info->prog = (uint64_t)arg_int(pl, arg, &ok), info->has_prog = ok;
        break;
    default:
        break;
    }
}

/* A ref_value: the name of the stat metadata it refers to. */
static int ref_value(xpl_plane *pl, uint64_t id, xpv_arg *arg, xpl_meta **ref, xpv_err *err)
{
    int failed = 0;
    *ref = xpl_stat_meta(pl, (int64_t)id, err, &failed);
    if (failed) return -1;
    arg->type = XPV_ARG_STR;
    if (*ref)
        arg->v.str = (*ref)->name;
    else
        arg->v.str = intern_id_name(pl, (int64_t)id), pl->missing_stat_meta++;
    return 0;
}

/* Sets arg's value from one value field of an XStat; ref is set for ref_value. */
static int stat_value(xpl_plane *pl, const xpv_pb *r, const xpv_pb_field *f, xpv_arg *arg,
                      xpl_meta **ref, xpv_err *err)
{
    static const uint8_t wire_of[9] = {0,          0, XPV_PB_FIXED64, 0, 0, XPV_PB_LEN,
                                       XPV_PB_LEN, 0, XPV_PB_LEN};
    if (f->wire != wire_of[f->num]) return xpv_pb_wrong_wire(r, f, "XStat", wire_of[f->num], err);
    switch (f->num) {
    case 2:
        arg->type = XPV_ARG_DOUBLE, arg->v.d = xpv_pb_double(f->v);
        break;
    case 3:
        arg->type = XPV_ARG_UINT, arg->v.u = f->v;
        break;
    case 4:
        arg->type = XPV_ARG_INT, arg->v.i = (int64_t)f->v;
        break;
    case 5:
        string_value(pl, arg, f->data, f->len);
        break;
    case 6:
        bytes_value(pl, arg, f->data, f->len);
        break;
    case 7:
        return ref_value(pl, f->v, arg, ref, err);
    case 8:
        compressed_value(pl, arg, f->data, f->len);
        break;
    }
    return 0;
}

uint8_t xpl_stat_role(xpl_plane *pl, const xpv_pb_field *sf)
{
    xpv_pb r = xpv_pb_sub(&pl->msg, sf);
    xpv_pb_field f;
    xpv_err ignored;
    int failed = 0;
    while (xpv_pb_next(&r, &f, &ignored) == 1)
        if (f.num == 1 && f.wire == XPV_PB_VARINT) {
            xpl_meta *m = xpl_stat_meta(pl, (int64_t)f.v, &ignored, &failed);
            return m && !failed ? m->role : XPL_ROLE_OTHER;
        }
    return XPL_ROLE_OTHER;
}

/* The shape nearly every XStat has: its metadata id, then one number or
 * reference (fields 2, 3, 4 or 7), and nothing else. 1 with the two read
 * as the general loop would read them; 0 for any other shape, damage
 * included, which the general loop then reads and reports. */
static int stat_usual(const xpv_pb_field *sf, int64_t *meta_id, xpv_pb_field *f)
{
    const uint8_t *p = sf->data, *end = p + sf->len;
    uint64_t id;
    if (p == end || p[0] != (1 << 3 | XPV_PB_VARINT)) return 0;
    p = xpv_pb_varint_in(p + 1, end, &id);
    if (!p || p == end) return 0;
    f->at = p;
    f->num = *p >> 3;
    if (*p == (2 << 3 | XPV_PB_FIXED64) && end - p == 9) {
        f->wire = XPV_PB_FIXED64;
        f->v = 0;
        for (int i = 0; i < 8; i++)
            f->v |= (uint64_t)p[1 + i] << (8 * i);
    } else if (*p == (3 << 3 | XPV_PB_VARINT) || *p == (4 << 3 | XPV_PB_VARINT) ||
               *p == (7 << 3 | XPV_PB_VARINT)) {
        f->wire = XPV_PB_VARINT;
        if (xpv_pb_varint_in(p + 1, end, &f->v) != end) return 0;
    } else {
        return 0;
    }
    *meta_id = (int64_t)id;
    return 1;
}

/* A number read by stat_usual, as stat_value sets it. */
static inline void usual_value(const xpv_pb_field *f, xpv_arg *arg)
{
    if (f->num == 2)
        arg->type = XPV_ARG_DOUBLE, arg->v.d = xpv_pb_double(f->v);
    else if (f->num == 3)
        arg->type = XPV_ARG_UINT, arg->v.u = f->v;
    else
        arg->type = XPV_ARG_INT, arg->v.i = (int64_t)f->v;
}

int xpl_stat_decode(xpl_plane *pl, const xpv_pb_field *sf, xpv_arg *arg, uint8_t *role,
                    xpl_info *info, xpv_err *err)
{
    xpv_pb r = xpv_pb_sub(&pl->msg, sf);
    xpv_pb_field f;
    int rc = 0, has_value = 0;
    int64_t meta_id = 0;
    xpl_meta *ref = NULL;
    memset(arg, 0, sizeof *arg);
    if (stat_usual(sf, &meta_id, &f)) {
        if (f.num != 7)
            usual_value(&f, arg);
        else if (ref_value(pl, f.v, arg, &ref, err) != 0)
            return -1;
        has_value = 1;
        r.p = r.end;
    }
    while ((rc = xpv_pb_next(&r, &f, err)) == 1) {
        if (f.num == 1) {
            if (f.wire != XPV_PB_VARINT) return xpv_pb_wrong_wire(&r, &f, "XStat", 0, err);
            meta_id = (int64_t)f.v;
        } else if (f.num >= 2 && f.num <= 8) {
            ref = NULL;
            if (stat_value(pl, &r, &f, arg, &ref, err) != 0) return -1;
            has_value = 1;
        }
    }
    if (rc < 0) return -1;
    int failed = 0;
    xpl_meta *m = xpl_stat_meta(pl, meta_id, err, &failed);
    if (failed) return -1;
    if (!has_value) return 0; /* an unset oneof: nothing to show */
    if (m && m->name) {
        arg->key = m->name;
        *role = m->role;
    } else {
        arg->key = intern_id_name(pl, meta_id);
        *role = XPL_ROLE_OTHER;
        if (!m) pl->missing_stat_meta++;
    }
    if (info && *role != XPL_ROLE_OTHER) xpl_info_note(pl, info, arg, *role, ref);
    return 0;
}

void xpl_fix_texts(xpl_plane *pl, xpv_arg *args, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if ((args[i].type == XPV_ARG_TEXT || args[i].type == XPV_ARG_JSON) && !args[i].text)
            args[i].text = pl->scratch.data + args[i].v.u;
}

/* ---- event metadata ---- */

/* The name parts that say an event copies or sets memory, the first listed
 * winning wherever it stands in the name. */
static const struct {
    const char *part;
    size_t len;
    uint8_t kind;
} KIND_PARTS[] = {
    {"H2D", 3, XPV_KIND_MEMCPY_H2D},
    {"HtoD", 4, XPV_KIND_MEMCPY_H2D},
    {"HostToDevice", 12, XPV_KIND_MEMCPY_H2D},
    {"D2H", 3, XPV_KIND_MEMCPY_D2H},
    {"DtoH", 4, XPV_KIND_MEMCPY_D2H},
    {"DeviceToHost", 12, XPV_KIND_MEMCPY_D2H},
    {"D2D", 3, XPV_KIND_MEMCPY_D2D},
    {"DtoD", 4, XPV_KIND_MEMCPY_D2D},
    {"DeviceToDevice", 14, XPV_KIND_MEMCPY_D2D},
    {"P2P", 3, XPV_KIND_MEMCPY_OTHER},
    {"PtoP", 4, XPV_KIND_MEMCPY_OTHER},
    {"Peer", 4, XPV_KIND_MEMCPY_OTHER},
    {"Memset", 6, XPV_KIND_MEMSET},
    {"memset", 6, XPV_KIND_MEMSET},
    {"Memcpy", 6, XPV_KIND_MEMCPY_OTHER},
    {"memcpy", 6, XPV_KIND_MEMCPY_OTHER},
};
#define NKIND_PARTS (sizeof KIND_PARTS / sizeof KIND_PARTS[0])

/* One pass over the name (kernel names are long, and most bytes start no
 * part): at each byte, the earliest-listed part found so far that starts
 * there. */
static uint8_t kind_by_name(const char *s, size_t n)
{
    size_t best = NKIND_PARTS;
    for (size_t j = 0; j < n; j++) {
        char c = s[j];
        if (c != 'H' && c != 'D' && c != 'P' && c != 'M' && c != 'm') continue;
        for (size_t i = 0; i < best; i++)
            if (KIND_PARTS[i].part[0] == c && KIND_PARTS[i].len <= n - j &&
                memcmp(s + j, KIND_PARTS[i].part, KIND_PARTS[i].len) == 0) {
                best = i;
                break;
            }
    }
    return best < NKIND_PARTS ? KIND_PARTS[best].kind : 0;
}

static int64_t trailing_number(const char *s, size_t n)
{
    size_t i = n;
    while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9' && n - i < 18)
        i--;
    if (i == n) return -1;
    int64_t v = 0;
    for (; i < n; i++)
        v = v * 10 + (s[i] - '0');
    return v;
}

/* Appends the `k=v,k2=v2` args of an encoded TraceMe name to args/roles. */
static uint32_t split_name_args(xpl_plane *pl, const char *p, const char *end, xpv_arg *args,
                                uint8_t *roles)
{
    uint32_t n = 0;
    while (p < end) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        if (!comma) comma = end;
        const char *eq = memchr(p, '=', (size_t)(comma - p));
        if (eq && eq > p) {
            xpv_arg *a = &args[n];
            memset(a, 0, sizeof *a);
            a->key = xpv_sink_intern(pl->sink, p, (size_t)(eq - p));
            string_value(pl, a, (const uint8_t *)eq + 1, (size_t)(comma - eq - 1));
            int ok;
            int64_t v = arg_int(pl, a, &ok);
            int neg = comma - eq > 2 && eq[1] == '-';
            if (neg) {
                xpv_arg pos = *a;
                pos.type = XPV_ARG_TEXT, pos.text = eq + 2, pos.len = (uint32_t)(comma - eq - 2);
                v = -arg_int(pl, &pos, &ok);
            }
            if (ok) a->type = XPV_ARG_INT, a->v.i = v;
            roles[n++] = xpl_role_for(p, (size_t)(eq - p));
        }
        p = comma + 1;
    }
    return n;
}

/* Copies args (and their scratch texts) into the plane's arena. */
static void keep_args(xpl_plane *pl, xpl_meta *m, xpv_arg *args, uint8_t *roles, uint32_t n)
{
    m->args = arena_alloc(pl, (n ? n : 1) * sizeof *m->args);
    m->roles = arena_alloc(pl, n ? n : 1);
    for (uint32_t i = 0; i < n; i++) {
        xpv_arg a = args[i];
        if ((a.type == XPV_ARG_TEXT || a.type == XPV_ARG_JSON) && !a.text) {
            char *copy = arena_alloc(pl, a.len + 1);
            memcpy(copy, pl->scratch.data + a.v.u, a.len);
            a.text = copy;
            a.v.u = 0;
        }
        m->args[i] = a;
        m->roles[i] = roles[i];
    }
    m->nargs = n;
}

static int decode_event_meta(xpl_plane *pl, xpl_meta *m, xpv_err *err)
{
    xpv_pb r = {pl->msg.base, m->data, m->data + m->len};
    xpv_pb_field f;
    const char *name = "", *display = "";
    size_t name_len = 0, display_len = 0, nstats = 0, cap = 16;
    xpv_arg *args = xpv_xmalloc(cap * sizeof *args);
    uint8_t *roles = xpv_xmalloc(cap);
    int rc;
    size_t scratch_len = pl->scratch.len; /* an event's texts may already be there */
    while ((rc = xpv_pb_next(&r, &f, err)) == 1) {
        if (f.num != 2 && f.num != 4 && f.num != 5) continue;
        if (f.wire != XPV_PB_LEN) {
            rc = xpv_pb_wrong_wire(&r, &f, "XEventMetadata", 2, err);
            break;
        }
        if (f.num == 2)
            name = (const char *)f.data, name_len = f.len;
        else if (f.num == 4)
            display = (const char *)f.data, display_len = f.len;
        else {
            if (nstats + 1 >= cap) {
                cap *= 2;
                args = xpv_xrealloc(args, cap * sizeof *args);
                roles = xpv_xrealloc(roles, cap);
            }
            roles[nstats] = 0;
            if ((rc = xpl_stat_decode(pl, &f, &args[nstats], &roles[nstats], NULL, err)) != 0)
                break;
            if (args[nstats].key) nstats++;
        }
    }
    if (rc == 0) {
        if (display_len) name = display, name_len = display_len;
        const char *hash =
            name_len > 2 && name[name_len - 1] == '#' ? memchr(name, '#', name_len - 1) : NULL;
        size_t base_len = hash ? (size_t)(hash - name) : name_len;
        if (hash) {
            size_t extra = (size_t)(name + name_len - hash) / 2 + 1;
            args = xpv_xrealloc(args, (nstats + extra) * sizeof *args);
            roles = xpv_xrealloc(roles, nstats + extra);
            nstats +=
                split_name_args(pl, hash + 1, name + name_len - 1, args + nstats, roles + nstats);
        }
        m->name = xpv_sink_intern(pl->sink, name, base_len);
        m->memcpy_kind = kind_by_name(name, base_len);
        m->name_number = trailing_number(name, base_len);
        keep_args(pl, m, args, roles, (uint32_t)nstats);
        m->decoded = 1;
    }
    pl->scratch.len = scratch_len;
    free(args);
    free(roles);
    return rc < 0 ? -1 : 0;
}

xpl_meta *xpl_event_meta_slow(xpl_plane *pl, int64_t id, xpv_err *err, int *failed)
{
    xpl_meta *m = table_find(&pl->events, id);
    if (m && !m->decoded && decode_event_meta(pl, m, err) != 0) {
        *failed = 1;
        return NULL;
    }
    return m;
}

/* The launch shape a kernel_details text gives, parsed on its first use in
 * the file: the planes of one host repeat the same texts. */
static const xpv_launch *launch_of_text(xpl_plane *pl, uint32_t text)
{
    uint64_t *at = xpv_hindex_put(&pl->launch_of, text, UINT64_MAX);
    if (*at != UINT64_MAX) return &pl->launches[*at];
    if (pl->nlaunches == pl->cap_launches) {
        pl->cap_launches = pl->cap_launches ? pl->cap_launches * 2 : 256;
        pl->launches = xpv_xrealloc(pl->launches, pl->cap_launches * sizeof *pl->launches);
    }
    xpv_launch *l = &pl->launches[pl->nlaunches];
    *at = pl->nlaunches++;
    size_t len;
    const char *s = xpv_sink_string(pl->sink, text, &len);
    xpv_launch_init(l);
    xpv_kernel_details_parse(s, len, l);
    l->shape_key = text; /* one text, one shape */
    return l;
}

const xpv_launch *xpl_ref_launch(xpl_plane *pl, xpl_meta *ref)
{
    if (!ref->launch) {
        ref->launch = arena_alloc(pl, sizeof *ref->launch);
        *ref->launch = *launch_of_text(pl, ref->name);
    }
    return ref->launch;
}
