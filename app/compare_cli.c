/*
 * compare_cli.c — `xprof-view --compare A B`: brings both sides' indexes up
 * to date, asks api/ for the comparison, prints it (or its JSON) and applies
 * the --fail-if-slower gate.
 *
 * A side is a profile file, or a directory standing for its latest profile.
 * Each side is indexed into the index its directory always uses (the
 * normal cache, or --db when both sides share one directory); profile
 * directories are only read. Two sides under one root share one index and
 * one registration, since registering one side alone would drop the other.
 * Exit status: 0 compared (and within the gate), 1 could not compare (a
 * side missing, unreadable, empty or without device work; or the gate's
 * figure is unknown), 3 B is slower than the gate allows.
 */
#define _GNU_SOURCE
#include "compare_cli.h"
#include "../api/api.h"
#include "../indexer/discover.h"
#include "../store/index_db.h"
#include "../indexer/indexer.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TABLE_ROWS 10 /* rows of each table the summary prints */

typedef struct {
    const char *arg;
    xpv_found_list found;
    char *target; /* a file side: its path relative to the root; NULL: a directory */
    char db_path[PATH_MAX];
    sqlite3 *db; /* owned unless it is the other side's */
    int64_t id;
} side;

static int discover_side(side *s, const xpv_options *o)
{
    xpv_err err = {{0}};
    struct stat st;
    if (xpv_discover(s->arg, &s->found, &err) != 0) {
        fprintf(stderr, "xprof-view: %s: %s\n", s->arg, err.msg);
        return -1;
    }
    s->found.limits = o->limits; /* --max-inflate and --max-inflate-ratio hold here too */
    if (s->found.n == 0) {
        fprintf(stderr, "xprof-view: %s: no profile found there\n", s->arg);
        return -1;
    }
    if (stat(s->arg, &st) == 0 && S_ISREG(st.st_mode))
        s->target = xpv_xstrdup(s->found.items[0].rel_path);
    return 0;
}

/* On a terminal, what is being indexed (a first run can take a while). */
static void progress(void *ctx, const xpv_index_progress *p)
{
    (void)ctx;
    if (!isatty(2)) return;
    if (p->current)
        fprintf(stderr, "\rindexing %d/%d %-60.60s", p->done + 1, p->total, p->current);
    else if (p->total)
        fprintf(stderr, "\r%-80s\r", "");
}

/* Opens the side's index, registers its files and indexes what changed. */
static int index_side(side *s, const char *db_override, int quiet)
{
    xpv_err err = {{0}};
    xpv_index_options run = {0, quiet ? NULL : progress, NULL, NULL};
    if (db_override)
        snprintf(s->db_path, sizeof s->db_path, "%s", db_override);
    else if (xpv_index_default_path(s->found.root_abs, s->db_path, sizeof s->db_path, &err) != 0)
        goto fail;
    if (xpv_index_open(s->db_path, s->found.root_abs, &s->db, NULL, &err) != 0 ||
        xpv_indexer_register(s->db, &s->found, &err) < 0 ||
        xpv_indexer_run(s->db, &s->found, &run, &err) != 0)
        goto fail;
    return 0;
fail:
    fprintf(stderr, "xprof-view: %s: %s\n", s->arg, err.msg);
    return -1;
}

static int pick_profile(side *s)
{
    xpv_err err = {{0}};
    if (s->target) {
        s->id = xpv_profile_id_for(s->target);
        return 0;
    }
    int found = xpv_api_latest_id(s->db, &s->id, &err);
    if (found > 0) return 0;
    fprintf(stderr, "xprof-view: %s: %s\n", s->arg, found < 0 ? err.msg : "no profile found");
    return -1;
}

static int prepare(side *a, side *b, const xpv_options *o)
{
    const char *db_override = o->db_path;
    int quiet = o->quiet;
    if (discover_side(a, o) != 0 || discover_side(b, o) != 0) return -1;
    int shared = strcmp(a->found.root_abs, b->found.root_abs) == 0;
    if (db_override && !shared) {
        fprintf(stderr, "xprof-view: --db names one index; %s and %s are in two directories\n",
                a->arg, b->arg);
        return -1;
    }
    if (shared) xpv_found_list_merge(&a->found, &b->found);
    if (index_side(a, db_override, quiet) != 0) return -1;
    if (shared)
        b->db = a->db;
    else if (index_side(b, NULL, quiet) != 0)
        return -1;
    return pick_profile(a) != 0 || pick_profile(b) != 0 ? -1 : 0;
}

/* ---- the summary ---- */

