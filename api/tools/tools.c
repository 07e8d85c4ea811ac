/*
 * tools.c — the table of tools and the answers over it (see tools.h).
 *
 * Invariants: the table's order is XProf's menu order; a tool is listed
 * only when has_data() says so, and then build() answers with rows.
 */
#include "tools.h"
#include "../api.h"
#include "../api_util.h"
#include "../../store/cursor.h"
#include "../../store/profiles.h"
#include "../../store/tracks.h"
#include "../../store/event_store.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const xpv_tool TOOLS[] = {
    /* tag, hosts, has_data, build */
    {"overview_page", XPV_TOOL_ANY_HOSTS, xpv_tool_overview_page_has_data, xpv_tool_overview_page},
    {"input_pipeline_analyzer", XPV_TOOL_ONE_HOST, xpv_tool_input_pipeline_analyzer_has_data,
     xpv_tool_input_pipeline_analyzer},
    {"framework_op_stats", XPV_TOOL_ANY_HOSTS, xpv_tool_framework_op_stats_has_data,
     xpv_tool_framework_op_stats},
    {"kernel_stats", XPV_TOOL_ONE_HOST, xpv_tool_kernel_stats_has_data, xpv_tool_kernel_stats},
    /* the HLO tools sum device time over every host of the scope */
    {"op_profile", XPV_TOOL_ANY_HOSTS, xpv_tool_op_profile_has_data, xpv_tool_op_profile},
    {"hlo_stats", XPV_TOOL_ANY_HOSTS, xpv_tool_hlo_stats_has_data, xpv_tool_hlo_stats},
    {"roofline_model", XPV_TOOL_ANY_HOSTS, xpv_tool_roofline_model_has_data,
     xpv_tool_roofline_model},
    {"pod_viewer", XPV_TOOL_RUN_HOSTS, xpv_tool_pod_viewer_has_data, xpv_tool_pod_viewer},
    /* memory: one host's allocators, one host's compiled modules */
    {"memory_profile", XPV_TOOL_ONE_HOST, xpv_tool_memory_profile_has_data,
     xpv_tool_memory_profile},
    {"memory_viewer", XPV_TOOL_ONE_HOST, xpv_tool_memory_viewer_has_data, xpv_tool_memory_viewer},
};

#define NTOOLS (sizeof TOOLS / sizeof TOOLS[0])

const xpv_tool *xpv_tools(size_t *n)
{
    *n = NTOOLS;
    return TOOLS;
}

const xpv_tool *xpv_tool_named(const char *tag)
{
    for (size_t i = 0; i < NTOOLS; i++)
        if (strcmp(TOOLS[i].tag, tag) == 0) return &TOOLS[i];
    return NULL;
}

void xpv_tool_bind_ids(sqlite3_stmt *st, int param, const xpv_tool_scope *s)
{
    xpv_store_bind_ids(st, param, s->ids, s->n);
}

int xpv_tool_step_end(sqlite3 *db, sqlite3_stmt *st, int rc, xpv_err *err)
{
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) xpv_err_set(err, "index: %s", sqlite3_errmsg(db));
    sqlite3_finalize(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1;
}

int xpv_tool_any_row(sqlite3 *db, const char *sql, const xpv_tool_scope *s, xpv_err *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return xpv_err_set(err, "index: %s", sqlite3_errmsg(db));
    xpv_tool_bind_ids(st, 1, s);
    int rc = sqlite3_step(st);
    return xpv_tool_step_end(db, st, rc, err) == 0 ? rc == SQLITE_ROW : -1;
}

static int no_data(xpv_buf *out)
{
    return xpv_api_error(out, 404, "No Data");
}

int xpv_api_tool(sqlite3 *db, const char *tag, const xpv_tool_scope *s, enum xpv_tool_format format,
                 xpv_buf *out)
{
    const xpv_tool *t = xpv_tool_named(tag);
    if (!t || s->n == 0 || (s->n > 1 && !t->merges_hosts)) return no_data(out);
    xpv_err err = {{0}};
    int has = t->has_data(db, s, &err);
    if (has < 0) return xpv_api_error(out, 500, "%s", err.msg);
    if (!has) return no_data(out);
    xpv_table *table = t->build(db, s, &err);
    if (!table) return xpv_api_error(out, 500, "%s: %s", tag, err.msg);
    if (format == XPV_TOOL_CSV)
        xpv_table_put_csv(table, out);
    else if (format == XPV_TOOL_JSON)
        xpv_table_put_json(table, out);
    else
        xpv_table_put_datatable(table, out);
    xpv_table_free(table);
    return 200;
}

int xpv_api_tool_list(sqlite3 *db, const xpv_tool_scope *s, xpv_buf *out)
{
    xpv_err err = {{0}};
    int events = xpv_store_profiles_any_events(db, s->ids, s->n, 0, &err);
    if (events < 0) return xpv_api_error(out, 500, "%s", err.msg);
    xpv_buf_putc(out, '[');
    int n = 0;
    if (events) xpv_buf_puts(out, "\"trace_viewer\""), n++;
    for (size_t i = 0; i < NTOOLS; i++) {
        int has = TOOLS[i].has_data(db, s, &err);
        if (has < 0) return xpv_api_error(out, 500, "%s", err.msg);
        if (has) xpv_buf_printf(out, "%s\"%s\"", n++ ? "," : "", TOOLS[i].tag);
    }
    xpv_buf_putc(out, ']');
    return 200;
}

