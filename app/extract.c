/*
 * extract.c — writing every indexed profile as trace JSON files.
 *
 * Invariants: nothing is written inside the profile directory; an existing
 * file is never replaced (the final name is created with link(), which fails
 * when it exists); a file appears under its final name only when complete.
 */
#define _GNU_SOURCE
#include "extract.h"
#include "../api/api_util.h"
#include "../api/trace_export.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* host.trace.json.gz -> host.trace.json; host.xplane.pb -> host.xplane.trace.json */
static void output_name(const char *rel, char *out, size_t n)
{
    size_t len = strlen(rel);
    if (ends_with(rel, ".gz"))
        len -= 3;
    else if (ends_with(rel, ".pb"))
        len -= 3;
    int is_json = len >= 5 && strncmp(rel + len - 5, ".json", 5) == 0;
    snprintf(out, n, "%.*s%s", (int)len, rel, is_json ? "" : ".trace.json");
}

static int make_parents(const char *path)
{
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%.4000s", path);
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(tmp, 0755) != 0 && errno != EEXIST) return -1;
        *p = '/';
    }
    return 0;
}

typedef struct {
    FILE *f;
    int write_errno; /* why the first failed write failed */
} output;

static int write_out(void *ctx, const char *data, size_t len)
{
    output *o = ctx;
    if (fwrite(data, 1, len, o->f) == len) return 0;
    if (!o->write_errno) o->write_errno = errno ? errno : EIO;
    return -1;
}

static int extract_one(sqlite3 *db, int64_t id, const char *target, xpv_err *err)
{
    char tmp[PATH_MAX + 32];
    snprintf(tmp, sizeof tmp, "%.4060s.tmp-%d", target, (int)getpid());
    if (make_parents(target) != 0)
        return xpv_err_set(err, "cannot create folders for %s: %s", target, strerror(errno));
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return xpv_err_set(err, "cannot create %s: %s", tmp, strerror(errno));
    output o = {fdopen(fd, "w"), 0};
    int rc = xpv_export_trace(db, id, write_out, &o, err);
    if (fclose(o.f) != 0 && !o.write_errno) o.write_errno = errno;
    if (o.write_errno)
        rc =
            xpv_err_set(err, "writing %s: %s (is the disk full?)", target, strerror(o.write_errno));
    if (rc == 0 && link(tmp, target) != 0)
        rc = xpv_err_set(err, "cannot create %s: %s", target, strerror(errno));
    unlink(tmp);
    return rc;
}

static void choose_outdir(const xpv_options *o, char *out, size_t n)
{
    if (o->extract_dir) {
        snprintf(out, n, "%s", o->extract_dir);
        return;
    }
    char stamp[32];
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    snprintf(out, n, "xprof-extract-%s", stamp);
}

/* Where path will be once created: each existing prefix resolved with
 * realpath (so symlinks count), the missing rest appended. The prefix built
 * so far is always canonical, so ".." simply drops its last component. */
static int future_realpath(const char *path, char *out, size_t n)
{
    char cur[PATH_MAX], next[PATH_MAX * 2], real[PATH_MAX];
    if (path[0] == '/')
        snprintf(cur, sizeof cur, "/");
    else if (!getcwd(next, sizeof next) || !realpath(next, cur))
        return -1;
    const char *p = path;
    while (*p) {
        size_t len = strcspn(p, "/");
        if (len == 2 && strncmp(p, "..", 2) == 0) {
            char *slash = strrchr(cur, '/');
            if (slash && slash != cur)
                *slash = 0;
            else
                snprintf(cur, sizeof cur, "/");
        } else if (len && !(len == 1 && *p == '.')) {
            snprintf(next, sizeof next, "%s%s%.*s", cur, strcmp(cur, "/") ? "/" : "", (int)len, p);
            if (realpath(next, real))
                snprintf(cur, sizeof cur, "%s", real);
            else
                snprintf(cur, sizeof cur, "%.4000s", next);
        }
        p += len;
        while (*p == '/')
            p++;
    }
    snprintf(out, n, "%s", cur);
    return 0;
}

static int outdir_inside_profiles(const char *outdir, const char *root)
{
    char real[PATH_MAX];
    if (future_realpath(outdir, real, sizeof real) != 0) return 1; /* unsure: refuse */
    size_t n = strlen(root);
    return strncmp(real, root, n) == 0 && (real[n] == '/' || real[n] == 0);
}

static int create_outdir(const char *outdir)
{
    char path[PATH_MAX + 2];
    snprintf(path, sizeof path, "%s/", outdir);
    if (make_parents(path) != 0 || (mkdir(outdir, 0755) != 0 && errno != EEXIST)) {
        fprintf(stderr, "xprof-view: cannot create %s: %s\n", outdir, strerror(errno));
        return -1;
    }
    return 0;
}

/* "ok", "error", ...; "" when the index has no such profile. */
static void profile_status(sqlite3 *db, int64_t id, char *buf, size_t n)
{
    xpv_api_profile_state ps;
    xpv_buf ignored = {0}; /* a missing profile is reported by its empty status */
    xpv_api_profile_state_get(db, id, &ps, &ignored);
    xpv_buf_free(&ignored);
    snprintf(buf, n, "%s", ps.status);
}

int xpv_extract_all(sqlite3 *db, const xpv_found_list *found, const xpv_options *o)
{
    char outdir[PATH_MAX];
    choose_outdir(o, outdir, sizeof outdir);
    if (outdir_inside_profiles(outdir, found->root_abs)) {
        fprintf(stderr, "xprof-view: refusing to write into the profile directory (%s)\n", outdir);
        return 1;
    }
    if (create_outdir(outdir) != 0) return 1;
    int written = 0, failed = 0;
    for (size_t i = 0; i < found->n; i++) {
        const xpv_found *f = &found->items[i];
        int64_t id = xpv_profile_id_for(f->rel_path);
        char status[32], name[PATH_MAX], target[PATH_MAX];
        profile_status(db, id, status, sizeof status);
        if (strcmp(status, "ok") != 0) {
            printf("skipped  %s (%s)\n", f->rel_path, status);
            continue;
        }
        output_name(f->rel_path, name, sizeof name);
        if (snprintf(target, sizeof target, "%.2048s/%.2000s", outdir, name) >= (int)sizeof target)
            continue;
        if (access(target, F_OK) == 0) {
            printf("exists   %s (not overwritten)\n", target);
            continue;
        }
        xpv_err err = {{0}};
        if (extract_one(db, id, target, &err) != 0) {
            fprintf(stderr, "xprof-view: %s: %s\n", f->rel_path, err.msg);
            failed++;
        } else {
            printf("wrote    %s\n", target);
            written++;
        }
    }
    printf("%d trace file%s written to %s\n", written, written == 1 ? "" : "s", outdir);
    return failed ? 1 : 0;
}
