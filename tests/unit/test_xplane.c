/*
 * test_xplane.c — the xplane reader on hand-built XSpace bytes, through the
 * recording sink of xplane_testutil.h: the mapping, stat kinds, ref_value and compressed strings,
 * `name#k=v#` splitting, display names and ids, classification, and every
 * bad-input case (errors name the byte offset). With $XPV_FIXTURES, also
 * the MI300X fixtures' kernels and their launch shapes.
 */
#define _GNU_SOURCE
#include "xplane_testutil.h"
#include "app/shrunk_maps.h"

#include <zlib.h>

/* ---- a GPU plane ---- */

enum { S_CORR = 1, S_KD, S_HLO_OP, S_OCC, S_MEMCPY, S_NEG, S_KD_TEXT = 50 };
static const char *const KD = "regs:32 static_shared:0 dynamic_shared:1024 grid:10,2,1 "
                              "block:256,1,1 occ_pct:50";

static void gpu_plane(msg *plane)
{
    static msg line, ev, ev2, ev3, line2, line3;
    plane->n = line.n = ev.n = ev2.n = ev3.n = line2.n = line3.n = 0;
    put_int(plane, 1, 3);
    put_str(plane, 2, "/device:GPU:3");
    /* kernel at 1000 ns + 2500 ps, 1999 ps long */
    put_int(&ev, 1, 1);
    put_int(&ev, 2, 2500);
    put_int(&ev, 3, 1999);
    stat_int(&ev, 4, S_CORR, 3, 77);
    stat_int(&ev, 4, S_KD, 7, S_KD_TEXT);
    stat_bytes(&ev, 4, S_HLO_OP, 5, "fusion.1", 8);
    stat_double(&ev, S_OCC, 37.5);
    stat_int(&ev, 4, S_NEG, 4, -5);
    /* an event before the line start: offset -1500 ps */
    put_int(&ev2, 1, 1);
    put_int(&ev2, 2, -1500);
    put_int(&ev2, 3, 10);
    put_int(&line, 1, -7); /* negative line id: the tid */
    put_str(&line, 2, "Stream #16(Kernel)");
    put_int(&line, 3, 1000);
    put_msg(&line, 4, &ev);
    put_msg(&line, 4, &ev2);
    put_msg(plane, 3, &line);
    /* memcpy stream: direction by line; by name on MemcpyOther */
    put_int(&ev3, 1, 2);
    put_int(&ev3, 2, 0);
    stat_int(&ev3, 4, S_MEMCPY, 7, S_KD_TEXT + 1);
    put_int(&line2, 1, 8);
    put_str(&line2, 2, "Stream #8(MemcpyOther)");
    put_int(&line2, 10, 9);
    put_str(&line2, 11, "Shown");
    put_msg(&line2, 4, &ev3);
    put_msg(plane, 3, &line2);
    put_meta(plane, 4, 1, "long_kernel_name_from_the_driver", "short_kernel", NULL);
    put_meta(plane, 4, 2, "CopyDeviceToHost", NULL, NULL);
    put_meta(plane, 5, S_CORR, "correlation_id", NULL, NULL);
    put_meta(plane, 5, S_KD, "kernel_details", NULL, NULL);
    put_meta(plane, 5, S_HLO_OP, "hlo_op", NULL, NULL);
    put_meta(plane, 5, S_OCC, "theoretical_occupancy_pct", NULL, NULL);
    put_meta(plane, 5, S_MEMCPY, "memcpy_details", NULL, NULL);
    put_meta(plane, 5, S_NEG, "delta", NULL, NULL);
    put_meta(plane, 5, S_KD_TEXT, KD, NULL, NULL);
    put_meta(plane, 5, S_KD_TEXT + 1, "kind:Pinned size:4 dest:0 async:1", NULL, NULL);
    stat_bytes(plane, 6, 60, 5, "Acme", 4);
    put_meta(plane, 5, 60, "device_vendor", NULL, NULL);
}

