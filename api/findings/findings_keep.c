/*
 * findings_keep.c — /api/profiles/{id}/findings, computed once and kept
 * in the index (store/findings.h): the answer (the kept one, or computed
 * by findings.c), the key it is kept under, the stamp of the profile it
 * was computed from, and the writer's step that computes and keeps it.
 *
 * The key hashes everything besides the profile that changes the answer:
 * the thresholds (findings_config.h), the program (its GNU build id, so a
 * rebuilt binary never reads what another build computed) and
 * XPV_FINDINGS_BATCH. A program linked without a build id (CMakeLists.txt
 * asks for one) has no key: it neither keeps nor reads answers, since two
 * builds of it could not be told apart. The stamp hashes the profile row's indexing outcome
 * (status, events, span, file mtime, time indexed). Only a profile read
 * whole ("ok") is kept: one read in part may be a capture still being
 * written (docs/LIVE.md) and is judged afresh on each ask.
 * XPV_FINDINGS_STORE=off neither reads nor keeps answers (the tests
 * compare both ways; the benchmark times them).
 *
 * Invariant: a kept answer is byte for byte the one xpv_findings_body
 * writes for the same key and stamp; it is computed and written in one
 * transaction, so a profile indexed again meanwhile by another connection
 * makes the write fail rather than keep a stale answer.
 */
#define _GNU_SOURCE
#include "findings.h"
#include "findings_internal.h"
#include "../../store/findings.h"
#include "../../store/index_db.h"

#include <elf.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    unsigned char id[64];
    size_t n;
} build_id;

static size_t align_to(size_t n, size_t a)
{
    return (n + a - 1) & ~(a - 1);
}

/* Called for each loaded object, the program first: reads its build id
 * note, and stops after the program either way. */
static int read_build_id(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    build_id *b = arg;
    for (int i = 0; i < info->dlpi_phnum && !b->n; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE) continue;
        size_t a = ph->p_align == 8 ? 8 : 4;
        const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;
        while ((size_t)(end - p) >= sizeof(ElfW(Nhdr))) {
            const ElfW(Nhdr) *nh = (const void *)p;
            const char *name = p + sizeof *nh, *desc = name + align_to(nh->n_namesz, a);
            if (desc > end || (size_t)(end - desc) < nh->n_descsz) break;
            if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && memcmp(name, "GNU", 4) == 0 &&
                nh->n_descsz <= sizeof b->id) {
                memcpy(b->id, desc, nh->n_descsz);
                b->n = nh->n_descsz;
                break;
            }
            p = desc + align_to(nh->n_descsz, a);
        }
    }
    return 1;
}

static int store_on(void)
{
    const char *s = getenv("XPV_FINDINGS_STORE");
    return !s || strcmp(s, "off") != 0;
}

int xpv_findings_key(const xpv_findings_config *cfg, const unsigned char *build, size_t build_n,
                     uint64_t *key)
{
    struct {
        xpv_findings_config cfg;
        build_id build;
        int batch_off;
    } k;
    if (build_n == 0 || build_n > sizeof k.build.id) return 0;
    memset(&k, 0, sizeof k);
    k.cfg = *cfg;
    memcpy(k.build.id, build, build_n);
    k.build.n = build_n;
    const char *batch = getenv("XPV_FINDINGS_BATCH");
    k.batch_off = batch && strcmp(batch, "off") == 0;
    *key = xpv_hash64(&k, sizeof k);
    return 1;
}

/* The key under this program's build id: 1, or 0 when it has none. */
static int key_of(const xpv_findings_config *cfg, uint64_t *key)
{
    build_id b;
    memset(&b, 0, sizeof b);
    dl_iterate_phdr(read_build_id, &b);
    return xpv_findings_key(cfg, b.id, b.n, key);
}

static uint64_t stamp_of(const xpv_api_profile_state *ps)
{
    struct {
        char status[16];
        int64_t events, has_span, start_ns, end_ns, mtime_ns;
        double indexed_at;
    } s;
    memset(&s, 0, sizeof s);
    memcpy(s.status, ps->status, sizeof s.status);
    s.events = ps->events, s.has_span = ps->has_span;
    s.start_ns = ps->start_ns, s.end_ns = ps->end_ns, s.mtime_ns = ps->mtime_ns;
    s.indexed_at = ps->indexed_at;
    return xpv_hash64(&s, sizeof s);
}

