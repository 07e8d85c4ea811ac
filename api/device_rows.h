/*
 * device_rows.h — the rows XProf derives under each GPU of a JAX profile:
 * "Steps", "XLA Modules" and "XLA Ops", built from the device events'
 * args when an answer asks for them (device_rows.c says why never stored).
 *
 * Invariants: a derived row's track id is first_track + 3 * device + kind,
 * above every stored track id, so no stored id is ever shadowed; a row
 * with no span is left out; spans are in start order; names and arg
 * values are indexes into the set's own name table, never string ids.
 */
#ifndef XPV_DEVICE_ROWS_H
#define XPV_DEVICE_ROWS_H

#include "../common/xpv_common.h"
#include "../common/xpv_hindex.h"
#include <sqlite3.h>

enum { XPV_DEVROW_STEPS, XPV_DEVROW_MODULES, XPV_DEVROW_OPS, XPV_DEVROW_KINDS };

/* The args a span keeps, in the order of xpv_devrow_arg_keys. */
enum {
    XPV_DEVROW_ARG_OP,
    XPV_DEVROW_ARG_MODULE,
    XPV_DEVROW_ARG_PROGRAM,
    XPV_DEVROW_ARG_JAX_OP,
    XPV_DEVROW_ARG_SOURCE,
    XPV_DEVROW_NARGS
};
#define XPV_DEVROW_NONE UINT32_MAX
/* Devices numbered from this on get no rows (their ids would not fit). */
#define XPV_DEVROW_MAX_DEVICE 4096

typedef struct {
    int64_t start, end;             /* ns, in the events' clock */
    uint32_t name;                  /* index into the set's names */
    uint32_t arg[XPV_DEVROW_NARGS]; /* names indexes, XPV_DEVROW_NONE when absent */
    int64_t step;                   /* the step it belongs to, -1 none */
    int64_t block;                  /* its first device event, whose ref it carries */
    uint32_t index;
    uint32_t events; /* device events it covers */
} xpv_devrow_span;

typedef struct {
    int64_t track;        /* the id the answers give the row */
    int64_t device_track; /* the device's first stored track (by pid, tid) */
    int device, kind;     /* kind: XPV_DEVROW_* */
    xpv_devrow_span *spans;
    size_t n;
} xpv_devrow;

typedef struct {
    xpv_devrow *rows; /* by device, then kind */
    size_t nrows;
    int64_t first_track; /* the greatest stored track id + 1 */
    char **names;
    size_t *name_len;
    size_t nnames, names_cap;
    xpv_hindex by_text; /* hash of a name -> its index */
} xpv_devrows;

/* The rows' titles ("Steps", ...) and their kind words in answers
 * ("steps", "xla_modules", "xla_ops"). */
const char *xpv_devrow_title(int kind);
const char *xpv_devrow_word(int kind);

/* Builds the rows of profile id into r (zeroed first; free it either way).
 * A profile with no device event carrying hlo_op, or whose devices have
 * stored `XLA Ops` / `XLA Modules` / `Steps` lines (TPU), gets none, after
 * one small read of its strings. Returns 0, or -1 with err. */
int xpv_devrows_build(sqlite3 *db, int64_t id, xpv_devrows *r, xpv_err *err);
/* The row of track id, NULL when id is not a derived row of r. */
const xpv_devrow *xpv_devrows_row(const xpv_devrows *r, int64_t track);
const char *xpv_devrows_name(const xpv_devrows *r, uint32_t name, size_t *len);
/* The span's args as a JSON object: the row's keys it has (an op: hlo_op,
 * hlo_module, program_id, jax_op, source; a module: hlo_module,
 * program_id; a step: step_num), program_id a number when it is one. */
void xpv_devrows_put_args(xpv_buf *b, const xpv_devrows *r, const xpv_devrow *row,
                          const xpv_devrow_span *s);
void xpv_devrows_free(xpv_devrows *r);

/* ---- built rows shared across requests (device_rows_cache.c) ----
 * A profile's rows cost one scan of its device events (seconds on ten
 * million), and the timeline asks for them in its tracks answer and in
 * each window that shows a derived row: the cache builds them once per
 * profile and generation (hlo_cache.h's: status, event count, file mtime,
 * time of indexing, so a profile indexed again never matches) and lends
 * the set, read-only, to every thread at once. Whoever makes it owns it
 * (the server keeps one); it is safe to use from several threads. */
typedef struct xpv_devrows_cache xpv_devrows_cache;

/* A cache that holds at most max_bytes of rows, emptied when a new set
 * would take it past that (sets in use are freed when given back). */
xpv_devrows_cache *xpv_devrows_cache_new(size_t max_bytes);
void xpv_devrows_cache_free(xpv_devrows_cache *c);
/* Profile id's rows, read-only until xpv_devrows_release: from c, or built
 * (and kept in c when the profile is indexed for good); a second thread
 * that asks while they are being built waits for them. c may be NULL (the
 * rows are built for this caller alone). NULL with err on failure. */
const xpv_devrows *xpv_devrows_acquire(sqlite3 *db, int64_t id, xpv_devrows_cache *c, xpv_err *err);
/* Gives back what xpv_devrows_acquire lent (NULL: nothing). */
void xpv_devrows_release(xpv_devrows_cache *c, const xpv_devrows *r);
/* Builds into c the rows of each profile of ids, and with latest_run those
 * of the newest run's too (a server started on an index built before it),
 * so that the timeline's first tracks answer finds them; stops at *stop or
 * at half the budget (one more set could empty the cache). The caller's
 * thread and connection (the indexing thread's). Returns 0, or -1 with err. */
int xpv_devrows_warm(sqlite3 *db, xpv_devrows_cache *c, const int64_t *ids, size_t n,
                     int latest_run, volatile int *stop, xpv_err *err);
/* Sets built and bytes held, for tests and health. */
size_t xpv_devrows_cache_builds(xpv_devrows_cache *c);
size_t xpv_devrows_cache_bytes(xpv_devrows_cache *c);

#endif
