/*
 * gen_jax.c — writes JAX-style profile directories: per run folder
 * plugins/profile/<YYYY_MM_DD_HH_MM_SS>/, one <host>.xplane.pb per host and
 * (unless --no-json) the matching <host>.trace.json.gz with the same events,
 * in the shape JAX's converter writes.
 *
 * Shape of one host's XSpace: /host:metadata (the `Hlo Proto` of the one
 * module, written by gen_jax_hlo.c, whose instructions are the kernels'
 * hlo_op names with shapes), one /device:GPU:N plane per device (streams `(MemcpyH2D)`, `(Kernel)`
 * compute, `(Kernel)` collectives, `(MemcpyD2H)`, and a derived `XLA
 * Modules` line; kernel_details, hlo_op, tf_op, hlo_module, memcpy_details
 * stored as ref_value into the stat metadata as the GPU tracer does), a
 * /host:CPU plane (`python` tracer line, the main thread with
 * StepTraceAnnotation and TraceAnnotation ranges, one `Host Threads/<tid>`
 * launch thread per device whose cuLaunchKernel / cudaMemcpyAsync events carry
 * the device events' correlation_id), and `Task Environment`.
 *
 * Every step runs the same XLA program of K kernels (K chosen so each file
 * comes out near --size); the timeline is a pure function of (seed, host,
 * device), so each line can be generated on its own, twice: once to measure
 * its size (protobuf needs lengths first) and once to write it. Nothing grows
 * with the file's size except the program tables, so a 1 GB file streams out
 * in a few MB of memory.
 */
#define _POSIX_C_SOURCE 200809L
#include "gen_jax.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <zlib.h>

#define RUN_EPOCH_S 1746534781LL /* 2025-05-06 12:33:01 UTC */
#define PS_PER_US 1000000LL
#define BYTES_PER_KERNEL 92 /* kernel + launch + a share of host events, measured */
#define BYTES_PER_OP 190    /* an op's metadata on each GPU plane */
#define MAX_DISTINCT_OPS 20000
#define PID_HOST 701
#define MAIN_TID 4811
#define PYTHON_TID 4810

/* ---- output: a buffer that is written out, or only counted (gen_jax.h) ---- */

/* Where finished bytes go: counted only, or written to a file. */
typedef struct {
    FILE *f;    /* NULL: count only */
    uint64_t n; /* bytes so far */
    pbuf buf;
    int failed;
} sink_out;

static void out_flush(sink_out *o)
{
    if (o->f && o->buf.len && fwrite(o->buf.p, 1, o->buf.len, o->f) != o->buf.len) o->failed = 1;
    o->n += o->buf.len;
    o->buf.len = 0;
}

static void out_maybe_flush(sink_out *o)
{
    if (o->buf.len >= (1u << 20)) out_flush(o);
}

/* ---- the JSON twin ---- */

typedef struct {
    gzFile gz; /* NULL: no JSON */
    int first;
    long long events;
    char line[4096];
} json_out;

static void json_escape(char *dst, size_t cap, const char *s)
{
    size_t n = 0;
    for (; *s && n + 7 < cap; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            dst[n++] = '\\', dst[n++] = (char)c;
        else if (c < 0x20)
            n += (size_t)snprintf(dst + n, cap - n, "\\u%04x", c);
        else
            dst[n++] = (char)c;
    }
    dst[n] = 0;
}

static void json_put(json_out *j, const char *text)
{
    if (!j->gz) return;
    gzputs(j->gz, j->first ? "\n" : ",\n");
    gzputs(j->gz, text);
    j->first = 0;
}

static void json_meta(json_out *j, int64_t pid, int64_t tid, const char *what, const char *name,
                      int64_t sort)
{
    char esc[512], text[800];
    if (!j->gz) return;
    if (name) {
        json_escape(esc, sizeof esc, name);
        snprintf(text, sizeof text,
                 "{\"ph\":\"M\",\"pid\":%lld,\"tid\":%lld,\"name\":\"%s\",\"args\":{\"name\":"
                 "\"%s\"}}",
                 (long long)pid, (long long)tid, what, esc);
    } else {
        snprintf(text, sizeof text,
                 "{\"ph\":\"M\",\"pid\":%lld,\"tid\":%lld,\"name\":\"%s\",\"args\":{"
                 "\"sort_index\":%lld}}",
                 (long long)pid, (long long)tid, what, (long long)sort);
    }
    json_put(j, text);
}

/* ---- the program every step runs ---- */

static const char *const TF_OPS[] = {
    "jit(train_step)/jit(main)/jvp(MLP)/dot_general",
    "jit(train_step)/jit(main)/transpose(jvp(MLP))/dot_general",
    "jit(train_step)/jit(main)/jvp(LayerNorm)/reduce_sum",
    "jit(train_step)/jit(main)/jvp(Attention)/softmax",
    "jit(train_step)/jit(main)/optax/adam/mul",
    "jit(train_step)/jit(main)/psum",
};
#define N_TF_OPS (sizeof TF_OPS / sizeof TF_OPS[0])

