/*
 * xpv_common.h — small utilities shared by every layer: error messages,
 * growable byte buffers, JSON string escaping, hashing and time helpers.
 *
 * Invariants: an xpv_buf's data is always NUL-terminated when data != NULL;
 * xpv_err.msg is always a NUL-terminated string (empty means "no error").
 * Nothing here holds global state.
 */
#ifndef XPV_COMMON_H
#define XPV_COMMON_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define XPV_VERSION "0.1.0"

typedef struct {
    char msg[512];
} xpv_err;

/* Sets the message (printf-style). Always returns -1 so callers can write
 * `return xpv_err_set(err, "...")`. A NULL err is allowed. */
int xpv_err_set(xpv_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prefixes an existing message with context, e.g. the file name. */
int xpv_err_prefix(xpv_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

typedef struct {
    char *data;
    size_t len;
    size_t cap;
} xpv_buf;

/* How far a compressed profile may inflate (a guard against gzip bombs):
 * at most max_bytes in all (0: no cap), and, once past
 * XPV_RATIO_CHECK_AFTER bytes, at most max_ratio times the compressed
 * bytes read so far (0: no cap). Real traces inflate 5-40 times; a bomb
 * made of one repeated byte inflates about 1000 times. */
typedef struct {
    uint64_t max_bytes;
    uint32_t max_ratio;
} xpv_input_limits;

#define XPV_DEFAULT_MAX_INFLATED ((uint64_t)256 << 30)
#define XPV_DEFAULT_MAX_RATIO 250u
#define XPV_RATIO_CHECK_AFTER ((uint64_t)64 << 20)
#define XPV_INPUT_LIMITS_DEFAULT                                                                   \
    ((xpv_input_limits){XPV_DEFAULT_MAX_INFLATED, XPV_DEFAULT_MAX_RATIO})

/* Arithmetic that clamps at the int64 range instead of overflowing, for
 * times read from files that may hold anything. */
static inline int64_t xpv_sat_add_i64(int64_t a, int64_t b)
{
    int64_t r;
    return __builtin_add_overflow(a, b, &r) ? (b > 0 ? INT64_MAX : INT64_MIN) : r;
}

static inline int64_t xpv_sat_sub_i64(int64_t a, int64_t b)
{
    int64_t r;
    return __builtin_sub_overflow(a, b, &r) ? (b < 0 ? INT64_MAX : INT64_MIN) : r;
}

static inline int64_t xpv_sat_mul_i64(int64_t a, int64_t b)
{
    int64_t r;
    return __builtin_mul_overflow(a, b, &r) ? ((a < 0) != (b < 0) ? INT64_MIN : INT64_MAX) : r;
}

/* Allocation failure aborts: every caller would have to give up anyway and
 * the process is a single-user tool. */
void xpv_buf_reserve(xpv_buf *b, size_t extra);
void xpv_buf_append(xpv_buf *b, const void *p, size_t n);
void xpv_buf_puts(xpv_buf *b, const char *s);
void xpv_buf_putc(xpv_buf *b, char c);
void xpv_buf_printf(xpv_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends s as a quoted JSON string; invalid UTF-8 bytes become U+FFFD. */
void xpv_buf_json_str(xpv_buf *b, const char *s, size_t n);
/* Appends a double the shortest way that reads back identically;
 * non-finite values become null. */
void xpv_buf_json_double(xpv_buf *b, double v);
void xpv_buf_reset(xpv_buf *b);
void xpv_buf_free(xpv_buf *b);

void *xpv_xmalloc(size_t n);
void *xpv_xcalloc(size_t n, size_t size);
void *xpv_xrealloc(void *p, size_t n);
/* Returns table p of *n elements of `size` bytes, grown (doubling, from 16)
 * so that element `index` exists; new elements are filled with byte `fill`.
 * Inline because per-event code calls it and it rarely has to grow. */
void *xpv_grow_table(void *p, size_t *n, size_t index, size_t size, int fill);
static inline void *xpv_grow_to_index(void *p, size_t *n, size_t index, size_t size, int fill)
{
    return index < *n ? p : xpv_grow_table(p, n, index, size, fill);
}
char *xpv_xstrdup(const char *s);
char *xpv_xstrndup(const char *s, size_t n);

/* FNV-1a with a final mix: stable across versions and machines, so the
 * values that are kept (profile ids, the index's file name, ETags) use it. */
uint64_t xpv_hash64(const void *p, size_t n);

/* A hash for in-memory tables on hot paths (interning): eight bytes a
 * multiply where xpv_hash64 takes one, the short tail read as two
 * overlapping words. Its values may change between versions: never keep
 * them. */
static inline uint64_t xpv_hash_mem(const void *p, size_t n)
{
    const unsigned char *s = p;
    uint64_t h = 0x9e3779b97f4a7c15ull ^ ((uint64_t)n * 0xff51afd7ed558ccdull), w;
    for (; n > 8; s += 8, n -= 8) {
        memcpy(&w, s, 8);
        h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
        h ^= h >> 31;
    }
    if (n >= 4) {
        uint32_t lo, hi;
        memcpy(&lo, s, 4);
        memcpy(&hi, s + n - 4, 4);
        w = lo | (uint64_t)hi << 32;
    } else {
        w = n ? s[0] | (uint64_t)s[n / 2] << 8 | (uint64_t)s[n - 1] << 16 : 0;
    }
    h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
    h ^= h >> 32;
    h *= 0x94d049bb133111ebull;
    return h ^ (h >> 29);
}

/* qsort that accepts an empty (possibly NULL) array, which qsort itself
 * may not be given, and returns after one pass over input already in order
 * (ids and times mostly arrive sorted). */
void xpv_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));

/* Monotonic seconds. */
double xpv_now_mono(void);
/* Wall-clock ns since the epoch, comparable with file times. */
int64_t xpv_now_wall_ns(void);
/* A file's modification time in ns since the epoch: what the index keeps
 * to tell a file changed. */
struct stat;
int64_t xpv_mtime_ns(const struct stat *st);
/* Asks the kernel to start reading the first `bytes` (> 0) of the file at
 * path into the page cache, and returns without waiting. A hint: a file
 * that cannot be opened is left to whoever reads it to report. */
void xpv_read_ahead(const char *path, int64_t bytes);
/* Whether another thread asked a long loop to stop: stop (may be NULL)
 * is written by that thread, so it is read atomically. */
static inline int xpv_stop_requested(volatile int *stop)
{
    return stop && __atomic_load_n(stop, __ATOMIC_ACQUIRE);
}

/* The CPUs this process may run on (its affinity mask), at least 1. */
int xpv_cpu_count(void);

/* Profile ids are the first 64 bits of a hash of the path relative to the
 * profile directory, so they stay the same across restarts and rebuilds. */
int64_t xpv_profile_id_for(const char *rel_path);
void xpv_profile_id_hex(int64_t id, char out[17]);
int xpv_profile_id_parse(const char *hex, int64_t *out);

#endif
