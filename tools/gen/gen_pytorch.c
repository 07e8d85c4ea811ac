/*
 * gen_pytorch.c — writes a realistic PyTorch/Kineto trace,
 * DIR/worker0.<ts>.pt.trace.json.gz, of about o->size_bytes uncompressed.
 *
 * Shape, as the PyTorch profiler writes it: schemaVersion,
 * deviceProperties, distributedInfo, then traceEvents with, per step, a
 * ProfilerStep#N annotation and per op a cpu_op (with input shapes and a
 * long "Call stack"), python_function frames, a cuda_runtime launch with a
 * correlation id, an ac2g flow pair and the kernel on the device row (grid,
 * block, registers per thread, shared memory, est. achieved occupancy %);
 * some ops copy or set memory (gpu_memcpy, gpu_memset) or log [memory]
 * instants. M events naming processes and threads come last, as Kineto
 * writes them. Times are fractional microseconds (ns precision).
 *
 * Deterministic: the same options give the same bytes.
 */
#include "gen.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#define HOST_PID 4242
#define STREAM 7
#define BYTES_PER_OP 2800 /* measured average, to size the steps */

typedef struct {
    gzFile gz;
    char *buf;
    size_t len, cap;
    int64_t written;
    uint64_t rng;       /* timing jitter */
    uint64_t shape_rng; /* what runs: restarted every step, as a training loop repeats */
    uint64_t seed;
    int64_t corr, ext, python_id;
    int64_t t_ns;   /* host clock */
    int64_t gpu_ns; /* device busy until */
    int64_t events;
    int failed;
    const xpv_gen_opts *o; /* the variant switches */
} gen;

static void out(gen *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void flush_out(gen *g)
{
    if (g->len && gzwrite(g->gz, g->buf, (unsigned)g->len) != (int)g->len) g->failed = 1;
    g->written += (int64_t)g->len;
    g->len = 0;
}

static void out(gen *g, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(g->buf + g->len, g->cap - g->len, fmt, ap);
        va_end(ap);
        if (n >= 0 && (size_t)n < g->cap - g->len) {
            g->len += (size_t)n;
            if (g->len > g->cap / 2) flush_out(g);
            return;
        }
        flush_out(g);
        if ((size_t)n >= g->cap) {
            g->cap = (size_t)n * 2;
            g->buf = realloc(g->buf, g->cap);
        }
    }
}

static uint64_t rnd(gen *g, uint64_t n)
{
    return xpv_gen_rand(&g->rng) % n;
}

static uint64_t pick(gen *g, uint64_t n)
{
    return xpv_gen_rand(&g->shape_rng) % n;
}

/* Microseconds with three decimals, as Kineto prints them. */
static void us(char *dst, size_t n, int64_t ns)
{
    snprintf(dst, n, "%lld.%03lld", (long long)(ns / 1000), (long long)(ns % 1000));
}

static const char *const OPS[] = {
    "aten::linear",
    "aten::addmm",
    "aten::conv2d",
    "aten::cudnn_convolution",
    "aten::batch_norm",
    "aten::relu_",
    "aten::add_",
    "aten::mul",
    "aten::softmax",
    "aten::layer_norm",
    "aten::matmul",
    "aten::bmm",
    "aten::gelu",
    "aten::dropout",
    "aten::copy_",
    "aten::fill_",
    "aten::native_layer_norm_backward",
    "aten::mm",
};
#define NOPS (sizeof OPS / sizeof OPS[0])

static const char *const KERNELS[] = {
    "ampere_sgemm_128x64_tn",
    "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
    "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, "
    "1>)",
    "void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 512, true, 1>(cudnnTensorStruct, "
    "float const*, cudnnTensorStruct, float*, float const*, float const*, float, float, float*, "
    "float*, float*, float*, float, float)",
    "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, "
    "float, float const*, float const*, float const*, float*, float*, float*)",
    "sm80_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x32_stage4_warpsize2x2x1_tensor16x8x16_"
    "kernel",
    "void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl<at::native::"
    "AddFunctor<float> >(at::TensorIteratorBase&, at::native::AddFunctor<float> const&)::"
    "{lambda(int)#1}>(int, at::native::gpu_kernel_impl<at::native::AddFunctor<float> >(at::"
    "TensorIteratorBase&, at::native::AddFunctor<float> const&)::{lambda(int)#1})",
    "void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, false, "
    "false>(float*, "
    "float const*, int, int, int, bool const*, int, bool)",
    "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
};
#define NKERNELS (sizeof KERNELS / sizeof KERNELS[0])

