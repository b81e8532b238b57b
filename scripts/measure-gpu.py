#!/usr/bin/env python3
"""Measure what a cluster profile's GPU keys stand for, on a machine with a GPU.

Prints YAML for the `gpu:` block of a plan-cli cluster profile: the achieved
fraction of the dense bf16 peak for GEMMs of growing size (`gemm_efficiency`,
interpolated by plan-cli in log10 of the GEMM's FLOPs) and of the memory
bandwidth for a device-to-device copy (`memory_efficiency`).

  python3 scripts/measure-gpu.py --peak-tflops 989 --memory-bandwidth-gbs 4800

Needs PyTorch with CUDA. Not used by plan-cli itself (it needs no GPU); this is
how the measured curve in clusters/dgx-h200.yaml was made.
"""
import argparse
import json
import math

import torch


def timed(fn, min_seconds=0.05):
    """Mean seconds per call, after warm-up, over enough calls to last min_seconds."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    reps = 1
    while True:
        start.record()
        for _ in range(reps):
            fn()
        end.record()
        torch.cuda.synchronize()
        ms = start.elapsed_time(end)
        if ms / 1e3 >= min_seconds or reps >= 1 << 16:
            return ms / 1e3 / reps
        reps *= 4


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--peak-tflops", type=float, required=True, help="dense bf16 peak, TFLOP/s")
    ap.add_argument("--memory-bandwidth-gbs", type=float, required=True, help="HBM bandwidth, GB/s")
    ap.add_argument("--json", help="also write the raw measurements here")
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = "cuda"
    gen = torch.Generator(device=dev).manual_seed(0)
    rows = []
    # Training-like shapes: tokens x hidden times hidden x (hidden or 4 hidden), from
    # tiny to the largest GEMMs of a 175B model, plus square ones.
    shapes = []
    for tokens in (256, 1024, 4096, 16384):
        for hidden in (512, 1024, 2048, 4096, 8192, 12288):
            shapes.append((tokens, hidden, hidden))
            shapes.append((tokens, 4 * hidden, hidden))
    for s in (128, 256, 512, 1024, 2048, 4096, 8192, 16384):
        shapes.append((s, s, s))
    for m, n, k in shapes:
        a = torch.randn(m, k, device=dev, dtype=torch.bfloat16, generator=gen)
        b = torch.randn(k, n, device=dev, dtype=torch.bfloat16, generator=gen)
        t = timed(lambda: torch.matmul(a, b))
        flops = 2.0 * m * n * k
        rows.append({"m": m, "n": n, "k": k, "flops": flops, "seconds": t,
                     "tflops": flops / t / 1e12, "efficiency": flops / t / 1e12 / args.peak_tflops})
        del a, b
    x = torch.empty(1 << 30, device=dev, dtype=torch.bfloat16)  # 2 GiB
    y = torch.empty_like(x)
    t = timed(lambda: y.copy_(x))
    copy_bw = 2 * x.numel() * x.element_size() / t / 1e9  # read + write
    # One point per decade of FLOPs: the median efficiency of the GEMMs in it.
    decades = {}
    for r in rows:
        decades.setdefault(round(math.log10(r["flops"]) * 2) / 2, []).append(r["efficiency"])
    curve = []
    for d in sorted(decades):
        e = sorted(decades[d])[len(decades[d]) // 2]
        if not curve or e > 0:
            curve.append((10 ** d, min(e, 1.0)))
    print("# measured with scripts/measure-gpu.py on", torch.cuda.get_device_name())
    print("# copy bandwidth %.0f GB/s of %.0f GB/s" % (copy_bw, args.memory_bandwidth_gbs))
    print("  memory_efficiency: %.3f" % min(copy_bw / args.memory_bandwidth_gbs, 1.0))
    print("  gemm_efficiency: [%s]" % ", ".join("[%.3g, %.3f]" % p for p in curve))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "copy_gbs": copy_bw, "gemms": rows}, f, indent=1)


if __name__ == "__main__":
    main()
