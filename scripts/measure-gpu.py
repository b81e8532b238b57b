#!/usr/bin/env python3
"""Time GEMMs, launches, element-wise kernels and fused attention on one
GPU. The GEMM sweep writes the CSV that `plan-cli fit-logs --gemm CSV
--gpu NAME` reads: m,n,k,dtype,seconds (dtype bf16, fp16 or fp8; seconds
per kernel); every other mode prints on stderr what it measured and the
profile key it informs (docs/calibration.md, "Measuring a GPU").

  python3 scripts/measure-gpu.py --output h100-gemm.csv
  python3 scripts/measure-gpu.py --dtypes bf16,fp8 --waves --output h100-gemm.csv
  python3 scripts/measure-gpu.py --no-gemm --launch --elementwise --flash-attention

GEMMs (default): each shape's calls rotate over copies of its operands
that together exceed twice the L2, filled uniform in [-1, 1], so each call
reads HBM with real data (NVIDIA's CUTLASS GEMM measurement guidelines).
By default R calls (at least --iters, up to 400, about 20 ms) are captured
in a CUDA graph, the graph is replayed --repeats times, and the median
time per call is written: the GPU time alone. --eager times the calls as
a Python loop between CUDA events instead; below about 1e10 FLOPs an eager
matmul is bound by the host's launch (about 12 us a call on an H200: a
1024^3 bf16 GEMM reads 11.5 us eager against 5.8 us replayed), which
plan-cli prices apart (the framework's host_launch_overhead,
src/core/host_time.c): a profile fitted to eager times counts the launch
twice. --detail-output FILE writes both, per GEMM: m,n,k,dtype,graph_s,
eager_s,graph_tflops,eager_tflops (not a fit-logs file). fp8 uses
torch._scaled_mm with per-tensor scales (Hopper and later) and is skipped
where this PyTorch lacks it; fp8-row (asked for in --dtypes) uses row-wise
scales and goes to stderr and --detail-output only, because fit-logs
accepts no such dtype. --waves also times GEMMs around the GPU's wave
boundaries (M x N in 128 x 128 tiles just under, at and over one and two
times its SM count, K 8192), from which fit-logs --gemm fits sm_count and
the CTA tile (docs/calibration.md, "GEMM waves from a log").

--launch: the host's time per eager launch (x.add_(1) and F.linear 1024^3
in a loop; framework host_launch_overhead), a tiny kernel's GPU time in a
CUDA graph (gpu launch_overhead) and a .item() round trip (what each of a
framework's host_syncs waits for at least).

--elementwise: copy, add, gelu, silu(a) * b, F.rms_norm forward and
backward, layer_norm and softmax on 256 Mi bf16 elements (rows of 4096),
as GB/s on the fewest bytes each must move (silu * b: 3 tensors, though
eager PyTorch runs it as two kernels moving 5); the copy's GB/s over the
profile's memory_bandwidth is gpu memory_efficiency.

--flash-attention: torch.nn.functional.scaled_dot_product_attention,
causal, 32 heads of dim 128, seq 1k-16k (batch 8k / seq), forward and
backward, with each SDPA backend (flash: FlashAttention-2; cudnn;
efficient) and q, k, v (and dO) in the frameworks' (batch, seq, heads,
dim) layout transposed to SDPA's (batch, heads, seq, dim), and in the
contiguous layout for comparison. TFLOP/s count the causal half: forward
4 b h s^2 d / 2, backward 2.5 times that (src/core/compute.c,
compute_flash_attention_kernel); at seq 4096, the profiles' reference
shape (include/plan/attn_shape.h), the cudnn backend's TFLOP/s over
peak_flops give attention_fwd_efficiency and attention_bwd_efficiency
(after the profile's attention_overhead per call), and flash over cudnn
fa2_attention_speed.

--sustain SECONDS instead runs each large TRAINING shape back to back for
that long, as a training step's GEMMs run, and writes one CSV line a
second (--sustain-output) with the TFLOP/s of that second next to
nvidia-smi's SM clock, power, temperature and throttle reasons; stderr
gets the first 3 s against the last half of each shape
(docs/research/gpu-data.md, "The clock a Hopper GPU holds in a training
step").

The torch code is that of docs/measured/h200-2026-12-04/h200_check.py,
which ran on an H200 (PyTorch 2.11). Not run by the test suite (it needs a
GPU); tests/cli/run-fit-logs-tests.sh checks its pure helpers and that
fit-logs reads the CSV it writes."""
import argparse
import csv
import math
import statistics
import subprocess
import sys
import threading
import time

