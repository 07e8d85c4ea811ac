/*
 * tools.h — XProf's analysis tools (overview_page, kernel_stats,
 * framework_op_stats, hlo_stats, ...), computed from the index, one file
 * per tool (api/tools/tool_<tag>.c) and one row per tool in tools.c.
 *
 * A tool answers for a scope: one profile (a host), or every host of a run
 * at once where the tool can merge hosts. It builds a table (table.h) that
 * the routes write as a DataTable (the TensorBoard plugin routes), as our
 * JSON (/api/profiles/{id}/tools/{tag}) or as CSV. A tool whose data the
 * profiles do not carry is not listed for them and answers 404 "No Data",
 * as XProf does: it never invents a number.
 */
#ifndef XPV_TOOLS_H
#define XPV_TOOLS_H

#include "../table.h"
#include <sqlite3.h>

typedef struct {
    const int64_t *ids; /* profiles ids, one per host */
    size_t n;
    /* the HLO tools' per-profile op sums, kept by the caller across
     * requests (hlo_cache.h); NULL: computed for each request */
    struct xpv_hlo_cache *hlo_cache;
    /* the one compiled module memory_viewer answers for ("jit_train_step
     * (18566)", its program id 18566, or its HLO name); NULL: every module.
     * A scope naming a module its profile lacks has no data. */
    const char *module;
} xpv_tool_scope;

/* What hosts a tool answers for (xpv_tool.merges_hosts). */
enum {
    XPV_TOOL_ONE_HOST = 0,  /* one profile at a time */
    XPV_TOOL_ANY_HOSTS = 1, /* one, or several merged (ALL_HOSTS) */
    XPV_TOOL_RUN_HOSTS = 2, /* only several (the pod view): a host alone has no data */
};

typedef struct {
    const char *tag;  /* XProf's tool name */
    int merges_hosts; /* XPV_TOOL_ONE_HOST, _ANY_HOSTS or _RUN_HOSTS */
    /* 1 when the scope's profiles carry this tool's data, 0 when not, -1 with err. */
    int (*has_data)(sqlite3 *db, const xpv_tool_scope *s, xpv_err *err);
    /* The table, or NULL with err set (a failure, not "no data"). */
    xpv_table *(*build)(sqlite3 *db, const xpv_tool_scope *s, xpv_err *err);
} xpv_tool;

/* The tools in XProf's menu order; *n gets their count. */
const xpv_tool *xpv_tools(size_t *n);
const xpv_tool *xpv_tool_named(const char *tag);

enum xpv_tool_format { XPV_TOOL_DATATABLE, XPV_TOOL_JSON, XPV_TOOL_CSV };

/* The tool's answer in `format`: 200, 404 "No Data" (unknown tool, no data,
 * several hosts for a tool that cannot merge them) or 500. */
int xpv_api_tool(sqlite3 *db, const char *tag, const xpv_tool_scope *s, enum xpv_tool_format format,
                 xpv_buf *out);
/* `["tag", ...]`: the tools with data in any of the scope's profiles
 * ("trace_viewer" first when they have events). */
int xpv_api_tool_list(sqlite3 *db, const xpv_tool_scope *s, xpv_buf *out);

/* /api/profiles/{id}/tools[/{tag}]: the tools with data for the profile, or
 * one tool's answer for it (one: the profile alone, with the caller's cache
 * and module), or with all_hosts for every host of its run. */
int xpv_api_profile_tools(sqlite3 *db, int64_t id, xpv_buf *out);
int xpv_api_profile_tool(sqlite3 *db, const char *tag, const xpv_tool_scope *one, int all_hosts,
                         enum xpv_tool_format format, xpv_buf *out);

/* ---- the tools (tool_<tag>.c) ---- */

int xpv_tool_overview_page_has_data(sqlite3 *db, const xpv_tool_scope *s, xpv_err *err);
xpv_table *xpv_tool_overview_page(sqlite3 *db, const xpv_tool_scope *s, xpv_err *err);
/* framework_op_stats (tool_framework_op_stats.c): time per PyTorch/TF op and
 * JAX name stack, host and device; input_pipeline_analyzer
 * (tool_input_pipeline_analyzer.c): per step, the device's wait for input. */
int xpv_tool_framework_op_stats_has_data(sqlite3 *db, const xpv_tool_scope *s, xpv_err *err);
xpv_table *xpv_tool_framework_op_stats(sqlite3 *db, const xpv_tool_scope *s, xpv_err *err);
int xpv_tool_input_pipeline_analyzer_has_data(sqlite3 *db, const xpv_tool_scope *s, xpv_err *err);
xpv_table *xpv_tool_input_pipeline_analyzer(sqlite3 *db, const xpv_tool_scope *s, xpv_err *err);

