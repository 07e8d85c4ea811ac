/*
 * test_discover.c — discovery: formats by name and content, XProf run/host
 * grouping, xplane/trace.json pairing, XProf cache files ignored, symlinks
 * that leave the root not followed, empty files reported, auto-detection.
 */
#define _GNU_SOURCE
#include "testutil.h"
#include "indexer/discover.h"
#include "indexer/readers/readers.h"

#include <stdio.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

static const unsigned char XPLANE_BYTES[] = {0x0a, 0x02, 0x12, 0x00};
static const char TRACE_JSON[] = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[]}";
static const char PYTORCH_JSON[] = "{\"schemaVersion\":1,\"traceEvents\":[]}";
static const char TF_JSON[] = "{\"traceEvents\":[{\"ph\":\"M\",\"name\":\"process_name\","
                              "\"pid\":1,\"args\":{\"name\":\"/job:localhost/replica:0/task:0/"
                              "device:GPU:0 Compute\"}}]}";

static void write_gz(const char *dir, const char *rel, const char *text)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    xpv_test_write(dir, rel, "", 0); /* creates the folders */
    gzFile g = gzopen(path, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    gzwrite(g, text, (unsigned)strlen(text));
    gzclose(g);
}

static const xpv_found *find(const xpv_found_list *l, const char *rel)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->items[i].rel_path, rel) == 0) return &l->items[i];
    return NULL;
}

static void make_tree(const char *d)
{
    const char *run = "logs/plugins/profile/2025_05_06_12_33_01/";
    char rel[512];
    snprintf(rel, sizeof rel, "%shost_a.xplane.pb", run);
    xpv_test_write(d, rel, XPLANE_BYTES, sizeof XPLANE_BYTES);
    snprintf(rel, sizeof rel, "%shost_a.trace.json.gz", run);
    write_gz(d, rel, TRACE_JSON);
    snprintf(rel, sizeof rel, "%shost_b.xplane.pb", run);
    xpv_test_write(d, rel, XPLANE_BYTES, sizeof XPLANE_BYTES);
    snprintf(rel, sizeof rel, "%sperfetto_trace.json.gz", run);
    write_gz(d, rel, TRACE_JSON);
    /* XProf's own cache files are not profiles. */
    snprintf(rel, sizeof rel, "%s.cached_tools.json", run);
    xpv_test_write(d, rel, "{}", 2);
    snprintf(rel, sizeof rel, "%shost_a.op_stats_v2.pb", run);
    xpv_test_write(d, rel, "x", 1);
    snprintf(rel, sizeof rel, "%shost_a.SSTABLE", run);
    xpv_test_write(d, rel, "x", 1);
    write_gz(d, "torch/worker0.1623143089861.pt.trace.json.gz", PYTORCH_JSON);
    xpv_test_write(d, "torch/bert.json", PYTORCH_JSON, sizeof PYTORCH_JSON - 1);
    xpv_test_write(d, "tf/timeline.ctf.json", TF_JSON, sizeof TF_JSON - 1);
    xpv_test_write(d, "notes.txt", "hello", 5);
    xpv_test_write(d, "empty.trace.json", "", 0);
    xpv_test_write(d, "nsys/run.nsys-rep", "NSYS", 4);
}

