/*
 * discover.c — walking the profile directory, reading each candidate's
 * first bytes for the format registry to sniff (asked of the kernel for a
 * whole directory at once, then read one by one), grouping files into runs
 * and hosts, and pairing files by the registry's twin rule (a trace.json
 * beside its xplane.pb). A file that names no host (perfetto_trace.json.gz)
 * belongs to the one host of its run folder.
 */
#define _GNU_SOURCE
#include "discover.h"
#include "readers/readers.h"
#include "../common/xpv_lower_bound.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define SNIFF_BYTES 65536
#define MAX_DEPTH 64

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int is_xprof_cache(const char *name)
{
    static const char *const suffixes[] = {".SSTABLE", ".op_stats_v2.pb", ".hlo_proto.pb",
                                           ".dcn_collective_stats.pb", ".smart_suggestion.pb"};
    if (strcmp(name, ".cached_tools.json") == 0 || strcmp(name, "cache_version.txt") == 0) return 1;
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++)
        if (ends_with(name, suffixes[i])) return 1;
    return 0;
}

static int is_json_start(const unsigned char *head, size_t n)
{
    size_t i = 0;
    if (n >= 3 && head[0] == 0xEF && head[1] == 0xBB && head[2] == 0xBF) i = 3;
    while (i < n && (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t'))
        i++;
    return i < n && (head[i] == '{' || head[i] == '[');
}

/* The format the registry gives a file (path NULL: name and head alone). */
static const char *format_of(const char *name, const char *path, const unsigned char *head,
                             size_t n)
{
    xpv_sniff_input in = {name, path, head, n, head && is_json_start(head, n)};
    const xpv_format *f = xpv_format_sniff(&in);
    return f ? f->name : NULL;
}

const char *xpv_sniff_format(const char *name, const unsigned char *head, size_t n, int gz)
{
    (void)gz;
    return format_of(name, NULL, head, n);
}

/* Reads up to SNIFF_BYTES of content, inflating gzip. Returns bytes read or -1. */
static ssize_t read_head(const char *path, unsigned char *buf, int *is_gzip, char **error)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (asprintf(error, "cannot open: %s", strerror(errno)) < 0) *error = NULL;
        return -1;
    }
    unsigned char raw[SNIFF_BYTES];
    ssize_t n = read(fd, raw, sizeof raw);
    close(fd);
    if (n < 0) {
        if (asprintf(error, "cannot read: %s", strerror(errno)) < 0) *error = NULL;
        return -1;
    }
    *is_gzip = n >= 2 && raw[0] == 0x1f && raw[1] == 0x8b;
    if (!*is_gzip) {
        memcpy(buf, raw, (size_t)n);
        return n;
    }
    z_stream z = {0};
    if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) return 0;
    z.next_in = raw;
    z.avail_in = (uInt)n;
    z.next_out = buf;
    z.avail_out = SNIFF_BYTES;
    inflate(&z, Z_SYNC_FLUSH);
    ssize_t out = (ssize_t)(SNIFF_BYTES - z.avail_out);
    inflateEnd(&z);
    return out;
}

/* ---- walking ---- */

typedef struct {
    dev_t dev;
    ino_t ino;
} dir_id;

typedef struct {
    xpv_found_list *out;
    const char *root; /* real path of the walk root */
    size_t root_len;
    dir_id *seen;
    size_t nseen, capseen;
    const xpv_found **known; /* the previous walk's items, by rel_path; NULL: none */
    size_t nknown;
    xpv_admit_fn admit;
    void *admit_ctx;
} walk_state;

static int inside_root(const walk_state *w, const char *real)
{
    return strncmp(real, w->root, w->root_len) == 0 &&
           (real[w->root_len] == '/' || real[w->root_len] == 0 || w->root_len == 1);
}

