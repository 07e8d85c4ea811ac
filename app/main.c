/*
 * main.c — xprof-view's entry point: resolve the profile directory, bring
 * the index up to date, then list, extract or serve.
 *
 * The profile directory is only ever read. The index lives elsewhere
 * (index_db.h) and extraction writes only into the chosen output folder.
 */
#define _GNU_SOURCE
#include "cli.h"
#include "compare_cli.h"
#include "extract.h"
#include "serve.h"
#include "shrunk_maps.h"
#include "../api/api.h"
#include "../store/cache_dir.h"
#include "../api/findings/findings.h"
#include "../indexer/discover.h"
#include "../store/index_db.h"
#include "../server/route_table.h"
#include "../indexer/indexer.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* --routes: the route table as JSON (docs/API.md is generated from it). */
static int print_routes(void)
{
    xpv_buf b = {0};
    xpv_route_table_json(&b);
    fwrite(b.data, 1, b.len, stdout);
    xpv_buf_free(&b);
    return 0;
}

static int resolve_profile_dir(const xpv_options *o, char *out, size_t n)
{
    xpv_err err = {{0}};
    if (o->profile_dir) {
        snprintf(out, n, "%s", o->profile_dir);
        return 0;
    }
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd) || xpv_autodetect_profile_dir(cwd, out, n, &err) != 0) {
        fprintf(stderr, "xprof-view: %s\n",
                err.msg[0] ? err.msg : "cannot read the working directory");
        return -1;
    }
    fprintf(stderr, "xprof-view: using profile directory %s (newest found)\n", out);
    return 0;
}

static void print_progress(void *ctx, const xpv_index_progress *p)
{
    const xpv_options *o = ctx;
    if (p->finished) return;
    if (!o->quiet && p->current && isatty(2))
        fprintf(stderr, "\rindexing %d/%d %-60.60s", p->done + 1, p->total, p->current);
    else if (!o->quiet && !p->current && p->total && isatty(2))
        fprintf(stderr, "\r%-80s\r", "");
}

static void format_size(int64_t bytes, char *out, size_t n)
{
    if (bytes >= (1LL << 30))
        snprintf(out, n, "%.1f GB", (double)bytes / (1 << 30));
    else if (bytes >= (1LL << 20))
        snprintf(out, n, "%.1f MB", (double)bytes / (1 << 20));
    else if (bytes >= 1024)
        snprintf(out, n, "%.1f KB", (double)bytes / 1024);
    else
        snprintf(out, n, "%lld B", (long long)bytes);
}

static const char *field_text(cJSON *p, const char *key)
{
    const char *s = cJSON_GetStringValue(cJSON_GetObjectItem(p, key));
    return s ? s : "";
}

/* The widest of a text column, at least its heading's, at most 80: one
 * very long run name runs past its column rather than widening it for
 * every row. Widths count bytes, as printf pads. */
static int column_width(cJSON *list, const char *key, int at_least)
{
    int w = at_least;
    cJSON *p;
    cJSON_ArrayForEach(p, list)
    {
        size_t n = strlen(field_text(p, key));
        if ((int)n > w) w = n > 80 ? 80 : (int)n;
    }
    return w;
}

static void print_table(cJSON *list)
{
    int run_w = column_width(list, "run", 3), host_w = column_width(list, "host", 4),
        format_w = column_width(list, "format", 6);
    printf("%-3s %-*s %-*s %-*s %9s %10s  %s\n", "#", run_w, "run", host_w, "host", format_w,
           "format", "size", "events", "status");
    int i = 0;
    cJSON *p;
    cJSON_ArrayForEach(p, list)
    {
        char size[32];
        format_size((int64_t)cJSON_GetNumberValue(cJSON_GetObjectItem(p, "size_bytes")), size,
                    sizeof size);
        cJSON *events = cJSON_GetObjectItem(p, "events");
        cJSON *error = cJSON_GetObjectItem(p, "error");
        char ev[32] = "-";
        if (cJSON_IsNumber(events)) snprintf(ev, sizeof ev, "%.0f", events->valuedouble);
        printf("%-3d %-*s %-*s %-*s %9s %10s  %s%s%s\n", ++i, run_w, field_text(p, "run"), host_w,
               field_text(p, "host"), format_w, field_text(p, "format"), size, ev,
               field_text(p, "status"), cJSON_IsString(error) ? ": " : "",
               cJSON_IsString(error) ? error->valuestring : "");
        printf("    %s\n", field_text(p, "path"));
    }
}

/* Writes one profile's object with its findings added ("findings": [...],
 * null when they cannot be computed), its other numbers as the API writes
 * them (no round trip through doubles). */