static const char *const FRAMES[] = {
    "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/module.py(1527): _call_impl",
    "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/module.py(1518): _wrapped_call_impl",
    "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/linear.py(114): forward",
    "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/conv.py(456): _conv_forward",
    "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/conv.py(460): forward",
    "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/normalization.py(201): forward",
    "/opt/conda/lib/python3.10/site-packages/torch/nn/functional.py(2478): batch_norm",
    "/opt/conda/lib/python3.10/site-packages/transformers/models/bert/modeling_bert.py(412): "
    "forward",
    "/opt/conda/lib/python3.10/site-packages/transformers/models/bert/modeling_bert.py(517): "
    "forward",
    "/opt/conda/lib/python3.10/site-packages/torch/autograd/__init__.py(251): backward",
    "/opt/conda/lib/python3.10/site-packages/torch/_tensor.py(492): backward",
    "/opt/conda/lib/python3.10/site-packages/torch/optim/adamw.py(184): step",
    "/opt/conda/lib/python3.10/site-packages/torch/profiler/profiler.py(722): step",
    "/workspace/train.py(88): train_step",
    "/workspace/train.py(131): main",
    "/workspace/train.py(140): <module>",
};
#define NFRAMES (sizeof FRAMES / sizeof FRAMES[0])

static void write_header(gen *g, const xpv_gen_opts *o)
{
    out(g, "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [\n");
    for (int d = 0; d < o->devices; d++)
        out(g,
            "    {\n      \"id\": %d, \"name\": \"NVIDIA A100-SXM4-80GB\", \"totalGlobalMem\": "
            "85100068864,\n      \"computeMajor\": 8, \"computeMinor\": 0,\n      "
            "\"maxThreadsPerBlock\": 1024, \"maxThreadsPerMultiprocessor\": 2048,\n      "
            "\"regsPerBlock\": 65536, \"regsPerMultiprocessor\": 65536, \"warpSize\": 32,\n      "
            "\"sharedMemPerBlock\": 49152, \"sharedMemPerMultiprocessor\": 167936,\n      "
            "\"numSms\": 108, \"sharedMemPerBlockOptin\": 166912\n    }%s\n",
            d, d + 1 < o->devices ? "," : "");
    out(g,
        "  ],\n  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 0, \"world_size\": %d, "
        "\"pg_count\": 1, \"pg_config\": [{\"pg_name\": \"0\", \"pg_desc\": \"default_pg\", "
        "\"backend_config\": \"cuda:nccl\", \"pg_size\": %d, \"ranks\": \"all\"}]},\n",
        o->devices, o->devices);
    out(g,
        "  \"record_shapes\": 1,\n  \"with_stack\": 1,\n  \"cuda_runtime_version\": 12010,\n"
        "  \"cuda_driver_version\": 12020,\n  \"trace_id\": \"5A1C0FFEE%07llu\",\n"
        "  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": 1700000000000000000,\n"
        "  \"traceEvents\": [\n",
        (unsigned long long)(o->seed % 10000000));
}

/* Appends a PyTorch-style call stack of 6..13 frames. */
static void call_stack(gen *g, char *dst, size_t cap)
{
    int n = 6 + (int)pick(g, 8);
    size_t len = 0;
    uint64_t base = pick(g, NFRAMES);
    for (int i = 0; i < n && len + 200 < cap; i++) {
        const char *f = FRAMES[(base + (uint64_t)i * 3) % NFRAMES];
        len += (size_t)snprintf(dst + len, cap - len, "%s%s", i ? ";" : "", f);
    }
}