SQUARE = [256, 512, 1024, 2048, 4096, 8192, 16384]
# Transformer shapes: (tokens, hidden) x (hidden, 3 hidden | 4 hidden | ...).
TRAINING = [(4096, 12288, 4096), (4096, 4096, 4096), (8192, 14336, 4096), (8192, 4096, 14336),
            (16384, 1024, 8192), (2048, 28672, 8192), (1024, 1024, 64)]
# More of Llama 3 8B's (h200_check.py's sweep): fused QKV, O, fused
# gate+up, a 1k-token and a small-k slice; the GEMM sweep only (--sustain
# keeps TRAINING).
SWEEP_MORE = [(8192, 6144, 4096), (8192, 4096, 4096), (8192, 28672, 4096), (1024, 3584, 4096),
              (4096, 1536, 8192)]
# The dtypes gemm_log.c accepts, and the one it does not (stderr and
# --detail-output only).
FITLOGS_DTYPES = ("bf16", "fp16", "fp8")
DTYPES = FITLOGS_DTYPES + ("fp8-row",)
# Calls per timing: at least --iters, at most MAX_CALLS, about WINDOW_S.
MAX_CALLS, WINDOW_S = 400, 0.02
# The L2 where PyTorch does not report it (H100's 50 MiB).
L2_FALLBACK = 50 * 2 ** 20
# Attention: heads, head dim and the tokens a batch holds (h200_check.py).
ATTN_HEADS, ATTN_DIM, ATTN_TOKENS = 32, 128, 8192
ATTN_SEQS = (1024, 2048, 4096, 8192, 16384)
ATTN_REF_SEQ = 4096  # ATTN_SHAPE_REF_SEQ, include/plan/attn_shape.h
# Element-wise: 256 Mi bf16 elements in rows of 4096 (512 MiB a tensor).
EW_ELEMENTS, EW_ROW = 256 * 2 ** 20, 4096