static void put_with_findings(sqlite3 *db, const xpv_options *o, int64_t id, int *keep,
                              xpv_buf *out)
{
    xpv_buf p = {0}, f = {0};
    xpv_err err = {{0}};
    /* Computed once and kept: the next listing reads it. An index that
     * cannot be written (found read-only at open, or refusing this first
     * write) is not asked again: each listing computes them, and says
     * nothing, since that is all it can do. */
    if (*keep && xpv_api_findings_keep(db, id, &o->findings, &err) < 0) {
        if ((sqlite3_extended_errcode(db) & 0xff) == SQLITE_READONLY)
            *keep = 0;
        else if (!o->quiet)
            fprintf(stderr, "xprof-view: keeping the findings: %s\n", err.msg);
    }
    if (xpv_api_profile(db, id, &p) != 200 || p.len < 2) {
        xpv_buf_puts(out, "null");
        goto done;
    }
    xpv_buf_append(out, p.data, p.len - 1); /* without its closing brace */
    const char *list = NULL;
    if (xpv_api_findings(db, id, &o->findings, &f) == 200) list = strstr(f.data, ",\"findings\":");
    if (list)
        xpv_buf_append(out, list, (size_t)(f.data + f.len - list) - 1);
    else
        xpv_buf_puts(out, ",\"findings\":null");
    xpv_buf_putc(out, '}');
done:
    xpv_buf_free(&p);
    xpv_buf_free(&f);
}

static void print_json_with_findings(sqlite3 *db, const xpv_options *o, cJSON *list)
{
    int keep = sqlite3_db_readonly(db, "main") != 1;
    xpv_buf out = {0};
    xpv_buf_putc(&out, '[');
    cJSON *p;
    int first = 1;
    cJSON_ArrayForEach(p, list)
    {
        const char *hex = cJSON_GetStringValue(cJSON_GetObjectItem(p, "id"));
        if (!hex) continue;
        if (!first) xpv_buf_putc(&out, ',');
        first = 0;
        put_with_findings(db, o, (int64_t)strtoull(hex, NULL, 16), &keep, &out);
    }
    xpv_buf_putc(&out, ']');
    printf("%s\n", out.data);
    xpv_buf_free(&out);
}

static int list_profiles(sqlite3 *db, const xpv_options *o)
{
    xpv_buf b = {0};
    xpv_api_profile_array(db, 1, &b);
    cJSON *list = cJSON_Parse(b.data);
    int count = cJSON_GetArraySize(list);
    if (o->json) {
        print_json_with_findings(db, o, list);
    } else if (count) {
        print_table(list);
    }
    cJSON_Delete(list);
    xpv_buf_free(&b);
    return count;
}

/* --cache and --cache-clear: the index cache as a whole. */
static int cache_command(const xpv_options *o)
{
    char dir[PATH_MAX], size[32], when[32];
    xpv_err err = {{0}};
    xpv_cache_entry *e = NULL;
    size_t n = 0, removed, skipped;
    if (xpv_index_cache_dir(dir, sizeof dir, &err) != 0 ||
        (o->cache_clear && xpv_cache_clear(dir, NULL, &removed, &skipped, &err) != 0) ||
        (o->cache_list && xpv_cache_list(dir, &e, &n, &err) != 0))
        return fprintf(stderr, "xprof-view: %s\n", err.msg), 1;
    if (o->cache_clear)
        printf("removed %zu indexes from %s%s\n", removed, dir,
               skipped ? " (left those a running xprof-view uses)" : "");
    int64_t total = 0, cap = o->cache_max ? (int64_t)o->cache_max : xpv_cache_default_max(dir);
    for (size_t i = 0; i < n; i++) {
        time_t t = (time_t)(e[i].last_use_ns / 1000000000);
        strftime(when, sizeof when, "%Y-%m-%d %H:%M", localtime(&t));
        format_size(e[i].bytes, size, sizeof size);
        printf("%9s  %s%s  %s\n    %s\n", size, when, e[i].in_use ? "  in use" : "",
               e[i].profile_dir[0] ? e[i].profile_dir : "(unreadable)", e[i].path);
        total += e[i].bytes;
    }
    if (o->cache_list) {
        format_size(total, size, sizeof size);
        format_size(cap, when, sizeof when);
        printf("%zu indexes, %s in %s (cap %s)\n", n, size, dir, when);
    }
    free(e);
    return 0;
}