static void shapes(gen *g, char *dst, size_t cap)
{
    int64_t b = 8 << pick(g, 4), h = 256 << pick(g, 4);
    snprintf(dst, cap, "[[%lld, %lld], [%lld, %lld], [%lld]]", (long long)b, (long long)h,
             (long long)h * 4, (long long)h, (long long)h * 4);
}

static void cpu_op(gen *g, int64_t ts, int64_t dur, const char *name)
{
    char t[32], d[32], stack[2048], dims[128];
    us(t, sizeof t, ts);
    us(d, sizeof d, dur);
    call_stack(g, stack, sizeof stack);
    shapes(g, dims, sizeof dims);
    out(g,
        "  {\n    \"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"%s\", \"pid\": %d, \"tid\": %d,\n"
        "    \"ts\": %s, \"dur\": %s,\n    \"args\": {\n      \"External id\": %lld, \"Record "
        "function id\": 0, \"Ev Idx\": %lld,\n      \"Input Dims\": %s,\n      \"Input type\": "
        "[\"float\", \"float\", \"float\"],\n      \"Input Strides\": [[%d, 1], [1, %d], [1]],\n"
        "      \"Concrete Inputs\": [\"\", \"\", \"\"],\n      \"Call stack\": \"%s\",\n"
        "      \"Sequence number\": %lld, \"Fwd thread id\": 0\n    }\n  },\n",
        name, HOST_PID, HOST_PID, t, d, (long long)g->ext, (long long)g->events, dims, 1024, 1024,
        stack, (long long)(g->ext / 3));
    g->events++;
}

static void python_fn(gen *g, int64_t ts, int64_t dur, int depth)
{
    char t[32], d[32];
    us(t, sizeof t, ts);
    us(d, sizeof d, dur);
    g->python_id++;
    out(g,
        "  {\n    \"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"%s\", \"pid\": %d, "
        "\"tid\": %d,\n    \"ts\": %s, \"dur\": %s,\n    \"args\": {\n      \"Python parent id\": "
        "%lld, \"Python id\": %lld, \"Python thread\": 0\n    }\n  },\n",
        FRAMES[(g->python_id + (uint64_t)depth) % NFRAMES], HOST_PID, HOST_PID, t, d,
        (long long)(g->python_id - 1), (long long)g->python_id);
    g->events++;
}

static void runtime(gen *g, int64_t ts, int64_t dur, const char *name, int cbid)
{
    char t[32], d[32];
    us(t, sizeof t, ts);
    us(d, sizeof d, dur);
    out(g,
        "  {\n    \"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"%s\", \"pid\": %d, "
        "\"tid\": "
        "%d,\n    \"ts\": %s, \"dur\": %s,\n    \"args\": {\n      \"External id\": %lld, "
        "\"cbid\": %d, \"correlation\": %lld\n    }\n  },\n",
        name, HOST_PID, HOST_PID, t, d, (long long)g->ext, cbid, (long long)g->corr);
    out(g,
        "  {\n    \"ph\": \"s\", \"id\": %lld, \"pid\": %d, \"tid\": %d, \"ts\": %s,\n    \"cat\": "
        "\"ac2g\", \"name\": \"ac2g\"\n  },\n",
        (long long)g->corr, HOST_PID, HOST_PID, t);
    g->events += 2;
}

static void flow_end(gen *g, int64_t ts)
{
    char t[32];
    us(t, sizeof t, ts);
    out(g,
        "  {\n    \"ph\": \"f\", \"id\": %lld, \"pid\": 0, \"tid\": %d, \"ts\": %s,\n    \"cat\": "
        "\"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"\n  },\n",
        (long long)g->corr, STREAM, t);
    g->events++;
}

/* Writes the kernel, unless the variant drops it (returns 0); *dur is
 * doubled for the variant's slow kernel. The random draws are the same. */
