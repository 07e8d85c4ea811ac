/*
 * hlo_file.c — see hlo_file.h. The profile's path is the index's
 * profile_dir joined with the row's path (relative to it; the dir itself
 * when a single file was indexed), mapped read-only.
 */
#define _GNU_SOURCE
#include "hlo_file.h"
#include "hlo_ops.h"
#include "../api_util.h"
#include "../../store/profiles.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
    char path[4096];
    int64_t size, mtime_ns;
} file_row;

/* 1 with the row of an xplane profile, 0 when not an xplane, -1 on error. */
static int profile_file(sqlite3 *db, int64_t id, file_row *fr, xpv_err *err)
{
    xpv_store_cursor c;
    xpv_store_profile_file row;
    int found = xpv_store_profiles_xplane_file(&c, db, id, &row, err);
    if (found != 1) return found;
    const char *dir = row.dir.s, *rel = row.path.s;
    struct stat sb;
    if (!dir || !rel)
        found = 0;
    else if (stat(dir, &sb) == 0 && S_ISREG(sb.st_mode))
        snprintf(fr->path, sizeof fr->path, "%s", dir);
    else
        snprintf(fr->path, sizeof fr->path, "%s/%s", dir, rel);
    fr->size = row.size_bytes;
    fr->mtime_ns = row.mtime_ns;
    xpv_store_cursor_close(&c);
    return found;
}