static void test_formats_and_grouping(void)
{
    const char *d = xpv_test_tmpdir();
    make_tree(d);
    xpv_found_list l;
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL_FATAL(xpv_discover(d, &l, &err), 0);
    CU_ASSERT_EQUAL(l.n, 9);
    const xpv_found *a = find(&l, "logs/plugins/profile/2025_05_06_12_33_01/host_a.xplane.pb");
    const xpv_found *aj = find(&l, "logs/plugins/profile/2025_05_06_12_33_01/host_a.trace.json.gz");
    const xpv_found *pf =
        find(&l, "logs/plugins/profile/2025_05_06_12_33_01/perfetto_trace.json.gz");
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(aj);
    CU_ASSERT_PTR_NOT_NULL_FATAL(pf);
    CU_ASSERT_STRING_EQUAL(a->format, XPV_FMT_XPLANE);
    CU_ASSERT_STRING_EQUAL(a->run, "logs/2025_05_06_12_33_01");
    CU_ASSERT_STRING_EQUAL(a->host, "host_a");
    CU_ASSERT_STRING_EQUAL(aj->format, XPV_FMT_JAX_JSON);
    CU_ASSERT_STRING_EQUAL(pf->format, XPV_FMT_PERFETTO_JSON);
    CU_ASSERT_STRING_EQUAL(pf->host, "perfetto_trace"); /* host_a or host_b: neither */
    CU_ASSERT_EQUAL(pf->companion_of, -1);
    /* The trace.json.gz twin points at its xplane. */
    CU_ASSERT(aj->companion_of >= 0 && &l.items[aj->companion_of] == a);
    CU_ASSERT_EQUAL(a->companion_of, -1);
    const xpv_found *pt = find(&l, "torch/worker0.1623143089861.pt.trace.json.gz");
    CU_ASSERT_PTR_NOT_NULL_FATAL(pt);
    CU_ASSERT_STRING_EQUAL(pt->format, XPV_FMT_PYTORCH_JSON);
    CU_ASSERT_STRING_EQUAL(pt->run, "torch");
    CU_ASSERT_STRING_EQUAL(pt->host, "worker0.1623143089861");
    CU_ASSERT_STRING_EQUAL(find(&l, "torch/bert.json")->format, XPV_FMT_PYTORCH_JSON);
    CU_ASSERT_STRING_EQUAL(find(&l, "tf/timeline.ctf.json")->format, XPV_FMT_TF_JSON);
    CU_ASSERT_STRING_EQUAL(find(&l, "nsys/run.nsys-rep")->format, XPV_FMT_NSYS_REP);
    const xpv_found *empty = find(&l, "empty.trace.json");
    CU_ASSERT_PTR_NOT_NULL_FATAL(empty);
    CU_ASSERT_PTR_NOT_NULL(empty->error);
    CU_ASSERT_PTR_NULL(find(&l, "notes.txt"));
    xpv_found_list_free(&l);
}

static void test_newest_first(void)
{
    const char *d = xpv_test_tmpdir();
    xpv_test_write(d, "a/old.trace.json", TRACE_JSON, sizeof TRACE_JSON - 1);
    xpv_test_write(d, "b/new.trace.json", TRACE_JSON, sizeof TRACE_JSON - 1);
    char path[4096];
    snprintf(path, sizeof path, "%s/a/old.trace.json", d);
    struct timespec times[2] = {{1000000000, 0}, {1000000000, 0}};
    CU_ASSERT_EQUAL(utimensat(AT_FDCWD, path, times, 0), 0);
    xpv_found_list l;
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL_FATAL(xpv_discover(d, &l, &err), 0);
    CU_ASSERT_EQUAL_FATAL(l.n, 2);
    CU_ASSERT_STRING_EQUAL(l.items[0].rel_path, "b/new.trace.json");
    xpv_found_list_free(&l);
}