static int kernel(gen *g, int64_t ts, int64_t *dur)
{
    char t[32], d[32];
    uint64_t k = pick(g, NKERNELS);
    int regs = 16 + 8 * (int)pick(g, 28), block = 64 << pick(g, 4);
    int grid = 1 + (int)pick(g, 4096), shmem = (int)pick(g, 4) * 16384;
    double occ = (double)pick(g, 10000) / 100.0;
    if ((int)k == g->o->drop_kernel) return 0;
    if ((int)k == g->o->slow_kernel) *dur *= 2;
    us(t, sizeof t, ts);
    us(d, sizeof d, *dur);
    out(g,
        "  {\n    \"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", \"pid\": 0, \"tid\": %d,\n"
        "    \"ts\": %s, \"dur\": %s,\n    \"args\": {\n      \"External id\": %lld, \"queued\": "
        "0, \"device\": 0, \"context\": 1,\n      \"stream\": %d, \"correlation\": %lld,\n"
        "      \"registers per thread\": %d,\n      \"shared memory\": %d,\n      \"blocks per "
        "SM\": %.6f,\n      \"warps per SM\": %.6f,\n      \"grid\": [%d, 1, 1],\n      "
        "\"block\": [%d, 1, 1],\n      \"est. achieved occupancy %%\": %.2f\n    }\n  },\n",
        KERNELS[k], STREAM, t, d, (long long)g->ext, STREAM, (long long)g->corr, regs, shmem,
        grid / 108.0, grid * (block / 32) / 108.0, grid, block, occ);
    g->events++;
    return 1;
}

/* The variant's added kernel: once per step, after the step's device work,
 * with no launch (it joins the step it starts in). */
static void added_kernel(gen *g)
{
    char t[32], d[32];
    int64_t start = g->gpu_ns + 1000;
    us(t, sizeof t, start);
    us(d, sizeof d, XPV_GEN_ADDED_KERNEL_NS);
    out(g,
        "  {\n    \"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", \"pid\": 0, \"tid\": %d,\n"
        "    \"ts\": %s, \"dur\": %s,\n    \"args\": {\n      \"device\": 0, \"context\": 1, "
        "\"stream\": %d,\n      \"grid\": [1, 1, 1], \"block\": [128, 1, 1]\n    }\n  },\n",
        XPV_GEN_ADDED_KERNEL, STREAM, t, d, STREAM);
    g->gpu_ns = start + XPV_GEN_ADDED_KERNEL_NS;
    g->events++;
}

static void memcpy_ev(gen *g, int64_t ts, int64_t dur, int set)
{
    char t[32], d[32];
    us(t, sizeof t, ts);
    us(d, sizeof d, dur);
    static const char *const names[] = {"Memcpy HtoD (Pageable -> Device)",
                                        "Memcpy DtoH (Device -> Pinned)",
                                        "Memcpy DtoD (Device -> Device)"};
    const char *name = set ? "Memset (Device)" : names[pick(g, 3)];
    int64_t bytes = 4096 << pick(g, 10);
    out(g,
        "  {\n    \"ph\": \"X\", \"cat\": \"%s\", \"name\": \"%s\", \"pid\": 0, \"tid\": %d,\n"
        "    \"ts\": %s, \"dur\": %s,\n    \"args\": {\n      \"External id\": %lld, \"device\": "
        "0, \"context\": 1,\n      \"stream\": %d, \"correlation\": %lld, \"bytes\": %lld,\n"
        "      \"memory bandwidth (GB/s)\": %.4f\n    }\n  },\n",
        set ? "gpu_memset" : "gpu_memcpy", name, STREAM, t, d, (long long)g->ext, STREAM,
        (long long)g->corr, (long long)bytes, (double)bytes / (double)(dur ? dur : 1));
    g->events++;
}