static int seen_before(walk_state *w, const struct stat *st)
{
    for (size_t i = 0; i < w->nseen; i++)
        if (w->seen[i].dev == st->st_dev && w->seen[i].ino == st->st_ino) return 1;
    if (w->nseen == w->capseen) {
        w->capseen = w->capseen ? w->capseen * 2 : 64;
        w->seen = xpv_xrealloc(w->seen, w->capseen * sizeof *w->seen);
    }
    w->seen[w->nseen++] = (dir_id){st->st_dev, st->st_ino};
    return 0;
}

static xpv_found *push_item(xpv_found_list *l)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 32;
        l->items = xpv_xrealloc(l->items, l->cap * sizeof *l->items);
    }
    xpv_found *f = &l->items[l->n++];
    memset(f, 0, sizeof *f);
    f->companion_of = -1;
    return f;
}

static char *strip_known_suffix(const char *name)
{
    return xpv_xstrndup(name, strlen(name) - xpv_format_ending_len(name));
}

/* run/host from a relative path: TensorBoard's rule for .../plugins/profile/<run>/<file>,
 * otherwise the containing folder is the run. */
static void assign_run_host(xpv_found *f)
{
    const char *rel = f->rel_path;
    const char *name = strrchr(rel, '/');
    name = name ? name + 1 : rel;
    f->host = strip_known_suffix(name);
    const char *marker = NULL;
    for (const char *p = rel; (p = strstr(p, "plugins/profile/")) != NULL; p++)
        if (p == rel || p[-1] == '/') marker = p;
    if (marker) {
        const char *run = marker + strlen("plugins/profile/");
        const char *run_end = strchr(run, '/');
        if (run_end && run_end < name) {
            size_t prefix = marker > rel ? (size_t)(marker - rel - 1) : 0;
            xpv_buf b = {0};
            if (prefix) {
                xpv_buf_append(&b, rel, prefix);
                xpv_buf_putc(&b, '/');
            }
            xpv_buf_append(&b, run, (size_t)(run_end - run));
            f->run = b.data;
            return;
        }
    }
    f->run = name > rel ? xpv_xstrndup(rel, (size_t)(name - rel - 1)) : xpv_xstrdup(".");
}

static int by_rel_path(const void *a, const void *b)
{
    return strcmp((*(const xpv_found *const *)a)->rel_path,
                  (*(const xpv_found *const *)b)->rel_path);
}

static const xpv_found *known_item(const walk_state *w, const char *rel)
{
    xpv_found key = {.rel_path = (char *)rel};
    const xpv_found *kp = &key;
    const xpv_found **hit =
        xpv_sorted_find(&kp, w->known, w->nknown, sizeof *w->known, by_rel_path);
    return hit ? *hit : NULL;
}

static void copy_item(walk_state *w, const xpv_found *k)
{
    xpv_found *f = push_item(w->out);
    f->abs_path = xpv_xstrdup(k->abs_path);
    f->rel_path = xpv_xstrdup(k->rel_path);
    f->run = xpv_xstrdup(k->run);
    f->host = xpv_xstrdup(k->host);
    f->format = k->format;
    f->size = k->size;
    f->mtime_ns = k->mtime_ns;
    f->error = k->error ? xpv_xstrdup(k->error) : NULL;
}

/* With a previous walk: 1 when the file was handled without reading it
 * (taken from that walk, or left for later), 0 when it must be sniffed. */
static int reuse_known(walk_state *w, const char *rel, const struct stat *st)
{
    if (!w->known && !w->admit) return 0;
    const xpv_found *k = known_item(w, rel);
    int64_t mtime = xpv_mtime_ns(st);
    if (k && k->size == (int64_t)st->st_size && k->mtime_ns == mtime) {
        copy_item(w, k);
        return 1;
    }
    if (!w->admit || w->admit(w->admit_ctx, rel, (int64_t)st->st_size, mtime)) return 0;
    if (k) copy_item(w, k); /* still being written: keep what it was */
    return 1;
}

/* Whether a file of this name is sniffed: a format's ending, not one of
 * XProf's own caches beside the profile. */
static int is_candidate(const char *name)
{
    return !is_xprof_cache(name) && xpv_format_ending_len(name);
}