static const char *const FUSION_KINDS[] = {"loop_multiply",  "loop_add",      "input_reduce",
                                           "loop_convert",   "loop_select",   "input_scatter",
                                           "loop_broadcast", "loop_transpose"};
static const char *const GEMM_KERNELS[] = {
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_"
    "segment_k_off_kernel__5x_cublas",
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize256x128x64_warpgroupsize2x1x1_execute_"
    "segment_k_off_kernel__5x_cublas",
    "cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_256x128_32x3_tn_align8",
};
static const char *const COLLECTIVE_KERNELS[] = {"ncclDevKernel_AllReduce_Sum_bf16_RING_LL",
                                                 "ncclDevKernel_AllGather_RING_LL",
                                                 "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL"};
static const char *const COLLECTIVE_OPS[] = {"all-reduce", "all-gather", "reduce-scatter"};

/* Stat metadata ids (per GPU plane); refs are numbered after these. */
enum {
    ST_CORRELATION_ID = 1,
    ST_KERNEL_DETAILS,
    ST_HLO_OP,
    ST_HLO_MODULE,
    ST_PROGRAM_ID,
    ST_TF_OP,
    ST_MEMCPY_DETAILS,
    ST_RUN_ID,
    ST_DEVICE_VENDOR,
    ST_CLOCK_RATE,
    ST_CORE_COUNT,
    ST_MEMORY_SIZE,
    ST_MEMORY_BANDWIDTH,
    ST_CC_MAJOR,
    ST_CC_MINOR,
    ST_FIXED_COUNT
};
static const char *const GPU_STAT_NAMES[ST_FIXED_COUNT] = {"",
                                                           "correlation_id",
                                                           "kernel_details",
                                                           "hlo_op",
                                                           "hlo_module",
                                                           "program_id",
                                                           "tf_op",
                                                           "memcpy_details",
                                                           "run_id",
                                                           "device_vendor",
                                                           "clock_rate",
                                                           "core_count",
                                                           "memory_size",
                                                           "memory_bandwidth",
                                                           "compute_cap_major",
                                                           "compute_cap_minor"};

/* Ref values after the fixed stats: module name, tf ops, memcpy details, then
 * per op: details text and hlo_op name. */
#define REF_MODULE ST_FIXED_COUNT
#define REF_TF_OP0 (REF_MODULE + 1)
#define REF_MEMCPY_H2D (REF_TF_OP0 + (int)N_TF_OPS)
#define REF_MEMCPY_D2H (REF_MEMCPY_H2D + 1)
#define REF_OPS0 (REF_MEMCPY_D2H + 1)

/* Event metadata ids on GPU planes. */
enum { EM_MEMCPY_H2D = 1, EM_MEMCPY_D2H, EM_MODULE, EM_OPS0 };

#define H2D_BYTES 16777216
#define D2H_BYTES 4

static int64_t rand_range(uint64_t *s, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(xpv_gen_rand(s) % (uint64_t)(hi - lo + 1));
}

static void make_op(op *p, int j, uint64_t *rng)
{
    int r = (int)rand_range(rng, 0, 99);
    p->type = r < 6 ? OP_COLLECTIVE : r < 26 ? OP_GEMM : OP_FUSION;
    p->tf_op = p->type == OP_COLLECTIVE ? (int)N_TF_OPS - 1 : (int)rand_range(rng, 0, N_TF_OPS - 2);
    int grid = (int)rand_range(rng, 1, 4096), block = 64 << rand_range(rng, 0, 4);
    int regs = (int)rand_range(rng, 16, 168), shm = (int)rand_range(rng, 0, 48) * 1024;
    double occ = (double)rand_range(rng, 125, 1000) / 10.0;
    if (p->type == OP_FUSION) {
        const char *k = FUSION_KINDS[rand_range(rng, 0, 7)];
        snprintf(p->kernel, sizeof p->kernel, "%s_fusion_%d", k, j);
        snprintf(p->hlo_op, sizeof p->hlo_op, "%s_fusion.%d", k, j);
        p->base_dur_ps = rand_range(rng, 2, 40) * PS_PER_US + rand_range(rng, 0, 999999);
    } else if (p->type == OP_GEMM) {
        snprintf(p->kernel, sizeof p->kernel, "%s", GEMM_KERNELS[rand_range(rng, 0, 2)]);
        snprintf(p->hlo_op, sizeof p->hlo_op, "custom-call.%d", j);
        p->base_dur_ps = rand_range(rng, 20, 400) * PS_PER_US + rand_range(rng, 0, 999999);
    } else {
        int c = (int)rand_range(rng, 0, 2);
        snprintf(p->kernel, sizeof p->kernel, "%s", COLLECTIVE_KERNELS[c]);
        snprintf(p->hlo_op, sizeof p->hlo_op, "%s.%d", COLLECTIVE_OPS[c], j);
        p->base_dur_ps = rand_range(rng, 50, 800) * PS_PER_US + rand_range(rng, 0, 999999);
    }
    snprintf(p->details, sizeof p->details,
             "regs:%d static_shared:%d dynamic_shared:%d grid:%d,1,1 block:%d,1,1 occ_pct:%.1f",
             regs, shm / 2, shm - shm / 2, grid, block, occ);
}

