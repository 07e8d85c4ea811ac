/*
 * test_tool_ops.c — the pure logic under the framework-op and input-pipeline
 * tools (api/tools/tool_ops.c): self time by nesting (siblings, equal spans,
 * launches placed in their innermost op, partial overlap, several threads),
 * op name and type from TensorFlow/JAX/PyTorch names, input-op names, and
 * interval lengths, checked against a brute-force count on random data.
 */
#include "testutil.h"
#include "api/tools/tool_ops.h"

#include <string.h>

static xpv_tool_span span(uint32_t track, int64_t s, int64_t e, uint32_t ref)
{
    return (xpv_tool_span){.track = track, .start = s, .end = e, .seq = ref, .ref = ref};
}

static xpv_tool_span point(uint32_t track, int64_t t, uint32_t ref)
{
    return (xpv_tool_span){
        .track = track, .point = 1, .start = t, .end = t, .seq = ref, .ref = ref};
}

/* The item whose ref is ref, after sorting. */
static const xpv_tool_span *by_ref(const xpv_tool_span *v, size_t n, uint32_t ref)
{
    for (size_t i = 0; i < n; i++)
        if (v[i].ref == ref) return &v[i];
    CU_FAIL("ref not found");
    return &v[0];
}

static uint32_t parent_ref(const xpv_tool_span *v, size_t n, uint32_t ref)
{
    int32_t p = by_ref(v, n, ref)->parent;
    return p < 0 ? 999 : v[p].ref;
}

static void test_self_time_nesting(void)
{
    /* thread 1: A [0,100) holds B [10,40) (which holds C [20,30)) and D
     * [50,90); E [100,120) starts where A ends: a sibling, not a child.
     * A launch at 25 belongs to C, one at 45 to A, one at 100 to E. */
    xpv_tool_span v[] = {
        span(1, 100, 120, 4), point(1, 45, 11), span(1, 20, 30, 2), span(1, 0, 100, 0),
        span(1, 50, 90, 3),   point(1, 25, 10), span(1, 10, 40, 1), point(1, 100, 12),
    };
    size_t n = sizeof v / sizeof v[0];
    xpv_tool_spans_sort(v, n);
    xpv_tool_nest(v, n);
    CU_ASSERT_EQUAL(by_ref(v, n, 0)->child_time, 30 + 40); /* self 30 */
    CU_ASSERT_EQUAL(by_ref(v, n, 1)->child_time, 10);
    CU_ASSERT_EQUAL(by_ref(v, n, 2)->child_time, 0);
    CU_ASSERT_EQUAL(by_ref(v, n, 4)->child_time, 0);
    CU_ASSERT_EQUAL(parent_ref(v, n, 0), 999);
    CU_ASSERT_EQUAL(parent_ref(v, n, 1), 0);
    CU_ASSERT_EQUAL(parent_ref(v, n, 2), 1);
    CU_ASSERT_EQUAL(parent_ref(v, n, 3), 0);
    CU_ASSERT_EQUAL(parent_ref(v, n, 4), 999);
    CU_ASSERT_EQUAL(parent_ref(v, n, 10), 2);
    CU_ASSERT_EQUAL(parent_ref(v, n, 11), 0);
    CU_ASSERT_EQUAL(parent_ref(v, n, 12), 4);
}

static void test_equal_spans_and_threads(void)
{
    /* Two spans with the same start and end (Kineto's whole µs): the first
     * delivered is the parent. Zero-length children count nothing. The same
     * times on thread 2 nest apart from thread 1. */
    xpv_tool_span v[] = {
        span(1, 0, 50, 0), span(1, 0, 50, 1), span(1, 10, 10, 2),
        span(2, 0, 50, 3), span(2, 5, 15, 4), point(2, 60, 5),
    };
    size_t n = sizeof v / sizeof v[0];
    xpv_tool_spans_sort(v, n);
    xpv_tool_nest(v, n);
    CU_ASSERT_EQUAL(parent_ref(v, n, 1), 0);
    CU_ASSERT_EQUAL(by_ref(v, n, 0)->child_time, 50);
    CU_ASSERT_EQUAL(parent_ref(v, n, 2), 1);
    CU_ASSERT_EQUAL(by_ref(v, n, 1)->child_time, 0);
    CU_ASSERT_EQUAL(parent_ref(v, n, 3), 999);
    CU_ASSERT_EQUAL(parent_ref(v, n, 4), 3);
    CU_ASSERT_EQUAL(by_ref(v, n, 3)->child_time, 10);
    CU_ASSERT_EQUAL(parent_ref(v, n, 5), 999); /* after every span: no op */
}