static void test_symlinks_stay_inside(void)
{
    const char *d = xpv_test_tmpdir();
    char root[1024], outside[1024], link[4096], loop[4096];
    snprintf(root, sizeof root, "%s/root", d);
    snprintf(outside, sizeof outside, "%s/outside", d);
    xpv_test_write(d, "outside/secret.trace.json", TRACE_JSON, sizeof TRACE_JSON - 1);
    xpv_test_write(d, "root/in/own.trace.json", TRACE_JSON, sizeof TRACE_JSON - 1);
    snprintf(link, sizeof link, "%s/escape", root);
    CU_ASSERT_EQUAL(symlink(outside, link), 0);
    snprintf(link, sizeof link, "%s/in/alias.trace.json", root);
    CU_ASSERT_EQUAL(symlink("own.trace.json", link), 0);
    snprintf(loop, sizeof loop, "%s/in/loop", root);
    CU_ASSERT_EQUAL(symlink("..", loop), 0);
    xpv_found_list l;
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL_FATAL(xpv_discover(root, &l, &err), 0);
    CU_ASSERT_PTR_NULL(find(&l, "escape/secret.trace.json"));
    CU_ASSERT_PTR_NOT_NULL(find(&l, "in/own.trace.json"));
    CU_ASSERT_PTR_NOT_NULL(find(&l, "in/alias.trace.json"));
    CU_ASSERT(l.n <= 3); /* the loop is walked at most once */
    xpv_found_list_free(&l);
}

static void test_single_file_and_missing(void)
{
    const char *d = xpv_test_tmpdir();
    xpv_test_write(d, "one.trace.json", TRACE_JSON, sizeof TRACE_JSON - 1);
    char path[4096];
    snprintf(path, sizeof path, "%s/one.trace.json", d);
    xpv_found_list l;
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL_FATAL(xpv_discover(path, &l, &err), 0);
    CU_ASSERT_EQUAL(l.n, 1);
    CU_ASSERT_STRING_EQUAL(l.items[0].rel_path, "one.trace.json");
    CU_ASSERT_STRING_EQUAL(l.root_abs, d);
    xpv_found_list_free(&l);
    snprintf(path, sizeof path, "%s/does-not-exist", d);
    CU_ASSERT_EQUAL(xpv_discover(path, &l, &err), -1);
    CU_ASSERT(strstr(err.msg, "does-not-exist") != NULL);
    xpv_found_list_free(&l);
}

typedef struct {
    int answer, calls;
} admit_state;

static int admit_stub(void *ctx, const char *rel, int64_t size, int64_t mtime_ns)
{
    (void)rel, (void)size, (void)mtime_ns;
    admit_state *a = ctx;
    a->calls++;
    return a->answer;
}

static void set_mtime(const char *dir, const char *rel, int64_t mtime_ns)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    struct timespec t[2] = {{mtime_ns / 1000000000, mtime_ns % 1000000000},
                            {mtime_ns / 1000000000, mtime_ns % 1000000000}};
    CU_ASSERT_EQUAL(utimensat(AT_FDCWD, path, t, 0), 0);
}

/* Walking again: known files are taken from the last walk unread, new or
 * changed ones are read only once admitted. */