/* Event metadata ids: one per distinct kernel name (several ops can share a
 * gemm or collective kernel name). */
static void number_kernel_names(program *pg)
{
    uint32_t next = EM_OPS0;
    for (int j = 0; j < pg->distinct; j++) {
        op *p = &pg->ops[j];
        p->event_meta = 0;
        for (int i = 0; i < j && !p->event_meta; i++)
            if (pg->ops[i].type != OP_FUSION && strcmp(pg->ops[i].kernel, p->kernel) == 0)
                p->event_meta = pg->ops[i].event_meta;
        if (!p->event_meta) p->event_meta = next++;
        p->details_ref = (uint32_t)(REF_OPS0 + 2 * j);
        p->hlo_op_ref = (uint32_t)(REF_OPS0 + 2 * j + 1);
    }
}

static int program_init(program *pg, const xpv_gen_opts *o, int run)
{
    memset(pg, 0, sizeof *pg);
    pg->o = o;
    /* size = devices * (K * steps * per kernel + distinct ops * per op) */
    int64_t per_step = o->size_bytes / ((int64_t)o->devices *
                                        ((int64_t)o->steps * BYTES_PER_KERNEL + BYTES_PER_OP));
    if (per_step > MAX_DISTINCT_OPS)
        per_step = (o->size_bytes - (int64_t)o->devices * MAX_DISTINCT_OPS * BYTES_PER_OP) /
                   ((int64_t)o->devices * o->steps * BYTES_PER_KERNEL);
    pg->kernels = per_step < 8 ? 8 : per_step > 5000000 ? 5000000 : (int)per_step;
    pg->distinct = pg->kernels < MAX_DISTINCT_OPS ? pg->kernels : MAX_DISTINCT_OPS;
    pg->ops = calloc((size_t)pg->distinct, sizeof *pg->ops);
    if (!pg->ops) return -1;
    uint64_t rng = o->seed * 0x9E3779B97F4A7C15ULL + 17 + (uint64_t)run;
    int64_t sum = 0;
    for (int j = 0; j < pg->distinct; j++)
        make_op(&pg->ops[j], j, &rng);
    for (int k = 0; k < pg->kernels; k++)
        sum += pg->ops[k % pg->distinct].base_dur_ps;
    number_kernel_names(pg);
    /* jitter <= 10%, gaps <= 3 us, memcpys <= 250 us, launch lead 10 us */
    pg->period_ps = sum + sum / 10 + (int64_t)pg->kernels * 3 * PS_PER_US + 400 * PS_PER_US;
    pg->period_ps = (pg->period_ps / PS_PER_US + 1) * PS_PER_US;
    pg->t0_ns = (RUN_EPOCH_S + (int64_t)run * 3723) * 1000000000LL;
    pg->python_per_step = pg->kernels / 16 < 4 ? 4 : pg->kernels / 16;
    return 0;
}

/* ---- one device's timeline ---- */

enum dev_item { IT_H2D, IT_KERNEL, IT_D2H, IT_MODULE };

typedef struct {
    int type; /* enum dev_item */
    int step;
    const op *op;
    int64_t start_ps, dur_ps; /* from the profile start */
    int64_t corr;
} dev_event;

typedef void (*dev_visit)(void *ctx, const dev_event *e);

static uint64_t device_seed(const program *pg, int host, int dev)
{
    return pg->o->seed * 0xD1B54A32D192ED03ULL + (uint64_t)host * 7919 + (uint64_t)dev * 104729 + 1;
}

/* Walks every device-side event of device `dev` on `host`, in time order. */
static void walk_device(const program *pg, int host, int dev, dev_visit fn, void *ctx)
{
    uint64_t rng = device_seed(pg, host, dev);
    int64_t corr = 1 + (int64_t)dev * ((int64_t)pg->o->steps * (pg->kernels + 2) + 1);
    for (int s = 0; s < pg->o->steps; s++) {
        int64_t t = (int64_t)s * pg->period_ps + 30 * PS_PER_US + rand_range(&rng, 0, 9999) * 1000;
        dev_event e = {IT_H2D, s, NULL, t, rand_range(&rng, 50, 200) * PS_PER_US, corr++};
        fn(ctx, &e);
        t += e.dur_ps + rand_range(&rng, 1, 3) * PS_PER_US;
        int64_t module_start = t;
        for (int k = 0; k < pg->kernels; k++) {
            const op *p = &pg->ops[k % pg->distinct];
            int64_t dur = p->base_dur_ps + p->base_dur_ps / 100 * rand_range(&rng, -10, 10);
            dev_event ke = {IT_KERNEL, s, p, t, dur, corr++};
            fn(ctx, &ke);
            t += dur + rand_range(&rng, 1000, 3000) * 1000;
        }
        dev_event me = {IT_MODULE, s, NULL, module_start, t - module_start, -1};
        fn(ctx, &me);
        dev_event de = {IT_D2H, s, NULL, t, rand_range(&rng, 5, 20) * PS_PER_US, corr++};
        fn(ctx, &de);
    }
}

/* ---- writing lines ---- */