static int map_file(const file_row *fr, xpv_hlo_file *f, xpv_err *err)
{
    int fd = open(fr->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return xpv_err_set(err, "cannot open %s: %m", fr->path);
    struct stat sb;
    int rc = fstat(fd, &sb);
    int64_t mtime = xpv_mtime_ns(&sb);
    if (rc != 0 || sb.st_size != fr->size || mtime != fr->mtime_ns) {
        close(fd);
        return xpv_err_set(err, "%s changed since it was indexed; it is being indexed again",
                           fr->path);
    }
    f->size = (size_t)sb.st_size;
    f->map = f->size ? mmap(NULL, f->size, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
    close(fd);
    if (f->map == MAP_FAILED) {
        f->map = NULL;
        return xpv_err_set(err, "cannot map %s: %m", fr->path);
    }
    f->path = xpv_xstrdup(fr->path);
    f->mtime_ns = mtime;
    return 0;
}

int xpv_hlo_file_unchanged(const xpv_hlo_file *f, xpv_err *err)
{
    struct stat sb;
    if (!f->path) return 0;
    if (stat(f->path, &sb) == 0 && (size_t)sb.st_size == f->size &&
        xpv_mtime_ns(&sb) == f->mtime_ns)
        return 0;
    return xpv_err_set(err, "%s changed while it was read; it is being indexed again", f->path);
}

/* A blob's program_id is its metadata id. Old JAX wrote the program id
 * there too, but newer JAX numbers the metadata 1, 2, ... and keeps the
 * program id (the one device events carry, `jit_train_step(18566)`) only in
 * the name: the name's number wins, the metadata id stays where the name
 * has none. */
static void name_program_ids(xpv_hlo_file *f)
{
    for (size_t i = 0; i < f->n; i++) {
        xpv_hlo_blob *b = &f->blobs[i];
        size_t len;
        uint64_t prog;
        if (b->name.p && xpv_hlo_module_split(b->name.p, b->name.n, &len, &prog))
            b->program_id = prog;
    }
}

int xpv_hlo_file_open(sqlite3 *db, int64_t id, xpv_hlo_file *f, xpv_err *err)
{
    memset(f, 0, sizeof *f);
    file_row fr;
    int found = profile_file(db, id, &fr, err);
    if (found <= 0) return found;
    if (map_file(&fr, f, err) != 0) return -1;
    if (xpv_hlo_find_blobs(f->map, f->size, &f->blobs, &f->n, err) != 0) {
        xpv_err_prefix(err, "%s", fr.path);
        xpv_hlo_file_close(f);
        return -1;
    }
    if (f->n == 0) {
        xpv_hlo_file_close(f);
        return 0;
    }
    name_program_ids(f);
    return 1;
}

void xpv_hlo_file_close(xpv_hlo_file *f)
{
    if (f->map) munmap(f->map, f->size);
    free(f->blobs);
    free(f->path);
    memset(f, 0, sizeof *f);
}

static int str_is(xpv_hlo_str s, const char *t)
{
    size_t n = strlen(t);
    return s.p && s.n == n && memcmp(s.p, t, n) == 0;
}

xpv_hlo_str xpv_hlo_file_module_name(const xpv_hlo_file *f, const xpv_hlo_blob *b)
{
    xpv_pb r = {f->map, b->data, b->data + b->len};
    xpv_pb_field fl;
    xpv_hlo_str s = {NULL, 0};
    while (xpv_pb_next(&r, &fl, NULL) == 1) {
        if (fl.num != 1 || fl.wire != XPV_PB_LEN) continue;
        xpv_pb m = xpv_pb_sub(&r, &fl);
        while (xpv_pb_next(&m, &fl, NULL) == 1)
            if (fl.num == 1 && fl.wire == XPV_PB_LEN) {
                s.p = (const char *)fl.data, s.n = (uint32_t)fl.len;
                return s;
            }
        break;
    }
    return s;
}

/* 1 when module is "<HloModule name>(<program id>)" of blob b: the name
 * module_list gives a blob whose metadata name carries no program id. */
static int is_named_with_id(const xpv_hlo_file *f, const xpv_hlo_blob *b, const char *module)
{
    char prog[24];
    int n = snprintf(prog, sizeof prog, "(%" PRIu64 ")", b->program_id);
    size_t len = strlen(module);
    if (len <= (size_t)n || strcmp(module + len - (size_t)n, prog) != 0) return 0;
    xpv_hlo_str name = xpv_hlo_file_module_name(f, b);
    return name.p && name.n == len - (size_t)n && memcmp(name.p, module, name.n) == 0;
}

const xpv_hlo_blob *xpv_hlo_file_find(const xpv_hlo_file *f, const char *module)
{
    char prog[24];
    for (size_t i = 0; i < f->n; i++)
        if (str_is(f->blobs[i].name, module)) return &f->blobs[i];
    for (size_t i = 0; i < f->n; i++) {
        snprintf(prog, sizeof prog, "%" PRIu64, f->blobs[i].program_id);
        if (strcmp(prog, module) == 0) return &f->blobs[i];
    }
    for (size_t i = 0; i < f->n; i++)
        if (is_named_with_id(f, &f->blobs[i], module)) return &f->blobs[i];
    const xpv_hlo_blob *only = NULL;
    for (size_t i = 0; i < f->n; i++) {
        if (!str_is(xpv_hlo_file_module_name(f, &f->blobs[i]), module)) continue;
        if (only) return NULL; /* several modules have that name: ambiguous */
        only = &f->blobs[i];
    }
    return only;
}

int xpv_hlo_file_decode(const xpv_hlo_file *f, const xpv_hlo_blob *b, xpv_hlo_module *m,
                        xpv_err *err)
{
    if (xpv_hlo_decode(f->map, b->data, b->len, XPV_HLO_MODULE_BUDGET, m, err) == 0) return 0;
    return xpv_err_prefix(err, "module %.*s", (int)b->name.n, b->name.p ? b->name.p : "");
}

int xpv_hlo_file_has_modules(sqlite3 *db, int64_t id)
{
    xpv_hlo_file f;
    xpv_err err = {{0}};
    int rc = xpv_hlo_file_open(db, id, &f, &err);
    if (rc > 0) xpv_hlo_file_close(&f);
    /* a file that cannot be read has no modules to show: not an index error */
    return rc < 0 ? 0 : rc;
}

void xpv_hlo_put_str(xpv_buf *b, xpv_hlo_str s)
{
    if (s.p)
        xpv_buf_json_str(b, s.p, s.n);
    else
        xpv_buf_puts(b, "null");
}

int xpv_hlo_file_answer(sqlite3 *db, int64_t id, const char *module, const xpv_hlo_answer *a,
                        xpv_buf *out)
{
    xpv_api_profile_state ps;
    int known = xpv_api_profile_state_get(db, id, &ps, out);
    if (known != 200) return known;
    xpv_hlo_file f;
    xpv_err err = {{0}};
    int rc = xpv_hlo_file_open(db, id, &f, &err);
    if (rc < 0) return xpv_api_error(out, 500, "%s", err.msg);
    if (rc == 0) return xpv_api_error(out, 404, "No Data");
    const xpv_hlo_blob *bl = module ? xpv_hlo_file_find(&f, module) : NULL;
    int status = 200;
    if (module && !bl) {
        status = xpv_api_error(out, 404, "no module %s in this profile", module);
    } else {
        xpv_api_put_profile_head(out, id, &ps);
        if (bl)
            status = a->one(a->ctx, &f, bl, out);
        else
            a->list(a->ctx, &f, out);
    }
    if (xpv_hlo_file_unchanged(&f, &err) != 0) status = xpv_api_error(out, 500, "%s", err.msg);
    xpv_hlo_file_close(&f);
    return status;
}