static void test_discover_again(void)
{
    const char *d = xpv_test_tmpdir();
    /* Same size; only the first says PyTorch (schemaVersion). */
    const char json[] = "{\"schemaVersion\":1,\"traceEvents\":[]}",
               junk[] = "{\"schemaVersiom\":1,\"traceEvents\":[]}";
    CU_ASSERT_EQUAL_FATAL(sizeof json, sizeof junk);
    xpv_test_write(d, "t.json", json, sizeof json - 1);
    set_mtime(d, "t.json", 1000000000000000000LL);
    xpv_found_list l1, l2, l3;
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL_FATAL(xpv_discover(d, &l1, &err), 0);
    CU_ASSERT_EQUAL_FATAL(l1.n, 1);
    CU_ASSERT_STRING_EQUAL(l1.items[0].format, XPV_FMT_PYTORCH_JSON);
    /* Same size and mtime, other bytes: not read again, so still listed. */
    xpv_test_write(d, "t.json", junk, sizeof junk - 1);
    set_mtime(d, "t.json", 1000000000000000000LL);
    admit_state a = {1, 0};
    CU_ASSERT_EQUAL_FATAL(xpv_discover_again(d, &l1, admit_stub, &a, &l2, &err), 0);
    CU_ASSERT_EQUAL(a.calls, 0);
    CU_ASSERT_EQUAL_FATAL(l2.n, 1);
    CU_ASSERT_STRING_EQUAL(l2.items[0].format, XPV_FMT_PYTORCH_JSON);
    CU_ASSERT_EQUAL(l2.items[0].companion_of, -1);
    /* A new file and a changed one, not yet settled: the new one is left
     * out, the changed one keeps its last entry. */
    xpv_test_write(d, "new.pt.trace.json", json, sizeof json - 1);
    set_mtime(d, "t.json", 1000000001000000000LL);
    a = (admit_state){0, 0};
    CU_ASSERT_EQUAL_FATAL(xpv_discover_again(d, &l2, admit_stub, &a, &l3, &err), 0);
    CU_ASSERT_EQUAL(a.calls, 2);
    CU_ASSERT_EQUAL_FATAL(l3.n, 1);
    CU_ASSERT_STRING_EQUAL(l3.items[0].rel_path, "t.json");
    CU_ASSERT_EQUAL(l3.items[0].mtime_ns, 1000000000000000000LL);
    xpv_found_list_free(&l3);
    /* Settled: both are read, the changed one at its new mtime. */
    a = (admit_state){1, 0};
    CU_ASSERT_EQUAL_FATAL(xpv_discover_again(d, &l2, admit_stub, &a, &l3, &err), 0);
    CU_ASSERT_EQUAL(a.calls, 2);
    const xpv_found *t = find(&l3, "t.json"), *n = find(&l3, "new.pt.trace.json");
    CU_ASSERT_PTR_NOT_NULL_FATAL(n);
    CU_ASSERT_STRING_EQUAL(n->format, XPV_FMT_PYTORCH_JSON);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(t->mtime_ns, 1000000001000000000LL);
    CU_ASSERT_STRING_EQUAL(t->format, XPV_FMT_CHROME_JSON);
    xpv_found_list_free(&l1);
    xpv_found_list_free(&l2);
    xpv_found_list_free(&l3);
}

static void test_sniff(void)
{
    const unsigned char sqlite[] = "SQLite format 3";
    CU_ASSERT_STRING_EQUAL(xpv_sniff_format("x.sqlite", sqlite, sizeof sqlite, 0),
                           XPV_FMT_NSYS_SQLITE);
    CU_ASSERT_PTR_NULL(xpv_sniff_format("x.sqlite", (const unsigned char *)"nope", 4, 0));
    const unsigned char bom[] = "\xEF\xBB\xBF  [ {\"ph\":\"X\"} ]";
    CU_ASSERT_STRING_EQUAL(xpv_sniff_format("t.json", bom, sizeof bom - 1, 0), XPV_FMT_CHROME_JSON);
    CU_ASSERT_STRING_EQUAL(xpv_sniff_format("perfetto_trace.json.gz", bom, sizeof bom - 1, 1),
                           XPV_FMT_PERFETTO_JSON);
    /* Garbage under a trace name is claimed, so its error can be shown. */
    CU_ASSERT_STRING_EQUAL(
        xpv_sniff_format("h.trace.json.gz", (const unsigned char *)"\x01\x02", 2, 0),
        XPV_FMT_CHROME_JSON);
}

static const char *host_of(const xpv_found_list *l, const char *rel)
{
    const xpv_found *f = find(l, rel);
    return f ? f->host : "(not listed)";
}

/* JAX's perfetto_trace.json.gz names no host: it takes the one host of
 * its run folder, whenever that host's files are seen. */
