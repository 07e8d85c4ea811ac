/*
 * watch.h — noticing that something under the profile directory changed.
 *
 * With inotify, every directory under the root is watched (new ones as they
 * appear), so a change wakes the caller at once. Where inotify sees nothing
 * — network and FUSE filesystems (NFS, CIFS/SMB, 9p, FUSE, Ceph, Lustre,
 * AFS), recognised by statfs's f_type — or when asked (`poll_seconds` > 0),
 * the watcher polls instead: it reports a change every poll_seconds, and
 * the caller's scan (which reads nothing it already knows) finds what
 * changed. A watcher says only "look again", never what to look at:
 * rescanning is cheap and never misses what an event queue might drop.
 *
 * One thread waits on a watcher; xpv_watch_wake may be called from any
 * thread (it is how the server stops the waiting one).
 */
#ifndef XPV_WATCH_H
#define XPV_WATCH_H

#include "../common/xpv_common.h"

#define XPV_WATCH_REMOTE_POLL_SECONDS 2

typedef struct xpv_watch xpv_watch;

/* Watches the directory root, with every directory below it when
 * recursive (0 when one file is served: only its directory). poll_seconds > 0 forces polling; 0
 * picks inotify where it works. Returns NULL with err only when not even polling can be set up.
 * `why` (may be NULL) receives the reason polling was chosen, "" when it was not. */
xpv_watch *xpv_watch_open(const char *root, int recursive, int poll_seconds, char *why,
                          size_t whysz, xpv_err *err);
void xpv_watch_close(xpv_watch *w);

/* "inotify" or "poll". */
const char *xpv_watch_mode(const xpv_watch *w);
/* Seconds between polls, 0 with inotify. */
int xpv_watch_poll_seconds(const xpv_watch *w);

/* Waits up to timeout_ms (-1: no limit) for a change. Returns 1 when
 * something under the root may have changed (or a poll is due), 0 on
 * timeout or when woken by xpv_watch_wake. */
int xpv_watch_wait(xpv_watch *w, int timeout_ms);

/* Makes a waiting (or the next) xpv_watch_wait return at once. */
void xpv_watch_wake(xpv_watch *w);

/* 1 when a filesystem of this statfs f_type is one inotify does not see
 * remote changes on (exposed for tests). */
int xpv_watch_fs_is_remote(long f_type);

#endif