typedef struct {
    const program *pg;
    pbuf *line; /* the XLine being built */
    pbuf ev, st;
    json_out *json;
    int64_t pid, tid;
    int want;        /* which dev_item (or OP_* stream filter below) the line holds */
    int collectives; /* kernel streams: 1 = collective stream, 0 = compute */
    int dev;
    sink_out *out;
} line_writer;

static void stat_ref(pbuf *ev, pbuf *st, uint32_t meta, uint32_t ref)
{
    st->len = 0;
    pb_uint(st, 1, meta);
    pb_uint(st, 7, ref);
    pb_msg(ev, 4, st);
}

static void stat_u64(pbuf *ev, pbuf *st, uint32_t meta, uint64_t v)
{
    st->len = 0;
    pb_uint(st, 1, meta);
    pb_uint(st, 3, v);
    pb_msg(ev, 4, st);
}

static void stat_i64(pbuf *ev, pbuf *st, uint32_t meta, int64_t v)
{
    st->len = 0;
    pb_uint(st, 1, meta);
    pb_uint(st, 4, (uint64_t)v);
    pb_msg(ev, 4, st);
}

/* Appends the finished event in w->ev (metadata id, times, stats) to the line. */
static void put_event(line_writer *w, uint32_t meta, int64_t start_ps, int64_t dur_ps,
                      const pbuf *stats)
{
    pbuf *e = &w->st; /* reuse: stats were built into w->ev by the caller */
    e->len = 0;
    pb_uint(e, 1, meta);
    pb_uint(e, 2, (uint64_t)start_ps); /* oneof member: written even when 0 */
    pb_uint_nz(e, 3, (uint64_t)dur_ps);
    if (stats->len) pb_raw(e, stats->p, stats->len);
    pb_msg(w->line, 4, e);
    if (w->out && w->line->len >= (1u << 20)) {
        pb_raw(&w->out->buf, w->line->p, w->line->len);
        w->line->len = 0;
        out_maybe_flush(w->out);
    }
}

/* The JSON X event for the same event; args are strings as JAX writes them. */
static void json_event(line_writer *w, const char *name, int64_t start_ps, int64_t dur_ps,
                       const char *args)
{
    json_out *j = w->json;
    if (!j || !j->gz) return;
    int64_t ts_ns = w->pg->t0_ns + start_ps / 1000, dur_ns = dur_ps / 1000;
    char esc[256];
    json_escape(esc, sizeof esc, name);
    snprintf(j->line, sizeof j->line,
             "{\"ph\":\"X\",\"pid\":%lld,\"tid\":%lld,\"ts\":%lld.%03d,\"dur\":%lld.%03d,"
             "\"name\":\"%s\"%s%s%s}",
             (long long)w->pid, (long long)w->tid, (long long)(ts_ns / 1000), (int)(ts_ns % 1000),
             (long long)(dur_ns / 1000), (int)(dur_ns % 1000), esc, args ? ",\"args\":{" : "",
             args ? args : "", args ? "}" : "");
    json_put(j, j->line);
    j->events++;
}

static void device_line_visit(void *ctx, const dev_event *e)
{
    line_writer *w = ctx;
    if (e->type != w->want) return;
    if (e->type == IT_KERNEL && (e->op->type == OP_COLLECTIVE) != w->collectives) return;
    const program *pg = w->pg;
    char args[1024];
    w->ev.len = 0;
    if (e->type == IT_MODULE) {
        stat_i64(&w->ev, &w->st, ST_PROGRAM_ID, PROGRAM_ID);
        stat_u64(&w->ev, &w->st, ST_RUN_ID, (uint64_t)e->step + 1);
        put_event(w, EM_MODULE, e->start_ps, e->dur_ps, &w->ev);
        snprintf(args, sizeof args, "\"program_id\":\"%d\",\"run_id\":\"%d\"", PROGRAM_ID,
                 e->step + 1);
        json_event(w, "jit_train_step", e->start_ps, e->dur_ps, args);
        return;
    }
    stat_u64(&w->ev, &w->st, ST_CORRELATION_ID, (uint64_t)e->corr);
    if (e->type == IT_KERNEL) {
        const op *p = e->op;
        stat_ref(&w->ev, &w->st, ST_KERNEL_DETAILS, p->details_ref);
        stat_ref(&w->ev, &w->st, ST_TF_OP, (uint32_t)(REF_TF_OP0 + p->tf_op));
        stat_ref(&w->ev, &w->st, ST_HLO_OP, p->hlo_op_ref);
        stat_ref(&w->ev, &w->st, ST_HLO_MODULE, REF_MODULE);
        stat_i64(&w->ev, &w->st, ST_PROGRAM_ID, PROGRAM_ID);
        put_event(w, p->event_meta, e->start_ps, e->dur_ps, &w->ev);
        snprintf(args, sizeof args,
                 "\"correlation_id\":\"%lld\",\"hlo_module\":\"jit_train_step\",\"hlo_op\":"
                 "\"%s\",\"kernel_details\":\"%s\",\"program_id\":\"%d\",\"tf_op\":\"%s\"",
                 (long long)e->corr, p->hlo_op, p->details, PROGRAM_ID, TF_OPS[p->tf_op]);
        json_event(w, p->kernel, e->start_ps, e->dur_ps, args);
        return;
    }
    int h2d = e->type == IT_H2D;
    stat_ref(&w->ev, &w->st, ST_MEMCPY_DETAILS, h2d ? REF_MEMCPY_H2D : REF_MEMCPY_D2H);
    put_event(w, h2d ? EM_MEMCPY_H2D : EM_MEMCPY_D2H, e->start_ps, e->dur_ps, &w->ev);
    snprintf(args, sizeof args, "\"correlation_id\":\"%lld\",\"memcpy_details\":\"%s\"",
             (long long)e->corr,
             h2d ? "kind:Pinned size:16777216 dest:0 async:1"
                 : "kind:Pinned size:4 dest:0 async:1");
    json_event(w, h2d ? "MemcpyH2D" : "MemcpyD2H", e->start_ps, e->dur_ps, args);
    (void)pg;
}