static void test_partial_overlap(void)
{
    /* B [30,80) overlaps A [0,50) without lying inside it: not A's child.
     * C [35,45) lies in both: its innermost holder is B. A's children are
     * none, so its self time stays whole; nothing goes negative. */
    xpv_tool_span v[] = {span(1, 0, 50, 0), span(1, 30, 80, 1), span(1, 35, 45, 2)};
    size_t n = 3;
    xpv_tool_spans_sort(v, n);
    xpv_tool_nest(v, n);
    CU_ASSERT_EQUAL(parent_ref(v, n, 1), 999);
    CU_ASSERT_EQUAL(parent_ref(v, n, 2), 1);
    CU_ASSERT_EQUAL(by_ref(v, n, 0)->child_time, 0);
    CU_ASSERT_EQUAL(by_ref(v, n, 1)->child_time, 10);
}

/* Brute force on random spans, which overlap partially as well as nest:
 * the parent holds its item and starts no earlier than any other holder
 * (the innermost one); no parent means no holder; child time never
 * exceeds the span. */
static void test_random_nesting_against_brute_force(void)
{
    enum { N = 400 };
    static xpv_tool_span v[N];
    uint64_t rng = 88172645463325252ull;
    for (uint32_t i = 0; i < N; i++) {
        int64_t s = (int64_t)(xpv_test_xorshift(&rng) % 1000);
        int64_t len = (int64_t)(xpv_test_xorshift(&rng) % 200);
        v[i] = (i % 5 == 4) ? point(i % 2, s, i) : span(i % 2, s, s + len, i);
    }
    xpv_tool_spans_sort(v, N);
    xpv_tool_nest(v, N);
    for (size_t i = 0; i < N; i++) {
        int64_t latest = -1; /* latest start of a span holding v[i] */
        for (size_t j = 0; j < N; j++) {
            if (j == i || v[j].point || v[j].track != v[i].track) continue;
            if (j > i && v[j].start == v[i].start && v[j].end == v[i].end) continue;
            if (v[j].start <= v[i].start && v[i].end <= v[j].end && v[j].start > latest)
                latest = v[j].start;
        }
        if (v[i].parent >= 0) {
            const xpv_tool_span *p = &v[v[i].parent];
            CU_ASSERT(p->track == v[i].track && !p->point);
            CU_ASSERT(p->start <= v[i].start && v[i].end <= p->end);
            CU_ASSERT_EQUAL(p->start, latest);
        } else {
            CU_ASSERT_EQUAL(latest, -1);
        }
        if (!v[i].point)
            CU_ASSERT(v[i].child_time >= 0 && v[i].child_time <= v[i].end - v[i].start);
    }
}

static void check_op(const char *s, const char *name, const char *type)
{
    xpv_tool_op op;
    xpv_tool_op_parse(s, strlen(s), &op);
    CU_ASSERT_EQUAL(op.name_len, strlen(name));
    CU_ASSERT_NSTRING_EQUAL(op.name, name, op.name_len);
    CU_ASSERT_EQUAL(op.type_len, strlen(type));
    CU_ASSERT_NSTRING_EQUAL(op.type, type, op.type_len);
}

