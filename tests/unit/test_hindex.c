/*
 * test_hindex.c — the hash index (common/xpv_hindex.c): as a map, every
 * key (0 and UINT64_MAX included) keeps its value across growth and
 * removals, checked against a plain array model; as an index, entries
 * with the same hash are all yielded, so the caller's equality decides.
 */
#include "testutil.h"
#include "common/xpv_hindex.h"

#include <stdlib.h>
#include <string.h>

static void test_map_put_get(void)
{
    xpv_hindex h = {0};
    CU_ASSERT_PTR_NULL(xpv_hindex_get(&h, 7));
    CU_ASSERT_PTR_NULL(xpv_hindex_get(&h, 0));
    *xpv_hindex_put(&h, 7, 70) += 1;
    CU_ASSERT_EQUAL(*xpv_hindex_put(&h, 7, 999), 71); /* present: init unused */
    CU_ASSERT_EQUAL(*xpv_hindex_put(&h, 0, 5), 5);
    CU_ASSERT_EQUAL(*xpv_hindex_put(&h, UINT64_MAX, 6), 6);
    CU_ASSERT_EQUAL(*xpv_hindex_get(&h, 0), 5);
    CU_ASSERT_EQUAL(*xpv_hindex_get(&h, UINT64_MAX), 6);
    CU_ASSERT_EQUAL(xpv_hindex_count(&h), 3);
    CU_ASSERT_PTR_NULL(xpv_hindex_get(&h, 8));
    xpv_hindex_free(&h);
    CU_ASSERT_EQUAL(xpv_hindex_count(&h), 0);
}

/* A key whose product with the index's multiplier is m: its home slot is
 * m's top bits, whatever the table's size. */
static uint64_t key_homing(uint64_t m)
{
    const uint64_t g = 0x9E3779B97F4A7C15ULL;
    uint64_t inv = g; /* Newton's iteration for g's inverse mod 2^64 */
    for (int i = 0; i < 6; i++)
        inv *= 2 - g * inv;
    return m * inv;
}

/* Keys that all home on the last slot or the first: one cluster that
 * wraps around the end, with removals from its middle. */
static void test_map_collisions_and_removal(void)
{
    xpv_hindex h = {0};
    xpv_hindex_reserve(&h, 64);
    size_t cap = h.cap;
    enum { N = 40 };
    uint64_t keys[N];
    for (uint64_t i = 0; i < N; i++) {
        keys[i] = key_homing(i % 2 ? i : ~i); /* top bits 0 or all 1 */
        CU_ASSERT_EQUAL_FATAL(xpv_hindex_home(&h, keys[i]), i % 2 ? 0 : cap - 1);
        xpv_hindex_put(&h, keys[i], i);
    }
    CU_ASSERT_EQUAL(h.cap, cap); /* reserved: no growth */
    /* remove every third key: the followers must shift back into the holes */
    for (size_t i = 0; i < N; i += 3)
        CU_ASSERT_TRUE(xpv_hindex_del(&h, keys[i]));
    CU_ASSERT_FALSE(xpv_hindex_del(&h, keys[0])); /* already gone */
    for (size_t i = 0; i < N; i++) {
        uint64_t *v = xpv_hindex_get(&h, keys[i]);
        if (i % 3 == 0) {
            CU_ASSERT_PTR_NULL(v);
        } else {
            CU_ASSERT_PTR_NOT_NULL_FATAL(v);
            CU_ASSERT_EQUAL(*v, i);
        }
    }
    CU_ASSERT_EQUAL(xpv_hindex_count(&h), N - (N + 2) / 3);
    /* and the whole cluster, in another order */
    for (size_t i = N; i-- > 0;)
        CU_ASSERT_EQUAL(xpv_hindex_del(&h, keys[i]), i % 3 != 0);
    CU_ASSERT_EQUAL(xpv_hindex_count(&h), 0);
    for (size_t i = 0; i < h.cap; i++)
        CU_ASSERT_EQUAL_FATAL(h.slots[i].key, 0);
    *xpv_hindex_put(&h, 0, 1) = 9;
    CU_ASSERT_TRUE(xpv_hindex_del(&h, 0));
    CU_ASSERT_PTR_NULL(xpv_hindex_get(&h, 0));
    xpv_hindex_free(&h);
}

/* Random puts and removals against a model: a sorted table of present keys
 * of a small universe, so keys come back after removal. */
