/*
 * test_device_rows_cache.c — the derived device rows shared across threads
 * (api/device_rows_cache.c), on the jax-cmdbuf-pair cmdbuf-off H100
 * capture: two threads that ask at once, each on its own connection, get
 * the one set built once, with the rows a build of their own gives; a set
 * over the budget is lent but not kept; a profile that is
 * not indexed for good is built per request and never kept; warming fills
 * the cache; the tracks answer is the same with the cache as without.
 */
#define _GNU_SOURCE
#include "testutil.h"
#include "api/api.h"
#include "api/device_rows.h"
#include "indexer/discover.h"
#include "indexer/indexer.h"
#include "store/index_db.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

static char db_path[1024];
static int64_t profile_id;

/* Indexes the capture once into a fresh index; 0 when it is absent. */
static int index_capture(void)
{
    if (db_path[0]) return 1;
    char profiles[1024];
    snprintf(profiles, sizeof profiles, "%s/gpu/jax-cmdbuf-pair/cmdbuf-off", xpv_test_fixtures());
    snprintf(db_path, sizeof db_path, "%s/index.sqlite", xpv_test_tmpdir());
    sqlite3 *db = NULL;
    xpv_err err = {{0}};
    xpv_found_list l;
    CU_ASSERT_EQUAL_FATAL(xpv_index_open(db_path, profiles, &db, NULL, &err), 0);
    CU_ASSERT_EQUAL_FATAL(xpv_discover(profiles, &l, &err), 0);
    xpv_indexer_register(db, &l, &err);
    xpv_index_options o = {1, NULL, NULL, NULL};
    CU_ASSERT_EQUAL_FATAL(xpv_indexer_run(db, &l, &o, &err), 0);
    for (size_t i = 0; i < l.n; i++) /* the xplane, not its trace JSON twin */
        if (strstr(l.items[i].rel_path, ".xplane.pb"))
            profile_id = xpv_profile_id_for(l.items[i].rel_path);
    CU_ASSERT_NOT_EQUAL_FATAL(profile_id, 0);
    xpv_found_list_free(&l);
    sqlite3_close(db);
    return 1;
}

static sqlite3 *reader(void)
{
    sqlite3 *db = NULL;
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL_FATAL(xpv_index_open_reader(db_path, &db, &err), 0);
    return db;
}

/* The rows as text: every row's track, device, kind and spans. */
static void dump(const xpv_devrows *r, xpv_buf *out)
{
    for (size_t i = 0; i < r->nrows; i++) {
        const xpv_devrow *row = &r->rows[i];
        xpv_buf_printf(out, "%lld %d %d:", (long long)row->track, row->device, row->kind);
        for (size_t k = 0; k < row->n; k++) {
            size_t len;
            const char *name = xpv_devrows_name(r, row->spans[k].name, &len);
            xpv_buf_printf(out, " %lld-%lld %.*s", (long long)row->spans[k].start,
                           (long long)row->spans[k].end, (int)len, name);
        }
        xpv_buf_putc(out, '\n');
    }
}

typedef struct {
    xpv_devrows_cache *cache;
    pthread_barrier_t *go;
    const xpv_devrows *got;
    xpv_buf text;
} asker;

static void *ask(void *p)
{
    asker *a = p;
    sqlite3 *db = reader();
    xpv_err err = {{0}};
    pthread_barrier_wait(a->go);
    a->got = xpv_devrows_acquire(db, profile_id, a->cache, &err);
    if (a->got) dump(a->got, &a->text);
    sqlite3_close(db);
    return NULL;
}

static void test_two_threads_share_one_build(void)
{
    if (!index_capture()) return;
    xpv_devrows_cache *c = xpv_devrows_cache_new((size_t)256 << 20);
    pthread_barrier_t go;
    pthread_barrier_init(&go, NULL, 2);
    asker a[2] = {{c, &go, NULL, {0}}, {c, &go, NULL, {0}}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, ask, &a[i]);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&go);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a[0].got);
    CU_ASSERT_PTR_EQUAL(a[0].got, a[1].got);
    CU_ASSERT_EQUAL(xpv_devrows_cache_builds(c), 1);
    CU_ASSERT_TRUE(a[0].got->nrows > 0);

    /* the same rows as a build of one's own */
    sqlite3 *db = reader();
    xpv_err err = {{0}};
    const xpv_devrows *own = xpv_devrows_acquire(db, profile_id, NULL, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(own);
    xpv_buf text = {0};
    dump(own, &text);
    CU_ASSERT_TRUE(text.len > 0 && text.len == a[0].text.len);
    CU_ASSERT_EQUAL(memcmp(text.data, a[0].text.data, text.len), 0);
    CU_ASSERT_EQUAL(memcmp(text.data, a[1].text.data, text.len), 0);
    xpv_devrows_release(NULL, own);

    /* lent sets survive the cache's end; a later ask builds nothing */
    const xpv_devrows *third = xpv_devrows_acquire(db, profile_id, c, &err);
    CU_ASSERT_PTR_EQUAL(third, a[0].got);
    CU_ASSERT_EQUAL(xpv_devrows_cache_builds(c), 1);
    CU_ASSERT_TRUE(xpv_devrows_cache_bytes(c) > 0);
    xpv_devrows_release(c, third);
    xpv_devrows_release(c, a[0].got);
    xpv_devrows_release(c, a[1].got);
    sqlite3_close(db);
    xpv_buf_free(&text);
    xpv_buf_free(&a[0].text);
    xpv_buf_free(&a[1].text);
    xpv_devrows_cache_free(c);
}

