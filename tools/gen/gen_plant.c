/*
 * gen_plant.c — a small, clean PyTorch/Kineto trace into which the
 * patterns the findings look for can be planted one by one (`--plant`):
 *
 *   recompile            jit_train_step compiled before step 0 and again in step 3
 *   input-stall          a 2 ms DataLoader fetch at the start of every step, device idle
 *   exposed-collectives  a 1.5 ms NCCL all-reduce after each step's compute, nothing beside it
 *   sync-copy            one synchronous cudaMemcpy (DtoH) per step
 *   slow-step            step 5 runs its ops three times over
 *   tiny-kernels         200 kernels of 3 us per step, launched every 15 us
 *
 * The clean trace (`--plant none`): per step a 30 us DataLoader fetch, one
 * 50 us pinned H2D copy (cudaMemcpyAsync), eight 500 us kernels of eight
 * different names launched every 20 us (the device runs them back to back)
 * and a cudaDeviceSynchronize at the end. Nothing in it crosses a default
 * threshold. Times are exact integers (ns), printed as Kineto does (us).
 */
#include "gen.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#define HOST 100
#define STREAM 7
#define US 1000LL

typedef struct {
    FILE *f;
    int plant;
    int64_t t, dev; /* host clock, device busy until */
    int64_t corr;
    int first;
} pg;

static const char *const KERNELS[8] = {
    "volta_sgemm_128x64_nn",
    "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float> >",
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float> >",
    "void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 512, true, 1>",
    "void at::native::softmax_warp_forward<float, float, float, 10, false>",
    "implicit_convolve_sgemm<float, float, 128, 5, 5, 3, 3, 3, 1, false>",
    "void at::native::vectorized_layer_norm_kernel<float, float>",
    "void at::native::elementwise_kernel<128, 2, at::native::MulFunctor<float> >",
};

static const char *const OPS[8] = {"aten::mm",         "aten::add",     "aten::sum",
                                   "aten::batch_norm", "aten::softmax", "aten::conv2d",
                                   "aten::layer_norm", "aten::mul"};

static void x(pg *g, const char *cat, const char *name, int pid, int tid, int64_t ts, int64_t dur,
              const char *args)
{
    fprintf(g->f,
            "%s\n  {\"ph\": \"X\", \"cat\": \"%s\", \"name\": \"%s\", \"pid\": %d, \"tid\": %d, "
            "\"ts\": %lld.%03lld, \"dur\": %lld.%03lld, \"args\": {%s}}",
            g->first ? "" : ",", cat, name, pid, tid, (long long)(ts / US), (long long)(ts % US),
            (long long)(dur / US), (long long)(dur % US), args);
    g->first = 0;
}

static void runtime(pg *g, const char *name, int64_t ts, int64_t dur)
{
    char a[64];
    snprintf(a, sizeof a, "\"correlation\": %lld", (long long)g->corr);
    x(g, "cuda_runtime", name, HOST, HOST, ts, dur, a);
}

/* Device work launched at `launch`: starts 5 us later, or when the stream frees up. */
static int64_t device(pg *g, const char *cat, const char *name, int64_t launch, int64_t dur,
                      int64_t bytes)
{
    int64_t s = launch + 5 * US > g->dev + US ? launch + 5 * US : g->dev + US;
    char a[160];
    int n = snprintf(a, sizeof a, "\"device\": 0, \"stream\": %d, \"correlation\": %lld", STREAM,
                     (long long)g->corr);
    if (bytes >= 0) snprintf(a + n, sizeof a - (size_t)n, ", \"bytes\": %lld", (long long)bytes);
    x(g, cat, name, 0, STREAM, s, dur, a);
    g->dev = s + dur;
    return s;
}

static void launch_kernel(pg *g, const char *op, const char *kernel, int64_t dur, int64_t spacing)
{
    g->corr++;
    x(g, "cpu_op", op, HOST, HOST, g->t, spacing - 2 * US, "");
    runtime(g, "cudaLaunchKernel", g->t + 2 * US, 5 * US);
    device(g, "kernel", kernel, g->t + 2 * US, dur, -1);
    g->t += spacing;
}

static void compile(pg *g)
{
    x(g, "user_annotation", "backend_compile", HOST, HOST, g->t, 1500 * US,
      "\"module\": \"jit_train_step\"");
    g->t += 1500 * US;
}

