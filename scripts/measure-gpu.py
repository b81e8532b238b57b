#!/usr/bin/env python3
"""Time torch.matmul on a grid of GEMM shapes and write the CSV that
`plan-cli fit-logs --gemm CSV --gpu NAME` reads: m,n,k,dtype,seconds
(seconds per kernel, the median of --repeats timings of --iters calls
each, measured with CUDA events after --warmup calls).

  python3 scripts/measure-gpu.py --output h100-gemm.csv
  python3 scripts/measure-gpu.py --dtypes bf16,fp8 --flash-attention

fp8 uses torch._scaled_mm (Hopper and later) when this PyTorch has it, and
is skipped otherwise. --flash-attention also times
torch.nn.functional.scaled_dot_product_attention (causal, forward and
backward) and prints the achieved TFLOP/s on stderr: the CSV stays GEMMs
only. --waves also times GEMMs around the GPU's wave boundaries (M x N
in 128 x 128 tiles just under, at and over one and two times its SM
count, K 8192), from which fit-logs --gemm fits sm_count and the CTA tile
(docs/calibration.md, "GEMM waves from a log"). --sustain SECONDS instead
runs each large TRAINING shape back to back for that long, as a training
step's GEMMs run, and writes one CSV line a second (--sustain-output) with
the TFLOP/s of that second next to nvidia-smi's SM clock, power,
temperature and throttle reasons; stderr gets the first 3 s against the
last half of each shape (docs/research/gpu-data.md, "The clock a Hopper GPU
holds in a training step"). Not run by the test suite (it needs a GPU)."""
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


def timed(fn, warmup, iters, repeats, torch):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(iters):
            fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) / 1e3 / iters)  # ms -> s per call
    return statistics.median(times)


def gemm_fn(m, n, k, dtype, torch):
    if dtype == "fp8":
        if not hasattr(torch, "_scaled_mm") or not hasattr(torch, "float8_e4m3fn"):
            return None
        a = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
        b = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn).t()  # column-major, as cuBLASLt wants
        one = torch.tensor(1.0, device="cuda")
        try:
            torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
        except (RuntimeError, TypeError):
            return None
        return lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
    t = {"bf16": torch.bfloat16, "fp16": torch.float16}[dtype]
    a = torch.randn(m, k, device="cuda", dtype=t)
    b = torch.randn(k, n, device="cuda", dtype=t)
    return lambda: torch.matmul(a, b)


def flash(args, torch):
    f = torch.nn.functional.scaled_dot_product_attention
    for seq in (2048, 4096, 8192):
        q, k, v = (torch.randn(1, 32, seq, 128, device="cuda", dtype=torch.bfloat16, requires_grad=True)
                   for _ in range(3))
        fwd = timed(lambda: f(q, k, v, is_causal=True), args.warmup, args.iters, args.repeats, torch)
        out = f(q, k, v, is_causal=True)
        grad = torch.randn_like(out)
        bwd = timed(lambda: out.backward(grad, retain_graph=True), args.warmup, args.iters, args.repeats, torch)
        flops = 4 * 32 * seq * seq * 128 / 2  # causal: half the score matrix
        print(f"flash attention seq {seq}: forward {flops / fwd / 1e12:.1f} TFLOP/s, "
              f"backward {2.5 * flops / bwd / 1e12:.1f} TFLOP/s", file=sys.stderr)


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
    ap.add_argument("--output", default="-", help="CSV file (default: standard output)")
    ap.add_argument("--dtypes", default="bf16,fp16,fp8", help="comma-separated: bf16, fp16, fp8")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--flash-attention", action="store_true")
    ap.add_argument("--waves", action="store_true", help="also GEMMs around the SM count's wave boundaries")
    ap.add_argument("--sustain", type=float, default=0.0, metavar="SECONDS",
                    help="instead: each large training shape back to back for SECONDS (e.g. 60), "
                         "TFLOP/s and nvidia-smi's clock, power and temperature once a second")
    ap.add_argument("--sustain-output", default="-", help="--sustain's CSV (default: standard output)")
    args = ap.parse_args()
    import torch
    if not torch.cuda.is_available():
        sys.exit("measure-gpu.py: no CUDA device")
    if args.sustain > 0:
        sustain(args, torch)
        return
    out = sys.stdout if args.output == "-" else open(args.output, "w", newline="")
    w = csv.writer(out)
    w.writerow(["m", "n", "k", "dtype", "seconds"])
    shapes = [(s, s, s) for s in SQUARE] + TRAINING
    if args.waves:
        sms = torch.cuda.get_device_properties(0).multi_processor_count
        print(f"measure-gpu.py: {sms} SMs, {len(wave_shapes(sms))} wave-boundary GEMMs", file=sys.stderr)
        shapes += wave_shapes(sms)
    for dtype in args.dtypes.split(","):
        for m, n, k in shapes:
            fn = gemm_fn(m, n, k, dtype, torch)
            if fn is None:
                print(f"measure-gpu.py: {dtype} not available here, skipped", file=sys.stderr)
                break
            w.writerow([m, n, k, dtype, f"{timed(fn, args.warmup, args.iters, args.repeats, torch):.6e}"])
            out.flush()
    if args.flash_attention:
        flash(args, torch)


if __name__ == "__main__":
    main()
