/*
 * test_store_tracks.c — store/tracks.c on hand-made rows: the list's order,
 * device names and shared process names; whole rows with unknown (NULL)
 * values flagged, never 0; the id lists, the greatest id and the device
 * rows; and a broken query reported as an error.
 */
#include "testutil.h"
#include "store/index_db.h"
#include "store/tracks.h"

#include <stdlib.h>
#include <string.h>

static sqlite3 *db;
/* Track 0: a host thread; 1 and 2: two processes named GPU, devices 0 and
 * 1 (whose entry in the devices list is not a text); 2 sorts first. */
static const char *const ROWS =
    "UPDATE profiles SET devices='[\"GPU 0\", 7]';"
    "INSERT INTO tracks(profile_id, id, pid, tid, process_name, thread_name, process_sort,"
    " thread_sort, process_labels, device_id, events, t_min, t_max) VALUES"
    " (1, 0, 10, 1, 'python', 'main', NULL, NULL, NULL, NULL, 5, 100, 200),"
    " (1, 1, 2, 7, 'GPU', 'stream 7', 1, NULL, 'labels', 0, 3, 0, 50),"
    " (1, 2, 3, 8, 'GPU', 'XLA Ops', 0, 0, NULL, 1, 0, NULL, NULL);";

static void setup(void)
{
    if (!db) db = xpv_test_index_with(1, ROWS);
}

static int text_is(xpv_store_text t, const char *s)
{
    return t.s && t.n == strlen(s) && strcmp(t.s, s) == 0;
}

static void test_list(void)
{
    setup();
    xpv_store_cursor c;
    xpv_store_track r;
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL_FATAL(xpv_store_tracks_open_list(&c, db, 1, &err), 0);
    CU_ASSERT_EQUAL_FATAL(xpv_store_tracks_next(&c, &r, &err), 1);
    CU_ASSERT_EQUAL(r.id, 2);
    CU_ASSERT_PTR_NULL(r.device_name.s); /* 7 is not a name */
    CU_ASSERT_PTR_NULL(r.process_labels.s);
    CU_ASSERT_EQUAL(r.known, (1u << XPV_STORE_TRACK_T_MIN) - 1);
    CU_ASSERT_EQUAL_FATAL(xpv_store_tracks_next(&c, &r, &err), 1);
    CU_ASSERT_TRUE(r.id == 1 && r.pid == 2 && r.tid == 7);
    CU_ASSERT_TRUE(text_is(r.process_name, "GPU") && text_is(r.thread_name, "stream 7"));
    CU_ASSERT_TRUE(text_is(r.process_labels, "labels") && text_is(r.device_name, "GPU 0"));
    CU_ASSERT_EQUAL(r.name_pids, 2);
    CU_ASSERT_FALSE(xpv_store_track_known(&r, XPV_STORE_TRACK_THREAD_SORT));
    CU_ASSERT_TRUE(r.num[XPV_STORE_TRACK_PROCESS_SORT] == 1 && r.num[XPV_STORE_TRACK_T_MAX] == 50);
    CU_ASSERT_EQUAL_FATAL(xpv_store_tracks_next(&c, &r, &err), 1);
    CU_ASSERT_TRUE(r.id == 0 && r.name_pids == 1);
    CU_ASSERT_PTR_NULL(r.device_name.s);
    CU_ASSERT_FALSE(xpv_store_track_known(&r, XPV_STORE_TRACK_DEVICE));
    CU_ASSERT_EQUAL(xpv_store_tracks_next(&c, &r, &err), 0);
    xpv_store_cursor_close(&c);

    static const int64_t by_pid[] = {1, 2, 0};
    CU_ASSERT_EQUAL_FATAL(xpv_store_tracks_open_by_pid(&c, db, 1, &err), 0);
    for (int i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL_FATAL(xpv_store_tracks_next(&c, &r, &err), 1);
        CU_ASSERT_EQUAL(r.id, by_pid[i]);
        CU_ASSERT_PTR_NULL(r.device_name.s); /* the list's alone */
    }
    CU_ASSERT_EQUAL(xpv_store_tracks_next(&c, &r, &err), 0);
    xpv_store_cursor_close(&c);

    CU_ASSERT_EQUAL_FATAL(xpv_store_tracks_get(&c, db, 1, 0, &r, &err), 1);
    CU_ASSERT_TRUE(r.pid == 10 && text_is(r.thread_name, "main"));
    CU_ASSERT_TRUE(r.num[XPV_STORE_TRACK_EVENTS] == 5 && r.num[XPV_STORE_TRACK_T_MIN] == 100);
    xpv_store_cursor_close(&c);
    CU_ASSERT_EQUAL(xpv_store_tracks_get(&c, db, 1, 99, &r, &err), 0);
    CU_ASSERT_PTR_NULL(c.st);
}