/* ---- lines of the host plane ---- */

/* Host event metadata ids. */
enum { HM_LAUNCH = 1, HM_MEMCPY, HM_STEP, HM_DATA, HM_EXECUTE, HM_PY_LOOP, HM_PY_STEP, HM_PY0 };
/* Host stat metadata ids. */
enum { HS_CORRELATION_ID = 1, HS_DEVICE_ID, HS_STEP_NUM, HS_ROOT, HS_BATCH, HS_COUNT };
static const char *const HOST_STAT_NAMES[HS_COUNT] = {
    "", "correlation_id", "device_id", "step_num", "_r", "batch"};
static const char *const PY_FUNCS[] = {"$numpy/core/fromnumeric.py:2313 sum",
                                       "$jax/_src/api.py:1120 device_put",
                                       "$flax/core/scope.py:990 param",
                                       "$optax/_src/update.py:43 apply_updates",
                                       "$train.py:57 compute_metrics",
                                       "$jax/_src/tree_util.py:330 tree_map",
                                       "$<builtin> len",
                                       "$jax/_src/pjit.py:258 cache_miss"};
#define N_PY_FUNCS (sizeof PY_FUNCS / sizeof PY_FUNCS[0])

static void host_launch_visit(void *ctx, const dev_event *e)
{
    line_writer *w = ctx;
    if (e->type == IT_MODULE) return;
    /* the launch is issued 10 us before the device starts; 1.5-2.5 us long */
    int64_t start = e->start_ps - 10 * PS_PER_US;
    int64_t dur = 1500000 + (int64_t)((uint64_t)e->corr * 2654435761u % 1000) * 1000;
    int kernel = e->type == IT_KERNEL;
    w->ev.len = 0;
    stat_i64(&w->ev, &w->st, HS_DEVICE_ID, w->dev);
    stat_u64(&w->ev, &w->st, HS_CORRELATION_ID, (uint64_t)e->corr);
    put_event(w, kernel ? HM_LAUNCH : HM_MEMCPY, start, dur, &w->ev);
    char args[128];
    snprintf(args, sizeof args, "\"correlation_id\":\"%lld\",\"device_id\":\"%d\"",
             (long long)e->corr, w->dev);
    json_event(w, kernel ? "cuLaunchKernel" : "cudaMemcpyAsync", start, dur, args);
}

static void main_thread_events(line_writer *w)
{
    const program *pg = w->pg;
    char args[128];
    for (int s = 0; s < pg->o->steps; s++) {
        int64_t t = (int64_t)s * pg->period_ps;
        if (!pg->o->no_steps) {
            w->ev.len = 0;
            stat_i64(&w->ev, &w->st, HS_STEP_NUM, s);
            stat_i64(&w->ev, &w->st, HS_ROOT, 1);
            put_event(w, HM_STEP, t + PS_PER_US, pg->period_ps - 20 * PS_PER_US, &w->ev);
            snprintf(args, sizeof args, "\"_r\":\"1\",\"step_num\":\"%d\"", s);
            json_event(w, "train_step", t + PS_PER_US, pg->period_ps - 20 * PS_PER_US, args);
        }
        w->ev.len = 0;
        stat_i64(&w->ev, &w->st, HS_BATCH, s);
        put_event(w, HM_DATA, t + 2 * PS_PER_US, 12 * PS_PER_US, &w->ev);
        snprintf(args, sizeof args, "\"batch\":\"%d\"", s);
        json_event(w, "data_loading", t + 2 * PS_PER_US, 12 * PS_PER_US, args);
        w->ev.len = 0;
        put_event(w, HM_EXECUTE, t + 15 * PS_PER_US, 6 * PS_PER_US, &w->ev);
        json_event(w, "PjRtStreamExecutorLoadedExecutable::Execute", t + 15 * PS_PER_US,
                   6 * PS_PER_US, NULL);
    }
}

