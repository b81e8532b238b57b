#!/usr/bin/env python3
"""Fourth short H200 run (session 14): fused element-wise kernels as
torch.compile (Inductor) writes them, forward and backward: achieved
bandwidth on minimal bytes."""
import json, math, statistics, time, traceback
import h200_check as C
from h200_check import torch, F, ev, log, OUT, SAMPLER

import sys
T, H, FF = int(sys.argv[1]) if len(sys.argv) > 1 else 16384, 4096, 14336
res = {}


def bw(name, fn, nbytes, reps=20):
    try:
        t = C.time_eager([fn], reps)
        res[name] = (t * 1e6, nbytes / t / 1e9)
        log(f"{name}: {t*1e6:.0f} us, {nbytes / t / 1e9:.0f} GB/s ({nbytes / t / 4.8e12:.2f} of 4800)")
    except Exception:
        traceback.print_exc()


def fwd_bwd(name, f, inputs, out_elems_bytes_fwd, bytes_bwd):
    try:
        cf = torch.compile(f)
        y = cf(*inputs)
        dy = torch.randn_like(y)
        torch.autograd.grad(y, inputs, dy, retain_graph=True)
        bw(name + " fwd", lambda: cf(*inputs), out_elems_bytes_fwd)
        bw(name + " bwd", lambda: torch.autograd.grad(y, inputs, dy, retain_graph=True), bytes_bwd)
    except Exception:
        traceback.print_exc()


def rms(x, w):
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-5)).type_as(x) * w


def swiglu(a, b):
    return F.silu(a) * b


def rope(q, cos, sin):
    q1, q2 = q[..., :64], q[..., 64:]
    return (q * cos + torch.cat((-q2, q1), -1) * sin).to(q.dtype)


def resid_drop(x, y):
    return x + F.dropout(y, 0.1, True)


def ce(logits, tgt):
    return F.cross_entropy(logits.float(), tgt)


if __name__ == "__main__":
    E = T * H
    x = C.rand((T, H), torch.bfloat16).requires_grad_(True)
    w = C.rand((H,), torch.bfloat16).requires_grad_(True)
    fwd_bwd("compiled rmsnorm", rms, (x, w), 4 * E, 6 * E)
    lw = C.rand((H,), torch.bfloat16).requires_grad_(True)
    lb = C.rand((H,), torch.bfloat16).requires_grad_(True)
    fwd_bwd("compiled layernorm", lambda x, w, b: F.layer_norm(x, (H,), w, b), (x, lw, lb), 4 * E, 6 * E)
    a = C.rand((T, FF), torch.bfloat16).requires_grad_(True)
    b = C.rand((T, FF), torch.bfloat16).requires_grad_(True)
    fwd_bwd("compiled swiglu", swiglu, (a, b), 6 * T * FF, 10 * T * FF)
    q = C.rand((1, T // 2, 32, 128), torch.bfloat16).requires_grad_(True)
    ang = torch.rand(1, T // 2, 1, 128, device="cuda")
    cos, sin = ang.cos().to(torch.bfloat16), ang.sin().to(torch.bfloat16)
    fwd_bwd("compiled rope", lambda q: rope(q, cos, sin), (q,), 4 * q.numel(), 4 * q.numel())
    y2 = C.rand((T, H), torch.bfloat16).requires_grad_(True)
    fwd_bwd("compiled residual+dropout", resid_drop, (x, y2), 7 * E, 7 * E)
    del a, b
    torch.cuda.empty_cache()
    logits = C.rand((8192, 128256), torch.bfloat16).requires_grad_(True)
    tgt = torch.randint(0, 128256, (8192,), device="cuda")
    L = logits.numel()
    try:
        cf = torch.compile(ce)
        y = cf(logits, tgt)
        bw("compiled cross-entropy fwd", lambda: cf(logits, tgt), 2 * L)
        bw("compiled cross-entropy bwd", lambda: torch.autograd.grad(y, (logits,), retain_graph=True), 4 * L, reps=10)
        y = ce(logits, tgt)
        bw("eager cross-entropy fwd", lambda: ce(logits, tgt), 2 * L, reps=10)
        bw("eager cross-entropy bwd", lambda: torch.autograd.grad(y, (logits,), retain_graph=True), 4 * L, reps=10)
    except Exception:
        traceback.print_exc()
    xr = x.detach().clone().requires_grad_(True)
    y = F.rms_norm(xr, (H,), w)
    dy = torch.randn_like(y)
    bw("eager F.rms_norm bwd (T=16384)", lambda: torch.autograd.grad(y, (xr, w), dy, retain_graph=True), 6 * E)
    with open(f"{OUT}/compiled-elementwise.json", "w") as f:
        json.dump(res, f, indent=1)
    SAMPLER.done.set()
    log("done")