int xpv_tool_kernel_stats_has_data(sqlite3 *db, const xpv_tool_scope *s, xpv_err *err);
xpv_table *xpv_tool_kernel_stats(sqlite3 *db, const xpv_tool_scope *s, xpv_err *err);
int xpv_tool_pod_viewer_has_data(sqlite3 *db, const xpv_tool_scope *s, xpv_err *err);
xpv_table *xpv_tool_pod_viewer(sqlite3 *db, const xpv_tool_scope *s, xpv_err *err);

/* HLO tools (tool_<tag>.c; ops from hlo_ops.c) */
int xpv_tool_hlo_stats_has_data(sqlite3 *db, const xpv_tool_scope *s, xpv_err *err);
xpv_table *xpv_tool_hlo_stats(sqlite3 *db, const xpv_tool_scope *s, xpv_err *err);
int xpv_tool_op_profile_has_data(sqlite3 *db, const xpv_tool_scope *s, xpv_err *err);
xpv_table *xpv_tool_op_profile(sqlite3 *db, const xpv_tool_scope *s, xpv_err *err);
int xpv_tool_roofline_model_has_data(sqlite3 *db, const xpv_tool_scope *s, xpv_err *err);
xpv_table *xpv_tool_roofline_model(sqlite3 *db, const xpv_tool_scope *s, xpv_err *err);

/* Memory tools (memory_profile.c, memory_viewer.c): one row per
 * allocator, one row per compiled module. */
int xpv_tool_memory_profile_has_data(sqlite3 *db, const xpv_tool_scope *s, xpv_err *err);
xpv_table *xpv_tool_memory_profile(sqlite3 *db, const xpv_tool_scope *s, xpv_err *err);
int xpv_tool_memory_viewer_has_data(sqlite3 *db, const xpv_tool_scope *s, xpv_err *err);
xpv_table *xpv_tool_memory_viewer(sqlite3 *db, const xpv_tool_scope *s, xpv_err *err);

/* ---- helpers for tools ---- */

/* What the tools that scan a profile's events need first: which tracks
 * are devices, the profile's start (0 and has_span 0 without events), and
 * whether it has kernels (else its device work is XLA ops, as on TPU). */
typedef struct {
    uint8_t *device_track; /* by track id */
    size_t ntracks;
    int64_t base_ns;
    int has_span, no_kernels;
} xpv_tool_profile;
/* 0, or -1 with err. Free with xpv_tool_profile_free. */
int xpv_tool_profile_load(sqlite3 *db, int64_t id, xpv_tool_profile *p, xpv_err *err);
void xpv_tool_profile_free(xpv_tool_profile *p);
static inline int xpv_tool_on_device(const xpv_tool_profile *p, uint32_t track)
{
    return track < p->ntracks && p->device_track[track];
}

/* Binds the scope's ids as ?1 of a statement written with "IN (SELECT value
 * FROM json_each(?1))". */
void xpv_tool_bind_ids(sqlite3_stmt *st, int param, const xpv_tool_scope *s);
/* Finalizes st after its last sqlite3_step returned rc: 0 when the query
 * ended well (a row or done), else -1 with the error in err, so a query
 * broken halfway never passes for a short answer. */
int xpv_tool_step_end(sqlite3 *db, sqlite3_stmt *st, int rc, xpv_err *err);
/* 1 when `sql` (with the scope bound as ?1) returns a row, 0 when not, -1 with err. */
int xpv_tool_any_row(sqlite3 *db, const char *sql, const xpv_tool_scope *s, xpv_err *err);

/* The `want` (at most XPV_TOP_OPS_MAX) kernels, then XLA ops, with the most
 * device time summed over the hosts of s (top_ops.c), largest first, and
 * each kind's total (0 kernel, 1 xla_op); exact integer ps. The names are
 * the caller's to free with xpv_top_ops_free. */
#define XPV_TOP_OPS_MAX 16
typedef struct {
    int kind; /* 0 kernel, 1 xla_op */
    const char *name;
    int64_t ps;
} xpv_top_op;
typedef struct {
    xpv_top_op v[XPV_TOP_OPS_MAX];
    size_t n;
    int64_t total[2];
} xpv_top_ops;
int xpv_tool_top_ops(sqlite3 *db, const xpv_tool_scope *s, size_t want, xpv_top_ops *out,
                     xpv_err *err);
void xpv_top_ops_free(xpv_top_ops *o);

#endif
