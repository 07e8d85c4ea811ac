#!/usr/bin/env python3
"""gpu_capture.py: fresh JAX and PyTorch captures on an NVIDIA GPU, to check the readers on
programs the fixtures do not hold.

Run on a machine with a GPU, JAX and PyTorch:
    python3 scripts/gpu_capture.py OUTDIR [CAPTURE ...]
Each capture runs in its own process (its own XLA_FLAGS), compiled before the
capture starts. Captures:
  scan-on, scan-off   layers under lax.scan with remat, command buffers on
                      (XLA's default) and off: the off capture is the
                      reference for attributing the on capture's kernels
  scan-whilecb        the same with while loops and conditionals put into
                      command buffers as well
  nostep              no step annotation, two jitted functions per iteration
                      (gradients, then the update): steps must come from
                      module executions
  cudnn-attn          cuDNN fused attention and a lax.cond in the step
  pytracer            asks for the Python tracer and the host tracer at level 3
                      (through ProfileOptions; JAX 0.11.2 on an H100 wrote no
                      Python events all the same)
  nosync              step annotations that never wait for the device: its
                      work runs after the host's window, one step behind
  long                scan-on over 40 steps: bigger files, the same program
  torch-graph         PyTorch replaying one training step as a CUDA graph
                      (torch.cuda.CUDAGraph) under torch.profiler
  unrolled-on, unrolled-off
                      eight layers unrolled (no scan): one long graph of
                      repeated identical kernels, command buffers on and off
  wide-on, wide-off   four unrolled bfloat16 layers of width 1024 over 512
                      tokens: library GEMMs (cuBLAS) among the fusions
  accum-on, accum-off gradients accumulated over four micro-batches in a
                      lax.fori_loop around the scan: loops within loops
  msteps-on, msteps-off
                      optax.MultiSteps accumulating two steps' gradients:
                      a lax.cond that applies the update every other step
  pallas              a Pallas (Triton) kernel in the step, after the update
  callback            a host callback in the step (jax.debug.callback), which
                      cuts the step's graph in two
Captures named on the command line after OUTDIR run alone.
OUTDIR/MANIFEST.json says what ran, with which versions, and each capture's
step count and iteration count, to read the index against.
"""
import json
import os
import subprocess
import sys
import time
import traceback

CAPTURES = {
    "scan-on": "",
    "scan-off": "--xla_gpu_enable_command_buffer=",
    "scan-whilecb": "--xla_gpu_enable_command_buffer=FUSION,CUBLAS,CUBLASLT,CUSTOM_CALL,CUDNN,WHILE,CONDITIONAL",
    "nostep": "",
    "cudnn-attn": "",
    "pytracer": "",
    "nosync": "",
    "long": "",
    "torch-graph": "",
    "unrolled-on": "",
    "unrolled-off": "--xla_gpu_enable_command_buffer=",
    "pallas": "",
    "callback": "",
    "wide-on": "",
    "wide-off": "--xla_gpu_enable_command_buffer=",
    "accum-on": "",
    "accum-off": "--xla_gpu_enable_command_buffer=",
    "msteps-on": "",
    "msteps-off": "--xla_gpu_enable_command_buffer=",
}
# A capture that would start past this many seconds is skipped, so that a
# short lease on a GPU machine still brings back what ran.
BUDGET_S = float(os.environ.get("XPV_CAPTURE_BUDGET_S", "1e9"))
STEPS = 4


def parent(out, only):
    os.makedirs(out, exist_ok=True)
    manifest = {"made": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "captures": {}}
    start = time.time()
    for tag, flags in CAPTURES.items():
        if only and tag not in only:
            continue
        if time.time() - start > BUDGET_S:
            manifest["captures"][tag] = {"rc": -1, "error": "skipped: past XPV_CAPTURE_BUDGET_S"}
            continue
        env = {**os.environ, "XLA_PYTHON_CLIENT_PREALLOCATE": "false"}
        if flags:
            env["XLA_FLAGS"] = flags
        t = time.time()
        try:
            r = subprocess.run([sys.executable, __file__, out, "--child", tag], env=env,
                               capture_output=True, text=True, timeout=150)
            lines = r.stdout.strip().splitlines()
            facts = json.loads(lines[-1]) if r.returncode == 0 and lines else {}
            manifest["captures"][tag] = {"rc": r.returncode, "flags": flags, "s": round(time.time() - t, 1),
                                         **facts, "stderr": r.stderr[-800:] if r.returncode else ""}
        except Exception:
            manifest["captures"][tag] = {"rc": -1, "error": traceback.format_exc()[-800:]}
        print(tag, json.dumps(manifest["captures"][tag])[:400], flush=True)
    with open(os.path.join(out, "MANIFEST.json"), "w") as f:
        json.dump(manifest, f, indent=1)