def wave_shapes(sms, tile=128, k=8192):
    """(m, n, k) whose m/tile x n/tile tiles are just under, at and over
    sms and 2 sms: a x b = T with a the divisor of T nearest sqrt(T), T
    skipped when that divisor is under 4 (a skinny GEMM has its own
    shape factor)."""
    shapes = []
    for target in (sms, 2 * sms):
        for tiles in range(target - 6, target + 7, 2) if target > 8 else ():
            a = max(d for d in range(1, int(tiles ** 0.5) + 1) if tiles % d == 0)
            if a >= 4:
                shapes.append((tile * a, tile * (tiles // a), k))
    return shapes


def sweep_shapes(sms=0):
    """The GEMM sweep: the squares, TRAINING, SWEEP_MORE, and with @sms
    the wave-boundary shapes."""
    return [(s, s, s) for s in SQUARE] + TRAINING + SWEEP_MORE + (wave_shapes(sms) if sms else [])


def operand_bytes(m, n, k, dtype):
    """Bytes of A (m x k) and B (k x n): 2 a element in 16 bits, 1 in fp8."""
    return (m * k + k * n) * (1 if dtype.startswith("fp8") else 2)


def copies_for(nbytes, l2, cap=64):
    """Operand copies to rotate over so that together they exceed twice
    the L2 (CUTLASS's guideline), at least 2 and at most @cap."""
    return max(2, min(cap, math.ceil(2 * l2 / max(nbytes, 1))))


def calls_for(estimate_s, least):
    """Calls in one timing: enough for WINDOW_S at @estimate_s a call, at
    least @least, at most MAX_CALLS."""
    return int(min(MAX_CALLS, max(least, WINDOW_S / max(estimate_s, 1e-9))))


def fitlogs_row(m, n, k, dtype, seconds):
    """The CSV row fit-logs --gemm reads (src/io/gemm_log.c: exactly m, n,
    k, dtype, seconds; dtype bf16, fp16 or fp8; 1e-9 to 1e4 s), or None
    for a dtype it does not accept."""
    if dtype not in FITLOGS_DTYPES:
        return None
    return [m, n, k, dtype, f"{seconds:.6e}"]


def causal_attention_flops(batch, heads, seq, dim):
    """Forward FLOPs of causal attention on the causal-half convention:
    4 b h s^2 d / 2 (compute.c; the backward is counted 2.5 times)."""
    return 4.0 * batch * heads * seq * seq * dim / 2


def attention_batch(seq):
    """The batch that holds ATTN_TOKENS tokens at @seq (at least 1)."""
    return max(1, ATTN_TOKENS // seq)


def l2_bytes(torch):
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    return getattr(props, "L2_cache_size", 0) or L2_FALLBACK


def rand(torch, shape, dtype):
    """Uniform in [-1, 1] (CUTLASS's guideline fill), made in fp32."""
    return (torch.rand(*shape, device="cuda", dtype=torch.float32) * 2 - 1).to(dtype)


def gemm_ops(m, n, k, dtype, torch, l2):
    """One callable per rotated operand copy, or None where this PyTorch
    cannot run @dtype. bf16 and fp16: torch.matmul(a[m,k], b[k,n]) into
    one output; fp8 and fp8-row: torch._scaled_mm(a, w.t()) with w n x k
    (column-major B, as cuBLASLt wants), per-tensor or row-wise scales."""
    ops = []
    if dtype.startswith("fp8"):
        if not hasattr(torch, "_scaled_mm") or not hasattr(torch, "float8_e4m3fn"):
            return None
        f8 = torch.float8_e4m3fn
        for _ in range(copies_for(operand_bytes(m, n, k, dtype), l2)):
            a, w = rand(torch, (m, k), f8), rand(torch, (n, k), f8)
            if dtype == "fp8-row":
                sa = torch.ones(m, 1, device="cuda", dtype=torch.float32)
                sb = torch.ones(1, n, device="cuda", dtype=torch.float32)
            else:
                sa = torch.tensor(1.0, device="cuda")
                sb = torch.tensor(1.0, device="cuda")
            ops.append(lambda a=a, w=w, sa=sa, sb=sb: torch._scaled_mm(
                a, w.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16))
        try:
            ops[0]()
        except (RuntimeError, TypeError):
            return None
        return ops
    t = {"bf16": torch.bfloat16, "fp16": torch.float16}[dtype]
    c = torch.empty(m, n, device="cuda", dtype=t)
    for _ in range(copies_for(operand_bytes(m, n, k, dtype), l2)):
        a, b = rand(torch, (m, k), t), rand(torch, (k, n), t)
        ops.append(lambda a=a, b=b: torch.matmul(a, b, out=c))
    return ops


def ev(torch):
    return torch.cuda.Event(enable_timing=True)


def time_eager(ops, calls, repeats, torch, warmup=3):
    """Seconds per call of @calls calls, rotating over @ops, issued from
    Python between CUDA events: the median of @repeats timings."""
    for i in range(warmup):
        ops[i % len(ops)]()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        s, e = ev(torch), ev(torch)
        s.record()
        for i in range(calls):
            ops[i % len(ops)]()
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e) / 1e3 / calls)  # ms -> s per call
    return statistics.median(times)


def time_graph(ops, calls, torch, replays=3):
    """Seconds per call of @calls calls, rotating over @ops, captured in
    one CUDA graph: the median of @replays replays, after one untimed
    replay (warmed up on a side stream first, as capture requires)."""
    st = torch.cuda.Stream()
    st.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(st):
        for o in ops[:2]:
            o()
    torch.cuda.current_stream().wait_stream(st)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for i in range(calls):
            ops[i % len(ops)]()
    g.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(replays):
        s, e = ev(torch), ev(torch)
        s.record()
        g.replay()
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e) / 1e3 / calls)
    del g
    return statistics.median(times)