static void memory_instant(gen *g, int64_t ts)
{
    char t[32];
    us(t, sizeof t, ts);
    int64_t bytes = (int64_t)(4096 << pick(g, 12)) * (pick(g, 2) ? 1 : -1);
    out(g,
        "  {\n    \"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": "
        "\"[memory]\",\n    \"pid\": %d, \"tid\": %d,\n    \"ts\": %s,\n    \"args\": {\n"
        "      \"Total Reserved\": 2097152000, \"Total Allocated\": %lld, \"Bytes\": %lld, "
        "\"Addr\": %llu, \"Device Id\": 0, \"Device Type\": 1\n    }\n  },\n",
        HOST_PID, HOST_PID, t, (long long)(1 << 30) + bytes, (long long)bytes,
        (unsigned long long)(139637000000000ULL + pick(g, 1000000) * 512));
    g->events++;
}

/* One op: python frames, the cpu_op, its launch, flow and device work. */
static void one_op(gen *g, int64_t i)
{
    int64_t start = g->t_ns, dur = 20000 + (int64_t)pick(g, 80000) + (int64_t)rnd(g, 500);
    python_fn(g, start, dur + 3000, 0);
    python_fn(g, start + 1000, dur + 1000, 1);
    g->ext++;
    cpu_op(g, start + 1500, dur, OPS[pick(g, NOPS)]);
    int64_t launch = start + 1500 + dur / 2;
    g->corr++;
    int copy = i % 20 == 7, set = i % 30 == 11;
    runtime(g, launch, 4000 + (int64_t)rnd(g, 3000),
            copy  ? "cudaMemcpyAsync"
            : set ? "cudaMemsetAsync"
                  : "cudaLaunchKernel",
            copy  ? 41
            : set ? 53
                  : 211);
    int64_t gpu_start = launch + 5000 > g->gpu_ns ? launch + 5000 : g->gpu_ns + 1000;
    int64_t gpu_dur = 2000 + (int64_t)pick(g, 200000) + (int64_t)rnd(g, 300);
    int written = 1;
    if (copy || set)
        memcpy_ev(g, gpu_start, gpu_dur, set);
    else
        written = kernel(g, gpu_start, &gpu_dur);
    if (written) flow_end(g, gpu_start);
    g->gpu_ns = gpu_start + gpu_dur;
    if (i % 10 == 3) memory_instant(g, start + 2000);
    g->t_ns = start + dur + 5000 + (int64_t)rnd(g, 2000);
}

static void step_annotation(gen *g, int step, int64_t start, int64_t end, int device)
{
    char t[32], d[32];
    us(t, sizeof t, start);
    us(d, sizeof d, end - start);
    out(g,
        "  {\n    \"ph\": \"X\", \"cat\": \"%s\", \"name\": \"ProfilerStep#%d\", \"pid\": %d, "
        "\"tid\": %d,\n    \"ts\": %s, \"dur\": %s,\n    \"args\": {\n      \"External id\": "
        "%lld, \"Record function id\": 0, \"Ev Idx\": %lld\n    }\n  },\n",
        device ? "gpu_user_annotation" : "user_annotation", step, device ? 0 : HOST_PID,
        device ? STREAM : HOST_PID, t, d, (long long)g->ext, (long long)g->events);
    g->events++;
}

static void write_metadata(gen *g, const xpv_gen_opts *o, int64_t t0)
{
    char t[32];
    us(t, sizeof t, t0);
    static const char *const fmt =
        "  {\n    \"name\": \"%s\", \"ph\": \"M\", \"ts\": %s, \"pid\": %d, \"tid\": %d,\n"
        "    \"args\": {\n      \"%s\": %s\n    }\n  },\n";
    out(g, fmt, "process_name", t, HOST_PID, 0, "name", "\"python3\"");
    out(g, fmt, "process_labels", t, HOST_PID, 0, "labels", "\"CPU\"");
    out(g, fmt, "process_sort_index", t, HOST_PID, 0, "sort_index", "4242");
    out(g, fmt, "thread_name", t, HOST_PID, HOST_PID, "name", "\"thread 4242 (python3)\"");
    out(g, fmt, "thread_sort_index", t, HOST_PID, HOST_PID, "sort_index", "4242");
    g->events += 5;
    for (int d = 0; d < o->devices; d++) {
        char label[32];
        snprintf(label, sizeof label, "\"GPU %d\"", d);
        out(g, fmt, "process_name", t, d, 0, "name", "\"python3\"");
        out(g, fmt, "process_labels", t, d, 0, "labels", label);
        out(g, fmt, "process_sort_index", t, d, 0, "sort_index", d ? "16777217" : "16777216");
        g->events += 3;
    }
    out(g, fmt, "thread_name", t, 0, STREAM, "name", "\"stream 7 \"");
    out(g, fmt, "thread_sort_index", t, 0, STREAM, "sort_index", "7");
    g->events += 2;
}