def model(jax, jnp, np, cudnn=False, unrolled=False, wide=False):
    V, D, H, S = (8192, 1024, 8, 512) if wide else (4096, 256, 4, 128)
    L = 8 if unrolled and not wide else 4
    unrolled = unrolled or wide
    dtype = jnp.bfloat16 if wide else jnp.float32

    def init(key):
        k = jax.random.split(key, 6)
        shapes = {"emb": (V, D), "out": (D, V), "qkv": (L, D, 3 * D), "w1": (L, D, 4 * D), "w2": (L, 4 * D, D)}
        return {n: (jax.random.normal(k[i], shape) * .02).astype(dtype) for i, (n, shape) in enumerate(shapes.items())}

    def layer(x, lp):
        b, t, _ = x.shape
        q, kk, v = (a.reshape(b, t, H, D // H) for a in jnp.split(x @ lp["qkv"], 3, -1))
        if cudnn:
            o = jax.nn.dot_product_attention(q.astype(jnp.bfloat16), kk.astype(jnp.bfloat16), v.astype(jnp.bfloat16),
                                             is_causal=True, implementation="cudnn").astype(x.dtype)
        else:
            a = jnp.einsum("bqhd,bkhd->bhqk", q, kk) / np.sqrt(D // H)
            a = jax.nn.softmax(jnp.where(jnp.tril(jnp.ones((t, t), bool)), a, -1e9), -1)
            o = jnp.einsum("bhqk,bkhd->bqhd", a, v)
        x = x + o.reshape(b, t, D)
        return x + jax.nn.gelu(x @ lp["w1"]) @ lp["w2"], None

    def forward(p, tok):
        x = p["emb"][tok]
        stacked = {k: p[k] for k in ("qkv", "w1", "w2")}
        if unrolled:
            for i in range(p["qkv"].shape[0]):
                x, _ = layer(x, {k: v[i] for k, v in stacked.items()})
            return (x @ p["out"]).astype(jnp.float32)
        x, _ = jax.lax.scan(jax.checkpoint(layer), x, stacked)
        return x @ p["out"]

    return V, S, init, forward


def pallas_decay(jax, jnp, w):
    """w * 0.999 by a Pallas kernel, one program per 128 columns."""
    from jax.experimental import pallas as pl

    def kernel(w_ref, o_ref):
        o_ref[...] = w_ref[...] * 0.999

    rows, cols = w.shape
    spec = pl.BlockSpec((rows, 128), lambda j: (0, j))
    return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(w.shape, w.dtype), grid=(cols // 128,),
                          in_specs=[spec], out_specs=spec)(w)


def torch_child(out, tag):
    import torch
    import torch.nn as nn
    from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler
    model = nn.Sequential(nn.Linear(512, 2048), nn.GELU(), nn.Linear(2048, 512)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    x = torch.randn(256, 512, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm up outside the graph
        for _ in range(3):
            opt.zero_grad(set_to_none=False)
            model(x).square().mean().backward()
            opt.step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=False)
    with torch.cuda.graph(graph):
        loss = model(x).square().mean()
        loss.backward()
        opt.step()
    d = os.path.join(out, tag)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 schedule=schedule(wait=1, warmup=1, active=STEPS, repeat=1),
                 on_trace_ready=tensorboard_trace_handler(d, use_gzip=True)) as prof:
        for _ in range(STEPS + 2):
            x.copy_(torch.randn(256, 512, device="cuda"))
            graph.replay()
            loss.item()
            prof.step()
    print(json.dumps({"torch": torch.__version__, "steps": STEPS, "iterations": STEPS + 2,
                      "loss": float(loss), "device": torch.cuda.get_device_name()}))


def child(out, tag):
    if tag.startswith("torch"):
        return torch_child(out, tag)
    import numpy as np
    import jax
    import jax.numpy as jnp
    import optax
    V, S, init, forward = model(jax, jnp, np, cudnn=(tag == "cudnn-attn"), unrolled=tag.startswith("unrolled"),
                                wide=tag.startswith("wide"))

    def loss(p, tok):
        return optax.softmax_cross_entropy_with_integer_labels(forward(p, tok[:, :-1]), tok[:, 1:]).mean()

    opt = optax.MultiSteps(optax.adamw(1e-3), every_k_schedule=2) if tag.startswith("msteps") \
        else optax.adamw(1e-3)
    grads = jax.jit(jax.value_and_grad(loss))

    @jax.jit
    def update(p, s, g):
        u, s = opt.update(g, s, p)
        return optax.apply_updates(p, u), s

    def accumulated(p, tok, n=4):
        def micro(j, carry):
            lj, gj = jax.value_and_grad(loss)(p, jax.lax.dynamic_slice_in_dim(tok, j * (tok.shape[0] // n),
                                                                            tok.shape[0] // n))
            return carry[0] + lj / n, jax.tree.map(lambda a, b: a + b / n, carry[1], gj)
        return jax.lax.fori_loop(0, n, micro, (jnp.float32(0), jax.tree.map(jnp.zeros_like, p)))

    @jax.jit
    def step(p, s, tok, i):
        if tag.startswith("accum"):
            l, g = accumulated(p, tok)
        else:
            l, g = jax.value_and_grad(loss)(p, tok)
        if tag == "cudnn-attn":  # clip only on even steps: a conditional in the step's program
            g = jax.lax.cond(i % 2 == 0, lambda g: jax.tree.map(lambda a: jnp.clip(a, -1, 1), g), lambda g: g, g)
        if tag == "callback":  # the host sees the loss mid-step
            jax.debug.callback(lambda v: None, l)
        u, s = opt.update(g, s, p)
        p = optax.apply_updates(p, u)
        if tag == "pallas":
            p = {**p, "out": pallas_decay(jax, jnp, p["out"])}
        return p, s, l

    rng = np.random.default_rng(0)
    p = init(jax.random.PRNGKey(0))
    s = opt.init(p)

    def batch():
        return jax.device_put(rng.integers(0, V, (8, S + 1), dtype=np.int32))

    def one(p, s, i):
        if tag == "nostep":
            l, g = grads(p, batch())
            p, s = update(p, s, g)
            return p, s, l
        return step(p, s, batch(), jnp.int32(i))

    p, s, l = one(p, s, 0)
    l.block_until_ready()  # compiled outside the capture
    d = os.path.join(out, tag)
    opts = None
    if tag == "pytracer":
        opts = jax.profiler.ProfileOptions()
        opts.python_tracer_level = 1
        opts.host_tracer_level = 3
    if opts is not None:
        jax.profiler.start_trace(d, profiler_options=opts)
    else:
        jax.profiler.start_trace(d)
    steps = 40 if tag == "long" else STEPS
    for i in range(steps):
        if tag == "nostep":
            p, s, l = one(p, s, i)
            l.block_until_ready()
            continue
        with jax.profiler.StepTraceAnnotation("train", step_num=i):
            p, s, l = one(p, s, i)
            if tag != "nosync":
                l.block_until_ready()
    l.block_until_ready()
    jax.profiler.stop_trace()
    print(json.dumps({"jax": jax.__version__, "steps": 0 if tag == "nostep" else steps,
                      "iterations": steps, "loss": float(l), "device": str(jax.devices()[0])}))


if __name__ == "__main__":
    if len(sys.argv) > 3 and sys.argv[2] == "--child":
        child(sys.argv[1], sys.argv[3])
    else:
        parent(sys.argv[1] if len(sys.argv) > 1 else "/tmp/gpu-capture", sys.argv[2:])
