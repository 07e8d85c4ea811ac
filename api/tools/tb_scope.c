/*
 * tb_scope.c — the profiles a TensorBoard run names: one per host (the
 * best indexed, then the newest), every host or those a list names. The
 * tool answers (tools.c) and the TensorBoard routes' answers
 * (tensorboard.c) both scope a run this way, so it sits below both.
 */
#include "../api.h"
#include "../api_util.h"
#include "../../store/profiles.h"

#include <stdlib.h>
#include <string.h>

/* Whether host (one name) is listed in the comma-separated list. */
static int listed(const char *list, const char *host)
{
    size_t n = strlen(host);
    for (const char *p = list; *p;) {
        const char *comma = strchr(p, ',');
        size_t m = comma ? (size_t)(comma - p) : strlen(p);
        if (m == n && memcmp(p, host, n) == 0) return 1;
        p += m + (comma != NULL);
    }
    return 0;
}

int xpv_api_tb_scope(sqlite3 *db, const char *run, const char *hosts, int64_t **ids, size_t *n,
                     xpv_err *err)
{
    xpv_store_cursor c;
    *ids = NULL;
    *n = 0;
    if (xpv_store_profiles_open_run_hosts(&c, db, run, err) != 0) return -1;
    int all = !hosts || strcmp(hosts, XPV_TB_ALL_HOSTS) == 0;
    const char *prev = NULL;
    xpv_buf seen = {0}; /* the previous host: one profile per host, the best */
    int64_t id;
    xpv_store_text host;
    int rc; /* a host list cut short would pass for the run: an error */
    while ((rc = xpv_store_profiles_host_next(&c, &id, &host, err)) == 1) {
        if (!host.s || (prev && strcmp(prev, host.s) == 0)) continue;
        xpv_buf_reset(&seen);
        xpv_buf_puts(&seen, host.s);
        xpv_buf_putc(&seen, 0);
        prev = seen.data;
        if (!all && !listed(hosts, host.s)) continue;
        *ids = xpv_xrealloc(*ids, (*n + 1) * sizeof **ids);
        (*ids)[(*n)++] = id;
    }
    xpv_store_cursor_close(&c);
    xpv_buf_free(&seen);
    if (rc != 0) {
        free(*ids);
        *ids = NULL, *n = 0;
        return -1;
    }
    return *n ? 1 : 0;
}