static void add_file(walk_state *w, const char *abs, const char *rel, const char *name,
                     const struct stat *st)
{
    if (!is_candidate(name)) return;
    if (reuse_known(w, rel, st)) return;
    unsigned char head[SNIFF_BYTES];
    int gz = 0;
    char *error = NULL;
    ssize_t n = read_head(abs, head, &gz, &error);
    const char *format = format_of(name, abs, n >= 0 ? head : NULL, n >= 0 ? (size_t)n : 0);
    if (n >= 0 && !format) return;         /* e.g. a .sqlite file that is not ours to claim */
    if (!format) format = XPV_FMT_UNKNOWN; /* unreadable: listed with the reason */
    if (n == 0 && !error && asprintf(&error, "empty file (0 bytes)") < 0) error = NULL;
    xpv_found *f = push_item(w->out);
    f->abs_path = xpv_xstrdup(abs);
    f->rel_path = xpv_xstrdup(rel);
    f->format = format;
    f->size = (int64_t)st->st_size;
    f->mtime_ns = xpv_mtime_ns(st);
    f->error = error;
    assign_run_host(f);
}

static void walk_dir(walk_state *w, const char *abs, const char *rel, int depth);

/* The absolute and root-relative paths of `name` in the directory abs
 * (rel from the root); 0 when either would not fit in PATH_MAX. */
static int child_paths(const char *abs, const char *rel, const char *name, char *child_abs,
                       char *child_rel)
{
    return snprintf(child_abs, PATH_MAX, "%s/%s", abs, name) < PATH_MAX &&
           snprintf(child_rel, PATH_MAX, "%s%s%s", rel, *rel ? "/" : "", name) < PATH_MAX;
}

static void visit_entry(walk_state *w, const char *abs, const char *rel, const char *name,
                        int depth)
{
    struct stat lst, st;
    if (lstat(abs, &lst) != 0) return;
    if (S_ISLNK(lst.st_mode)) {
        char real[PATH_MAX];
        if (!realpath(abs, real) || !inside_root(w, real)) return; /* never leave the root */
    }
    if (stat(abs, &st) != 0) return;
    if (S_ISDIR(st.st_mode))
        walk_dir(w, abs, rel, depth + 1);
    else if (S_ISREG(st.st_mode))
        add_file(w, abs, rel, name, &st);
}

/* Starts reading the head of every file in d that add_file will sniff,
 * all at once, then rewinds d. Sniffed one after another, a directory of
 * hosts' files on a cold disk or a network mount waits for each read in
 * turn before indexing can start. A file a previous walk knows is left
 * alone (a rescan reads only new ones); so is one whose type the
 * directory does not give (a link, or a filesystem without d_type). */
static void read_heads_ahead(const walk_state *w, DIR *d, const char *abs, const char *rel)
{
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        char child_abs[PATH_MAX], child_rel[PATH_MAX];
        if (de->d_type != DT_REG || !is_candidate(de->d_name) ||
            !child_paths(abs, rel, de->d_name, child_abs, child_rel))
            continue;
        if (!w->known || !known_item(w, child_rel)) xpv_read_ahead(child_abs, SNIFF_BYTES);
    }
    rewinddir(d);
}

static void walk_dir(walk_state *w, const char *abs, const char *rel, int depth)
{
    struct stat st;
    if (depth > MAX_DEPTH || stat(abs, &st) != 0 || seen_before(w, &st)) return;
    DIR *d = opendir(abs);
    if (!d) return;
    read_heads_ahead(w, d, abs, rel);
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) continue;
        char child_abs[PATH_MAX], child_rel[PATH_MAX];
        if (!child_paths(abs, rel, de->d_name, child_abs, child_rel)) continue;
        visit_entry(w, child_abs, child_rel, de->d_name, depth);
    }
    closedir(d);
}

/* ---- ordering and pairing ---- */