def gemm_sweep(args, torch, out):
    """The GEMM sweep: fit-logs' CSV on @out, both timings on
    --detail-output, fp8-row on stderr."""
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["m", "n", "k", "dtype", "seconds"])
    detail = open(args.detail_output, "w", newline="") if args.detail_output else None
    dw = csv.writer(detail, lineterminator="\n") if detail else None
    if dw:
        dw.writerow(["m", "n", "k", "dtype", "graph_s", "eager_s", "graph_tflops", "eager_tflops"])
    sms = 0
    if args.waves:
        sms = torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count
        print(f"measure-gpu.py: {sms} SMs, {len(wave_shapes(sms))} wave-boundary GEMMs", file=sys.stderr)
    l2 = l2_bytes(torch)
    for dtype in args.dtypes.split(","):
        for m, n, k in sweep_shapes(sms):
            ops = gemm_ops(m, n, k, dtype, torch, l2)
            if ops is None:
                print(f"measure-gpu.py: {dtype} not available here, skipped", file=sys.stderr)
                break
            calls = calls_for(time_eager(ops, 5, 1, torch), args.iters)
            eager = time_eager(ops, calls, args.repeats, torch, args.warmup) if args.eager or dw else None
            graph = time_graph(ops, calls, torch, args.repeats) if not args.eager or dw else None
            row = fitlogs_row(m, n, k, dtype, eager if args.eager else graph)
            flops = 2.0 * m * n * k
            if row:
                w.writerow(row)
                out.flush()
            else:
                sec = eager if args.eager else graph
                print(f"gemm {dtype} {m}x{n}x{k}: {sec:.4e} s, {flops / sec / 1e12:.1f} TFLOP/s "
                      f"({'eager' if args.eager else 'graph'})", file=sys.stderr)
            if dw:
                dw.writerow([m, n, k, dtype, f"{graph:.4e}", f"{eager:.4e}", f"{flops / graph / 1e12:.1f}",
                             f"{flops / eager / 1e12:.1f}"])
                detail.flush()
            del ops
        torch.cuda.empty_cache()
    if detail:
        detail.close()


def launch(args, torch):
    """--launch (h200_check.py's launch section)."""
    F = torch.nn.functional
    x = torch.zeros(1, device="cuda")
    for _ in range(200):
        x.add_(1)
    torch.cuda.synchronize()
    n = 20000
    t = time.perf_counter()
    for _ in range(n):
        x.add_(1)
    issue = (time.perf_counter() - t) / n
    torch.cuda.synchronize()
    wall = (time.perf_counter() - t) / n
    tiny = time_graph([lambda: x.add_(1)], 2000, torch, args.repeats)
    a, wt = rand(torch, (1024, 1024), torch.bfloat16), rand(torch, (1024, 1024), torch.bfloat16)
    lin = [lambda: F.linear(a, wt)]
    lin_eager = time_eager(lin, 2000, args.repeats, torch)
    lin_graph = time_graph(lin, 2000, torch, args.repeats)
    t = time.perf_counter()
    for _ in range(5000):
        F.linear(a, wt)
    lin_issue = (time.perf_counter() - t) / 5000
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(500):
        x.item()
    item = (time.perf_counter() - t) / 500
    us = 1e6
    print(f"launch: eager x.add_(1) {issue * us:.2f} us issued a call ({wall * us:.2f} us to the GPU's end): "
          f"the host's floor for one kernel, framework host_launch_overhead (a framework's modules and "
          f"autograd add to it: Megatron-Core's profile 12 us)\n"
          f"launch: eager F.linear 1024^3 bf16 {lin_eager * us:.2f} us a call on the GPU's clock "
          f"({lin_issue * us:.2f} us issued), {lin_graph * us:.2f} us in a CUDA graph: a GEMM's host launch "
          f"(host_launch_overhead) against its GPU time (gemm_overhead and the gemm_efficiency curve)\n"
          f"launch: a 1-element add in a CUDA graph {tiny * us:.2f} us of GPU time: gpu launch_overhead "
          f"(the fixed cost of each element-wise kernel)\n"
          f"launch: .item() round trip {item * us:.2f} us: what each of a framework's host_syncs waits for "
          f"at least, before the next launch is exposed (src/core/host_time.c)", file=sys.stderr)


