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
}
STEPS = 4


def parent(out, only):
    os.makedirs(out, exist_ok=True)
    manifest = {"made": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "captures": {}}
    for tag, flags in CAPTURES.items():
        if only and tag not in only:
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


def model(jax, jnp, np, cudnn=False):
    V, D, H, L, S = 4096, 256, 4, 4, 128

    def init(key):
        k = jax.random.split(key, 6)
        return {"emb": jax.random.normal(k[0], (V, D)) * .02, "out": jax.random.normal(k[1], (D, V)) * .02,
                "qkv": jax.random.normal(k[2], (L, D, 3 * D)) * .02, "w1": jax.random.normal(k[3], (L, D, 4 * D)) * .02,
                "w2": jax.random.normal(k[4], (L, 4 * D, D)) * .02}

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
        body = jax.checkpoint(layer)
        x, _ = jax.lax.scan(body, x, {k: p[k] for k in ("qkv", "w1", "w2")})
        return x @ p["out"]

    return V, S, init, forward


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
    V, S, init, forward = model(jax, jnp, np, cudnn=(tag == "cudnn-attn"))

    def loss(p, tok):
        return optax.softmax_cross_entropy_with_integer_labels(forward(p, tok[:, :-1]), tok[:, 1:]).mean()

    opt = optax.adamw(1e-3)
    grads = jax.jit(jax.value_and_grad(loss))

    @jax.jit
    def update(p, s, g):
        u, s = opt.update(g, s, p)
        return optax.apply_updates(p, u), s

    @jax.jit
    def step(p, s, tok, i):
        l, g = jax.value_and_grad(loss)(p, tok)
        if tag == "cudnn-attn":  # clip only on even steps: a conditional in the step's program
            g = jax.lax.cond(i % 2 == 0, lambda g: jax.tree.map(lambda a: jnp.clip(a, -1, 1), g), lambda g: g, g)
        u, s = opt.update(g, s, p)
        return optax.apply_updates(p, u), s, l

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