static int newest_first(const void *a, const void *b)
{
    const xpv_found *x = a, *y = b;
    if (x->mtime_ns != y->mtime_ns) return x->mtime_ns < y->mtime_ns ? 1 : -1;
    int c = strcmp(y->run, x->run); /* XProf run names are timestamps */
    return c ? c : strcmp(x->rel_path, y->rel_path);
}

static int names_no_host(const xpv_found *f)
{
    const xpv_format *fmt = xpv_format_named(f->format);
    return fmt && (fmt->flags & XPV_FORMAT_RUN_HOST);
}

static int same_folder(const char *a, const char *b)
{
    const char *sa = strrchr(a, '/'), *sb = strrchr(b, '/');
    size_t na = sa ? (size_t)(sa - a) : 0, nb = sb ? (size_t)(sb - b) : 0;
    return na == nb && memcmp(a, b, na) == 0;
}

/* A file whose name names no host (the registry's XPV_FORMAT_RUN_HOST)
 * takes the host of the other profiles of its run folder when they all
 * share one, and keeps its file name otherwise (no host, or several).
 * Run again over the whole list whenever it changes, so the answer never
 * depends on which walk saw the file first. */
static void assign_run_hosts(xpv_found_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        xpv_found *f = &l->items[i];
        if (!names_no_host(f)) continue;
        const char *only = NULL;
        int several = 0;
        for (size_t k = 0; k < l->n && !several; k++) {
            const xpv_found *o = &l->items[k];
            if (k == i || names_no_host(o) || strcmp(o->run, f->run) != 0 ||
                !same_folder(o->rel_path, f->rel_path))
                continue;
            several = only && strcmp(only, o->host) != 0;
            only = o->host;
        }
        const char *name = strrchr(f->rel_path, '/');
        char *host = only && !several ? xpv_xstrdup(only)
                                      : strip_known_suffix(name ? name + 1 : f->rel_path);
        free(f->host);
        f->host = host;
    }
}

/* The registry's pairing rule: a file whose format names a twin format is
 * the companion of a file of that format with the same run and host. */
static void pair_companions(xpv_found_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        xpv_found *j = &l->items[i];
        const xpv_format *fmt = xpv_format_named(j->format);
        if (!fmt || !fmt->twin_of) continue;
        for (size_t k = 0; k < l->n; k++) {
            xpv_found *x = &l->items[k];
            if (strcmp(x->format, fmt->twin_of) == 0 && strcmp(x->run, j->run) == 0 &&
                strcmp(x->host, j->host) == 0) {
                j->companion_of = (int)k;
                break;
            }
        }
    }
}

static int discover(const char *root, walk_state w, xpv_found_list *out, xpv_err *err)
{
    memset(out, 0, sizeof *out);
    out->limits = XPV_INPUT_LIMITS_DEFAULT;
    char real[PATH_MAX];
    struct stat st;
    if (!realpath(root, real) || stat(real, &st) != 0)
        return xpv_err_set(err, "profile path %s: %s", root, strerror(errno));
    w.out = out;
    if (S_ISDIR(st.st_mode)) {
        if (access(real, R_OK | X_OK) != 0)
            return xpv_err_set(err, "profile directory %s: %s", root, strerror(errno));
        out->root_abs = xpv_xstrdup(real);
        w.root = out->root_abs;
        w.root_len = strlen(w.root);
        walk_dir(&w, real, "", 0);
    } else if (S_ISREG(st.st_mode)) {
        char *slash = strrchr(real, '/');
        out->root_abs = xpv_xstrndup(real, slash > real ? (size_t)(slash - real) : 1);
        w.root = out->root_abs;
        w.root_len = strlen(w.root);
        add_file(&w, real, slash + 1, slash + 1, &st);
        if (out->n == 0)
            return xpv_err_set(err, "%s is not a profile this tool reads (by name or content)",
                               root);
    } else {
        return xpv_err_set(err, "profile path %s is neither a directory nor a file", root);
    }
    free(w.seen);
    xpv_sort(out->items, out->n, sizeof *out->items, newest_first);
    assign_run_hosts(out);
    pair_companions(out);
    return 0;
}

