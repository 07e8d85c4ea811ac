/*
 * hlo_file.h — the compiled modules of one indexed profile, read from its
 * xplane file when an answer needs them (memory viewer, HLO module view).
 *
 * Why on request and not at index time: the modules are only read when a
 * user opens one of these views, a profile's modules are a small part of
 * its file (16 modules and 24 KB of the 110 KB MI300X fixture; 13 KB of the
 * 863 KB TPU one), and finding them costs a walk of the metadata plane
 * alone (other planes are skipped by their length), so indexing stays as
 * fast as before and the index no larger. The file is mapped read-only,
 * never copied; answers built from it are cached per index version by the
 * server's response cache, so a module is decoded once per view, not once
 * per request. A file whose size or mtime no longer match the index is
 * refused (it is being re-indexed).
 */
#ifndef XPV_HLO_FILE_H
#define XPV_HLO_FILE_H

#include "../../indexer/readers/hlo_proto.h"
#include <sqlite3.h>

/* Structures of one decoded module are capped at this (a module of a few
 * million instructions); a bigger one answers an error for that module. */
#define XPV_HLO_MODULE_BUDGET ((size_t)1 << 30)

typedef struct {
    void *map;
    size_t size;
    xpv_hlo_blob *blobs; /* the Hlo Proto stats, in metadata order; each
                          * program_id the one its name gives, "(18566)",
                          * or else its metadata id */
    size_t n;
    char *path;       /* the file mapped, as it was when mapped: */
    int64_t mtime_ns; /* see xpv_hlo_file_unchanged */
} xpv_hlo_file;

/* Maps profile id's file and finds its modules. Returns 1 (f filled, n may
 * be 0), 0 when the profile is not an xplane or has no modules (f empty),
 * or -1 with err. */
int xpv_hlo_file_open(sqlite3 *db, int64_t id, xpv_hlo_file *f, xpv_err *err);

/* 0 when f's file still has the size and time it was mapped with; -1 with
 * err when it changed, since its pages may have read as zeros meanwhile
 * (app/shrunk_maps.h): what was decoded from them must not be answered. */
int xpv_hlo_file_unchanged(const xpv_hlo_file *f, xpv_err *err);
void xpv_hlo_file_close(xpv_hlo_file *f);
/* The module named `module`: its metadata name ("jit_dot(79)"), its
 * program id in decimal ("79"), its HloModule name and program id
 * ("jit_dot(79)" for a metadata name without one), or its HloModule name
 * when one module has it. NULL when none. */
const xpv_hlo_blob *xpv_hlo_file_find(const xpv_hlo_file *f, const char *module);
/* The HloModule name of blob b, read without decoding the module; p NULL
 * when it has none. */
xpv_hlo_str xpv_hlo_file_module_name(const xpv_hlo_file *f, const xpv_hlo_blob *b);
/* Decodes blob b of f. 0, or -1 with err naming the module. */
int xpv_hlo_file_decode(const xpv_hlo_file *f, const xpv_hlo_blob *b, xpv_hlo_module *m,
                        xpv_err *err);
/* 1 when profile id has modules, 0 when not: a file that cannot be read
 * has none to show (it never fails). */
int xpv_hlo_file_has_modules(sqlite3 *db, int64_t id);

/* The answer both module routes give (memory_viewer, hlo): 404 "No Data"
 * for a profile without modules, 404 for a module it does not have, else
 * the profile's head and then one(module) when one is named, list() when
 * not. Returns the HTTP status (the profile not indexed: its status). */
typedef struct {
    int (*one)(void *ctx, const xpv_hlo_file *f, const xpv_hlo_blob *bl, xpv_buf *out);
    void (*list)(void *ctx, const xpv_hlo_file *f, xpv_buf *out);
    void *ctx;
} xpv_hlo_answer;
int xpv_hlo_file_answer(sqlite3 *db, int64_t id, const char *module, const xpv_hlo_answer *a,
                        xpv_buf *out);

/* Writes s as a JSON string (null when absent). */
void xpv_hlo_put_str(xpv_buf *b, xpv_hlo_str s);

#endif