static void test_map_against_model(void)
{
    enum { U = 5000, OPS = 200000 };
    uint64_t *model = calloc(U, sizeof *model); /* value + 1, 0 absent */
    xpv_hindex h = {0};
    uint64_t rng = 0x1234567;
    size_t present = 0;
    for (int op = 0; op < OPS; op++) {
        uint64_t r = xpv_test_xorshift(&rng), k = r % U;
        uint64_t key = k * 0x100000001ull; /* spread, and key 0 included */
        if (r >> 62) {
            uint64_t *v = xpv_hindex_put(&h, key, op);
            if (!model[k]) model[k] = (uint64_t)op + 1, present++;
            CU_ASSERT_EQUAL_FATAL(*v, model[k] - 1);
        } else {
            CU_ASSERT_EQUAL_FATAL(xpv_hindex_del(&h, key), model[k] != 0);
            if (model[k]) model[k] = 0, present--;
        }
    }
    CU_ASSERT_EQUAL(xpv_hindex_count(&h), present);
    for (uint64_t k = 0; k < U; k++) {
        uint64_t *v = xpv_hindex_get(&h, k * 0x100000001ull);
        CU_ASSERT_EQUAL_FATAL(v != NULL, model[k] != 0);
        if (v) CU_ASSERT_EQUAL_FATAL(*v, model[k] - 1);
    }
    size_t walked = 0, pos = 0;
    uint64_t key, val;
    while (xpv_hindex_next_entry(&h, &pos, &key, &val)) {
        CU_ASSERT_EQUAL_FATAL(key % 0x100000001ull, 0);
        CU_ASSERT_EQUAL_FATAL(model[key / 0x100000001ull], val + 1);
        walked++;
    }
    CU_ASSERT_EQUAL(walked, present);
    CU_ASSERT_TRUE(h.n * 2 <= h.cap); /* at most half full */
    xpv_hindex_clear(&h);
    CU_ASSERT_EQUAL(xpv_hindex_count(&h), 0);
    CU_ASSERT_PTR_NULL(xpv_hindex_get(&h, 0));
    CU_ASSERT_PTR_NULL(xpv_hindex_get(&h, 0x100000001ull));
    xpv_hindex_free(&h);
    free(model);
}

/* Index use over words where every hash is the same (the worst case) or
 * 0: each lookup must still find its own entry by the caller's check. */
typedef struct {
    const char **words;
    size_t n;
    xpv_hindex idx;
} word_table;

static uint64_t word_id(word_table *t, const char *w, uint64_t hash, int add)
{
    xpv_hprobe p = xpv_hindex_probe(&t->idx, hash);
    for (uint64_t id; xpv_hindex_next(&t->idx, &p, &id);)
        if (strcmp(t->words[id], w) == 0) return id;
    if (!add) return UINT64_MAX;
    t->words[t->n] = w;
    xpv_hindex_insert_at(&t->idx, &p, t->n);
    return t->n++;
}

static void test_index_equal_hashes(void)
{
    static const char *words[] = {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j",
                                  "k", "l", "m", "n", "o", "p", "q", "r", "s", "t"};
    enum { N = sizeof words / sizeof *words };
    for (uint64_t hash = 0; hash < 2; hash++) { /* 0 is stored as 1: both collide */
        const char *store[N];
        word_table t = {store, 0, {0}};
        for (size_t i = 0; i < N; i++)
            CU_ASSERT_EQUAL_FATAL(word_id(&t, words[i], hash, 1), i); /* grows on the way */
        for (size_t i = 0; i < N; i++)
            CU_ASSERT_EQUAL_FATAL(word_id(&t, words[i], hash, 0), i);
        CU_ASSERT_EQUAL(word_id(&t, "zz", hash, 0), UINT64_MAX);
        CU_ASSERT_EQUAL(xpv_hindex_count(&t.idx), N);
        /* remove "e" through its probe: the others stay findable */
        xpv_hprobe p = xpv_hindex_probe(&t.idx, hash);
        uint64_t id;
        while (xpv_hindex_next(&t.idx, &p, &id) && strcmp(store[id], "e") != 0)
            ;
        CU_ASSERT_STRING_EQUAL_FATAL(store[id], "e");
        xpv_hindex_remove_at(&t.idx, &p);
        CU_ASSERT_EQUAL(word_id(&t, "e", hash, 0), UINT64_MAX);
        for (size_t i = 0; i < N; i++)
            if (i != 4) CU_ASSERT_EQUAL_FATAL(word_id(&t, words[i], hash, 0), i);
        xpv_hindex_free(&t.idx);
    }
}

static void test_index_add_rebuild(void)
{
    xpv_hindex h = {0};
    for (uint64_t i = 0; i < 1000; i++)
        xpv_hindex_add(&h, i % 10, i); /* ten hashes, a hundred entries each */
    for (uint64_t hash = 0; hash < 10; hash++) {
        xpv_hprobe p = xpv_hindex_probe(&h, hash);
        uint64_t id, n = 0;
        while (xpv_hindex_next(&h, &p, &id)) {
            /* hash 0 and 1 share the stored hash 1 */
            CU_ASSERT_TRUE_FATAL(id % 10 == hash || (hash < 2 && id % 10 < 2));
            n++;
        }
        CU_ASSERT_EQUAL(n, hash < 2 ? 200 : 100);
    }
    xpv_hindex_free(&h);
}

int main(void)
{
    static const xpv_test_case tests[] = {
        {"a map keeps values, key 0 and UINT64_MAX included", test_map_put_get},
        {"removal in a long cluster keeps the rest findable", test_map_collisions_and_removal},
        {"random puts and removals agree with a model", test_map_against_model},
        {"entries with equal hashes are told apart by the caller", test_index_equal_hashes},
        {"entries added without a probe are all yielded", test_index_add_rebuild},
        {NULL, NULL},
    };
    return xpv_test_run("hindex", tests, 0);
}
