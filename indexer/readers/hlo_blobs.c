/*
 * hlo_blobs.c — where an XSpace keeps its compiled modules: the `Hlo Proto`
 * stats of the /host:metadata plane's event metadata (see hlo_proto.h).
 *
 * Only that plane is read: every other plane is one length-delimited field
 * of the XSpace, skipped by its length, so finding the modules of a 1 GB
 * file touches the metadata plane and a few bytes per plane. The stat's id
 * is looked up by name first (stat metadata may follow event metadata).
 */
#include "hlo_proto.h"

#include <stdlib.h>
#include <string.h>

#define HLO_STAT "Hlo Proto"
#define METADATA_PLANE "/host:metadata"

static int field_is(const xpv_pb_field *f, const char *s)
{
    size_t n = strlen(s);
    return f->wire == XPV_PB_LEN && f->len == n && memcmp(f->data, s, n) == 0;
}

/* The map entry's value (field 2) and key (field 1) of a map<int64, M>. */
static int map_entry(const xpv_pb *r, const xpv_pb_field *e, xpv_pb *value, int64_t *key,
                     xpv_err *err)
{
    xpv_pb m = xpv_pb_sub(r, e);
    xpv_pb_field f;
    int rc;
    *key = 0;
    value->base = r->base, value->p = value->end = NULL;
    while ((rc = xpv_pb_next(&m, &f, err)) == 1) {
        if (f.num == 1 && f.wire == XPV_PB_VARINT) *key = (int64_t)f.v;
        if (f.num == 2 && f.wire == XPV_PB_LEN) *value = xpv_pb_sub(&m, &f);
    }
    return rc;
}

/* The id of the stat metadata named HLO_STAT in plane; 0 found, 1 none. */
static int hlo_stat_id(xpv_pb plane, int64_t *id, xpv_err *err)
{
    xpv_pb_field f;
    int rc;
    while ((rc = xpv_pb_next(&plane, &f, err)) == 1) {
        if (f.num != 5 || f.wire != XPV_PB_LEN) continue;
        xpv_pb v, meta;
        int64_t key;
        if (map_entry(&plane, &f, &v, &key, err) < 0) return -1;
        if (!v.p) continue;
        meta = v;
        xpv_pb_field g;
        while ((rc = xpv_pb_next(&meta, &g, err)) == 1)
            if (g.num == 2 && field_is(&g, HLO_STAT)) {
                *id = key;
                return 0;
            }
        if (rc < 0) return -1;
    }
    return rc < 0 ? -1 : 1;
}

/* Appends the blob of one XEventMetadata when it carries the stat. */
static int event_meta(xpv_pb meta, int64_t key, int64_t stat_id, xpv_hlo_blob **out, size_t *n,
                      xpv_err *err)
{
    xpv_hlo_blob b = {{NULL, 0}, (uint64_t)key, NULL, 0};
    xpv_pb_field f;
    int rc;
    while ((rc = xpv_pb_next(&meta, &f, err)) == 1) {
        if (f.num == 2 && f.wire == XPV_PB_LEN)
            b.name = (xpv_hlo_str){(const char *)f.data, (uint32_t)f.len};
        if (f.num != 5 || f.wire != XPV_PB_LEN) continue;
        xpv_pb st = xpv_pb_sub(&meta, &f);
        xpv_pb_field g;
        int64_t mid = -1;
        const uint8_t *data = NULL;
        size_t len = 0;
        while ((rc = xpv_pb_next(&st, &g, err)) == 1) {
            if (g.num == 1 && g.wire == XPV_PB_VARINT) mid = (int64_t)g.v;
            if (g.num == 6 && g.wire == XPV_PB_LEN) data = g.data, len = g.len;
        }
        if (rc < 0) return -1;
        if (mid == stat_id && data) b.data = data, b.len = len;
    }
    if (rc < 0) return -1;
    if (!b.data) return 0;
    *out = xpv_xrealloc(*out, (*n + 1) * sizeof **out);
    (*out)[(*n)++] = b;
    return 0;
}

static int plane_blobs(xpv_pb plane, xpv_hlo_blob **out, size_t *n, xpv_err *err)
{
    int64_t stat_id;
    int found = hlo_stat_id(plane, &stat_id, err);
    if (found != 0) return found < 0 ? -1 : 0;
    xpv_pb_field f;
    int rc;
    while ((rc = xpv_pb_next(&plane, &f, err)) == 1) {
        if (f.num != 4 || f.wire != XPV_PB_LEN) continue;
        xpv_pb v;
        int64_t key;
        if (map_entry(&plane, &f, &v, &key, err) < 0) return -1;
        if (v.p && event_meta(v, key, stat_id, out, n, err) != 0) return -1;
    }
    return rc < 0 ? -1 : 0;
}

static int is_metadata_plane(xpv_pb plane, xpv_err *err)
{
    xpv_pb_field f;
    int rc;
    while ((rc = xpv_pb_next(&plane, &f, err)) == 1)
        if (f.num == 2) return field_is(&f, METADATA_PLANE);
    return rc < 0 ? -1 : 0;
}

int xpv_hlo_find_blobs(const uint8_t *data, size_t size, xpv_hlo_blob **out, size_t *n,
                       xpv_err *err)
{
    *out = NULL, *n = 0;
    xpv_pb space = xpv_pb_open(data, size);
    xpv_pb_field f;
    int rc;
    while ((rc = xpv_pb_next(&space, &f, err)) == 1) {
        if (f.num != 1 || f.wire != XPV_PB_LEN) continue;
        xpv_pb plane = xpv_pb_sub(&space, &f);
        int is = is_metadata_plane(plane, err);
        if (is < 0 || (is && plane_blobs(plane, out, n, err) != 0)) {
            rc = -1;
            break;
        }
    }
    if (rc < 0) {
        free(*out);
        *out = NULL, *n = 0;
        return -1;
    }
    return 0;
}
