/*
 * testutil.h — helpers shared by the CUnit tests: temporary folders,
 * writing files, the fixtures folder, and running a suite.
 */
#ifndef XPV_TEST_UTIL_H
#define XPV_TEST_UTIL_H

#include <CUnit/CUnit.h>
#include <stddef.h>

/* A fresh empty folder under $TMPDIR; removed by xpv_test_cleanup(). */
const char *xpv_test_tmpdir(void);
/* Writes data to dir/rel, creating parent folders. Returns 0 on success. */
int xpv_test_write(const char *dir, const char *rel, const void *data, size_t n);
/* A new index in dir (dir/index.sqlite for profile folder dir/profiles)
 * holding one profiles row with the given id, ready for a sink. */
#include <sqlite3.h>
#include <stdint.h>
sqlite3 *xpv_test_fresh_index(const char *dir, int64_t profile_id);
/* The same in a fresh folder, with sql (hand-made rows) run on it. */
sqlite3 *xpv_test_index_with(int64_t profile_id, const char *sql);
/* Writes a profile's strings as the indexer does: values[i] is id i's
 * (NULL: the empty string, as for ids no event uses). */
void xpv_test_put_strings(sqlite3 *db, int64_t profile_id, const char *const *values, size_t n);
/* The first column of the first row of sql as an integer; -1 when the
 * query fails or has no row. */
int64_t xpv_test_int(sqlite3 *db, const char *sql);
/* ../shared/fixtures (from $XPV_FIXTURES), or NULL when absent. */
const char *xpv_test_fixtures(void);
/* Registers `tests` as one suite and runs it; returns the process exit code
 * (77 = skipped when needs_fixtures and there are none). */
typedef struct {
    const char *name;
    void (*fn)(void);
} xpv_test_case;
int xpv_test_run(const char *suite, const xpv_test_case *tests, int needs_fixtures);

/* xorshift64: reproducible pseudo-random test data from a caller's state. */
static inline uint64_t xpv_test_xorshift(uint64_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return *state;
}

#endif