static void python_events(line_writer *w)
{
    const program *pg = w->pg;
    pbuf none = {0};
    int64_t all = (int64_t)pg->o->steps * pg->period_ps;
    put_event(w, HM_PY_LOOP, 0, all, &none);
    json_event(w, "$train.py:120 train_loop", 0, all, NULL);
    for (int s = 0; s < pg->o->steps; s++) {
        int64_t t = (int64_t)s * pg->period_ps + PS_PER_US;
        int64_t inner = pg->period_ps - 40 * PS_PER_US;
        put_event(w, HM_PY_STEP, t, inner, &none);
        json_event(w, "$train.py:88 train_step", t, inner, NULL);
        int64_t slot = inner / (pg->python_per_step + 1);
        for (int i = 0; i < pg->python_per_step; i++) {
            int f = (int)((unsigned)(i * 7 + s) % N_PY_FUNCS);
            int64_t st = t + slot * i + PS_PER_US, dur = slot / 2 + 1000;
            put_event(w, (uint32_t)(HM_PY0 + f), st, dur, &none);
            json_event(w, PY_FUNCS[f], st, dur, NULL);
        }
    }
}

/* ---- planes ---- */

typedef struct {
    int64_t id;
    const char *name, *display_name;
    int kind; /* what fills it */
    int want, collectives, dev;
} line_spec;

enum { FILL_DEVICE, FILL_LAUNCH, FILL_MAIN, FILL_PYTHON };

/* Writes one line's fields (header and events) into lw->line / lw->out. */
static void fill_line(line_writer *lw, const line_spec *ls, int host)
{
    pbuf *l = lw->line;
    pb_uint_nz(l, 1, (uint64_t)ls->id);
    pb_str(l, 2, ls->name);
    pb_uint(l, 3, (uint64_t)lw->pg->t0_ns);
    lw->want = ls->want;
    lw->collectives = ls->collectives;
    lw->dev = ls->dev;
    if (ls->kind == FILL_DEVICE)
        walk_device(lw->pg, host, ls->dev, device_line_visit, lw);
    else if (ls->kind == FILL_LAUNCH)
        walk_device(lw->pg, host, ls->dev, host_launch_visit, lw);
    else if (ls->kind == FILL_MAIN)
        main_thread_events(lw);
    else
        python_events(lw);
    if (ls->display_name) pb_str(l, 11, ls->display_name);
}

/* Size of a line message: generates it once with output counted only. */
static uint64_t line_size(line_writer *proto, const line_spec *ls, int host)
{
    sink_out counter = {0};
    line_writer lw = *proto;
    pbuf line = {0};
    lw.line = &line;
    lw.out = &counter;
    lw.json = NULL;
    lw.ev = (pbuf){0};
    lw.st = (pbuf){0};
    fill_line(&lw, ls, host);
    uint64_t n = counter.n + counter.buf.len + line.len;
    free(counter.buf.p);
    free(line.p);
    free(lw.ev.p);
    free(lw.st.p);
    return n;
}

/* Writes `plane_fields` (id, name) + lines + `tail` (metadata, stats) as one
 * XPlane, measuring the lines first. */
static void write_plane(sink_out *out, json_out *json, const program *pg, int host, int64_t pid,
                        const pbuf *head, const line_spec *lines, int nlines, const pbuf *tail)
{
    line_writer proto = {.pg = pg, .json = json, .pid = pid};
    uint64_t *sizes = calloc((size_t)nlines + 1, sizeof *sizes);
    uint64_t total = head->len + tail->len;
    for (int i = 0; i < nlines; i++) {
        sizes[i] = line_size(&proto, &lines[i], host);
        total += 1 + (uint64_t)varint_size(sizes[i]) + sizes[i];
    }
    pb_tag(&out->buf, 1, 2);
    pb_varint(&out->buf, total);
    pb_raw(&out->buf, head->p, head->len);
    for (int i = 0; i < nlines; i++) {
        pb_tag(&out->buf, 3, 2);
        pb_varint(&out->buf, sizes[i]);
        line_writer lw = proto;
        pbuf line = {0};
        lw.line = &line;
        lw.out = out;
        lw.tid = lines[i].id;
        json_meta(json, pid, lw.tid, "thread_name",
                  lines[i].display_name ? lines[i].display_name : lines[i].name, 0);
        json_meta(json, pid, lw.tid, "thread_sort_index", NULL, i);
        fill_line(&lw, &lines[i], host);
        pb_raw(&out->buf, line.p, line.len);
        out_maybe_flush(out);
        free(line.p);
        free(lw.ev.p);
        free(lw.st.p);
    }
    pb_raw(&out->buf, tail->p, tail->len);
    out_flush(out);
    free(sizes);
}

static void map_entry(pbuf *plane, int field, uint64_t key, const pbuf *value)
{
    pbuf e = {0};
    pb_uint(&e, 1, key);
    pb_msg(&e, 2, value);
    pb_msg(plane, field, &e);
    free(e.p);
}

static void event_meta(pbuf *tail, uint64_t id, const char *name)
{
    pbuf m = {0};
    pb_uint(&m, 1, id);
    pb_str(&m, 2, name);
    map_entry(tail, 4, id, &m);
    free(m.p);
}

static void stat_meta(pbuf *tail, uint64_t id, const char *name)
{
    pbuf m = {0};
    pb_uint(&m, 1, id);
    pb_str(&m, 2, name);
    map_entry(tail, 5, id, &m);
    free(m.p);
}