static void test_op_names(void)
{
    check_op("jit(f)/jit(main)/add:", "jit(f)/jit(main)/add", "add");
    check_op("jit(train_step)/jit(main)/transpose(jvp(mlp))/dot_general",
             "jit(train_step)/jit(main)/transpose(jvp(mlp))/dot_general", "dot_general");
    check_op("jit(f)/dot_general[dimension_numbers=(([1], [0]), ([], [])) precision=None]:",
             "jit(f)/dot_general[dimension_numbers=(([1], [0]), ([], [])) precision=None]",
             "dot_general");
    check_op("jit(f)/while/body/a/b:c[x=1/2]", "jit(f)/while/body/a/b", "c[x=1/2]");
    check_op("model/dense/MatMul:MatMul", "model/dense/MatMul", "MatMul");
    check_op("XlaModule:", "XlaModule", "XlaModule");
    check_op("aten::addmm", "aten::addmm", "aten::addmm");
    check_op("ns:a/b", "ns:a/b", "b"); /* a colon in a scope is no type */
    check_op("jit(f)/", "jit(f)/", "jit(f)/");
    check_op("", "", "");
}

static enum xpv_tool_input in(const char *s)
{
    return xpv_tool_input_class(s, strlen(s));
}

static void test_input_names(void)
{
    CU_ASSERT_EQUAL(in("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"),
                    XPV_TOOL_INPUT_LOADER);
    CU_ASSERT_EQUAL(in("_MultiProcessingDataLoaderIter.__next__"), XPV_TOOL_INPUT_LOADER);
    CU_ASSERT_EQUAL(in("DataLoader"), XPV_TOOL_INPUT_LOADER);
    CU_ASSERT_EQUAL(in("next"), XPV_TOOL_INPUT_LOADER);
    CU_ASSERT_EQUAL(in("torch/utils/data/dataloader.py(628): __next__"), XPV_TOOL_INPUT_LOADER);
    CU_ASSERT_EQUAL(in("IteratorGetNext"), XPV_TOOL_INPUT_LOADER);
    CU_ASSERT_EQUAL(in("IteratorGetNextSync"), XPV_TOOL_INPUT_LOADER);
    CU_ASSERT_EQUAL(in("Iterator::Root::Prefetch::Map"), XPV_TOOL_INPUT_LOADER);
    CU_ASSERT_EQUAL(in("infeed"), XPV_TOOL_INPUT_FEED);
    CU_ASSERT_EQUAL(in("infeed.3"), XPV_TOOL_INPUT_FEED);
    CU_ASSERT_EQUAL(in("outfeed.1"), XPV_TOOL_INPUT_FEED);
    CU_ASSERT_EQUAL(in("InfeedEnqueueTuple"), XPV_TOOL_INPUT_FEED);
    CU_ASSERT_EQUAL(in("TransferToInfeedLocked"), XPV_TOOL_INPUT_FEED);
    CU_ASSERT_EQUAL(in("OutfeedDequeueTuple"), XPV_TOOL_INPUT_FEED);
    /* XLA's compiler passes are named after infeed but are no input work */
    CU_ASSERT_EQUAL(in("infeed-token-propagation"), XPV_TOOL_INPUT_NONE);
    CU_ASSERT_EQUAL(in("infeed_flattener"), XPV_TOOL_INPUT_NONE);
    CU_ASSERT_EQUAL(in("outfeed-decomposer"), XPV_TOOL_INPUT_NONE);
    CU_ASSERT_EQUAL(in("my_infeed"), XPV_TOOL_INPUT_NONE);
    CU_ASSERT_EQUAL(in("aten::mm"), XPV_TOOL_INPUT_NONE);
    CU_ASSERT_EQUAL(in("nextafter"), XPV_TOOL_INPUT_NONE);
    CU_ASSERT_EQUAL(in("Iterator"), XPV_TOOL_INPUT_NONE);
    CU_ASSERT_EQUAL(in("dataloader"), XPV_TOOL_INPUT_NONE);
    /* a call stack naming the data loader is no event of it */
    CU_ASSERT_EQUAL(in("torch/utils/data/dataloader.py(518): __next__;train.py(42): <module>"),
                    XPV_TOOL_INPUT_NONE);
}

