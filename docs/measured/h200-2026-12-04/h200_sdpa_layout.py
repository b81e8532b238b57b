#!/usr/bin/env python3
"""Third short H200 run (session 14): SDPA backward by layout (contiguous
(b, h, s, d) against the frameworks' (b, s, h, d) transposed) and backend,
each held for 4 s with the clock sampled."""
import math, statistics, time
import h200_check as C
from h200_check import torch, F, ev, log, SAMPLER
from torch.nn.attention import sdpa_kernel, SDPBackend


def one(backend, layout, seq, b, seconds=4.0):
    H, D = 32, 128
    def mk():
        if layout == "bhsd":
            return C.rand((b, H, seq, D), torch.bfloat16).requires_grad_(True)
        return C.rand((b, seq, H, D), torch.bfloat16).requires_grad_(True)
    q, k, v = mk(), mk(), mk()
    view = (lambda x: x) if layout == "bhsd" else (lambda x: x.transpose(1, 2))
    go = C.rand((b, H, seq, D) if layout == "bhsd" else (b, seq, H, D), torch.bfloat16)
    go = view(go)
    with sdpa_kernel([backend]):
        fw, bw, mhz = [], [], []
        for _ in range(3):
            o = F.scaled_dot_product_attention(view(q), view(k), view(v), is_causal=True)
            torch.autograd.grad(o, (q, k, v), go)
        torch.cuda.synchronize()
        t0 = time.monotonic()
        while time.monotonic() - t0 < seconds:
            w0 = time.monotonic()
            e0, e1, e2 = ev(), ev(), ev()
            e0.record()
            o = F.scaled_dot_product_attention(view(q), view(k), view(v), is_causal=True)
            e1.record()
            torch.autograd.grad(o, (q, k, v), go)
            e2.record()
            torch.cuda.synchronize()
            fw.append(e0.elapsed_time(e1) / 1e3)
            bw.append(e1.elapsed_time(e2) / 1e3)
            c = SAMPLER.between(w0 - 0.3, time.monotonic())
            if c[0]:
                mhz.append(float(c[0]))
    fl = 4.0 * b * H * seq * seq * D / 2
    f, bb = statistics.median(fw), statistics.median(bw)
    log(f"sdpa {backend.name} {layout} seq {seq} b {b}: fwd {f*1e6:.0f} us {fl/f/1e12:.0f} TF/s, "
        f"bwd {bb*1e6:.0f} us {2.5*fl/bb/1e12:.0f} TF/s, {statistics.mean(mhz) if mhz else math.nan:.0f} MHz, n {len(fw)}")


if __name__ == "__main__":
    for seq, b in ((8192, 1), (4096, 2), (2048, 1)):
        for be in (SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION):
            for layout in ("bhsd", "bshd"):
                try:
                    one(be, layout, seq, b, 4.0 if seq > 2048 else 2.0)
                except Exception as e:
                    print(f"{be} {layout} {seq}: {e!r}"[:300], flush=True)
    SAMPLER.done.set()
    log("done")