static void copy(pg *g, int sync)
{
    g->corr++;
    if (!sync) {
        runtime(g, "cudaMemcpyAsync", g->t, 5 * US);
        device(g, "gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", g->t, 50 * US, 1 << 20);
        g->t += 10 * US;
        return;
    }
    /* the host blocks until everything queued before, and the copy, are done */
    int64_t start = g->t;
    device(g, "gpu_memcpy", "Memcpy DtoH (Device -> Pinned)", start, 40 * US, 1 << 16);
    runtime(g, "cudaMemcpy", start, g->dev + 2 * US - start);
    g->t = g->dev + 2 * US;
}

static void one_step(pg *g, int step)
{
    int64_t start = g->t;
    int64_t fetch = (g->plant & XPV_PLANT_INPUT_STALL ? 2000 : 30) * US;
    x(g, "user_annotation", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", HOST,
      HOST, g->t, fetch, "");
    g->t += fetch;
    if (g->plant & XPV_PLANT_RECOMPILE && step == 3) compile(g);
    copy(g, 0);
    int tiny = g->plant & XPV_PLANT_TINY_KERNELS;
    int64_t dur = tiny ? 3 * US : 500 * US;
    int ops = (tiny ? 200 : 8) * (g->plant & XPV_PLANT_SLOW_STEP && step == 5 ? 3 : 1);
    for (int i = 0; i < ops; i++)
        launch_kernel(g, OPS[i % 8], KERNELS[i % 8], dur, tiny ? 15 * US : 20 * US);
    if (g->plant & XPV_PLANT_EXPOSED_COLLECTIVES)
        launch_kernel(g, "nccl:all_reduce",
                      "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, "
                      "ncclWork*)",
                      1500 * US, 20 * US);
    if (g->plant & XPV_PLANT_SYNC_COPY) copy(g, 1);
    if (g->dev > g->t) {
        runtime(g, "cudaDeviceSynchronize", g->t, g->dev + 2 * US - g->t);
        g->t = g->dev + 2 * US;
    }
    g->t += 5 * US;
    char name[32];
    snprintf(name, sizeof name, "ProfilerStep#%d", step);
    x(g, "user_annotation", name, HOST, HOST, start, g->t - start, "");
}

static void metadata(pg *g)
{
    static const char *const fmt =
        ",\n  {\"name\": \"%s\", \"ph\": \"M\", \"pid\": %d, \"tid\": %d, \"args\": {\"%s\": %s}}";
    fprintf(g->f, fmt, "process_name", HOST, 0, "name", "\"python3\"");
    fprintf(g->f, fmt, "process_labels", HOST, 0, "labels", "\"CPU\"");
    fprintf(g->f, fmt, "process_name", 0, 0, "name", "\"python3\"");
    fprintf(g->f, fmt, "process_labels", 0, 0, "labels", "\"GPU 0\"");
    fprintf(g->f, fmt, "thread_name", 0, STREAM, "name", "\"stream 7\"");
}

int xpv_gen_plant(const xpv_gen_opts *o)
{
    mkdir(o->out_dir, 0755);
    char path[4096];
    snprintf(path, sizeof path, "%s/worker0.1700000000000.pt.trace.json", o->out_dir);
    pg g = {.f = fopen(path, "w"), .plant = o->plant, .first = 1};
    if (!g.f) {
        fprintf(stderr, "xpv-gen: cannot write %s\n", path);
        return -1;
    }
    fprintf(g.f, "{\"schemaVersion\": 1, \"deviceProperties\": [{\"id\": 0, \"name\": \"NVIDIA "
                 "A100-SXM4-80GB\", \"totalGlobalMem\": 85100068864, \"computeMajor\": 8, "
                 "\"computeMinor\": 0, \"numSms\": 108}],\n\"traceEvents\": [");
    g.t = g.dev = 1700000000000000LL;                /* ns */
    if (o->plant & XPV_PLANT_RECOMPILE) compile(&g); /* the first compilation: warm-up */
    g.t += 100 * US;
    for (int s = 0; s < o->steps; s++)
        one_step(&g, s);
    metadata(&g);
    fprintf(g.f, "\n]}\n");
    int rc = fclose(g.f) == 0 ? 0 : -1;
    if (rc == 0) printf("%s: planted 0x%x, %d steps\n", path, (unsigned)o->plant, o->steps);
    return rc;
}