static void test_perfetto_takes_run_host(void)
{
    const char *d = xpv_test_tmpdir();
    const char *run = "p/plugins/profile/2026_01_01_00_00_00/";
    char rel[512], pf[512];
    snprintf(pf, sizeof pf, "%sperfetto_trace.json.gz", run);
    write_gz(d, pf, TRACE_JSON);
    write_gz(d, "alone/perfetto_trace.json.gz", TRACE_JSON);
    xpv_found_list l1, l2;
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL_FATAL(xpv_discover(d, &l1, &err), 0);
    CU_ASSERT_STRING_EQUAL(host_of(&l1, pf), "perfetto_trace"); /* no host beside it yet */
    snprintf(rel, sizeof rel, "%svm.xplane.pb", run);
    xpv_test_write(d, rel, XPLANE_BYTES, sizeof XPLANE_BYTES);
    snprintf(rel, sizeof rel, "%svm.trace.json.gz", run);
    write_gz(d, rel, TRACE_JSON);
    CU_ASSERT_EQUAL_FATAL(xpv_discover_again(d, &l1, NULL, NULL, &l2, &err), 0);
    CU_ASSERT_EQUAL(l2.n, 4);
    CU_ASSERT_STRING_EQUAL(host_of(&l2, pf), "vm");
    CU_ASSERT_EQUAL(find(&l2, pf)->companion_of, -1);
    CU_ASSERT_STRING_EQUAL(host_of(&l2, "alone/perfetto_trace.json.gz"), "perfetto_trace");
    xpv_found_list_free(&l1);
    xpv_found_list_free(&l2);
    /* --compare's merge: the file alone first, then its run folder */
    char file[4096], dir[4096];
    snprintf(file, sizeof file, "%s/%s", d, pf);
    snprintf(dir, sizeof dir, "%s/%s", d, run);
    CU_ASSERT_EQUAL_FATAL(xpv_discover(file, &l1, &err), 0);
    CU_ASSERT_STRING_EQUAL(host_of(&l1, "perfetto_trace.json.gz"), "perfetto_trace");
    CU_ASSERT_EQUAL_FATAL(xpv_discover(dir, &l2, &err), 0);
    xpv_found_list_merge(&l1, &l2);
    CU_ASSERT_STRING_EQUAL(host_of(&l1, "perfetto_trace.json.gz"), "vm");
    xpv_found_list_free(&l1);
}

/* JSON files are traces by their content: a manifest or a config beside
 * the profiles is not listed; a bare array of events and a broken trace
 * are, plain or gzip'd. */