/* The run of profile id into run (NUL-terminated, cut to fit); 0, or -1. */
static int run_of(sqlite3 *db, int64_t id, char *run, size_t n)
{
    xpv_store_cursor c;
    xpv_store_profile row;
    run[0] = 0;
    if (xpv_store_profiles_get(&c, db, id, &row, NULL) != 1) return -1;
    int found = row.run.s != NULL;
    if (found) snprintf(run, n, "%s", row.run.s);
    xpv_store_cursor_close(&c);
    return found ? 0 : -1;
}

/* Every host of profile id's run (just id when it has no run); malloc'ed. */
static xpv_tool_scope run_scope(sqlite3 *db, int64_t id)
{
    char run[4096];
    int64_t *ids = NULL;
    size_t n = 0;
    if (run_of(db, id, run, sizeof run) != 0 ||
        xpv_api_tb_scope(db, run, NULL, &ids, &n, NULL) != 1) {
        ids = xpv_xmalloc(sizeof *ids);
        ids[0] = id, n = 1;
    }
    return (xpv_tool_scope){.ids = ids, .n = n};
}

/* A tool that needs several hosts (the pod view) is listed for a profile
 * when its run has the data, and answers for the whole run. */
int xpv_api_profile_tools(sqlite3 *db, int64_t id, xpv_buf *out)
{
    xpv_api_profile_state ps;
    int known = xpv_api_profile_state_get(db, id, &ps, out);
    if (known != 200) return known;
    xpv_tool_scope one = {.ids = &id, .n = 1}, run = run_scope(db, id);
    int status = xpv_api_tool_list(db, &one, out);
    for (size_t i = 0; i < NTOOLS && status == 200 && run.n > 1; i++) {
        if (TOOLS[i].merges_hosts != XPV_TOOL_RUN_HOSTS) continue;
        /* a run's data that cannot be read leaves the host's own list */
        if (TOOLS[i].has_data(db, &run, NULL) != 1) continue;
        out->len--; /* the list's ']' */
        xpv_buf_printf(out, "%s\"%s\"]", out->len > 1 ? "," : "", TOOLS[i].tag);
    }
    free((void *)run.ids);
    return status;
}

int xpv_api_profile_tool(sqlite3 *db, const char *tag, const xpv_tool_scope *one, int all_hosts,
                         enum xpv_tool_format format, xpv_buf *out)
{
    assert(one->n == 1);
    xpv_api_profile_state ps;
    int known = xpv_api_profile_state_get(db, one->ids[0], &ps, out);
    if (known != 200) return known;
    const xpv_tool *t = xpv_tool_named(tag);
    if (!all_hosts && !(t && t->merges_hosts == XPV_TOOL_RUN_HOSTS))
        return xpv_api_tool(db, tag, one, format, out);
    xpv_tool_scope run = run_scope(db, one->ids[0]);
    run.hlo_cache = one->hlo_cache;
    run.module = one->module;
    int status = xpv_api_tool(db, tag, &run, format, out);
    free((void *)run.ids);
    return status;
}

/* ---- a profile's layout, for the tools that scan its events ---- */

static int device_tracks(sqlite3 *db, int64_t id, xpv_tool_profile *p, xpv_err *err)
{
    xpv_store_cursor c;
    if (xpv_store_tracks_open_devices(&c, db, id, err) != 0) return -1;
    int64_t t;
    int device, rc;
    while ((rc = xpv_store_tracks_device_next(&c, &t, &device, err)) == 1) {
        if (t < 0 || t > UINT32_MAX) continue;
        p->device_track = xpv_grow_to_index(p->device_track, &p->ntracks, (size_t)t, 1, 0);
        p->device_track[t] = 1;
    }
    xpv_store_cursor_close(&c);
    return rc;
}

int xpv_tool_profile_load(sqlite3 *db, int64_t id, xpv_tool_profile *p, xpv_err *err)
{
    memset(p, 0, sizeof *p);
    if (device_tracks(db, id, p, err) != 0) return -1;
    xpv_store_cursor c;
    xpv_store_profile_state row;
    int found = xpv_store_profiles_state(&c, db, id, &row, err);
    if (found < 0) return -1;
    if (found) {
        p->has_span = (row.known >> XPV_STORE_PROFILE_STATE_START_NS) & 1u;
        p->base_ns = row.num[XPV_STORE_PROFILE_STATE_START_NS];
        xpv_store_cursor_close(&c);
    }
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db,
                           "SELECT EXISTS(SELECT 1 FROM blocks WHERE profile_id=?1 AND kinds & ?2)",
                           -1, &st, NULL) != SQLITE_OK)
        return xpv_err_set(err, "index: %s", sqlite3_errmsg(db));
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 2, XPV_KIND_BIT(XPV_KIND_KERNEL));
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) p->no_kernels = !sqlite3_column_int(st, 0);
    return xpv_tool_step_end(db, st, rc, err);
}

void xpv_tool_profile_free(xpv_tool_profile *p)
{
    free(p->device_track);
    memset(p, 0, sizeof *p);
}
