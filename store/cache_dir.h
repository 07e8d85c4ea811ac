/*
 * cache_dir.h — the index cache as a whole: what it holds, and keeping it
 * under a size cap by removing the least recently used indexes.
 *
 * An index's last use is the latest modification time of its file or its
 * -wal (xpv_cache_touch marks a use that writes nothing). An index another
 * process has open (a running server, an indexing run) is in use and is
 * never removed; neither is the one the caller names as its own.
 */
#ifndef XPV_CACHE_DIR_H
#define XPV_CACHE_DIR_H

#include "../common/xpv_common.h"

#include <stddef.h>
#include <stdint.h>

typedef struct {
    char path[4096];        /* the .sqlite file */
    char profile_dir[4096]; /* the directory it indexes; "" when it cannot be read */
    int64_t bytes;          /* with its -wal and -shm */
    int64_t last_use_ns;    /* since the epoch */
    int in_use;             /* another process has it open */
} xpv_cache_entry;

/* The indexes (*.sqlite) in dir, most recently used first. *out is
 * malloc'd (free it); an empty or missing dir gives 0 entries. */
int xpv_cache_list(const char *dir, xpv_cache_entry **out, size_t *n, xpv_err *err);

/* Marks db_path as used now. */
void xpv_cache_touch(const char *db_path);

/* The default cap for the cache in dir: 10% of its file system's free
 * space or 20 GB, whichever is smaller. */
int64_t xpv_cache_default_max(const char *dir);

/* Removes least recently used indexes of dir until the cache holds at most
 * max_bytes, skipping keep (may be NULL) and every index in use. Writes
 * the removed paths' count to *removed and the bytes left to *left.
 * Indexes of other directories go first: keep is never removed, even when
 * it alone is over the cap. */
int xpv_cache_evict(const char *dir, int64_t max_bytes, const char *keep, size_t *removed,
                    int64_t *left, xpv_err *err);

/* Removes every index of dir but keep and those in use; *skipped counts
 * the ones in use. */
int xpv_cache_clear(const char *dir, const char *keep, size_t *removed, size_t *skipped,
                    xpv_err *err);

#endif