static void test_json_that_is_no_trace(void)
{
    const char *d = xpv_test_tmpdir();
    static const char manifest[] = "{\n \"made\": \"2026-11-26\",\n \"parts\": {\"a\": \"ok\"}\n}";
    static const char config[] = "{\"lr\": 0.1, \"layers\": [{\"name\": \"fc\"}]}";
    static const char bare[] = "[{\"name\":\"k\",\"ph\":\"X\",\"ts\":1,\"dur\":2,\"pid\":1}]";
    static const char broken[] = "{\"traceEvents\":[{\"name\":\"k\",\"ph\":\"X\",\"ts";
    xpv_test_write(d, "MANIFEST.json", manifest, sizeof manifest - 1);
    xpv_test_write(d, "cfg/config.json", config, sizeof config - 1);
    write_gz(d, "cfg/config.json.gz", config);
    xpv_test_write(d, "t/bare.json", bare, sizeof bare - 1);
    write_gz(d, "t/bare.json.gz", bare);
    xpv_test_write(d, "t/broken.json", broken, sizeof broken - 1);
    write_gz(d, "t/broken.json.gz", broken);
    xpv_found_list l;
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL_FATAL(xpv_discover(d, &l, &err), 0);
    CU_ASSERT_EQUAL(l.n, 4);
    CU_ASSERT_PTR_NULL(find(&l, "MANIFEST.json"));
    CU_ASSERT_PTR_NULL(find(&l, "cfg/config.json"));
    CU_ASSERT_PTR_NULL(find(&l, "cfg/config.json.gz"));
    static const char *const traces[] = {"t/bare.json", "t/bare.json.gz", "t/broken.json",
                                         "t/broken.json.gz"};
    for (size_t i = 0; i < sizeof traces / sizeof *traces; i++) {
        const xpv_found *f = find(&l, traces[i]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        CU_ASSERT_STRING_EQUAL(f->format, XPV_FMT_CHROME_JSON);
    }
    xpv_found_list_free(&l);
    /* given as the one file: not a profile, and said so */
    char path[4096];
    snprintf(path, sizeof path, "%s/MANIFEST.json", d);
    CU_ASSERT_EQUAL(xpv_discover(path, &l, &err), -1);
    CU_ASSERT(strstr(err.msg, "not a profile") != NULL);
    xpv_found_list_free(&l);
}

static void test_autodetect(void)
{
    const char *d = xpv_test_tmpdir();
    xpv_test_write(d, "profiles/older/x.trace.json", "[]", 2);
    xpv_test_write(d, "exp/profiles/newer/x.trace.json", "[]", 2);
    char older[4096];
    snprintf(older, sizeof older, "%s/profiles/older", d);
    struct timespec times[2] = {{1000000000, 0}, {1000000000, 0}};
    utimensat(AT_FDCWD, older, times, 0);
    char out[4096];
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL(xpv_autodetect_profile_dir(d, out, sizeof out, &err), 0);
    CU_ASSERT(strstr(out, "exp/profiles/newer") != NULL);
    const char *empty = xpv_test_tmpdir();
    CU_ASSERT_EQUAL(xpv_autodetect_profile_dir(empty, out, sizeof out, &err), -1);
    CU_ASSERT(strstr(err.msg, "profiles") != NULL);
}

/* --compare's two sides under one root: the run folder and one file of it. */
static void test_merge_keeps_twins(void)
{
    const char *d = xpv_test_tmpdir();
    make_tree(d);
    char run[2048], file[4096];
    snprintf(run, sizeof run, "%s/logs/plugins/profile/2025_05_06_12_33_01", d);
    snprintf(file, sizeof file, "%s/host_a.trace.json.gz", run);
    xpv_found_list one, all;
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL_FATAL(xpv_discover(file, &one, &err), 0);
    CU_ASSERT_EQUAL_FATAL(xpv_discover(run, &all, &err), 0);
    CU_ASSERT_EQUAL_FATAL(one.n, 1);
    CU_ASSERT_EQUAL(one.items[0].companion_of, -1); /* alone, its xplane unseen */
    size_t n = all.n;
    xpv_found_list_merge(&one, &all);
    CU_ASSERT_EQUAL(one.n, n);
    CU_ASSERT_EQUAL(all.n, 0);
    CU_ASSERT_PTR_NULL(all.items);
    for (size_t i = 0; i < one.n; i++)
        for (size_t k = i + 1; k < one.n; k++)
            CU_ASSERT(strcmp(one.items[i].abs_path, one.items[k].abs_path) != 0);
    const xpv_found *twin = find(&one, "host_a.trace.json.gz");
    const xpv_found *xplane = find(&one, "host_a.xplane.pb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(twin);
    CU_ASSERT_PTR_NOT_NULL_FATAL(xplane);
    CU_ASSERT(twin->companion_of >= 0 && &one.items[twin->companion_of] == xplane);
    CU_ASSERT_EQUAL(xplane->companion_of, -1);
    xpv_found_list_free(&one);
    xpv_found_list_free(&all);
}

int main(void)
{
    static const xpv_test_case tests[] = {
        {"formats, runs, hosts, pairs, caches ignored", test_formats_and_grouping},
        {"newest first", test_newest_first},
        {"symlinks never leave the root", test_symlinks_stay_inside},
        {"one file as root; missing root", test_single_file_and_missing},
        {"content sniffing", test_sniff},
        {"merging two sides keeps twins", test_merge_keeps_twins},
        {"walking again: known files unread, new ones once admitted", test_discover_again},
        {"perfetto_trace.json.gz takes its run's host", test_perfetto_takes_run_host},
        {"JSON that is no trace is not listed", test_json_that_is_no_trace},
        {"auto-detection like the old script", test_autodetect},
        {NULL, NULL},
    };
    return xpv_test_run("discover", tests, 0);
}