static void test_gpu_kernel(void)
{
    static msg plane, space;
    gpu_plane(&plane);
    space_of(&space, &plane);
    xpv_err err;
    CU_ASSERT_EQUAL_FATAL(read_bytes(space.b, space.n, &err), 0);
    CU_ASSERT_EQUAL_FATAL(rec.nevs, 3);
    const rec_event *k = &rec.evs[0];
    CU_ASSERT_STRING_EQUAL(k->name, "short_kernel"); /* display name wins */
    CU_ASSERT_EQUAL(k->pid, 4);                      /* 1 + plane id, as JAX's converter */
    CU_ASSERT_EQUAL(k->tid, -7);
    CU_ASSERT_EQUAL(k->ev.ts_ns, 1002);
    CU_ASSERT_EQUAL(k->ev.dur_ps, 1999);
    CU_ASSERT_EQUAL(k->ev.dur_ns, 1);
    CU_ASSERT_EQUAL(k->ev.kind, XPV_KIND_KERNEL);
    CU_ASSERT_EQUAL(k->ev.corr, 77);
    CU_ASSERT_FATAL(k->has_launch);
    CU_ASSERT_EQUAL(k->launch.grid[1], 2);
    CU_ASSERT_EQUAL(k->launch.block[0], 256);
    CU_ASSERT_EQUAL(k->launch.registers_per_thread, 32);
    CU_ASSERT_EQUAL(k->launch.dynamic_shared_bytes, 1024);
    CU_ASSERT_DOUBLE_EQUAL(k->launch.occupancy_pct, 37.5, 1e-9); /* the stat beats occ_pct */
    CU_ASSERT_STRING_EQUAL(k->op, "fusion.1");
    const rec_arg *a = arg_of(k, "kernel_details"); /* ref_value -> the referenced name */
    CU_ASSERT(a && a->type == XPV_ARG_STR && strcmp(a->text, KD) == 0);
    a = arg_of(k, "correlation_id");
    CU_ASSERT(a && a->type == XPV_ARG_UINT && a->u == 77);
    a = arg_of(k, "theoretical_occupancy_pct");
    CU_ASSERT(a && a->type == XPV_ARG_DOUBLE && a->d == 37.5);
    a = arg_of(k, "delta");
    CU_ASSERT(a && a->type == XPV_ARG_INT && a->i == -5);
    CU_ASSERT_EQUAL(rec.evs[1].ev.ts_ns, 998); /* floor(-1.5 ns) */
    const rec_event *m = &rec.evs[2];
    CU_ASSERT_EQUAL(m->ev.kind, XPV_KIND_MEMCPY_D2H);
    /* no duration_ps field (proto3 leaves 0 out): a zero-length event, not "no duration" */
    CU_ASSERT_EQUAL(m->ev.dur_ps, 0);
    CU_ASSERT_EQUAL(m->ev.dur_ns, 0);
    CU_ASSERT_EQUAL(m->tid, 9); /* display id */
    CU_ASSERT_EQUAL(rec.ntracks, 2);
    CU_ASSERT_STRING_EQUAL(rec.tracks[1].thread_name, "Shown");
    CU_ASSERT_EQUAL(rec.tracks[1].sort, 1);
    CU_ASSERT_EQUAL(rec.procs[0].device, 3);
    CU_ASSERT_STRING_EQUAL(rec.procs[0].name, "/device:GPU:3");
    CU_ASSERT_PTR_NOT_NULL(strstr(rec.facts, "device=GPU:3 (Acme)\n"));
    /* every scalar plane stat, for the run environment and the roofline */
    CU_ASSERT_PTR_NOT_NULL(strstr(rec.facts, "device.GPU:3.device_vendor=Acme\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(rec.facts, "producer=JAX/XLA\n"));
}

/* ---- host plane: annotations, launches, values ---- */

static void test_host_annotations_and_values(void)
{
    static msg plane, space, line, ev1, ev2, ev3, st;
    plane.n = line.n = ev1.n = ev2.n = ev3.n = st.n = 0;
    put_str(&plane, 2, "/host:CPU");
    put_int(&ev1, 1, 1);
    put_int(&ev1, 2, 0); /* offset 0, still a timed event */
    put_int(&ev1, 3, 5000);
    put_int(&ev2, 1, 2);
    put_int(&ev2, 2, 100000);
    stat_int(&ev2, 4, 1, 3, 4242); /* correlation_id */
    uint8_t gz[256];
    uLongf gzn = sizeof gz;
    const char *text = "a long compressed string value";
    CU_ASSERT_FATAL(compress2(gz, &gzn, (const Bytef *)text, strlen(text), 9) == Z_OK);
    stat_bytes(&ev2, 4, 2, 8, gz, gzn);
    stat_bytes(&ev2, 4, 3, 6, "\x0a\x0b\x0c", 3);
    uint8_t blob[100] = {0};
    stat_bytes(&ev2, 4, 4, 6, blob, sizeof blob);
    put_int(&ev3, 1, 3);
    put_int(&ev3, 5, 12); /* num_occurrences: an aggregate */
    put_int(&line, 1, 77);
    put_str(&line, 2, "python");
    put_int(&line, 3, 1000000);
    put_msg(&line, 4, &ev1);
    put_msg(&line, 4, &ev2);
    put_msg(&line, 4, &ev3);
    put_msg(&plane, 3, &line);
    put_meta(&plane, 4, 1, "train#step_num=7,_r=1,tag=abc,neg=-3#", NULL, NULL);
    put_meta(&plane, 4, 2, "cuLaunchKernel", NULL, NULL);
    put_meta(&plane, 4, 3, "aggregated", NULL, NULL);
    put_meta(&plane, 5, 1, "correlation_id", NULL, NULL);
    put_meta(&plane, 5, 2, "compressed", NULL, NULL);
    put_meta(&plane, 5, 3, "small_bytes", NULL, NULL);
    put_meta(&plane, 5, 4, "big_bytes", NULL, NULL);
    space_of(&space, &plane);
    put_str(&space, 4, "host-a");
    xpv_err err;
    CU_ASSERT_EQUAL_FATAL(read_bytes(space.b, space.n, &err), 0);
    CU_ASSERT_EQUAL_FATAL(rec.nevs, 2);
    CU_ASSERT_EQUAL(rec.skipped, 1);
    const rec_event *s = event_named("train");
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_EQUAL(s->ev.kind, XPV_KIND_STEP);
    CU_ASSERT_EQUAL(s->ev.step, 7);
    CU_ASSERT_EQUAL(s->ev.step_src, XPV_STEP_ANNOTATION);
    CU_ASSERT_EQUAL(s->ev.ts_ns, 1000000);
    CU_ASSERT_EQUAL(s->pid, 701);
    const rec_arg *a = arg_of(s, "step_num");
    CU_ASSERT(a && a->type == XPV_ARG_INT && a->i == 7);
    a = arg_of(s, "_r");
    CU_ASSERT(a && a->type == XPV_ARG_INT && a->i == 1);
    a = arg_of(s, "neg");
    CU_ASSERT(a && a->type == XPV_ARG_INT && a->i == -3);
    a = arg_of(s, "tag");
    CU_ASSERT(a && a->type == XPV_ARG_STR && strcmp(a->text, "abc") == 0);
    const rec_event *l = event_named("cuLaunchKernel");
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    CU_ASSERT_EQUAL(l->ev.kind, XPV_KIND_LAUNCH);
    CU_ASSERT_EQUAL(l->ev.corr, 4242);
    a = arg_of(l, "compressed");
    CU_ASSERT(a && a->type == XPV_ARG_TEXT && strcmp(a->text, text) == 0);
    a = arg_of(l, "small_bytes");
    CU_ASSERT(a && a->type == XPV_ARG_TEXT && strcmp(a->text, "0a0b0c") == 0);
    a = arg_of(l, "big_bytes");
    CU_ASSERT(a && a->type == XPV_ARG_TEXT && strcmp(a->text, "<100 bytes>") == 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(rec.facts, "hostname=host-a\n"));
}

/* ---- TPU lines and event-metadata stats ---- */

static void test_tpu_lines_and_metadata_stats(void)
{
    static msg plane, space, ops, mods, steps, ev, mstats, task;
    plane.n = ops.n = mods.n = steps.n = ev.n = mstats.n = task.n = 0;
    put_int(&plane, 1, 10);
    put_str(&plane, 2, "/device:TPU:1");
    put_int(&ev, 1, 1);
    put_int(&ev, 2, 5);
    stat_int(&ev, 4, 2, 4, 5); /* flops = 5 overrides the metadata's 100 */
    put_str(&ops, 2, "XLA Ops");
    put_msg(&ops, 4, &ev);
    ev.n = 0;
    put_int(&ev, 1, 2);
    put_int(&ev, 2, 5);
    put_str(&mods, 2, "XLA Modules");
    put_msg(&mods, 4, &ev);
    ev.n = 0;
    put_int(&ev, 1, 3);
    put_int(&ev, 2, 5);
    put_str(&steps, 2, "Steps");
    put_msg(&steps, 4, &ev);
    put_msg(&plane, 3, &ops);
    put_msg(&plane, 3, &mods);
    put_msg(&plane, 3, &steps);
    stat_bytes(&mstats, 5, 1, 5, "loop fusion", 11);
    stat_int(&mstats, 5, 2, 4, 100);
    put_meta(&plane, 4, 1, "%fusion.3 = f32[8] fusion(...)", "fusion.3", &mstats);
    put_meta(&plane, 4, 2, "jit_step(123)", NULL, NULL);
    put_meta(&plane, 4, 3, "12", NULL, NULL);
    put_meta(&plane, 5, 1, "hlo_category", NULL, NULL);
    put_meta(&plane, 5, 2, "flops", NULL, NULL);
    stat_bytes(&plane, 6, 3, 5, "TPU v9", 6);
    put_meta(&plane, 5, 3, "device_type_string", NULL, NULL);
    put_str(&task, 2, "Task Environment");
    stat_int(&task, 6, 1, 3, 1234);
    put_meta(&task, 5, 1, "profile_start_time", NULL, NULL);
    space.n = 0;
    put_msg(&space, 1, &plane);
    put_msg(&space, 1, &task);
    xpv_err err;
    CU_ASSERT_EQUAL_FATAL(read_bytes(space.b, space.n, &err), 0);
    CU_ASSERT_EQUAL_FATAL(rec.nevs, 3);
    const rec_event *op = event_named("fusion.3");
    CU_ASSERT_PTR_NOT_NULL_FATAL(op);
    CU_ASSERT_EQUAL(op->ev.kind, XPV_KIND_XLA_OP);
    CU_ASSERT_EQUAL(op->ev.nargs, 2);
    const rec_arg *a = arg_of(op, "flops");
    CU_ASSERT(a && a->type == XPV_ARG_INT && a->i == 5);
    a = arg_of(op, "hlo_category");
    CU_ASSERT(a && a->type == XPV_ARG_STR && strcmp(a->text, "loop fusion") == 0);
    CU_ASSERT_EQUAL(event_named("jit_step(123)")->ev.kind, XPV_KIND_XLA_MODULE);
    const rec_event *st = event_named("12");
    CU_ASSERT_EQUAL(st->ev.kind, XPV_KIND_STEP);
    CU_ASSERT_EQUAL(st->ev.step, 12);
    CU_ASSERT_EQUAL(st->ev.step_src, XPV_STEP_STEPS_LINE);
    CU_ASSERT_EQUAL(op->pid, 11);
    CU_ASSERT_PTR_NOT_NULL(strstr(rec.facts, "device=TPU:1 (TPU v9)\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(rec.facts, "profile_start_time=1234\n"));
}

/* A TPU plane `name` stating the roofline's peak figures as plane stats. */
static void peak_plane(msg *plane, const char *name, double tflops, double hbm)
{
    msg st = {.n = 0};
    plane->n = 0;
    put_str(plane, 2, name);
    put_int(&st, 1, 1);
    put_double(&st, 2, tflops);
    put_msg(plane, 6, &st);
    st.n = 0;
    put_int(&st, 1, 2);
    put_double(&st, 2, hbm);
    put_msg(plane, 6, &st);
    put_meta(plane, 5, 1, "peak_teraflops_per_second", NULL, NULL);
    put_meta(plane, 5, 2, "peak_hbm_bw_gigabytes_per_second", NULL, NULL);
}

/* Peak figures become facts (shortest exact text) when every device plane
 * states the same; planes that disagree leave a warning instead. */
static void test_device_peak_facts(void)
{
    static msg a, b, space;
    peak_plane(&a, "/device:TPU:0", 918, 1637.993152512);
    peak_plane(&b, "/device:TPU:1", 918, 819.0);
    space.n = 0;
    put_msg(&space, 1, &a);
    put_msg(&space, 1, &b);
    xpv_err err;
    CU_ASSERT_EQUAL_FATAL(read_bytes(space.b, space.n, &err), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(rec.facts, "peak_teraflops_per_second=918\n"));
    /* no profile-wide fact (each plane's own device.TPU:N.<stat> stays) */
    CU_ASSERT_PTR_NULL(strstr(rec.facts, "\npeak_hbm_bw_gigabytes_per_second="));
    CU_ASSERT_NOT_EQUAL(strncmp(rec.facts, "peak_hbm_bw_gigabytes_per_second=", 33), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(rec.facts, "different peak_hbm_bw_gigabytes_per_second"));
    peak_plane(&b, "/device:TPU:1", 918, 1637.993152512);
    space.n = 0;
    put_msg(&space, 1, &a);
    put_msg(&space, 1, &b);
    CU_ASSERT_EQUAL_FATAL(read_bytes(space.b, space.n, &err), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(rec.facts, "peak_hbm_bw_gigabytes_per_second=1637.993152512\n"));
}

/* ---- damaged but usable ---- */

static void test_missing_metadata_warns(void)
{
    static msg plane, space, line, ev, entry;
    plane.n = line.n = ev.n = entry.n = 0;
    put_str(&plane, 2, "/host:CPU");
    put_int(&ev, 1, 42); /* no such event metadata */
    put_int(&ev, 2, 1);
    stat_int(&ev, 4, 99, 4, 3);  /* no such stat metadata */
    stat_int(&ev, 4, 1, 7, 123); /* ref_value to a missing one */
    put_str(&line, 2, "t");
    put_msg(&line, 4, &ev);
    put_msg(&plane, 3, &line);
    put_meta(&plane, 5, 1, "ref", NULL, NULL);
    put_int(&entry, 1, 5); /* a map entry with a key and no value */
    put_msg(&plane, 4, &entry);
    space_of(&space, &plane);
    xpv_err err;
    CU_ASSERT_EQUAL_FATAL(read_bytes(space.b, space.n, &err), 0);
    CU_ASSERT_EQUAL_FATAL(rec.nevs, 1);
    CU_ASSERT_STRING_EQUAL(rec.evs[0].name, "42");
    const rec_arg *a = arg_of(&rec.evs[0], "99");
    CU_ASSERT(a && a->type == XPV_ARG_INT && a->i == 3);
    a = arg_of(&rec.evs[0], "ref");
    CU_ASSERT(a && a->type == XPV_ARG_STR && strcmp(a->text, "123") == 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(rec.facts, "1 events refer to missing event metadata"));
    CU_ASSERT_PTR_NOT_NULL(strstr(rec.facts, "2 stats refer to missing stat metadata"));
    CU_ASSERT_PTR_NOT_NULL(strstr(rec.facts, "without key or value (first at byte offset"));
}

/* ---- bad input: errors with offsets ---- */

static void expect_fail(const void *data, size_t n, const char *what)
{
    xpv_err err;
    CU_ASSERT_EQUAL(read_bytes(data, n, &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "offset"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, what));
    if (!strstr(err.msg, what) || !strstr(err.msg, "offset"))
        fprintf(stderr, "\n  got \"%s\", wanted \"%s\"\n", err.msg, what);
}

static void test_bad_input(void)
{
    static msg plane, space, bad, ev, line, st;
    gpu_plane(&plane);
    space_of(&space, &plane);
    expect_fail("", 0, "empty file");
    /* truncated: every cut of a valid file fails cleanly or reads a prefix */
    for (size_t cut = 1; cut < space.n; cut += 7) {
        xpv_err err;
        int rc = read_bytes(space.b, cut, &err);
        CU_ASSERT(rc == -1 && strstr(err.msg, "offset") != NULL);
    }
    expect_fail(space.b, space.n / 2, "runs past the end");
    const char *json = "{\"traceEvents\":[{\"ph\":\"X\"}]}";
    expect_fail(json, strlen(json), "wire type 3");
    const uint8_t unknown_only[] = {0x28, 0x01, 0x30, 0x02}; /* fields 5, 6: no XSpace */
    expect_fail(unknown_only, sizeof unknown_only, "not an xplane.pb");
    /* a varint longer than 10 bytes inside an event */
    bad.n = ev.n = line.n = 0;
    put_varint(&ev, 1 << 3);
    for (int i = 0; i < 11; i++)
        ev.b[ev.n++] = 0xFF;
    ev.b[ev.n++] = 0x01;
    put_msg(&line, 4, &ev);
    put_msg(&bad, 3, &line);
    space_of(&space, &bad);
    expect_fail(space.b, space.n, "longer than 10 bytes");
    /* wrong wire types: plane name as a varint; event offset as bytes; stat double as varint */
    bad.n = 0;
    put_int(&bad, 2, 5);
    space_of(&space, &bad);
    expect_fail(space.b, space.n, "XPlane field 2 has wire type 0");
    bad.n = ev.n = line.n = 0;
    put_bytes(&ev, 2, "ab", 2);
    put_msg(&line, 4, &ev);
    put_msg(&bad, 3, &line);
    space_of(&space, &bad);
    expect_fail(space.b, space.n, "XEvent field 2 has wire type 2");
    bad.n = ev.n = line.n = st.n = 0;
    put_int(&st, 2, 7);
    put_msg(&ev, 4, &st);
    put_msg(&line, 4, &ev);
    put_msg(&bad, 3, &line);
    space_of(&space, &bad);
    expect_fail(space.b, space.n, "XStat field 2 has wire type 0");
    space.n = 0;
    put_int(&space, 1, 3); /* XSpace planes as a varint */
    expect_fail(space.b, space.n, "XSpace field 1 has wire type 0");
    /* a map entry whose key is a string */
    bad.n = st.n = 0;
    put_str(&st, 1, "key");
    put_msg(&bad, 4, &st);
    space_of(&space, &bad);
    expect_fail(space.b, space.n, "map entry field 1 has wire type 2");
}

static void test_events_before_an_error_are_kept(void)
{
    static msg plane, space;
    gpu_plane(&plane);
    space.n = 0;
    put_msg(&space, 1, &plane);
    size_t good = space.n;
    put_msg(&space, 1, &plane);
    xpv_err err;
    CU_ASSERT_EQUAL(read_bytes(space.b, good + 20, &err), -1);
    CU_ASSERT_EQUAL(rec.nevs, 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "length prefix"));
}

/* The rest of a file cut shorter under the reader reads as zeros (not a
 * SIGBUS that ends the server): the read fails and says why. */
static void test_file_cut_while_read(void)
{
    static msg plane, space;
    gpu_plane(&plane);
    space.n = 0;
    while (space.n + plane.n + 16 < sizeof space.b) /* pages past the first event */
        put_msg(&space, 1, &plane);
    const char *dir = xpv_test_tmpdir();
    CU_ASSERT_FATAL(xpv_test_write(dir, "cut.xplane.pb", space.b, space.n) == 0);
    char path[512];
    snprintf(path, sizeof path, "%s/cut.xplane.pb", dir);
    CU_ASSERT_FATAL(xpv_shrunk_maps_guard() == 0);
    long zeroed = xpv_shrunk_maps_pages();
    rec_reset();
    cut_on_first_event = path;
    xpv_err err = {{0}};
    CU_ASSERT_EQUAL(xpv_reader_for(XPV_FMT_XPLANE)(path, (xpv_sink *)&rec, &err), -1);
    CU_ASSERT_PTR_NULL(cut_on_first_event);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "changed while it was read"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "now 0)"));
    CU_ASSERT(xpv_shrunk_maps_pages() > zeroed);
}

/* ---- the MI300X fixtures ---- */

/* ---- the promise that no device work is left ---- */

static int is_device_work(unsigned kind)
{
    return kind == XPV_KIND_KERNEL || kind == XPV_KIND_MEMSET || kind == XPV_KIND_XLA_OP ||
           (kind >= XPV_KIND_MEMCPY_H2D && kind <= XPV_KIND_MEMCPY_OTHER);
}

/* 1 when every device-work event came before the promise. */
static int promise_kept(void)
{
    for (size_t i = (size_t)rec.device_work_done_at; i < rec.nevs; i++)
        if (is_device_work(rec.evs[i].ev.kind)) return 0;
    return 1;
}

static void host_plane(msg *plane)
{
    static msg line, ev;
    plane->n = line.n = ev.n = 0;
    put_str(plane, 2, "/host:CPU");
    put_int(&ev, 1, 1);
    put_int(&ev, 2, 100);
    put_int(&ev, 3, 5000);
    put_int(&line, 1, 5);
    put_msg(&line, 4, &ev);
    put_msg(&line, 4, &ev);
    put_msg(plane, 3, &line);
    put_meta(plane, 4, 1, "host work", NULL, NULL);
}

/* plane with a second name field, which wins (protobuf: the last one does) */
static void renamed_plane(msg *out, const msg *plane, const char *name)
{
    memcpy(out->b, plane->b, plane->n);
    out->n = plane->n;
    put_str(out, 2, name);
}

static void test_device_work_done(void)
{
    static msg gpu, host, space;
    gpu_plane(&gpu);
    host_plane(&host);
    xpv_err err;
    /* GPU, host: promised once, right after the GPU plane's 3 events */
    space.n = 0;
    put_msg(&space, 1, &gpu);
    put_msg(&space, 1, &host);
    CU_ASSERT_EQUAL_FATAL(read_bytes(space.b, space.n, &err), 0);
    CU_ASSERT_EQUAL(rec.nevs, 5);
    CU_ASSERT_EQUAL(rec.device_work_done_calls, 1);
    CU_ASSERT_EQUAL(rec.device_work_done_at, 3);
    /* host, GPU, host, GPU (named by its last name field), host: after the last GPU plane */
    static msg renamed;
    renamed_plane(&renamed, &gpu, "/device:GPU:5");
    space.n = 0;
    put_msg(&space, 1, &host);
    put_msg(&space, 1, &gpu);
    put_msg(&space, 1, &host);
    put_msg(&space, 1, &renamed);
    put_msg(&space, 1, &host);
    CU_ASSERT_EQUAL_FATAL(read_bytes(space.b, space.n, &err), 0);
    CU_ASSERT_EQUAL(rec.nevs, 12);
    CU_ASSERT_EQUAL(rec.device_work_done_calls, 1);
    CU_ASSERT_EQUAL(rec.device_work_done_at, 10);
    CU_ASSERT(promise_kept());
    /* a plane first named like a device but renamed to a host: no device plane at all */
    renamed_plane(&renamed, &gpu, "/host:CPU");
    space.n = 0;
    put_msg(&space, 1, &renamed);
    CU_ASSERT_EQUAL_FATAL(read_bytes(space.b, space.n, &err), 0);
    CU_ASSERT_EQUAL(rec.device_work_done_calls, 0);
    CU_ASSERT(rec.nevs > 0 && promise_kept() == 1);
}

static void read_fixture(const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/xplane/%s", xpv_test_fixtures(), name);
    xpv_err err = {{0}};
    rec_reset();
    CU_ASSERT_EQUAL_FATAL(xpv_reader_for(XPV_FMT_XPLANE)(path, (xpv_sink *)&rec, &err), 0);
}

static void test_mi300x_kernels(void)
{
    if (!xpv_test_fixtures()) {
        printf("(skipped: no $XPV_FIXTURES) ");
        return;
    }
    read_fixture("jax-rocm-mi300x-gemm.xplane.pb");
    int kernels = 0, shaped = 0;
    for (size_t i = 0; i < rec.nevs; i++) {
        const rec_event *e = &rec.evs[i];
        if (e->ev.kind != XPV_KIND_KERNEL) continue;
        kernels++;
        if (arg_of(e, "kernel_details") && e->has_launch && e->launch.grid[0] > 0 &&
            e->launch.block[0] > 0)
            shaped++;
    }
    CU_ASSERT_EQUAL(kernels, 54); /* SOURCES.md: 54 device events on two kernel streams */
    CU_ASSERT_EQUAL(shaped, 54);
    const rec_event *g = event_named("wrapped_broadcast.kd");
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT_STRING_EQUAL(g->op, "wrapped_broadcast");
    read_fixture("jax-rocm-mi300x-conv-8gpu.xplane.pb");
    kernels = shaped = 0;
    int d2d = 0;
    for (size_t i = 0; i < rec.nevs; i++) {
        const rec_event *e = &rec.evs[i];
        d2d += e->ev.kind == XPV_KIND_MEMCPY_D2D;
        if (e->ev.kind != XPV_KIND_KERNEL) continue;
        kernels++;
        /* regs:2191500840 does not fit: unknown (-1), never 0; grid and block known */
        shaped += e->launch.grid[0] > 0 && e->launch.block[0] == 256 &&
                  e->launch.registers_per_thread == -1 && e->launch.static_shared_bytes == 32462;
    }
    CU_ASSERT_EQUAL(kernels, 25);
    CU_ASSERT_EQUAL(shaped, 25);
    CU_ASSERT_EQUAL(d2d, 53); /* GPU:0's four MemcpyOther streams: CopyDeviceToDevice */
    CU_ASSERT_EQUAL(rec.device_work_done_calls, 1);
    CU_ASSERT(rec.device_work_done_at > 0 && promise_kept());
    rec_reset();
}

int main(void)
{
    static const xpv_test_case tests[] = {
        {"GPU kernel: mapping, stats, ref_value, launch", test_gpu_kernel},
        {"host: name#k=v# split, launches, compressed and bytes values",
         test_host_annotations_and_values},
        {"TPU lines, event-metadata stats merged, facts", test_tpu_lines_and_metadata_stats},
        {"device peak figures as facts", test_device_peak_facts},
        {"missing metadata: ids as names, warnings", test_missing_metadata_warns},
        {"bad input: errors with byte offsets", test_bad_input},
        {"events before an error are kept", test_events_before_an_error_are_kept},
        {"a file cut shorter while read: an error, not a crash", test_file_cut_while_read},
        {"no device work promised after the last GPU/TPU plane", test_device_work_done},
        {"MI300X fixtures: kernels with launch shapes", test_mi300x_kernels},
        {NULL, NULL},
    };
    int rc = xpv_test_run("xplane", tests, 0);
    rec_reset();
    return rc;
}
