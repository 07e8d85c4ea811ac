/*
 * watch.c — see watch.h. inotify watches are added for the root and every
 * directory below it (depth-limited, symlinks not followed: a link that
 * stays inside the root points at a directory already watched). When a
 * directory appears, it and everything below it are watched before the
 * caller rescans, so files created in it meanwhile are found by that scan.
 * Invariant: the wake eventfd is the only state touched by other threads.
 */
#define _GNU_SOURCE
#include "watch.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#define MAX_DEPTH 64
#define WATCH_MASK                                                                                 \
    (IN_CREATE | IN_DELETE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO |            \
     IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF | IN_DONT_FOLLOW)

typedef struct {
    int wd;
    char *path;
} watched_dir;

struct xpv_watch {
    int ifd;  /* inotify, -1 when polling */
    int wake; /* eventfd */
    int poll_seconds;
    double next_poll; /* monotonic seconds */
    int recursive;    /* 0 when one file is served: only its directory */
    watched_dir *dirs;
    size_t ndirs, capdirs;
};

int xpv_watch_fs_is_remote(long f_type)
{
    static const unsigned long remote[] = {
        0x6969,     /* NFS */
        0xFF534D42, /* CIFS */
        0xFE534D42, /* SMB2 */
        0x517B,     /* SMB */
        0x01021997, /* 9p (v9fs) */
        0x65735546, /* FUSE (sshfs, gcsfuse, s3fs, ...) */
        0x00C36400, /* Ceph */
        0x0BD00BD0, /* Lustre */
        0x5346414F, /* AFS */
        0x6B414653, /* kAFS */
    };
    for (size_t i = 0; i < sizeof remote / sizeof remote[0]; i++)
        if ((unsigned long)(unsigned int)f_type == remote[i]) return 1;
    return 0;
}

static void remember_dir(xpv_watch *w, int wd, const char *path)
{
    for (size_t i = 0; i < w->ndirs; i++)
        if (w->dirs[i].wd == wd) {
            free(w->dirs[i].path);
            w->dirs[i].path = xpv_xstrdup(path);
            return;
        }
    if (w->ndirs == w->capdirs) {
        w->capdirs = w->capdirs ? 2 * w->capdirs : 64;
        w->dirs = xpv_xrealloc(w->dirs, w->capdirs * sizeof *w->dirs);
    }
    w->dirs[w->ndirs++] = (watched_dir){wd, xpv_xstrdup(path)};
}

static void forget_dir(xpv_watch *w, int wd)
{
    for (size_t i = 0; i < w->ndirs; i++)
        if (w->dirs[i].wd == wd) {
            free(w->dirs[i].path);
            w->dirs[i] = w->dirs[--w->ndirs];
            return;
        }
}

static const char *dir_of(const xpv_watch *w, int wd)
{
    for (size_t i = 0; i < w->ndirs; i++)
        if (w->dirs[i].wd == wd) return w->dirs[i].path;
    return NULL;
}

/* Watches dir and, when recursive, every directory below it. Returns -1
 * with errno when the kernel refuses a watch (ENOSPC: out of watches). */
static int watch_tree(xpv_watch *w, const char *dir, int depth)
{
    int wd = inotify_add_watch(w->ifd, dir, WATCH_MASK | IN_ONLYDIR);
    if (wd < 0) return errno == ENOENT || errno == ENOTDIR || errno == EACCES ? 0 : -1;
    remember_dir(w, wd, dir);
    if (!w->recursive || depth >= MAX_DEPTH) return 0;
    DIR *d = opendir(dir);
    if (!d) return 0;
    struct dirent *de;
    int rc = 0;
    while (rc == 0 && (de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) continue;
        char child[PATH_MAX];
        struct stat st;
        if (snprintf(child, sizeof child, "%s/%s", dir, de->d_name) >= PATH_MAX) continue;
        if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN) continue;
        if (lstat(child, &st) == 0 && S_ISDIR(st.st_mode)) rc = watch_tree(w, child, depth + 1);
    }
    closedir(d);
    return rc;
}

static void use_polling(xpv_watch *w, int seconds)
{
    if (w->ifd >= 0) close(w->ifd);
    w->ifd = -1;
    w->poll_seconds = seconds;
    w->next_poll = xpv_now_mono() + seconds;
}

