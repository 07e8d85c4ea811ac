/*
 * tensorboard.c — answers for the TensorBoard profile-plugin routes
 * (FORMATS.md section 7): run names, the tools and hosts of a run, and the
 * profiles a (run, host or hosts) names; the tools themselves are in
 * tools.c. Runs and hosts are the profiles' own
 * (`.../plugins/profile/<run>/<host>.<ext>`); a run's trace JSON twin of
 * an xplane is not a separate host.
 */
#include "../api.h"
#include "../api_util.h"
#include "tools.h"
#include "../../store/profiles.h"

#include <stdlib.h>

/* The texts of c (opened by open: 0, or -1 with err) as a JSON array,
 * each wrapped in {"<wrap_key>": ...} unless wrap_key is NULL. */
static int string_list(int open, xpv_store_cursor *c, const char *wrap_key, xpv_err *err,
                       xpv_buf *out)
{
    if (open != 0) return xpv_api_error(out, 500, "%s", err->msg);
    xpv_store_text t;
    int rc;
    xpv_buf_putc(out, '[');
    for (int n = 0; (rc = xpv_store_profiles_text_next(c, &t, err)) == 1; n++) {
        if (n) xpv_buf_putc(out, ',');
        if (wrap_key) xpv_buf_printf(out, "{\"%s\":", wrap_key);
        xpv_api_put_text_opt(out, t.s, t.n);
        if (wrap_key) xpv_buf_putc(out, '}');
    }
    xpv_buf_putc(out, ']');
    xpv_store_cursor_close(c);
    /* A list cut short by an error would pass for the whole list. */
    return rc == 0 ? 200 : xpv_api_error(out, 500, "%s", err->msg);
}

int xpv_api_tb_runs(sqlite3 *db, xpv_buf *out)
{
    xpv_store_cursor c;
    xpv_err err = {{0}};
    return string_list(xpv_store_profiles_open_runs(&c, db, &err), &c, NULL, &err, out);
}

int xpv_api_tb_hosts(sqlite3 *db, const char *run, const char *tag, xpv_buf *out)
{
    const xpv_tool *t = tag ? xpv_tool_named(tag) : NULL;
    int64_t *ids = NULL;
    size_t n = 0;
    /* hosts that cannot be counted: listed alone, without ALL_HOSTS */
    int all = t && t->merges_hosts && xpv_api_tb_scope(db, run, NULL, &ids, &n, NULL) == 1 && n > 1;
    free(ids);
    if (all && t->merges_hosts == XPV_TOOL_RUN_HOSTS) { /* a host alone has no data */
        xpv_buf_puts(out, "[{\"hostname\":\"" XPV_TB_ALL_HOSTS "\"}]");
        return 200;
    }
    xpv_store_cursor c;
    xpv_err err = {{0}};
    int status =
        string_list(xpv_store_profiles_open_hosts(&c, db, run, &err), &c, "hostname", &err, out);
    if (status == 200 && all) { /* as XProf lists it: first */
        const char *head = "[{\"hostname\":\"" XPV_TB_ALL_HOSTS "\"}";
        xpv_buf rest = {0};
        xpv_buf_append(&rest, out->data + 1, out->len - 1);
        xpv_buf_reset(out);
        xpv_buf_puts(out, head);
        if (rest.len > 1) xpv_buf_putc(out, ',');
        xpv_buf_append(out, rest.data, rest.len);
        xpv_buf_free(&rest);
    }
    return status;
}

int xpv_api_tb_profile(sqlite3 *db, const char *run, const char *host, int64_t *id, xpv_err *err)
{
    return xpv_store_profiles_of_run(db, run, host, id, err);
}

int xpv_api_tb_tools(sqlite3 *db, const char *run, xpv_buf *out)
{
    int64_t *ids = NULL;
    size_t n = 0;
    xpv_err err = {{0}};
    int found = xpv_api_tb_scope(db, run, NULL, &ids, &n, &err);
    int status = found < 0 ? xpv_api_error(out, 500, "%s", err.msg) : 200;
    if (found == 0) xpv_buf_puts(out, "[]");
    if (found > 0) status = xpv_api_tool_list(db, &(xpv_tool_scope){.ids = ids, .n = n}, out);
    free(ids);
    return status;
}