static void test_budget_and_warm(void)
{
    if (!index_capture()) return;
    sqlite3 *db = reader();
    xpv_err err = {{0}};
    /* a set over the budget on its own is lent, never kept */
    xpv_devrows_cache *tiny = xpv_devrows_cache_new(16);
    const xpv_devrows *r = xpv_devrows_acquire(db, profile_id, tiny, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_EQUAL(xpv_devrows_cache_bytes(tiny), 0);
    xpv_devrows_release(tiny, r);
    xpv_devrows_cache_free(tiny);

    /* warming builds the newest run's profiles ahead of the first ask */
    xpv_devrows_cache *c = xpv_devrows_cache_new((size_t)256 << 20);
    volatile int stop = 0;
    CU_ASSERT_EQUAL(xpv_devrows_warm(db, c, NULL, 0, 1, &stop, &err), 0);
    CU_ASSERT_EQUAL(xpv_devrows_cache_builds(c), 1);
    r = xpv_devrows_acquire(db, profile_id, c, &err);
    CU_ASSERT_EQUAL(xpv_devrows_cache_builds(c), 1);
    xpv_devrows_release(c, r);

    /* the tracks answer with the cache is the one without */
    xpv_buf with = {0}, without = {0};
    CU_ASSERT_EQUAL(xpv_api_tracks_cached(db, profile_id, c, &with), 200);
    CU_ASSERT_EQUAL(xpv_api_tracks(db, profile_id, &without), 200);
    CU_ASSERT_TRUE(with.len == without.len && memcmp(with.data, without.data, with.len) == 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(with.data, "\"derived\":\"xla_ops\""));
    CU_ASSERT_EQUAL(xpv_devrows_cache_builds(c), 1);
    xpv_buf_free(&with);
    xpv_buf_free(&without);
    xpv_devrows_cache_free(c);
    sqlite3_close(db);
}

static void test_unsettled_profile_not_kept(void)
{
    if (!index_capture()) return;
    /* a copy of the index whose profile is mid-indexing */
    char copy[1100];
    snprintf(copy, sizeof copy, "%s.pending", db_path);
    sqlite3 *src = reader(), *dst = NULL;
    CU_ASSERT_EQUAL_FATAL(sqlite3_open(copy, &dst), SQLITE_OK);
    CU_ASSERT_EQUAL_FATAL(xpv_index_register_functions(dst), SQLITE_OK);
    sqlite3_backup *b = sqlite3_backup_init(dst, "main", src, "main");
    sqlite3_backup_step(b, -1);
    sqlite3_backup_finish(b);
    sqlite3_close(src);
    CU_ASSERT_EQUAL(sqlite3_exec(dst, "UPDATE profiles SET status='indexing'", NULL, NULL, NULL),
                    SQLITE_OK);
    xpv_devrows_cache *c = xpv_devrows_cache_new((size_t)256 << 20);
    xpv_err err = {{0}};
    const xpv_devrows *x = xpv_devrows_acquire(dst, profile_id, c, &err);
    const xpv_devrows *y = xpv_devrows_acquire(dst, profile_id, c, &err);
    CU_ASSERT_PTR_NOT_NULL(x);
    CU_ASSERT_PTR_NOT_NULL(y);
    CU_ASSERT_PTR_NOT_EQUAL(x, y);
    CU_ASSERT_EQUAL(xpv_devrows_cache_builds(c), 0);
    CU_ASSERT_EQUAL(xpv_devrows_cache_bytes(c), 0);
    xpv_devrows_release(c, x);
    xpv_devrows_release(c, y);
    xpv_devrows_cache_free(c);
    sqlite3_close(dst);
}

int main(void)
{
    static const xpv_test_case tests[] = {
        {"two threads share one build", test_two_threads_share_one_build},
        {"budget and warm", test_budget_and_warm},
        {"a profile not indexed for good is not kept", test_unsettled_profile_not_kept},
        {NULL, NULL},
    };
    return xpv_test_run("device_rows_cache", tests, 1);
}