static void test_intervals(void)
{
    xpv_tool_ival a[] = {{50, 60}, {0, 10}, {5, 20}, {20, 25}, {30, 30}, {40, 45}};
    size_t na = xpv_tool_ivals_normalize(a, 6);
    CU_ASSERT_EQUAL(na, 3); /* [0,25) [40,45) [50,60) */
    CU_ASSERT(a[0].start == 0 && a[0].end == 25 && a[1].start == 40 && a[2].end == 60);
    CU_ASSERT_EQUAL(xpv_tool_ivals_len_in(a, na, 0, 100), 40);
    CU_ASSERT_EQUAL(xpv_tool_ivals_len_in(a, na, 10, 55), 15 + 5 + 5);
    CU_ASSERT_EQUAL(xpv_tool_ivals_len_in(a, na, 25, 40), 0);
    /* host input [0,25) [40,45) [50,60); device busy [5,15) [42,70); infeed [20,30) */
    xpv_tool_ival b[] = {{5, 15}, {42, 70}}, c[] = {{20, 30}};
    /* waits: [0,5) [15,30) [40,42) = 5 + 15 + 2 */
    CU_ASSERT_EQUAL(xpv_tool_wait_len(a, na, b, 2, c, 1, 0, 100), 22);
    CU_ASSERT_EQUAL(xpv_tool_wait_len(a, na, b, 2, c, 1, 3, 41), 2 + 15 + 1);
    CU_ASSERT_EQUAL(xpv_tool_wait_len(a, na, NULL, 0, NULL, 0, 0, 100), 40);
    CU_ASSERT_EQUAL(xpv_tool_wait_len(NULL, 0, b, 2, NULL, 0, 0, 100), 0);
}

static void test_random_wait_against_brute_force(void)
{
    enum { T = 600 };
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    for (int round = 0; round < 50; round++) {
        xpv_tool_ival l[3][20];
        size_t n[3];
        for (int k = 0; k < 3; k++) {
            for (int i = 0; i < 20; i++) {
                int64_t s = (int64_t)(xpv_test_xorshift(&rng) % T);
                l[k][i] = (xpv_tool_ival){s, s + (int64_t)(xpv_test_xorshift(&rng) % 60)};
            }
            n[k] = xpv_tool_ivals_normalize(l[k], (size_t)(xpv_test_xorshift(&rng) % 21));
        }
        int64_t w0 = (int64_t)(xpv_test_xorshift(&rng) % T), w1 = w0 + 150;
        int64_t want = 0, want_a = 0;
        for (int64_t t = w0; t < w1; t++) {
            int inside[3] = {0, 0, 0};
            for (int k = 0; k < 3; k++)
                for (size_t i = 0; i < n[k]; i++)
                    if (l[k][i].start <= t && t < l[k][i].end) inside[k] = 1;
            want += (inside[0] && !inside[1]) || inside[2];
            want_a += inside[0];
        }
        CU_ASSERT_EQUAL(xpv_tool_wait_len(l[0], n[0], l[1], n[1], l[2], n[2], w0, w1), want);
        CU_ASSERT_EQUAL(xpv_tool_ivals_len_in(l[0], n[0], w0, w1), want_a);
    }
}

int main(void)
{
    static const xpv_test_case tests[] = {
        {"self time by nesting, launches in their op", test_self_time_nesting},
        {"equal spans, zero length, threads apart", test_equal_spans_and_threads},
        {"partial overlap is no nesting", test_partial_overlap},
        {"random nesting: every parent holds its child", test_random_nesting_against_brute_force},
        {"op name and type", test_op_names},
        {"input-op names", test_input_names},
        {"interval unions and waits", test_intervals},
        {"random waits against brute force", test_random_wait_against_brute_force},
        {NULL, NULL},
    };
    return xpv_test_run("tool_ops", tests, 0);
}