static double num(const cJSON *o, const char *key, int *known)
{
    const cJSON *v = cJSON_GetObjectItem(o, key);
    *known = cJSON_IsNumber(v);
    return *known ? v->valuedouble : 0;
}

/* µs as "812.5 µs", "3.232 ms" or "1.5 s"; unknown as "-". */
static const char *fmt_us(char *out, size_t n, double us, int known, int sign)
{
    double mag = fabs(us);
    const char *plus = sign && us > 0 ? "+" : "";
    if (!known)
        snprintf(out, n, "-");
    else if (mag < 1000)
        snprintf(out, n, "%s%.3f us", plus, us);
    else if (mag < 1e6)
        snprintf(out, n, "%s%.3f ms", plus, us / 1e3);
    else
        snprintf(out, n, "%s%.3f s", plus, us / 1e6);
    return out;
}

static const char *fmt_rel(char *out, size_t n, const cJSON *d)
{
    int known;
    double r = num(d, "relative", &known);
    if (known)
        snprintf(out, n, "%+.2f%%", 100 * r);
    else
        snprintf(out, n, "%s", "");
    return out;
}

static const char *direction(const cJSON *d)
{
    const char *s = cJSON_GetStringValue(cJSON_GetObjectItem(d, "direction"));
    return s ? s : "unknown";
}

static void print_time(const char *label, const cJSON *d)
{
    char a[32], b[32], delta[32], rel[32];
    int ka, kb, kd;
    double va = num(d, "a", &ka), vb = num(d, "b", &kb), vd = num(d, "delta", &kd);
    printf("  %-22s %14s %14s %15s %9s  %s\n", label, fmt_us(a, sizeof a, va, ka, 0),
           fmt_us(b, sizeof b, vb, kb, 0), fmt_us(delta, sizeof delta, vd, kd, 1),
           fmt_rel(rel, sizeof rel, d), direction(d));
}

static void print_side(const char *key, const char *arg, const cJSON *p)
{
    const cJSON *steps = cJSON_GetObjectItem(p, "step_count");
    printf("%s  %s: %s  (%s, %s, %s, %d steps)\n", key, arg,
           cJSON_GetStringValue(cJSON_GetObjectItem(p, "path")),
           cJSON_GetStringValue(cJSON_GetObjectItem(p, "id")),
           cJSON_GetStringValue(cJSON_GetObjectItem(p, "format")),
           cJSON_GetStringValue(cJSON_GetObjectItem(p, "status")),
           cJSON_IsNumber(steps) ? steps->valueint : 0);
}

static void print_table(const char *title, const cJSON *t)
{
    const cJSON *rows = cJSON_GetObjectItem(t, "rows");
    int n = cJSON_GetArraySize(rows), shown = 0;
    if (n == 0) return;
    printf("\n%s: %d names, %d new, %d vanished (largest change first)\n", title, n,
           (int)num(t, "new", &(int){0}), (int)num(t, "vanished", &(int){0}));
    print_time("total", cJSON_GetObjectItem(t, "total_us"));
    print_time("per step", cJSON_GetObjectItem(t, "per_step_us"));
    const cJSON *r;
    cJSON_ArrayForEach(r, rows)
    {
        if (shown++ == TABLE_ROWS) {
            printf("  ... %d more (--json lists all)\n", n - TABLE_ROWS);
            break;
        }
        const cJSON *count = cJSON_GetObjectItem(r, "count");
        int ka, kb;
        double ca = num(count, "a", &ka), cb = num(count, "b", &kb);
        printf("  %s [%s, calls %.0f -> %.0f]\n",
               cJSON_GetStringValue(cJSON_GetObjectItem(r, "name")),
               cJSON_GetStringValue(cJSON_GetObjectItem(r, "status")), ca, cb);
        print_time("  total", cJSON_GetObjectItem(r, "total_us"));
        print_time("  per step", cJSON_GetObjectItem(r, "per_step_us"));
        print_time("  average", cJSON_GetObjectItem(r, "avg_us"));
    }
}