/* Keeps the cache under its cap once this run's index is open. */
static void enforce_cache_cap(const xpv_options *o, const char *db_path)
{
    char dir[PATH_MAX], size[32];
    xpv_err err = {{0}};
    size_t removed;
    int64_t left;
    if (xpv_index_cache_dir(dir, sizeof dir, &err) != 0) return;
    int64_t cap = o->cache_max ? (int64_t)o->cache_max : xpv_cache_default_max(dir);
    if (xpv_cache_evict(dir, cap, db_path, &removed, &left, &err) != 0) {
        fprintf(stderr, "xprof-view: index cache: %s\n", err.msg);
        return;
    }
    format_size(cap, size, sizeof size);
    if (removed && !o->quiet)
        fprintf(stderr, "xprof-view: removed %zu least recently used indexes (cache cap %s)\n",
                removed, size);
}

static int open_index(const xpv_options *o, const char *root, char *db_path, size_t n, sqlite3 **db)
{
    xpv_err err = {{0}};
    int rebuilt = 0;
    if (o->db_path)
        snprintf(db_path, n, "%s", o->db_path);
    else if (xpv_index_default_path(root, db_path, n, &err) != 0)
        goto fail;
    if (xpv_index_open(db_path, root, db, &rebuilt, &err) != 0) goto fail;
    if (rebuilt && !o->quiet)
        fprintf(stderr, "xprof-view: the index %s was stale or damaged and was rebuilt\n", db_path);
    return 0;
fail:
    fprintf(stderr, "xprof-view: %s\n", err.msg);
    return -1;
}

int main(int argc, char **argv)
{
    /* Nothing reads SQLite's memory statistics, and keeping them takes a
     * process-wide lock on every allocation of every connection. */
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    /* Past a file-size limit (RLIMIT_FSIZE) a write fails with EFBIG, which
     * SQLite and --extract report and clean up after, instead of the signal
     * killing the process half-way. */
    signal(SIGXFSZ, SIG_IGN);
    /* The index and xplane.pb files are mapped; one cut shorter by another
     * process must not take the server down with it. */
    if (xpv_shrunk_maps_guard() != 0)
        fprintf(stderr, "xprof-view: cannot install the SIGBUS guard: %s\n", strerror(errno));
    xpv_options o;
    if (xpv_cli_parse(argc, argv, &o) != 0) return 2;
    if (o.show_help) return xpv_cli_usage(stdout), 0;
    if (o.show_version) return printf("xprof-view %s\n", XPV_VERSION), 0;
    if (o.show_routes) return print_routes();
    if (o.cache_list || o.cache_clear) return cache_command(&o);
    if (o.compare_a) return xpv_compare_main(&o);
    char dir[PATH_MAX], db_path[PATH_MAX];
    if (resolve_profile_dir(&o, dir, sizeof dir) != 0) return 1;
    xpv_err err = {{0}};
    xpv_found_list found;
    if (xpv_discover(dir, &found, &err) != 0) {
        fprintf(stderr, "xprof-view: %s\n", err.msg);
        return 1;
    }
    found.limits = o.limits;
    sqlite3 *db = NULL;
    int rc = 1;
    if (open_index(&o, found.root_abs, db_path, sizeof db_path, &db) != 0) goto out;
    enforce_cache_cap(&o, db_path);
    if (o.list_only && sqlite3_db_readonly(db, "main") == 1) {
        /* Another user's index, or one on a read-only mount: nothing can
         * be registered, indexed or kept in it, so it is listed as it is. */
        if (!o.quiet)
            fprintf(stderr, "xprof-view: the index %s is read-only: listing it as indexed\n",
                    db_path);
        rc = list_profiles(db, &o) > 0 ? 0 : 1;
        goto out;
    }
    if (xpv_indexer_register(db, &found, &err) < 0) {
        fprintf(stderr, "xprof-view: index: %s\n", err.msg);
        goto out;
    }
    if (o.list_only || o.extract) {
        xpv_index_options run = {o.jobs, print_progress, &o, NULL};
        if (xpv_indexer_run(db, &found, &run, &err) != 0) {
            int sys = sqlite3_system_errno(db);
            fprintf(stderr, "xprof-view: %s%s%s%s\n", err.msg, sys ? " (" : "",
                    sys ? strerror(sys) : "", sys ? ": is the disk full?)" : "");
            goto out;
        }
        if (found.n == 0) {
            fprintf(stderr,
                    "xprof-view: no profiles found under %s (looked for *.xplane.pb, "
                    "*.trace.json[.gz], *.pt.trace.json[.gz], perfetto_trace.json.gz, "
                    "*.sqlite and *.nsys-rep)\n",
                    dir);
            goto out;
        }
        rc = o.list_only ? (list_profiles(db, &o) > 0 ? 0 : 1) : xpv_extract_all(db, &found, &o);
        goto out;
    }
    sqlite3_close(db);
    db = NULL;
    rc = xpv_serve(&o, db_path, dir, &found);
out:
    sqlite3_close(db);
    xpv_found_list_free(&found);
    return rc;
}