int xpv_discover(const char *root, xpv_found_list *out, xpv_err *err)
{
    return discover(root, (walk_state){0}, out, err);
}

int xpv_discover_again(const char *root, const xpv_found_list *prev, xpv_admit_fn admit, void *ctx,
                       xpv_found_list *out, xpv_err *err)
{
    walk_state w = {.admit = admit, .admit_ctx = ctx};
    if (prev && prev->n) {
        w.known = xpv_xmalloc(prev->n * sizeof *w.known);
        for (size_t i = 0; i < prev->n; i++)
            w.known[i] = &prev->items[i];
        w.nknown = prev->n;
        xpv_sort(w.known, w.nknown, sizeof *w.known, by_rel_path);
    }
    int rc = discover(root, w, out, err);
    free(w.known);
    if (rc != 0) xpv_found_list_free(out);
    return rc;
}

static void found_free(xpv_found *f)
{
    free(f->abs_path);
    free(f->rel_path);
    free(f->run);
    free(f->host);
    free(f->error);
}

void xpv_found_list_free(xpv_found_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        found_free(&l->items[i]);
    free(l->items);
    free(l->root_abs);
    memset(l, 0, sizeof *l);
}

void xpv_found_list_merge(xpv_found_list *dst, xpv_found_list *src)
{
    assert(strcmp(dst->root_abs, src->root_abs) == 0);
    size_t *where = xpv_xmalloc((src->n + 1) * sizeof *where), n0 = dst->n, added = 0;
    for (size_t j = 0; j < src->n; j++) {
        where[j] = n0 + added;
        for (size_t i = 0; i < n0; i++)
            if (strcmp(dst->items[i].abs_path, src->items[j].abs_path) == 0) where[j] = i;
        added += where[j] >= n0;
    }
    dst->items = xpv_xrealloc(dst->items, (n0 + added + 1) * sizeof *dst->items);
    dst->cap = n0 + added + 1;
    for (size_t j = 0; j < src->n; j++) {
        xpv_found *f = &src->items[j];
        if (where[j] < n0) { /* a file alone has no twin: keep the link src saw */
            xpv_found *kept = &dst->items[where[j]];
            if (kept->companion_of < 0 && f->companion_of >= 0)
                kept->companion_of = (int)where[f->companion_of];
            found_free(f);
            continue;
        }
        if (f->companion_of >= 0) f->companion_of = (int)where[f->companion_of];
        dst->items[dst->n++] = *f;
    }
    free(where);
    assign_run_hosts(dst);
    free(src->items);
    free(src->root_abs);
    memset(src, 0, sizeof *src);
}

/* ---- auto-detection, as the replaced script did ---- */

int xpv_autodetect_profile_dir(const char *cwd, char *out, size_t outsz, xpv_err *err)
{
    static const char *const patterns[] = {"profiles/*/", "profiles/*/*/", "*/profiles/*/"};
    int64_t best_mtime = -1;
    for (size_t p = 0; p < sizeof patterns / sizeof patterns[0]; p++) {
        char pattern[PATH_MAX];
        snprintf(pattern, sizeof pattern, "%s/%s", cwd, patterns[p]);
        glob_t g;
        if (glob(pattern, GLOB_MARK, NULL, &g) != 0) continue;
        for (size_t i = 0; i < g.gl_pathc; i++) {
            struct stat st;
            if (stat(g.gl_pathv[i], &st) != 0 || !S_ISDIR(st.st_mode)) continue;
            int64_t m = xpv_mtime_ns(&st);
            if (m > best_mtime) {
                best_mtime = m;
                snprintf(out, outsz, "%s", g.gl_pathv[i]);
            }
        }
        globfree(&g);
    }
    if (best_mtime < 0)
        return xpv_err_set(err,
                           "no --profile-dir given and none of ./profiles/*/, "
                           "./profiles/*/*/, ./*/profiles/*/ exists under %s",
                           cwd);
    size_t n = strlen(out);
    if (n > 1 && out[n - 1] == '/') out[n - 1] = 0;
    return 0;
}