xpv_watch *xpv_watch_open(const char *root, int recursive, int poll_seconds, char *why,
                          size_t whysz, xpv_err *err)
{
    char whybuf[256] = "";
    struct stat st;
    errno = 0;
    if (stat(root, &st) != 0 || !S_ISDIR(st.st_mode)) {
        xpv_err_set(err, "watch %s: %s", root, errno ? strerror(errno) : "not a directory");
        return NULL;
    }
    xpv_watch *w = xpv_xcalloc(1, sizeof *w);
    w->ifd = -1;
    w->recursive = recursive;
    w->wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (w->wake < 0) {
        xpv_err_set(err, "eventfd: %s", strerror(errno));
        free(w);
        return NULL;
    }
    struct statfs fs;
    if (poll_seconds > 0) {
        use_polling(w, poll_seconds);
        snprintf(whybuf, sizeof whybuf, "--poll=%d", poll_seconds);
    } else if (statfs(root, &fs) == 0 && xpv_watch_fs_is_remote((long)fs.f_type)) {
        use_polling(w, XPV_WATCH_REMOTE_POLL_SECONDS);
        snprintf(whybuf, sizeof whybuf, "a network or FUSE filesystem (f_type 0x%lx)",
                 (unsigned long)(unsigned int)fs.f_type);
    } else if ((w->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) < 0 ||
               watch_tree(w, root, 0) != 0) {
        snprintf(whybuf, sizeof whybuf, "inotify: %s", strerror(errno));
        use_polling(w, XPV_WATCH_REMOTE_POLL_SECONDS);
    }
    if (why) snprintf(why, whysz, "%s", whybuf);
    return w;
}

void xpv_watch_close(xpv_watch *w)
{
    if (!w) return;
    if (w->ifd >= 0) close(w->ifd);
    close(w->wake);
    for (size_t i = 0; i < w->ndirs; i++)
        free(w->dirs[i].path);
    free(w->dirs);
    free(w);
}

const char *xpv_watch_mode(const xpv_watch *w)
{
    return w->ifd >= 0 ? "inotify" : "poll";
}

int xpv_watch_poll_seconds(const xpv_watch *w)
{
    return w->ifd >= 0 ? 0 : w->poll_seconds;
}

void xpv_watch_wake(xpv_watch *w)
{
    uint64_t one = 1;
    if (write(w->wake, &one, sizeof one) < 0) { /* already pending: the waiter wakes anyway */
    }
}

/* Reads every queued event; watches directories that appeared. */
static void drain_inotify(xpv_watch *w)
{
    char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
    ssize_t n;
    while ((n = read(w->ifd, buf, sizeof buf)) > 0) {
        for (char *p = buf; p < buf + n;) {
            const struct inotify_event *ev = (const struct inotify_event *)p;
            p += sizeof *ev + ev->len;
            if (ev->mask & IN_IGNORED) {
                forget_dir(w, ev->wd);
                continue;
            }
            const char *parent = dir_of(w, ev->wd);
            if (!w->recursive || !parent || !ev->len || !(ev->mask & IN_ISDIR) ||
                !(ev->mask & (IN_CREATE | IN_MOVED_TO)))
                continue;
            char child[PATH_MAX];
            if (snprintf(child, sizeof child, "%s/%s", parent, ev->name) < PATH_MAX &&
                watch_tree(w, child, 1) != 0)
                fprintf(stderr, "xprof-view: watching %s: %s\n", child, strerror(errno));
        }
    }
}

int xpv_watch_wait(xpv_watch *w, int timeout_ms)
{
    struct pollfd fds[2] = {{w->wake, POLLIN, 0}, {w->ifd, POLLIN, 0}};
    int nfds = w->ifd >= 0 ? 2 : 1;
    if (w->ifd < 0) {
        int until_poll = (int)((w->next_poll - xpv_now_mono()) * 1000.0) + 1; /* round up */
        if (until_poll < 0) until_poll = 0;
        if (timeout_ms < 0 || until_poll < timeout_ms) timeout_ms = until_poll;
    }
    int rc = poll(fds, (nfds_t)nfds, timeout_ms);
    if (rc < 0) return 0; /* EINTR: the caller loops */
    if (fds[0].revents & POLLIN) {
        uint64_t v;
        if (read(w->wake, &v, sizeof v) < 0) { /* EAGAIN: drained by another read */
        }
        return 0;
    }
    if (w->ifd >= 0) {
        if (!(fds[1].revents & POLLIN)) return 0;
        drain_inotify(w);
        return 1;
    }
    if (xpv_now_mono() < w->next_poll) return 0;
    w->next_poll = xpv_now_mono() + w->poll_seconds;
    return 1;
}