static void test_ids_and_devices(void)
{
    setup();
    xpv_err err = {{0}};
    int64_t *ids, max = -1;
    size_t n;
    CU_ASSERT_EQUAL_FATAL(xpv_store_tracks_ids(db, 1, &ids, &n, &err), 0);
    CU_ASSERT_TRUE(n == 3 && ids[0] == 0 && ids[1] == 1 && ids[2] == 2);
    free(ids);
    CU_ASSERT_EQUAL_FATAL(xpv_store_tracks_ids_with_events(db, 1, NULL, &ids, &n, &err), 0);
    CU_ASSERT_TRUE(n == 1 && ids[0] == 1); /* device tracks with events */
    free(ids);
    CU_ASSERT_EQUAL_FATAL(xpv_store_tracks_ids_with_events(db, 1, "main", &ids, &n, &err), 0);
    CU_ASSERT_TRUE(n == 1 && ids[0] == 0);
    free(ids);
    CU_ASSERT_EQUAL_FATAL(xpv_store_tracks_ids_with_events(db, 1, "XLA Ops", &ids, &n, &err), 0);
    CU_ASSERT_TRUE(n == 0 && ids == NULL);
    CU_ASSERT_TRUE(xpv_store_tracks_max_id(db, 1, &max, &err) == 1 && max == 2);
    CU_ASSERT_EQUAL(xpv_store_tracks_max_id(db, 9, &max, &err), 0);

    xpv_store_cursor c;
    int64_t t, seen = 0;
    int device;
    CU_ASSERT_EQUAL_FATAL(xpv_store_tracks_open_devices(&c, db, 1, &err), 0);
    while (xpv_store_tracks_device_next(&c, &t, &device, &err) == 1) {
        CU_ASSERT_EQUAL(device, t - 1);
        seen |= 1 << t;
    }
    xpv_store_cursor_close(&c);
    CU_ASSERT_EQUAL(seen, 6); /* tracks 1 and 2 */
}

static void test_errors(void)
{
    setup();
    xpv_err err = {{0}};
    xpv_store_cursor c;
    xpv_store_track r;
    int64_t *ids, max;
    size_t n;
    CU_ASSERT_EQUAL(xpv_db_exec(db, "ALTER TABLE tracks RENAME TO tracks_gone", &err), 0);
    CU_ASSERT_EQUAL(xpv_store_tracks_open_list(&c, db, 1, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no such table"));
    CU_ASSERT_EQUAL(xpv_store_tracks_get(&c, db, 1, 0, &r, &err), -1);
    CU_ASSERT_EQUAL(xpv_store_tracks_ids(db, 1, &ids, &n, &err), -1);
    CU_ASSERT_PTR_NULL(ids);
    CU_ASSERT_EQUAL(xpv_store_tracks_max_id(db, 1, &max, &err), -1);
    CU_ASSERT_EQUAL(xpv_store_tracks_open_devices(&c, db, 1, &err), -1);
    CU_ASSERT_EQUAL(xpv_db_exec(db, "ALTER TABLE tracks_gone RENAME TO tracks", &err), 0);
}

int main(void)
{
    static const xpv_test_case tests[] = {
        {"the list, by pid, one track", test_list},
        {"id lists, the greatest id, device rows", test_ids_and_devices},
        {"a broken query is an error", test_errors},
        {NULL, NULL},
    };
    return xpv_test_run("store_tracks", tests, 0); /* the index goes with the process */
}