def elementwise_cases(torch, a, b, wgt):
    """(name, callable, elements moved at the least) for --elementwise on
    bf16 @a and @b of EW_ELEMENTS in rows of EW_ROW, weight @wgt."""
    F = torch.nn.functional
    ar = a.detach().clone().requires_grad_(True)
    wr = wgt.detach().clone().requires_grad_(True)
    cases = [("copy", lambda: b.copy_(a), 2), ("add", lambda: a + b, 3), ("gelu", lambda: F.gelu(a), 2),
             ("silu_mul", lambda: F.silu(a) * b, 3)]
    if hasattr(F, "rms_norm"):  # PyTorch 2.4 and later
        y = F.rms_norm(ar, (EW_ROW,), wr)
        gy = torch.ones_like(y)
        cases += [("rms_norm", lambda: F.rms_norm(a, (EW_ROW,), wgt), 2),
                  ("rms_norm_bwd", lambda: torch.autograd.grad(y, (ar, wr), gy, retain_graph=True), 3)]
    cases += [("layer_norm", lambda: F.layer_norm(a, (EW_ROW,), wgt), 2),
              ("softmax", lambda: torch.softmax(a, -1), 2)]
    return cases


def elementwise(args, torch):
    """--elementwise (h200_check.py's element-wise section)."""
    a = rand(torch, (EW_ELEMENTS // EW_ROW, EW_ROW), torch.bfloat16)
    b = rand(torch, (EW_ELEMENTS // EW_ROW, EW_ROW), torch.bfloat16)
    wgt = rand(torch, (EW_ROW,), torch.bfloat16)
    tensor = EW_ELEMENTS * 2
    copy_gbs = None
    for name, fn, tensors in elementwise_cases(torch, a, b, wgt):
        try:
            t = time_eager([fn], 10, args.repeats, torch)
        except (RuntimeError, TypeError) as e:
            print(f"elementwise {name}: {e!r}"[:300], file=sys.stderr)
            continue
        gbs = tensors * tensor / t / 1e9
        copy_gbs = gbs if name == "copy" else copy_gbs
        frac = f", {gbs / args.memory_bandwidth:.3f} of {args.memory_bandwidth:.0f}" if args.memory_bandwidth else ""
        print(f"elementwise {name}: {t * 1e6:.0f} us, {gbs:.0f} GB/s on {tensors} x {tensor // 2 ** 20} MiB{frac}",
              file=sys.stderr)
    if copy_gbs:
        print(f"elementwise: memory_efficiency = the copy's {copy_gbs:.0f} GB/s over the profile's "
              f"memory_bandwidth; the other kernels show how far below a copy each runs", file=sys.stderr)


def attention_qkv(torch, batch, seq, layout):
    """q, k, v and dO for SDPA: @layout 'bshd' made (batch, seq, heads,
    dim) as the frameworks' projections leave them and transposed to
    SDPA's (batch, heads, seq, dim) without a copy; 'bhsd' contiguous."""
    def one():
        if layout == "bshd":
            return rand(torch, (batch, seq, ATTN_HEADS, ATTN_DIM), torch.bfloat16)
        return rand(torch, (batch, ATTN_HEADS, seq, ATTN_DIM), torch.bfloat16)
    leaves = [one().requires_grad_(True) for _ in range(3)]
    grad = one()
    if layout == "bshd":
        return [x.transpose(1, 2) for x in leaves] + [grad.transpose(1, 2)], leaves
    return leaves + [grad], leaves


def attention_one(args, torch, seq, layout):
    """Forward and backward seconds of the current backend at @seq."""
    F = torch.nn.functional
    (q, k, v, grad), _ = attention_qkv(torch, attention_batch(seq), seq, layout)
    fn = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True)  # noqa: E731
    fwd = time_eager([fn], 10, args.repeats, torch)
    out = fn()
    bwd = time_eager([lambda: torch.autograd.grad(out, (q, k, v), grad, retain_graph=True)], 10,
                     args.repeats, torch)
    return fwd, bwd


def flash(args, torch):
    """--flash-attention: each SDPA backend, both layouts (h200_check.py's
    attention section, with the frameworks' layout)."""
    try:
        from torch.nn.attention import sdpa_kernel, SDPBackend
        backends = [(name, getattr(SDPBackend, attr)) for name, attr in
                    (("flash", "FLASH_ATTENTION"), ("cudnn", "CUDNN_ATTENTION"), ("efficient", "EFFICIENT_ATTENTION"))
                    if hasattr(SDPBackend, attr)]
    except ImportError:  # before PyTorch 2.3: the default backend only
        sdpa_kernel, backends = None, [("default", None)]
    ref = {}
    for seq in ATTN_SEQS:
        flops = causal_attention_flops(attention_batch(seq), ATTN_HEADS, seq, ATTN_DIM)
        for name, backend in backends:
            got = []
            for layout in ("bshd", "bhsd"):
                try:
                    if sdpa_kernel:
                        with sdpa_kernel([backend]):
                            fwd, bwd = attention_one(args, torch, seq, layout)
                    else:
                        fwd, bwd = attention_one(args, torch, seq, layout)
                    got.append((flops / fwd / 1e12, 2.5 * flops / bwd / 1e12))
                except (RuntimeError, TypeError) as e:
                    print(f"attention {name} seq {seq} {layout}: {e!r}"[:300], file=sys.stderr)
                    got.append(None)
                torch.cuda.empty_cache()
            if got[0]:
                ref[name] = got[0] if seq == ATTN_REF_SEQ else ref.get(name)
            cells = [f"fwd {g[0]:.1f} bwd {g[1]:.1f}" if g else "failed" for g in got]
            print(f"attention {name} seq {seq} batch {attention_batch(seq)}: {cells[0]} TFLOP/s "
                  f"(b,s,h,d transposed); contiguous {cells[1]}", file=sys.stderr)
    peak = args.peak_tflops
    for name, (f, b) in ((n, r) for n, r in ref.items() if r):
        frac = f": {f / peak:.3f} and {b / peak:.3f} of {peak:.0f} TFLOPS" if peak else ""
        print(f"attention at seq {ATTN_REF_SEQ}, head dim {ATTN_DIM}, {name}: forward {f:.1f}, backward {b:.1f} "
              f"TFLOP/s{frac}", file=sys.stderr)
    if ref.get("cudnn") and ref.get("flash"):
        print(f"attention: attention_fwd_efficiency and attention_bwd_efficiency = the best kernel's (cudnn "
              f"on Hopper, as FlashAttention-3) TFLOP/s at seq {ATTN_REF_SEQ} over peak_flops, its time less "
              f"the profile's attention_overhead; fa2_attention_speed = flash / cudnn = "
              f"{ref['flash'][0] / ref['cudnn'][0]:.2f} forward, {ref['flash'][1] / ref['cudnn'][1]:.2f} "
              f"backward", file=sys.stderr)


# What nvidia-smi reports (--query-gpu fields; drivers before 535 call the
# last one clocks_throttle_reasons.active).
SMI_FIELDS = ["clocks.sm", "power.draw", "temperature.gpu"]
SMI_REASONS = ["clocks_event_reasons.active", "clocks_throttle_reasons.active"]


def smi_id(torch):
    """nvidia-smi's name for the GPU torch uses: its PCI address where this
    PyTorch reports one (CUDA_VISIBLE_DEVICES renumbers devices, nvidia-smi
    does not), else the index."""
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    if all(hasattr(props, f) for f in ("pci_domain_id", "pci_bus_id", "pci_device_id")):
        return f"{props.pci_domain_id:08X}:{props.pci_bus_id:02X}:{props.pci_device_id:02X}.0"
    return str(torch.cuda.current_device())


def smi_sample(gpu):
    """The SM clock (MHz), board power (W), temperature (C) and active
    throttle-reason mask of @gpu now, as strings; empty where nvidia-smi is
    missing or does not know a field."""
    for reasons in SMI_REASONS + [None]:
        fields = SMI_FIELDS + ([reasons] if reasons else [])
        try:
            out = subprocess.run(["nvidia-smi", f"--id={gpu}", "--query-gpu=" + ",".join(fields),
                                  "--format=csv,noheader,nounits"],
                                 capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            return ["", "", "", ""]
        if out.returncode == 0:
            values = [v.strip() for v in out.stdout.strip().split(",")]
            return (values + ["", "", "", ""])[:4]
    return ["", "", "", ""]


class Sampler(threading.Thread):
    """nvidia-smi every @period seconds on its own thread, so the GEMMs
    never wait for it (a gap between them would lower the power)."""

    def __init__(self, gpu, period=0.5):
        super().__init__(daemon=True)
        self.gpu, self.period, self.samples = gpu, period, []
        self.done = threading.Event()

    def run(self):
        while not self.done.is_set():
            self.samples.append((time.monotonic(), smi_sample(self.gpu)))
            self.done.wait(self.period)

    def between(self, t0, t1):
        """The mean clock, power and temperature of the samples taken from
        @t0 to @t1, and the last throttle mask, as CSV cells."""
        got = [v for t, v in self.samples if t0 <= t <= t1]
        cells = []
        for i in range(3):
            xs = []
            for v in got:
                try:
                    xs.append(float(v[i]))
                except ValueError:
                    pass
            cells.append(f"{statistics.mean(xs):.0f}" if xs else "")
        return cells + [got[-1][3] if got else ""]


def sustained(m, n, k, t, seconds, writer, torch, sampler):
    """Run the m x n x k GEMM back to back for @seconds, one CSV line a
    second. The operands rotate over copies that together exceed twice
    the L2 and hold uniform [-1, 1] values, so each call reads HBM and
    draws the power of real data (NVIDIA's CUTLASS GEMM measurement
    guidelines: buffer rotation, fill, about 3 s of oscillating clocks
    before they settle). Returns (seconds in, TFLOP/s, SM MHz) a second."""
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    l2 = getattr(props, "L2_cache_size", 0) or 50 * 2 ** 20
    size = t.itemsize if hasattr(t, "itemsize") else 2
    copies = max(2, math.ceil(2 * l2 / ((m * k + k * n) * size)))
    a = [torch.rand(m, k, device="cuda", dtype=t) * 2 - 1 for _ in range(copies)]
    b = [torch.rand(k, n, device="cuda", dtype=t) * 2 - 1 for _ in range(copies)]
    c = torch.empty(m, n, device="cuda", dtype=t)
    flops = 2.0 * m * n * k
    # Calls a second, from a short pilot.
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for i in range(10):
        torch.matmul(a[i % copies], b[i % copies], out=c)
    end.record()
    torch.cuda.synchronize()
    calls = max(1, int(1.0 / (start.elapsed_time(end) / 1e3 / 10)))
    rows = []
    call = 0
    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds:
        w0 = time.monotonic()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(calls):
            torch.matmul(a[call % copies], b[call % copies], out=c)
            call += 1
        end.record()
        torch.cuda.synchronize()
        w1 = time.monotonic()
        tflops = flops * calls / (start.elapsed_time(end) / 1e3) / 1e12
        smi = sampler.between(w0, w1)
        writer.writerow([m, n, k, f"{w1 - t0:.1f}", f"{tflops:.1f}"] + smi)
        rows.append((w1 - t0, tflops, float(smi[0]) if smi[0] else math.nan))
    return rows


def sustain(args, torch):
    """--sustain: each TRAINING shape of 1e11 FLOPs or more in bf16 (fp16
    where bf16 is not asked for) for args.sustain seconds, 2 s idle
    between shapes."""
    t = torch.bfloat16 if "bf16" in args.dtypes.split(",") else torch.float16
    out = open(args.sustain_output, "w", newline="") if args.sustain_output != "-" else sys.stdout
    w = csv.writer(out)
    w.writerow(["m", "n", "k", "t_s", "tflops", "sm_mhz", "power_w", "temp_c", "throttle_reasons"])
    sampler = Sampler(smi_id(torch))
    sampler.start()
    for m, n, k in TRAINING:
        if 2.0 * m * n * k < 1e11:
            continue
        rows = sustained(m, n, k, t, args.sustain, w, torch, sampler)
        out.flush()
        first = [r for r in rows if r[0] <= 3.0]
        last = [r for r in rows if r[0] > args.sustain / 2]
        if first and last:
            f_tf, l_tf = statistics.mean(r[1] for r in first), statistics.mean(r[1] for r in last)
            f_mhz, l_mhz = (statistics.mean([r[2] for r in rs if not math.isnan(r[2])] or [math.nan])
                            for rs in (first, last))
            print(f"sustain {m}x{n}x{k}: first 3 s {f_tf:.1f} TFLOP/s at {f_mhz:.0f} MHz, "
                  f"last half {l_tf:.1f} at {l_mhz:.0f} MHz (ratio {l_tf / f_tf:.3f})", file=sys.stderr)
        time.sleep(2.0)
    sampler.done.set()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--output", default="-", help="fit-logs' GEMM CSV (default: standard output)")
    ap.add_argument("--dtypes", default="bf16,fp16,fp8", help="comma-separated: " + ", ".join(DTYPES))
    ap.add_argument("--eager", action="store_true",
                    help="time GEMMs as an eager Python loop (host launch included), not by CUDA-graph replay")
    ap.add_argument("--detail-output", metavar="FILE",
                    help="also write each GEMM's graph and eager times and TFLOP/s to FILE (not for fit-logs)")
    ap.add_argument("--no-gemm", action="store_true", help="skip the GEMM sweep (only the modes asked for)")
    ap.add_argument("--warmup", type=int, default=10, help="eager calls before timing")
    ap.add_argument("--iters", type=int, default=8,
                    help=f"calls per timing at least (more, up to {MAX_CALLS}, to fill {WINDOW_S * 1e3:.0f} ms)")
    ap.add_argument("--repeats", type=int, default=3, help="timings (graph replays) per GEMM; the median is kept")
    ap.add_argument("--waves", action="store_true", help="also GEMMs around the SM count's wave boundaries")
    ap.add_argument("--launch", action="store_true", help="host launch, GPU launch and .item() times")
    ap.add_argument("--elementwise", action="store_true", help="GB/s of element-wise kernels and norms")
    ap.add_argument("--flash-attention", action="store_true", help="SDPA backends, causal, head dim 128")
    ap.add_argument("--peak-tflops", type=float, default=0.0,
                    help="the profile's peak_flops (dense bf16), to print attention's fraction of it")
    ap.add_argument("--memory-bandwidth", type=float, default=0.0, metavar="GB/s",
                    help="the profile's memory_bandwidth, to print each element-wise kernel's fraction of it")
    ap.add_argument("--sustain", type=float, default=0.0, metavar="SECONDS",
                    help="instead: each large training shape back to back for SECONDS (e.g. 60), "
                         "TFLOP/s and nvidia-smi's clock, power and temperature once a second")
    ap.add_argument("--sustain-output", default="-", help="--sustain's CSV (default: standard output)")
    args = ap.parse_args()
    bad = [d for d in args.dtypes.split(",") if d not in DTYPES]
    if bad:
        ap.error(f"unknown dtype '{bad[0]}' (valid: {', '.join(DTYPES)})")
    if args.iters < 1 or args.repeats < 1 or args.warmup < 0:
        ap.error("--iters and --repeats must be at least 1, --warmup at least 0")
    import torch
    if not torch.cuda.is_available():
        sys.exit("measure-gpu.py: no CUDA device")
    if args.sustain > 0:
        sustain(args, torch)
        return
    if not args.no_gemm:
        out = sys.stdout if args.output == "-" else open(args.output, "w", newline="")
        gemm_sweep(args, torch, out)
        if out is not sys.stdout:
            out.close()
    if args.launch:
        launch(args, torch)
    if args.elementwise:
        elementwise(args, torch)
    if args.flash_attention:
        flash(args, torch)


if __name__ == "__main__":
    main()
