/*
 * discover.h — finding profiles under a directory (or one file), asking
 * the format registry (readers/readers.h) what each file is, and grouping
 * them into runs the way TensorBoard/XProf do
 * (`.../plugins/profile/<run>/<host>.<ext>`).
 *
 * Invariants: discovery only reads; it follows no symlink that leaves the
 * root; every path it returns is inside the root. Files it cannot read are
 * still returned, with `error` set, so they are listed with the reason.
 */
#ifndef XPV_DISCOVER_H
#define XPV_DISCOVER_H

#include "../common/xpv_common.h"

typedef struct {
    char *abs_path;
    char *rel_path; /* relative to the profile root; the file name when root is a file */
    char *run;
    char *host;
    const char *format; /* a registry format name, or XPV_FMT_UNKNOWN (unreadable) */
    int64_t size;
    int64_t mtime_ns;
    char *error;      /* non-NULL: why the file cannot be used (unreadable, empty, ...) */
    int companion_of; /* index of the xplane.pb this trace JSON duplicates, or -1 */
} xpv_found;

typedef struct {
    xpv_found *items;
    size_t n, cap;
    char *root_abs; /* the profile directory (the file's directory when root is a file) */
    xpv_input_limits
        limits; /* what indexing these files may inflate; discovery sets the defaults */
} xpv_found_list;

/* Walks root (a directory or one file). Returns 0, or -1 when root itself
 * cannot be used (missing, unreadable) with err. Items come newest first. */
int xpv_discover(const char *root, xpv_found_list *out, xpv_err *err);
void xpv_found_list_free(xpv_found_list *l);
/* Moves src's items that dst lacks (by absolute path) into dst, keeping
 * their companion links, and frees src. Both must share one root. */
void xpv_found_list_merge(xpv_found_list *dst, xpv_found_list *src);

/* Says whether a new or changed file may be read now (1) or is still being
 * written (0); see settle.h. */
typedef int (*xpv_admit_fn)(void *ctx, const char *rel_path, int64_t size, int64_t mtime_ns);

/* Walks root again after a walk that gave `prev`. A file whose size and
 * mtime equal its entry in prev is taken from prev without being opened
 * (known files are never sniffed twice). A new or changed file is sniffed
 * only when admit (NULL: always) says it may be read; until then a changed
 * file keeps its entry from prev, unchanged, and a new one is left out, so
 * a capture half written is neither listed nor indexed. */
int xpv_discover_again(const char *root, const xpv_found_list *prev, xpv_admit_fn admit, void *ctx,
                       xpv_found_list *out, xpv_err *err);

/* Exposed for tests: the format a file's name and first bytes suggest, or
 * NULL when the file is not a profile (not listed at all). */
const char *xpv_sniff_format(const char *name, const unsigned char *head, size_t head_len,
                             int head_is_gzip);

/* Picks the profile directory the old script would: the newest of
 * ./profiles/x/, ./profiles/x/y/ and ./x/profiles/y/ under cwd. */
int xpv_autodetect_profile_dir(const char *cwd, char *out, size_t outsz, xpv_err *err);

#endif