int xpv_findings_indexed(const xpv_api_profile_state *ps)
{
    return strcmp(ps->status, "ok") == 0 || (strcmp(ps->status, "error") == 0 && ps->events > 0);
}

static int keepable(const xpv_api_profile_state *ps)
{
    return store_on() && strcmp(ps->status, "ok") == 0;
}

int xpv_findings_stored(sqlite3 *db, int64_t id, const xpv_findings_config *cfg,
                        const xpv_api_profile_state *ps, xpv_buf *out, xpv_err *err)
{
    uint64_t key;
    if (!keepable(ps) || !key_of(cfg, &key)) return 0;
    return xpv_store_findings_get(db, id, key, stamp_of(ps), out, err);
}

/* The part of keeping that runs inside the transaction. */
static int keep_in(sqlite3 *db, int64_t id, const xpv_findings_config *cfg, xpv_err *err)
{
    xpv_api_profile_state ps;
    uint64_t key;
    int found = xpv_api_profile_state_find(db, id, &ps, err);
    if (found <= 0) return found; /* gone (0), or the index cannot be read (-1) */
    if (!keepable(&ps) || !key_of(cfg, &key)) return 0;
    xpv_buf b = {0};
    uint64_t stamp = stamp_of(&ps);
    int rc = xpv_store_findings_get(db, id, key, stamp, &b, err);
    if (rc == 0) {
        xpv_buf_reset(&b);
        rc = xpv_findings_body(db, id, cfg, &ps, &b, err);
        int busy = 0;
        if (rc == 0) rc = xpv_store_findings_put(db, id, key, stamp, b.data, b.len, &busy, err);
        if (rc == 0) rc = 1;
        if (rc < 0 && busy) rc = 0; /* indexed again meanwhile: its answer is not this one */
    } else if (rc == 1) {
        rc = 0;
    }
    xpv_buf_free(&b);
    return rc;
}

int xpv_api_findings_keep(sqlite3 *db, int64_t id, const xpv_findings_config *cfg, xpv_err *err)
{
    if (!store_on()) return 0;
    /* A deferred transaction: the reads fix the snapshot the answer is
     * computed from, and the write fails if another connection wrote
     * since. */
    int own = sqlite3_get_autocommit(db);
    if (own && xpv_db_exec(db, "BEGIN", err) != 0) return -1;
    int rc = keep_in(db, id, cfg, err);
    if (own) {
        if (rc > 0 && xpv_db_exec(db, "COMMIT", err) != 0) rc = -1;
        if (rc <= 0) xpv_db_exec(db, "ROLLBACK", NULL);
    }
    return rc;
}

/* The answer from one snapshot of the index: the head, the kept answer
 * and the one computed instead all describe the same indexing. */
static int findings_in(sqlite3 *db, int64_t id, const xpv_findings_config *cfg, xpv_buf *out)
{
    xpv_api_profile_state ps;
    int status = xpv_api_profile_state_get(db, id, &ps, out);
    if (status != 200) return status;
    xpv_api_put_profile_head(out, id, &ps);
    if (!xpv_findings_indexed(&ps)) { /* pending, unsupported or unreadable */
        xpv_buf_puts(out, ",\"complete\":null,\"steps\":null,\"findings\":null}");
        return 200;
    }
    xpv_err err = {{0}};
    int rc = xpv_findings_stored(db, id, cfg, &ps, out, &err);
    if (rc == 0) rc = xpv_findings_body(db, id, cfg, &ps, out, &err);
    return rc >= 0 ? 200 : xpv_api_error(out, 500, "%s", err.msg);
}

int xpv_api_findings(sqlite3 *db, int64_t id, const xpv_findings_config *cfg, xpv_buf *out)
{
    /* One read transaction (deferred: the first read fixes the snapshot),
     * so a re-index committed between the reads cannot pair an old head
     * with a new answer. */
    int own = sqlite3_get_autocommit(db);
    xpv_err err = {{0}};
    if (own && xpv_db_exec(db, "BEGIN", &err) != 0) return xpv_api_error(out, 500, "%s", err.msg);
    int status = findings_in(db, id, cfg, out);
    if (own) xpv_db_exec(db, "COMMIT", NULL); /* a read only: nothing to lose */
    return status;
}
