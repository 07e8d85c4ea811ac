/*
 * xplane_facts.c — what an XSpace says about where it ran, as profile facts:
 * each device plane's description and scalar stats, the peak figures the
 * roofline reads (kept only when every device plane states the same), the
 * Task Environment plane, the space's own errors and warnings, and what a
 * plane lacked. Part of the xplane reader (xplane_space.h).
 */
#include "xplane_space.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Device planes' peak figures, kept as profile facts for the roofline
 * (api/tools/tool_roofline_model.c) when every device plane stating one states the
 * same: one figure per host, never one device's for another's. */
static const char *const PEAK_STATS[NPEAKS] = {"peak_teraflops_per_second",
                                               "peak_hbm_bw_gigabytes_per_second"};

/* Writes an arg's value as text (for facts and labels). */
static void arg_to_text(reader *rd, const xpv_arg *a, char *out, size_t n)
{
    size_t len = 0;
    const char *s = xpl_arg_text(&rd->pl, a, &len);
    if (s)
        snprintf(out, n, "%.*s", (int)(len < n ? len : n - 1), s);
    else if (a->type == XPV_ARG_INT)
        snprintf(out, n, "%lld", (long long)a->v.i);
    else if (a->type == XPV_ARG_UINT)
        snprintf(out, n, "%llu", (unsigned long long)a->v.u);
    else
        snprintf(out, n, "%.17g", a->v.d);
}

/* Looks up a plane stat by name among the decoded ones. */
static const xpv_arg *find_stat(reader *rd, uint32_t n, const char *name)
{
    for (uint32_t i = 0; i < n; i++) {
        size_t len;
        const char *k = xpv_sink_string(rd->sink, rd->args[i].key, &len);
        if (xpl_equals(k, len, name)) return &rd->args[i];
    }
    return NULL;
}

/* "GPU:0 (AMD, compute capability 9.4)", "TPU:1 (TPU v6 Lite)", or the plane name. */
static void device_fact(reader *rd, const plane_head *h, uint32_t n)
{
    char model[160] = "", major[24] = "", minor[24] = "", fact[400];
    const xpv_arg *a = find_stat(rd, n, "device_type_string");
    if (!a) a = find_stat(rd, n, "device_model");
    if (!a) a = find_stat(rd, n, "device_name");
    if (a)
        arg_to_text(rd, a, model, sizeof model);
    else if ((a = find_stat(rd, n, "device_vendor")) != NULL) {
        arg_to_text(rd, a, model, sizeof model);
        const xpv_arg *ma = find_stat(rd, n, "compute_cap_major");
        const xpv_arg *mi = find_stat(rd, n, "compute_cap_minor");
        if (ma && mi) {
            arg_to_text(rd, ma, major, sizeof major);
            arg_to_text(rd, mi, minor, sizeof minor);
            size_t k = strlen(model);
            snprintf(model + k, sizeof model - k, ", compute capability %s.%s", major, minor);
        }
    }
    const char *short_name = h->name_len > 8 ? h->name + 8 : h->name; /* after "/device:" */
    int len = (int)(h->name_len > 8 ? h->name_len - 8 : h->name_len);
    if (model[0])
        snprintf(fact, sizeof fact, "%.*s (%s)", len, short_name, model);
    else
        snprintf(fact, sizeof fact, "%.*s", (int)h->name_len, h->name);
    xpv_sink_fact(rd->sink, "device", fact);
    if (model[0]) xpv_sink_process_label(rd->sink, rd->pid, model, strlen(model));
}

static int printable(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e) return 0;
    return n > 0;
}

/* Every scalar stat of a device plane as a fact "device.GPU:0.<stat>"
 * (core_count, clock_rate, memory_size, memory_bandwidth, TPU peak FLOP/s
 * and bandwidths, ...): the run environment and the roofline read them.
 * Byte stats come as hex, as in event args; unprintable text is left out. */
static void device_stat_facts(reader *rd, const plane_head *h, uint32_t n)
{
    const char *short_name = h->name_len > 8 ? h->name + 8 : h->name; /* after "/device:" */
    int len = (int)(h->name_len > 8 ? h->name_len - 8 : h->name_len);
    for (uint32_t i = 0; i < n; i++) {
        const xpv_arg *a = &rd->args[i];
        size_t tlen = 0;
        const char *text = xpl_arg_text(&rd->pl, a, &tlen);
        if (text && !printable(text, tlen)) continue;
        char key[200], value[256];
        snprintf(key, sizeof key, "device.%.*s.%s", len, short_name,
                 xpv_sink_string(rd->sink, a->key, NULL));
        arg_to_text(rd, a, value, sizeof value);
        xpv_sink_fact(rd->sink, key, value);
    }
}