static void plane_stat(pbuf *tail, uint64_t meta, int type, uint64_t v, const char *s)
{
    pbuf st = {0};
    pb_uint(&st, 1, meta);
    if (s)
        pb_str(&st, 5, s);
    else
        pb_uint(&st, type, v);
    pb_msg(tail, 6, &st);
    free(st.p);
}

static void gpu_plane_tail(const program *pg, pbuf *tail)
{
    event_meta(tail, EM_MEMCPY_H2D, "MemcpyH2D");
    event_meta(tail, EM_MEMCPY_D2H, "MemcpyD2H");
    event_meta(tail, EM_MODULE, "jit_train_step");
    uint32_t last = 0;
    for (int j = 0; j < pg->distinct; j++)
        if (pg->ops[j].event_meta > last) {
            event_meta(tail, pg->ops[j].event_meta, pg->ops[j].kernel);
            last = pg->ops[j].event_meta;
        }
    for (int s = 1; s < ST_FIXED_COUNT; s++)
        stat_meta(tail, (uint64_t)s, GPU_STAT_NAMES[s]);
    stat_meta(tail, REF_MODULE, "jit_train_step");
    for (size_t i = 0; i < N_TF_OPS; i++)
        stat_meta(tail, REF_TF_OP0 + i, TF_OPS[i]);
    stat_meta(tail, REF_MEMCPY_H2D, "kind:Pinned size:16777216 dest:0 async:1");
    stat_meta(tail, REF_MEMCPY_D2H, "kind:Pinned size:4 dest:0 async:1");
    for (int j = 0; j < pg->distinct; j++) {
        stat_meta(tail, pg->ops[j].details_ref, pg->ops[j].details);
        stat_meta(tail, pg->ops[j].hlo_op_ref, pg->ops[j].hlo_op);
    }
    plane_stat(tail, ST_DEVICE_VENDOR, 0, 0, "NVIDIA");
    plane_stat(tail, ST_CLOCK_RATE, 4, 1980000, NULL);
    plane_stat(tail, ST_CORE_COUNT, 4, 132, NULL);
    plane_stat(tail, ST_MEMORY_SIZE, 3, 85520809984ULL, NULL);
    plane_stat(tail, ST_MEMORY_BANDWIDTH, 3, 3352320000000ULL, NULL);
    plane_stat(tail, ST_CC_MAJOR, 4, 9, NULL);
    plane_stat(tail, ST_CC_MINOR, 4, 0, NULL);
}

static void write_gpu_plane(sink_out *out, json_out *json, const program *pg, int host, int dev)
{
    char name[64];
    snprintf(name, sizeof name, "/device:GPU:%d", dev);
    int64_t pid = 1 + dev;
    json_meta(json, pid, 0, "process_name", name, 0);
    json_meta(json, pid, 0, "process_sort_index", NULL, 1 + dev);
    line_spec lines[] = {
        {13, "Stream #13(MemcpyH2D)", NULL, FILL_DEVICE, IT_H2D, 0, dev},
        {16, "Stream #16(Kernel)", NULL, FILL_DEVICE, IT_KERNEL, 0, dev},
        {20, "Stream #20(Kernel)", NULL, FILL_DEVICE, IT_KERNEL, 1, dev},
        {14, "Stream #14(MemcpyD2H)", NULL, FILL_DEVICE, IT_D2H, 0, dev},
        {1000, "XLA Modules", NULL, FILL_DEVICE, IT_MODULE, 0, dev},
    };
    pbuf head = {0}, tail = {0};
    pb_uint_nz(&head, 1, (uint64_t)dev);
    pb_str(&head, 2, name);
    gpu_plane_tail(pg, &tail);
    write_plane(out, json, pg, host, pid, &head, lines, (int)(sizeof lines / sizeof lines[0]),
                &tail);
    free(head.p);
    free(tail.p);
}

static void write_host_plane(sink_out *out, json_out *json, const program *pg, int host)
{
    int n = pg->o->devices + 2;
    line_spec *lines = calloc((size_t)n, sizeof *lines);
    char(*names)[48] = calloc((size_t)n, sizeof *names);
    lines[0] = (line_spec){PYTHON_TID, "python", "python", FILL_PYTHON, 0, 0, 0};
    lines[1] = (line_spec){MAIN_TID, "MainThread/4811", "MainThread/4811", FILL_MAIN, 0, 0, 0};
    for (int d = 0; d < pg->o->devices; d++) {
        int64_t tid = 5000 + d;
        snprintf(names[d + 2], sizeof names[d + 2], "Host Threads/%lld", (long long)tid);
        lines[d + 2] = (line_spec){tid, names[d + 2], names[d + 2], FILL_LAUNCH, 0, 0, d};
    }
    json_meta(json, PID_HOST, 0, "process_name", "/host:CPU", 0);
    json_meta(json, PID_HOST, 0, "process_sort_index", NULL, 0);
    pbuf head = {0}, tail = {0};
    pb_str(&head, 2, "/host:CPU");
    event_meta(&tail, HM_LAUNCH, "cuLaunchKernel");
    event_meta(&tail, HM_MEMCPY, "cudaMemcpyAsync");
    event_meta(&tail, HM_STEP, "train_step");
    event_meta(&tail, HM_DATA, "data_loading");
    event_meta(&tail, HM_EXECUTE, "PjRtStreamExecutorLoadedExecutable::Execute");
    event_meta(&tail, HM_PY_LOOP, "$train.py:120 train_loop");
    event_meta(&tail, HM_PY_STEP, "$train.py:88 train_step");
    for (size_t f = 0; f < N_PY_FUNCS; f++)
        event_meta(&tail, HM_PY0 + f, PY_FUNCS[f]);
    for (int s = 1; s < HS_COUNT; s++)
        stat_meta(&tail, (uint64_t)s, HOST_STAT_NAMES[s]);
    write_plane(out, json, pg, host, PID_HOST, &head, lines, n, &tail);
    free(head.p);
    free(tail.p);
    free(lines);
    free(names);
}

