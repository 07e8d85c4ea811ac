/*
 * test_watch.c — the directory watcher: inotify sees files in directories
 * created after it started (new directories are watched too); polling
 * reports a change each interval; a wake returns at once; network and FUSE
 * filesystems are told apart by f_type.
 */
#define _GNU_SOURCE
#include "testutil.h"
#include "indexer/watch.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* Drains what the watcher has queued now. */
static void drain(xpv_watch *w)
{
    while (xpv_watch_wait(w, 50) == 1)
        ;
}

static void test_inotify_follows_new_directories(void)
{
    const char *d = xpv_test_tmpdir();
    char why[256], path[4096];
    xpv_err err = {{0}};
    xpv_watch *w = xpv_watch_open(d, 1, 0, why, sizeof why, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    if (strcmp(xpv_watch_mode(w), "inotify") != 0) { /* e.g. a network /tmp */
        printf("  (inotify unavailable here: %s)\n", why);
        xpv_watch_close(w);
        return;
    }
    CU_ASSERT_EQUAL(xpv_watch_poll_seconds(w), 0);
    CU_ASSERT_EQUAL(xpv_watch_wait(w, 50), 0); /* nothing happened */
    snprintf(path, sizeof path, "%s/run", d);
    CU_ASSERT_EQUAL_FATAL(mkdir(path, 0755), 0);
    CU_ASSERT_EQUAL(xpv_watch_wait(w, 2000), 1);
    drain(w);
    /* Two levels below a directory that did not exist at start. */
    CU_ASSERT_EQUAL(xpv_test_write(d, "run/plugins/profile/x.pt.trace.json", "{}", 2), 0);
    CU_ASSERT_EQUAL(xpv_watch_wait(w, 2000), 1);
    drain(w);
    CU_ASSERT_EQUAL(xpv_test_write(d, "run/plugins/profile/y.pt.trace.json", "{}", 2), 0);
    CU_ASSERT_EQUAL(xpv_watch_wait(w, 2000), 1);
    drain(w);
    xpv_watch_wake(w);
    double t0 = xpv_now_mono();
    CU_ASSERT_EQUAL(xpv_watch_wait(w, 5000), 0);
    CU_ASSERT(xpv_now_mono() - t0 < 1.0);
    xpv_watch_close(w);
}

static void test_polling(void)
{
    const char *d = xpv_test_tmpdir();
    char why[256];
    xpv_err err = {{0}};
    xpv_watch *w = xpv_watch_open(d, 1, 1, why, sizeof why, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    CU_ASSERT_STRING_EQUAL(xpv_watch_mode(w), "poll");
    CU_ASSERT_EQUAL(xpv_watch_poll_seconds(w), 1);
    CU_ASSERT(strstr(why, "--poll=1") != NULL);
    CU_ASSERT_EQUAL(xpv_watch_wait(w, 100), 0); /* not due yet */
    double t0 = xpv_now_mono();
    CU_ASSERT_EQUAL(xpv_watch_wait(w, 3000), 1); /* due within the second */
    CU_ASSERT(xpv_now_mono() - t0 < 1.5);
    xpv_watch_close(w);
    CU_ASSERT_PTR_NULL(xpv_watch_open("/nonexistent/xpv", 1, 0, NULL, 0, &err));
}

static void test_remote_filesystems(void)
{
    CU_ASSERT(xpv_watch_fs_is_remote(0x6969));            /* NFS */
    CU_ASSERT(xpv_watch_fs_is_remote(0x01021997));        /* 9p */
    CU_ASSERT(xpv_watch_fs_is_remote(0x65735546));        /* FUSE */
    CU_ASSERT(xpv_watch_fs_is_remote((long)0xFF534D42));  /* CIFS */
    CU_ASSERT(!xpv_watch_fs_is_remote(0xEF53));           /* ext4 */
    CU_ASSERT(!xpv_watch_fs_is_remote(0x01021994));       /* tmpfs */
    CU_ASSERT(!xpv_watch_fs_is_remote((long)0x794C7630)); /* overlayfs */
}

int main(void)
{
    static const xpv_test_case tests[] = {
        {"inotify follows new directories; wake", test_inotify_follows_new_directories},
        {"polling reports each interval", test_polling},
        {"network and FUSE filesystems by f_type", test_remote_filesystems},
        {NULL, NULL},
    };
    return xpv_test_run("watch", tests, 0);
}