static void note_peaks(reader *rd, uint32_t n)
{
    for (size_t i = 0; i < NPEAKS; i++) {
        const xpv_arg *a = find_stat(rd, n, PEAK_STATS[i]);
        peak_fact *f = &rd->peaks[i];
        char text[64];
        if (!a || f->state < 0) continue;
        if (a->type == XPV_ARG_DOUBLE) { /* the shortest text that reads back the same */
            xpv_buf b = {0};
            xpv_buf_json_double(&b, a->v.d);
            snprintf(text, sizeof text, "%.*s", (int)b.len, b.data ? b.data : "");
            xpv_buf_free(&b);
        } else {
            arg_to_text(rd, a, text, sizeof text);
        }
        if (f->state == 0)
            memcpy(f->text, text, sizeof text), f->state = 1;
        else if (strcmp(f->text, text) != 0)
            f->state = -1;
    }
}

/* Plane stats: device descriptions and the Task Environment's facts. */
int xpl_facts_read_plane_stats(reader *rd, const plane_head *h, xpv_err *err)
{
    xpl_plane *pl = &rd->pl;
    xpv_pb r = pl->msg;
    xpv_pb_field f;
    uint32_t n = 0;
    int rc;
    pl->scratch.len = 0;
    while ((rc = xpv_pb_next(&r, &f, err)) == 1) {
        if (f.num != 6) continue;
        xpl_ensure_args(rd, (size_t)n + 1);
        if (xpl_stat_decode(pl, &f, &rd->args[n], &rd->roles[n], NULL, err) != 0) return -1;
        if (rd->args[n].key) n++;
    }
    if (rc < 0) return -1;
    xpl_fix_texts(pl, rd->args, n);
    if (rd->plane_type == PLANE_GPU || rd->plane_type == PLANE_TPU) {
        device_fact(rd, h, n);
        device_stat_facts(rd, h, n);
        note_peaks(rd, n);
    }
    if (!xpl_equals(h->name, h->name_len, "Task Environment")) return 0;
    for (uint32_t i = 0; i < n; i++) {
        char value[256];
        arg_to_text(rd, &rd->args[i], value, sizeof value);
        xpv_sink_fact(rd->sink, xpv_sink_string(rd->sink, rd->args[i].key, NULL), value);
    }
    return 0;
}

void xpl_facts_plane_warnings(reader *rd, const plane_head *h)
{
    char msg[512];
    xpl_plane *pl = &rd->pl;
    int nl = (int)(h->name_len < 200 ? h->name_len : 200);
    if (pl->missing_event_meta) {
        snprintf(msg, sizeof msg,
                 "plane %.*s: %lld events refer to missing event metadata "
                 "(their ids are used as names)",
                 nl, h->name, (long long)pl->missing_event_meta);
        xpv_sink_fact(rd->sink, "warning", msg);
    }
    if (pl->missing_stat_meta) {
        snprintf(msg, sizeof msg,
                 "plane %.*s: %lld stats refer to missing stat metadata "
                 "(their ids are used as names)",
                 nl, h->name, (long long)pl->missing_stat_meta);
        xpv_sink_fact(rd->sink, "warning", msg);
    }
    if (pl->bad_map_entries) {
        snprintf(msg, sizeof msg,
                 "plane %.*s: %lld metadata map entries without key or value "
                 "(first at byte offset %zu)",
                 nl, h->name, (long long)pl->bad_map_entries, pl->first_bad_map_offset);
        xpv_sink_fact(rd->sink, "warning", msg);
    }
}

void xpl_facts_text(reader *rd, const char *key, const xpv_pb_field *f)
{
    char value[480];
    snprintf(value, sizeof value, "%s%.*s",
             strcmp(key, "warning") == 0 ? "profiler warning: " : "profiler error: ",
             (int)(f->len < 400 ? f->len : 400), (const char *)f->data);
    xpv_sink_fact(rd->sink, "warning", value);
}

void xpl_facts_finish(reader *rd)
{
    for (size_t i = 0; i < NPEAKS; i++) {
        char msg[160];
        if (rd->peaks[i].state > 0) xpv_sink_fact(rd->sink, PEAK_STATS[i], rd->peaks[i].text);
        if (rd->peaks[i].state >= 0) continue;
        snprintf(msg, sizeof msg, "device planes state different %s; none is kept", PEAK_STATS[i]);
        xpv_sink_fact(rd->sink, "warning", msg);
    }
    xpv_sink_fact(rd->sink, "producer", rd->tensorflow ? "TensorFlow" : "JAX/XLA");
    if (rd->hostnames.len) xpv_sink_fact(rd->sink, "hostname", rd->hostnames.data);
}