static void print_summary(const cJSON *c, const char *arg_a, const char *arg_b)
{
    static const char *const parts[] = {"compute_us", "collective_us", "memcpy_us",
                                        "memset_us",  "idle_us",       "host_us"};
    print_side("A", arg_a, cJSON_GetObjectItem(c, "a"));
    print_side("B", arg_b, cJSON_GetObjectItem(c, "b"));
    const cJSON *per = cJSON_GetObjectItem(c, "per_step");
    if (cJSON_IsTrue(cJSON_GetObjectItem(per, "normalised")))
        printf("\nTimes are compared per step (means over each side's steps), not as totals.\n");
    printf("\n  %-22s %14s %14s %15s %9s\n", "", "A", "B", "B - A", "");
    const cJSON *st = cJSON_GetObjectItem(c, "step_time");
    static const char *const stats[] = {"median_us", "mean_us", "min_us",
                                        "max_us",    "p10_us",  "p90_us"};
    for (size_t i = 0; i < sizeof stats / sizeof stats[0]; i++) {
        char label[40];
        snprintf(label, sizeof label, "step %.*s", (int)strlen(stats[i]) - 3, stats[i]);
        print_time(label, cJSON_GetObjectItem(st, stats[i]));
    }
    const cJSON *br = cJSON_GetObjectItem(c, "breakdown");
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        char label[40];
        snprintf(label, sizeof label, "per step: %.*s", (int)strlen(parts[i]) - 3, parts[i]);
        print_time(label, cJSON_GetObjectItem(br, parts[i]));
    }
    print_time("device time", cJSON_GetObjectItem(c, "device_time_us"));
    print_time("device time per step", cJSON_GetObjectItem(c, "device_time_per_step_us"));
    const cJSON *busy = cJSON_GetObjectItem(c, "device_busy_fraction");
    int ka, kb;
    double ba = num(busy, "a", &ka), bb = num(busy, "b", &kb);
    if (ka && kb)
        printf("  %-22s %13.1f%% %13.1f%% %+14.1f pt\n", "device busy", 100 * ba, 100 * bb,
               100 * (bb - ba));
    const char *note = cJSON_GetStringValue(cJSON_GetObjectItem(per, "note"));
    if (note) printf("\n  note: %s\n", note);
    print_table("kernels", cJSON_GetObjectItem(c, "kernels"));
    print_table("XLA ops", cJSON_GetObjectItem(c, "ops"));
    print_table("memcpy", cJSON_GetObjectItem(c, "memcpy"));
    print_table("memset", cJSON_GetObjectItem(c, "memset"));
}

/* ---- the gate ---- */

/* 0 within the gate, 3 slower than it, 1 when its figure is unknown. */
static int apply_gate(const cJSON *c, double pct)
{
    const cJSON *gate = cJSON_GetObjectItem(c, "gate");
    const cJSON *v = cJSON_GetObjectItem(gate, "value");
    const char *metric = cJSON_GetStringValue(cJSON_GetObjectItem(gate, "metric"));
    int ka, kb;
    double a = num(v, "a", &ka), b = num(v, "b", &kb);
    if (!ka || !kb) {
        fprintf(stderr, "xprof-view: --fail-if-slower: the %s of %s is unknown\n", metric,
                ka ? "B" : "A");
        return 1;
    }
    /* a == 0: any b > 0 is infinitely slower. */
    int slower = a > 0 ? 100 * (b - a) / a > pct : b > 0;
    fprintf(stderr, "xprof-view: %s %s: B is %+.2f%% against A (limit +%g%%)\n",
            slower ? "FAIL" : "ok", metric, a > 0 ? 100 * (b - a) / a : 0.0, pct);
    return slower ? XPV_COMPARE_EXIT_SLOWER : 0;
}

static int report(const xpv_options *o, const side *a, const side *b)
{
    xpv_buf out = {0};
    int rc = 1;
    int status = xpv_api_compare(a->db, a->id, b->db, b->id, &out);
    cJSON *c = cJSON_Parse(out.data);
    const char *why = cJSON_GetStringValue(cJSON_GetObjectItem(c, "error"));
    if (status != 200 || !c) {
        /* A side refused (unread, empty, no device work): say which and why. */
        fprintf(stderr, "xprof-view: cannot compare %s with %s: %s\n", a->arg, b->arg,
                why        ? why
                : out.data ? out.data
                           : "no answer");
    } else {
        if (o->json)
            printf("%s\n", out.data);
        else
            print_summary(c, a->arg, b->arg);
        rc = o->fail_if_slower >= 0 ? apply_gate(c, o->fail_if_slower) : 0;
    }
    cJSON_Delete(c);
    xpv_buf_free(&out);
    return rc;
}

int xpv_compare_main(const xpv_options *o)
{
    side a = {.arg = o->compare_a}, b = {.arg = o->compare_b};
    int rc = prepare(&a, &b, o) == 0 ? report(o, &a, &b) : 1;
    if (b.db != a.db) sqlite3_close(b.db);
    sqlite3_close(a.db);
    xpv_found_list_free(&a.found);
    xpv_found_list_free(&b.found);
    free(a.target);
    free(b.target);
    return rc;
}