/* /host:metadata: one `Hlo Proto` per module (bytes), keyed by its
 * program id, no lines. */
static void write_metadata_plane(sink_out *out, const program *pg)
{
    pbuf plane = {0}, m = {0}, st = {0}, proto = {0};
    xpv_gen_jax_hlo_module(pg, &proto);
    pb_str(&plane, 2, "/host:metadata");
    pb_uint(&m, 1, PROGRAM_ID);
    pb_str(&m, 2, "jit_train_step(4217)");
    pb_uint(&st, 1, 1);
    pb_msg(&st, 6, &proto);
    pb_msg(&m, 5, &st);
    map_entry(&plane, 4, PROGRAM_ID, &m);
    stat_meta(&plane, 1, "Hlo Proto");
    pb_msg(&out->buf, 1, &plane);
    free(plane.p);
    free(m.p);
    free(st.p);
    free(proto.p);
}

static void write_task_plane(sink_out *out, const program *pg)
{
    pbuf plane = {0};
    pb_str(&plane, 2, "Task Environment");
    stat_meta(&plane, 1, "profile_start_time");
    stat_meta(&plane, 2, "profile_stop_time");
    plane_stat(&plane, 1, 3, (uint64_t)pg->t0_ns, NULL);
    plane_stat(&plane, 2, 3, (uint64_t)(pg->t0_ns + pg->o->steps * pg->period_ps / 1000), NULL);
    pb_msg(&out->buf, 1, &plane);
    free(plane.p);
}

/* ---- files ---- */

static int mkdirs(const char *path)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s", path);
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(tmp, 0755) != 0 && errno != EEXIST) return -1;
        *p = '/';
    }
    return mkdir(tmp, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

static int write_host(const program *pg, const char *dir, int host)
{
    char host_name[64], path[4200];
    snprintf(host_name, sizeof host_name, "gpu-node-%02d", host);
    snprintf(path, sizeof path, "%s/%s.xplane.pb", dir, host_name);
    sink_out out = {0};
    out.f = fopen(path, "wb");
    if (!out.f) return fprintf(stderr, "xpv-gen: cannot write %s: %s\n", path, strerror(errno)), -1;
    json_out json = {.first = 1};
    if (!pg->o->no_json) {
        snprintf(path, sizeof path, "%s/%s.trace.json.gz", dir, host_name);
        json.gz = gzopen(path, "wb1");
        if (!json.gz) return fclose(out.f), fprintf(stderr, "xpv-gen: cannot write %s\n", path), -1;
        gzbuffer(json.gz, 1 << 18);
        gzputs(json.gz, "{\"displayTimeUnit\":\"ns\",\"metadata\":{\"highres-ticks\":true},"
                        "\"traceEvents\":[");
    }
    write_metadata_plane(&out, pg);
    for (int d = 0; d < pg->o->devices; d++)
        write_gpu_plane(&out, &json, pg, host, d);
    write_host_plane(&out, &json, pg, host);
    write_task_plane(&out, pg);
    pb_str(&out.buf, 4, host_name);
    out_flush(&out);
    int rc = out.failed || fclose(out.f) != 0 ? -1 : 0;
    free(out.buf.p);
    if (json.gz) {
        gzputs(json.gz, "\n]}\n");
        if (gzclose(json.gz) != Z_OK) rc = -1;
    }
    if (rc) fprintf(stderr, "xpv-gen: writing %s failed\n", dir);
    return rc;
}

int xpv_gen_jax(const xpv_gen_opts *o)
{
    for (int run = 0; run < o->runs; run++) {
        program pg;
        if (program_init(&pg, o, run) != 0) return -1;
        time_t t = (time_t)(pg.t0_ns / 1000000000LL);
        struct tm tm;
        gmtime_r(&t, &tm);
        char dir[4096], stamp[32];
        strftime(stamp, sizeof stamp, "%Y_%m_%d_%H_%M_%S", &tm);
        snprintf(dir, sizeof dir, "%s/plugins/profile/%s", o->out_dir, stamp);
        int rc = mkdirs(dir);
        if (rc != 0) fprintf(stderr, "xpv-gen: cannot create %s: %s\n", dir, strerror(errno));
        for (int h = 0; h < o->hosts && rc == 0; h++)
            rc = write_host(&pg, dir, h);
        free(pg.ops);
        if (rc != 0) return -1;
    }
    return 0;
}
