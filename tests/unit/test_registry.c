/*
 * test_registry.c — the format registry (indexer/readers/registry.c): every
 * row complete, the order in which formats claim files, endings and host
 * names, the twin rule, and what a file that cannot be read becomes.
 */
#include "testutil.h"
#include "indexer/readers/readers.h"

#include <string.h>

static const char *const NAMES[] = {
    XPV_FMT_NSYS_REP,     XPV_FMT_XPLANE,  XPV_FMT_NSYS_SQLITE, XPV_FMT_PERFETTO_JSON,
    XPV_FMT_PYTORCH_JSON, XPV_FMT_TF_JSON, XPV_FMT_JAX_JSON,    XPV_FMT_CHROME_JSON};

static const char *sniff(const char *name, const char *head)
{
    size_t n = head ? strlen(head) : 0;
    const unsigned char *h = (const unsigned char *)head;
    size_t i = 0;
    while (h && i < n && h[i] == ' ')
        i++;
    xpv_sniff_input in = {name, NULL, h, n, h && i < n && (h[i] == '{' || h[i] == '[')};
    const xpv_format *f = xpv_format_sniff(&in);
    return f ? f->name : NULL;
}

static void test_rows_complete(void)
{
    for (size_t i = 0; i < sizeof NAMES / sizeof *NAMES; i++) {
        const xpv_format *f = xpv_format_named(NAMES[i]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        CU_ASSERT_STRING_EQUAL(f->name, NAMES[i]);
        CU_ASSERT(f->endings && *f->endings && f->claims);
        CU_ASSERT(f->read || f->explain); /* read, or say why not */
        CU_ASSERT(!f->twin_of || xpv_format_named(f->twin_of));
    }
    CU_ASSERT_PTR_NULL(xpv_format_named(XPV_FMT_UNKNOWN));
    CU_ASSERT_PTR_NULL(xpv_reader_for(XPV_FMT_NSYS_REP));
    CU_ASSERT_PTR_NOT_NULL(xpv_reader_for(XPV_FMT_XPLANE));
    CU_ASSERT(xpv_reader_for(XPV_FMT_JAX_JSON) == xpv_reader_for(XPV_FMT_PYTORCH_JSON));
}

static void test_claim_order(void)
{
    const char *pt = "{\"schemaVersion\":1,\"traceEvents\":[]}";
    CU_ASSERT_STRING_EQUAL(sniff("a.json", pt), XPV_FMT_PYTORCH_JSON);
    /* the name is weaker than PyTorch's content, stronger than TF's */
    CU_ASSERT_STRING_EQUAL(sniff("a.trace.json", pt), XPV_FMT_PYTORCH_JSON);
    CU_ASSERT_STRING_EQUAL(sniff("a.ctf.json", "{\"traceEvents\":[]}"), XPV_FMT_TF_JSON);
    CU_ASSERT_STRING_EQUAL(sniff("h.trace.json.gz", "{\"traceEvents\":[]}"), XPV_FMT_JAX_JSON);
    CU_ASSERT_STRING_EQUAL(sniff("perfetto_trace.json", pt), XPV_FMT_PERFETTO_JSON);
    CU_ASSERT_STRING_EQUAL(sniff("x.json", "not json"), XPV_FMT_CHROME_JSON);
    /* names that decide: whatever the content */
    CU_ASSERT_STRING_EQUAL(sniff("h.xplane.pb", pt), XPV_FMT_XPLANE);
    CU_ASSERT_STRING_EQUAL(sniff("r.nsys-rep", "\x01"), XPV_FMT_NSYS_REP);
    CU_ASSERT_PTR_NULL(sniff("db.sqlite", "not a database"));
    /* a SQLite file is never Chrome JSON, whatever its name: an nsys export
     * (path NULL: the header alone) or nothing */
    const unsigned char db[] = "SQLite format 3"; /* 16 bytes with its NUL, as on disk */
    xpv_sniff_input in = {"x.json", NULL, db, sizeof db, 0};
    CU_ASSERT_STRING_EQUAL(xpv_format_sniff(&in)->name, XPV_FMT_NSYS_SQLITE);
    CU_ASSERT_FALSE(xpv_format_named(XPV_FMT_CHROME_JSON)->claims(&in));
}

/* A JSON document is a trace by its shape, not its name: a manifest or a
 * config is not claimed, while a trace, bare array or cut short, is. */
static void test_json_that_is_no_trace(void)
{
    CU_ASSERT_PTR_NULL(sniff("MANIFEST.json", "{\"made\":\"2026\",\"parts\":{\"a\":\"ok\"}}"));
    CU_ASSERT_PTR_NULL(sniff("config.json", "{\"lr\":0.1,\"layers\":[{\"name\":\"fc\"}]}"));
    CU_ASSERT_PTR_NULL(sniff("list.json", "[{\"name\":\"fc\",\"size\":4}]"));
    CU_ASSERT_PTR_NULL(sniff("ids.json", "[1, 2, 3]"));
    CU_ASSERT_PTR_NULL(sniff("none.json", "{}"));
    CU_ASSERT_PTR_NULL(sniff("none.json.gz", " []"));
    const char *bare = "[{\"name\":\"k\",\"ph\":\"X\",\"ts\":1,\"dur\":2,\"pid\":1,\"tid\":1}]";
    CU_ASSERT_STRING_EQUAL(sniff("bare.json", bare), XPV_FMT_CHROME_JSON);
    CU_ASSERT_STRING_EQUAL(sniff("bare.json.gz", " [ {\"ph\":\"B\""), XPV_FMT_CHROME_JSON);
    /* cut short, or broken after a trace's first bytes: still a trace */
    CU_ASSERT_STRING_EQUAL(sniff("cut.json", "{\"traceEvents\":[{\"ph\":\"X\",\"na"),
                           XPV_FMT_CHROME_JSON);
    CU_ASSERT_STRING_EQUAL(sniff("cut.json", "{\"displayTimeUnit\":\"ns\",\"meta"),
                           XPV_FMT_CHROME_JSON);
    CU_ASSERT_STRING_EQUAL(sniff("cut.json", "["), XPV_FMT_CHROME_JSON);
    CU_ASSERT_STRING_EQUAL(sniff("cut.json", "  {"), XPV_FMT_CHROME_JSON);
    CU_ASSERT_STRING_EQUAL(sniff("bad.json", "{\"traceEvents\": 7}"), XPV_FMT_CHROME_JSON);
    /* not JSON at all: worth opening, to say why it failed */
    CU_ASSERT_STRING_EQUAL(sniff("x.json", "\x01\x02"), XPV_FMT_CHROME_JSON);
    /* a name that says trace decides, whatever the JSON holds */
    CU_ASSERT_STRING_EQUAL(sniff("h.trace.json", "{}"), XPV_FMT_JAX_JSON);
    CU_ASSERT_STRING_EQUAL(sniff("perfetto_trace.json.gz", "{}"), XPV_FMT_PERFETTO_JSON);
    CU_ASSERT_STRING_EQUAL(sniff("w.pt.trace.json", "[]"), XPV_FMT_PYTORCH_JSON);
}

static void test_run_host_flag(void)
{
    CU_ASSERT(xpv_format_named(XPV_FMT_PERFETTO_JSON)->flags & XPV_FORMAT_RUN_HOST);
    for (size_t i = 0; i < sizeof NAMES / sizeof *NAMES; i++)
        if (strcmp(NAMES[i], XPV_FMT_PERFETTO_JSON) != 0)
            CU_ASSERT_FALSE(xpv_format_named(NAMES[i])->flags & XPV_FORMAT_RUN_HOST);
}

static void test_unreadable_files(void)
{
    CU_ASSERT_STRING_EQUAL(sniff("h.xplane.pb", NULL), XPV_FMT_XPLANE);
    CU_ASSERT_STRING_EQUAL(sniff("r.qdrep", NULL), XPV_FMT_NSYS_REP);
    CU_ASSERT_PTR_NULL(sniff("x.json", NULL));   /* content would decide: unknown */
    CU_ASSERT_PTR_NULL(sniff("x.sqlite", NULL)); /* maybe not ours */
}

static void test_endings(void)
{
    CU_ASSERT_EQUAL(xpv_format_ending_len("w.pt.trace.json.gz"), strlen(".pt.trace.json.gz"));
    CU_ASSERT_EQUAL(xpv_format_ending_len("h.trace.json"), strlen(".trace.json"));
    CU_ASSERT_EQUAL(xpv_format_ending_len("h.xplane.pb"), strlen(".xplane.pb"));
    CU_ASSERT_EQUAL(xpv_format_ending_len("e.sqlite3"), strlen(".sqlite3"));
    CU_ASSERT_EQUAL(xpv_format_ending_len("notes.txt"), 0);
    CU_ASSERT_EQUAL(xpv_format_ending_len("json"), 0);
}

static void test_twins(void)
{
    CU_ASSERT_STRING_EQUAL(xpv_format_named(XPV_FMT_JAX_JSON)->twin_of, XPV_FMT_XPLANE);
    CU_ASSERT_PTR_NULL(xpv_format_named(XPV_FMT_PERFETTO_JSON)->twin_of);
    CU_ASSERT_PTR_NULL(xpv_format_named(XPV_FMT_XPLANE)->twin_of);
    char hint[512];
    xpv_format_named(XPV_FMT_NSYS_REP)->explain("/p/run.nsys-rep", hint, sizeof hint);
    CU_ASSERT_PTR_NOT_NULL(strstr(hint, "nsys export --type sqlite --output /p/run.sqlite"));
}

int main(void)
{
    static const xpv_test_case tests[] = {
        {"every row complete", test_rows_complete},
        {"which format claims a file", test_claim_order},
        {"JSON that is no trace is not claimed", test_json_that_is_no_trace},
        {"which files name no host", test_run_host_flag},
        {"files that cannot be read", test_unreadable_files},
        {"endings and host names", test_endings},
        {"twins and explanations", test_twins},
        {NULL, NULL},
    };
    return xpv_test_run("registry", tests, 0);
}