int xpv_gen_pytorch(const xpv_gen_opts *o)
{
    mkdir(o->out_dir, 0755);
    char path[4096];
    long long stamp = 1700000000000LL + (long long)(o->seed % 1000000);
    snprintf(path, sizeof path, "%s/worker0.%lld.pt.trace.json.gz", o->out_dir, stamp);
    gen g = {.rng = o->seed * 0x9E3779B97F4A7C15ULL + 1, .cap = 1 << 20, .o = o};
    g.buf = malloc(g.cap);
    g.gz = gzopen(path, "wb6");
    if (!g.gz || !g.buf) {
        fprintf(stderr, "xpv-gen: cannot write %s\n", path);
        free(g.buf);
        return -1;
    }
    gzbuffer(g.gz, 1 << 20);
    write_header(&g, o);
    int64_t t0 = 1700000000123456789LL / 1000; /* ns; printed as fractional us */
    g.t_ns = g.gpu_ns = t0;
    /* The profiler records a few steps (--steps); the size decides how much
     * work each holds, as a bigger model would. */
    int64_t ops_per_step = o->size_bytes / BYTES_PER_OP / o->steps;
    if (ops_per_step < 50) ops_per_step = 50;
    for (int step = 0; step < o->steps || g.written + (int64_t)g.len < o->size_bytes; step++) {
        int64_t start = g.t_ns;
        g.shape_rng = o->seed * 0xD1B54A32D192ED03ULL + 7;
        for (int64_t i = 0; i < ops_per_step; i++)
            one_op(&g, i);
        if (o->add_kernel) added_kernel(&g);
        if (step == o->slow_step) g.t_ns += o->slow_step_us * 1000;
        if (!o->no_steps) {
            step_annotation(&g, step, start, g.t_ns, 0);
            step_annotation(&g, step, start + 5000, g.gpu_ns, 1);
        }
        g.t_ns += 50000;
    }
    write_metadata(&g, o, t0);
    char t[32], d[32];
    us(t, sizeof t, t0);
    us(d, sizeof d, g.t_ns - t0);
    out(&g,
        "  {\n    \"ph\": \"X\", \"cat\": \"Trace\", \"ts\": %s, \"dur\": %s,\n    \"pid\": "
        "\"Spans\", \"tid\": \"PyTorch Profiler\",\n    \"name\": \"PyTorch Profiler (0)\",\n"
        "    \"args\": {\n      \"Op count\": 0\n    }\n  },\n  {\n    \"name\": "
        "\"process_sort_index\", \"ph\": \"M\", \"ts\": %s, \"pid\": \"Spans\", \"tid\": 0,\n"
        "    \"args\": {\n      \"sort_index\": 536870912\n    }\n  },\n  {\n    \"name\": "
        "\"Record Window End\", \"ph\": \"i\", \"s\": \"g\",\n    \"pid\": \"\", \"tid\": \"\", "
        "\"ts\": %s\n  }\n],\n  \"traceName\": \"%s\"\n}\n",
        t, d, t, t, path);
    g.events += 3;
    flush_out(&g);
    int rc = gzclose(g.gz) == Z_OK && !g.failed ? 0 : -1;
    free(g.buf);
    if (rc != 0)
        fprintf(stderr, "xpv-gen: write error on %s\n", path);
    else
        printf("%s: %lld events, %lld bytes uncompressed\n", path, (long long)g.events,
               (long long)g.written);
    return rc;
}
