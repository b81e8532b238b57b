#!/usr/bin/env python3
"""Writes the sample nccl-tests logs of this folder: the layout of nccl-tests
2.13 (header, '# Using devices' ranks, the out-of-place / in-place table,
'# Avg bus bandwidth'), with times from plan-cli's alpha-beta model
(src/core/collective.c) at known links times a deterministic +-3 % wobble.
They are synthetic: they test the parser and the fit, not a real machine.
Known links: intra 360 GB/s (bandwidth x efficiency), 1.1 us a step;
inter 40 GB/s per GPU (320 GB/s a node), 5 us a step, half size 64 KiB,
intra latency 3 us on the multi-node runs (sample-cluster.yaml, dgx-h100's
when they were made). The all-to-all logs (alltoall_perf) are made at their
own known all_to_all_efficiency of those line rates (synthetic values, not a
measurement): 0.6 of the NVLink's 450 GB/s = 270 GB/s a GPU inside a node,
0.5 of the 50 GB/s NIC share = 25 GB/s across nodes; NCCL has no all-to-all
kernel, n - 1 sends share the channels (src/core/collective.c)."""
import sys

seed = [12345]


def wobble():
    seed[0] = (seed[0] * 1103515245 + 12345) % 2**31
    return 1.0 + 0.06 * (seed[0] / 2**31 - 0.5)


def ring(coll, n, k, size):
    p = n // k
    steps, factor = (2 * (n - 1), 2 * (n - 1) / n) if coll == "all_reduce" else (n - 1, (n - 1) / n)
    if k == 1:
        return steps * 1.1e-6 + factor * size / 360e9
    sk = (2 if coll == "all_reduce" else 1) * (k - 1)
    m = size / n
    return (steps - sk) * 3e-6 + sk * 5e-6 + factor * size / (p * 40e9 * m / (m + 65536))


def alltoall(n, k, size):
    """collective.c's all-to-all: n - 1 steps and (n-1)/n of the size at
    270 GB/s on one node; across k nodes of p GPUs, (p - 1) 3 us + (n - p)
    5 us and the (n - p)/n of the size that leaves the node in chunks of
    size/n at 25 GB/s x m/(m + 64 KiB) (its NVLink share, (p-1)/n of the size
    at 270 GB/s, is 30 times shorter: the NIC bounds it)."""
    p = n // k
    if k == 1:
        return (n - 1) * 1.1e-6 + (n - 1) / n * size / 270e9
    m = size / n
    return (p - 1) * 3e-6 + (n - p) * 5e-6 + (n - p) / n * size / (25e9 * m / (m + 65536))


def write(path, coll, n, k, lo, hi, header):
    busf = 2 * (n - 1) / n if coll == "all_reduce" else (n - 1) / n
    redop = "sum" if coll in ("all_reduce", "reduce_scatter") else "none"
    model = (lambda size: alltoall(n, k, size)) if coll == "alltoall" else (lambda size: ring(coll, n, k, size))
    out = []
    if header:
        out += ["# nccl-tests version 2.13.9 nccl-headers=21903 nccl-library=21903",
                f"# Collective test starting: {coll}_perf"]
    out += [f"# nThread 1 nGpus 1 minBytes {lo} maxBytes {hi} step: 2(factor) warmup iters: 5 iters: 20 "
            "agg iters: 1 validation: 1 graph: 0", "#", "# Using devices"]
    p = n // k
    for r in range(n):
        out.append(f"#  Rank {r:2d} Group  0 Pid {40000 + r:6d} on    gpu-node-{r // p + 1:02d} device "
                   f" {r % p} [0x{0x18 + 16 * (r % p):02x}] NVIDIA H100 80GB HBM3")
    out += ["#",
            "#                                                              out-of-place                       in-place          ",
            "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong",
            "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       "]
    size, total, rows = lo, 0.0, 0
    while size <= hi:
        cells = []
        for _ in range(2):
            t = model(size) * wobble()
            alg = size / t / 1e9
            cells.append(f"{t * 1e6:8.2f}  {alg:6.2f}  {alg * busf:6.2f}  {0:5d}")
            total += alg * busf
        rows += 2
        out.append(f"{size:12d}  {size // 4:12d}  {'float':>8s}  {redop:>6s}  {-1:6d}  " + "  ".join(cells))
        size *= 2
    out += ["# Out of bounds values : 0 OK", f"# Avg bus bandwidth    : {total / rows:.4f} ", "#", ""]
    open(path, "w").write("\n".join(out))


d = sys.argv[1] if len(sys.argv) > 1 else "."
write(f"{d}/all_reduce_perf-8xh100.log", "all_reduce", 8, 1, 8, 8 << 30, True)
write(f"{d}/all_gather_perf-8xh100.log", "all_gather", 8, 1, 1024, 8 << 30, False)
write(f"{d}/all_reduce_perf-2x8xh100.log", "all_reduce", 16, 2, 1024, 8 << 30, True)
write(f"{d}/all_reduce_perf-4x8xh100.log", "all_reduce", 32, 4, 1024, 8 << 30, True)
# Last, so that the files above keep their wobble.
write(f"{d}/alltoall_perf-8xh100.log", "alltoall", 8, 1, 1024, 8 << 30, True)
write(f"{d}/alltoall_perf-2x8xh100.log", "alltoall", 16, 2, 1024, 8 << 30, True)
