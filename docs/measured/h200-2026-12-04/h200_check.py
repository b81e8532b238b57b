#!/usr/bin/env python3
"""One-shot H200 check for issue 25 (session 14). Every section is guarded:
a failure prints its traceback and the next section runs. Output under
$OUT (or ./out)."""
import csv, math, os, statistics, subprocess, sys, threading, time, traceback, json

OUT = os.environ.get("OUT", "out")
os.makedirs(OUT, exist_ok=True)
T0 = time.monotonic()


def log(*a):
    print(f"[{time.monotonic() - T0:6.1f}s]", *a, flush=True)


def guarded(name):
    def deco(fn):
        def run(*a, **k):
            log("==", name)
            try:
                return fn(*a, **k)
            except Exception:
                traceback.print_exc()
                sys.stdout.flush()
                log("!! section failed:", name)
        return run
    return deco


import torch
import torch.nn.functional as F

DEV = torch.cuda.current_device()
PROPS = torch.cuda.get_device_properties(DEV)
L2 = getattr(PROPS, "L2_cache_size", 0) or 50 * 2 ** 20


def smi(args):
    try:
        return subprocess.run(["nvidia-smi"] + args, capture_output=True, text=True, timeout=20).stdout
    except Exception as e:
        return f"nvidia-smi failed: {e}"


FIELDS = "clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active,power.limit,enforced.power.limit"


class Sampler(threading.Thread):
    def __init__(self, period=0.5):
        super().__init__(daemon=True)
        self.period, self.samples, self.done = period, [], threading.Event()

    def run(self):
        while not self.done.is_set():
            out = smi(["--query-gpu=" + FIELDS, "--format=csv,noheader,nounits", f"--id={DEV}"])
            self.samples.append((time.monotonic(), [v.strip() for v in out.strip().split(",")]))
            self.done.wait(self.period)

    def between(self, t0, t1):
        got = [v for t, v in self.samples if t0 <= t <= t1]
        cells = []
        for i in range(3):
            xs = []
            for v in got:
                try:
                    xs.append(float(v[i]))
                except (ValueError, IndexError):
                    pass
            cells.append(f"{statistics.mean(xs):.0f}" if xs else "")
        return cells + [got[-1][3] if got and len(got[-1]) > 3 else ""]


_probe = subprocess.run(["nvidia-smi", "--query-gpu=" + FIELDS, "--format=csv,noheader,nounits"],
                        capture_output=True, text=True) if True else None
if _probe.returncode != 0 or "valid" in _probe.stdout + _probe.stderr:
    FIELDS = "clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active"
print("smi probe:", _probe.returncode, (_probe.stdout + _probe.stderr).strip()[:200], "->", FIELDS, flush=True)
SAMPLER = Sampler()
SAMPLER.start()


def ev():
    return torch.cuda.Event(enable_timing=True)


def rand(shape, dtype):
    # uniform [-1, 1] (CUTLASS's guideline fill)
    x = torch.rand(*shape, device="cuda", dtype=torch.float32) * 2 - 1
    return x.to(dtype)


def copies_for(nbytes, cap=64):
    return max(2, min(cap, math.ceil(2 * L2 / max(nbytes, 1))))


def gemm_ops(m, n, k, kind):
    """A list of callables, one per rotated operand copy. kind: bf16-nn
    (torch.matmul(a[m,k], b[k,n]), the earlier curve), bf16-linear
    (F.linear: x @ W^T, a training forward), fp8-tensor(-fast), fp8-row."""
    f8 = torch.float8_e4m3fn
    if kind.startswith("bf16"):
        nb = (m * k + k * n) * 2
    else:
        nb = m * k + k * n
    cp = copies_for(nb)
    ops = []
    if kind == "bf16-nn":
        c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        for _ in range(cp):
            a, b = rand((m, k), torch.bfloat16), rand((k, n), torch.bfloat16)
            ops.append(lambda a=a, b=b: torch.matmul(a, b, out=c))
    elif kind == "bf16-linear":
        for _ in range(cp):
            a, w = rand((m, k), torch.bfloat16), rand((n, k), torch.bfloat16)
            ops.append(lambda a=a, w=w: F.linear(a, w))
    elif kind.startswith("fp8"):
        fast = kind.endswith("fast")
        for _ in range(cp):
            a, w = rand((m, k), torch.float32).to(f8), rand((n, k), torch.float32).to(f8)
            if kind.startswith("fp8-row"):
                sa = torch.ones(m, 1, device="cuda", dtype=torch.float32)
                sb = torch.ones(1, n, device="cuda", dtype=torch.float32)
            else:
                sa = torch.tensor(1.0, device="cuda")
                sb = torch.tensor(1.0, device="cuda")
            ops.append(lambda a=a, w=w, sa=sa, sb=sb: torch._scaled_mm(
                a, w.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16, use_fast_accum=fast))
    return ops


def time_eager(ops, reps):
    for o in ops[:3]:
        o()
    torch.cuda.synchronize()
    s, e = ev(), ev()
    s.record()
    for i in range(reps):
        ops[i % len(ops)]()
    e.record()
    torch.cuda.synchronize()
    return s.elapsed_time(e) / 1e3 / reps


def time_graph(ops, reps, replays=3):
    st = torch.cuda.Stream()
    st.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(st):
        for o in ops[:2]:
            o()
    torch.cuda.current_stream().wait_stream(st)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for i in range(reps):
            ops[i % len(ops)]()
    g.replay()
    torch.cuda.synchronize()
    ts = []
    for _ in range(replays):
        s, e = ev(), ev()
        s.record()
        g.replay()
        e.record()
        torch.cuda.synchronize()
        ts.append(s.elapsed_time(e) / 1e3 / reps)
    del g
    return statistics.median(ts)


@guarded("info")
def info():
    with open(f"{OUT}/info.txt", "w") as f:
        f.write(f"torch {torch.__version__} cuda {torch.version.cuda} cublas? {torch.backends.cuda.preferred_blas_library()}\n")
        f.write(f"{PROPS}\nL2 {L2}\nSMs {PROPS.multi_processor_count}\n")
        f.write(f"cudnn {torch.backends.cudnn.version()}\n")
        f.write(smi(["-q", "-d", "POWER,CLOCK,PERFORMANCE,TEMPERATURE"]))
    log("SMs", PROPS.multi_processor_count, "L2", L2)


def sustained(kind, m, n, k, seconds, w):
    ops = gemm_ops(m, n, k, kind)
    flops = 2.0 * m * n * k
    per = time_eager(ops, 10)
    calls = max(1, int(0.5 / per))  # half-second windows
    rows, call, t0 = [], 0, time.monotonic()
    while time.monotonic() - t0 < seconds:
        w0 = time.monotonic()
        s, e = ev(), ev()
        s.record()
        for _ in range(calls):
            ops[call % len(ops)]()
            call += 1
        e.record()
        torch.cuda.synchronize()
        w1 = time.monotonic()
        tf = flops * calls / (s.elapsed_time(e) / 1e3) / 1e12
        cells = SAMPLER.between(w0, w1)
        w.writerow([kind, m, n, k, f"{w1 - t0:.2f}", f"{tf:.1f}"] + cells)
        rows.append((w1 - t0, tf, float(cells[0]) if cells[0] else math.nan,
                     float(cells[1]) if cells[1] else math.nan))
    def mean(rs, i):
        xs = [r[i] for r in rs if not math.isnan(r[i])]
        return statistics.mean(xs) if xs else math.nan
    first = [r for r in rows if r[0] <= 3.0]
    last = [r for r in rows if r[0] > seconds / 2]
    log(f"sustain {kind} {m}x{n}x{k}: first 3 s {mean(first,1):.1f} TF/s {mean(first,2):.0f} MHz "
        f"{mean(first,3):.0f} W; last half {mean(last,1):.1f} TF/s {mean(last,2):.0f} MHz {mean(last,3):.0f} W "
        f"(ratio {mean(last,1)/mean(first,1):.3f}); eff last {mean(last,1)/(989 if kind.startswith('bf16') else 1979)*1e12/1e12:.3f}")
    del ops
    torch.cuda.empty_cache()


@guarded("sustain")
def sustain():
    with open(f"{OUT}/sustain.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["kind", "m", "n", "k", "t_s", "tflops", "sm_mhz", "power_w", "temp_c", "reasons"])
        plan = [("bf16-linear", 8192, 14336, 4096, 80), ("bf16-nn", 4096, 4096, 4096, 25),
                ("bf16-linear", 2048, 28672, 8192, 25), ("bf16-linear", 16384, 1024, 8192, 20),
                ("fp8-tensor", 8192, 14336, 4096, 35)]
        for kind, m, n, k, sec in plan:
            try:
                sustained(kind, m, n, k, sec, w)
            except Exception:
                traceback.print_exc()
            f.flush()
            time.sleep(1.5)
    with open(f"{OUT}/smi-after-sustain.txt", "w") as f:
        f.write(smi(["-q", "-d", "POWER,CLOCK,PERFORMANCE,TEMPERATURE"]))


SQUARE = [256, 512, 1024, 2048, 4096, 8192, 16384]
TRAINING = [(4096, 12288, 4096), (4096, 4096, 4096), (8192, 14336, 4096), (8192, 4096, 14336),
            (16384, 1024, 8192), (2048, 28672, 8192), (1024, 1024, 64), (8192, 6144, 4096),
            (8192, 4096, 4096), (8192, 28672, 4096), (1024, 3584, 4096), (4096, 1536, 8192)]


def wave_shapes(sms, tile=128, k=8192):
    shapes = []
    for target in (sms, 2 * sms):
        for tiles in range(target - 6, target + 7, 2):
            a = max(d for d in range(1, int(tiles ** 0.5) + 1) if tiles % d == 0)
            if a >= 4:
                shapes.append((tile * a, tile * (tiles // a), k))
    return shapes


@guarded("gemm sweep")
def sweep():
    shapes = [(s, s, s) for s in SQUARE] + TRAINING + wave_shapes(PROPS.multi_processor_count)
    with open(f"{OUT}/gemm.csv", "w", newline="") as f, open(f"{OUT}/gemm-fitlogs.csv", "w", newline="") as g:
        w, wf = csv.writer(f), csv.writer(g)
        w.writerow(["m", "n", "k", "kind", "graph_s", "eager_s", "graph_tflops", "eager_tflops"])
        wf.writerow(["m", "n", "k", "dtype", "seconds"])
        for kind in ("bf16-nn", "bf16-linear", "fp8-tensor", "fp8-tensor-fast", "fp8-row"):
            for m, n, k in shapes:
                if kind in ("bf16-linear", "fp8-tensor-fast", "fp8-row") and (m, n, k) not in TRAINING:
                    continue
                try:
                    ops = gemm_ops(m, n, k, kind)
                    est = time_eager(ops, 5)
                    reps = int(min(400, max(8, 0.02 / est)))
                    eg = time_eager(ops, reps)
                    gr = time_graph(ops, reps)
                    fl = 2.0 * m * n * k
                    w.writerow([m, n, k, kind, f"{gr:.4e}", f"{eg:.4e}", f"{fl / gr / 1e12:.1f}", f"{fl / eg / 1e12:.1f}"])
                    if kind in ("bf16-nn", "fp8-tensor"):
                        wf.writerow([m, n, k, "bf16" if kind.startswith("bf16") else "fp8", f"{gr:.6e}"])
                    del ops
                except Exception as e:
                    print(f"gemm {kind} {m}x{n}x{k}: {e!r}"[:300], flush=True)
                    if kind.startswith("fp8"):
                        break
            f.flush()
            torch.cuda.empty_cache()
    log("sweep done")


@guarded("launch")
def launch():
    x = torch.zeros(1, device="cuda")
    res = {}
    for _ in range(200):
        x.add_(1)
    torch.cuda.synchronize()
    n = 20000
    t = time.perf_counter()
    for _ in range(n):
        x.add_(1)
    t_issue = time.perf_counter() - t
    torch.cuda.synchronize()
    t_all = time.perf_counter() - t
    res["eager_add_issue_us"] = t_issue / n * 1e6
    res["eager_add_wall_us"] = t_all / n * 1e6
    ops = [lambda: x.add_(1)]
    res["graph_add_gpu_us"] = time_graph(ops, 2000) * 1e6
    # a small Linear: host cost of an eager matmul call
    a, wt = rand((1024, 1024), torch.bfloat16), rand((1024, 1024), torch.bfloat16)
    ops = [lambda: F.linear(a, wt)]
    res["linear1024_eager_us"] = time_eager(ops, 2000) * 1e6
    res["linear1024_graph_us"] = time_graph(ops, 2000) * 1e6
    t = time.perf_counter()
    for _ in range(5000):
        F.linear(a, wt)
    res["linear1024_issue_us"] = (time.perf_counter() - t) / 5000 * 1e6
    torch.cuda.synchronize()
    # host synchronisation round trip (.item())
    t = time.perf_counter()
    for _ in range(500):
        x.item()
    res["item_sync_us"] = (time.perf_counter() - t) / 500 * 1e6
    with open(f"{OUT}/launch.json", "w") as f:
        json.dump(res, f, indent=1)
    log("launch", json.dumps({k: round(v, 2) for k, v in res.items()}))


@guarded("elementwise")
def elementwise():
    N = 256 * 2 ** 20
    a, b = rand((N // 4096, 4096), torch.bfloat16), rand((N // 4096, 4096), torch.bfloat16)
    wgt = rand((4096,), torch.bfloat16)
    res = {}

    def bw(name, fn, nbytes):
        t = time_eager([fn], 10)
        res[name] = (t * 1e6, nbytes / t / 1e9)

    E = N * 2
    bw("copy", lambda: b.copy_(a), 2 * E)
    bw("add", lambda: a + b, 3 * E)
    bw("mul_scalar", lambda: a * 0.5, 2 * E)
    bw("gelu", lambda: F.gelu(a), 2 * E)
    bw("silu_mul", lambda: F.silu(a) * b, 3 * E + 2 * E)  # two kernels in eager
    bw("rms_norm_F", lambda: F.rms_norm(a, (4096,), wgt), 2 * E)
    bw("rms_norm_manual", lambda: a * torch.rsqrt(a.float().pow(2).mean(-1, keepdim=True) + 1e-5).to(a.dtype) * wgt, 2 * E)
    bw("layer_norm", lambda: F.layer_norm(a, (4096,), wgt), 2 * E)
    bw("softmax", lambda: torch.softmax(a, -1), 2 * E)
    af = a.float()
    bw("fp32_to_bf16", lambda: af.to(torch.bfloat16), 6 * N)
    # rms_norm backward
    ar = a.detach().clone().requires_grad_(True)
    wr = wgt.detach().clone().requires_grad_(True)
    y = F.rms_norm(ar, (4096,), wr)
    gy = torch.ones_like(y)
    bw("rms_norm_F_bwd", lambda: torch.autograd.grad(y, (ar, wr), gy, retain_graph=True), 3 * E)
    with open(f"{OUT}/elementwise.json", "w") as f:
        json.dump(res, f, indent=1)
    for k_, (us, gbs) in res.items():
        log(f"elementwise {k_}: {us:.0f} us {gbs:.0f} GB/s")


@guarded("attention")
def attention():
    from torch.nn.attention import sdpa_kernel, SDPBackend
    backs = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION,
             "efficient": SDPBackend.EFFICIENT_ATTENTION}
    rows = []
    for seq in (1024, 2048, 4096, 8192, 16384):
        for bname, be in backs.items():
            try:
                with sdpa_kernel([be]):
                    b = max(1, 8192 // seq)
                    q, k, v = (rand((b, 32, seq, 128), torch.bfloat16).requires_grad_(True) for _ in range(3))
                    fn = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True)
                    fw = time_eager([fn], 10)
                    out = fn()
                    gr = torch.randn_like(out)
                    bwd = time_eager([lambda: torch.autograd.grad(out, (q, k, v), gr, retain_graph=True)], 10)
                    fl = 4.0 * b * 32 * seq * seq * 128 / 2
                    rows.append([seq, b, bname, f"{fw:.4e}", f"{bwd:.4e}", f"{fl / fw / 1e12:.1f}", f"{2.5 * fl / bwd / 1e12:.1f}"])
                    log(f"attn {bname} seq {seq} b {b}: fwd {fl / fw / 1e12:.1f} bwd {2.5 * fl / bwd / 1e12:.1f} TF/s (causal half)")
                    del q, k, v, out, gr
            except Exception as e:
                print(f"attn {bname} {seq}: {e!r}"[:300], flush=True)
    with open(f"{OUT}/attention.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["seq", "batch", "backend", "fwd_s", "bwd_s", "fwd_tflops_causal_half", "bwd_tflops_causal_half"])
        w.writerows(rows)


class Layer(torch.nn.Module):
    def __init__(self, h, nh, nkv, ffn):
        super().__init__()
        hd = h // nh
        self.nh, self.nkv, self.hd = nh, nkv, hd
        L = lambda i, o: torch.nn.Linear(i, o, bias=False)
        self.wq, self.wk, self.wv, self.wo = L(h, nh * hd), L(h, nkv * hd), L(h, nkv * hd), L(nh * hd, h)
        self.w1, self.w3, self.w2 = L(h, ffn), L(h, ffn), L(ffn, h)
        self.n1, self.n2 = torch.nn.RMSNorm(h), torch.nn.RMSNorm(h)

    def forward(self, x, cos, sin):
        b, t, _ = x.shape
        y = self.n1(x)
        q = self.wq(y).view(b, t, self.nh, self.hd)
        k = self.wk(y).view(b, t, self.nkv, self.hd)
        v = self.wv(y).view(b, t, self.nkv, self.hd)

        def rope(z):
            z1, z2 = z[..., : self.hd // 2], z[..., self.hd // 2:]
            return z * cos + torch.cat((-z2, z1), -1) * sin
        q, k = rope(q), rope(k)
        rep = self.nh // self.nkv
        k = k.repeat_interleave(rep, dim=2)
        v = v.repeat_interleave(rep, dim=2)
        o = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
        x = x + self.wo(o.transpose(1, 2).reshape(b, t, -1))
        y = self.n2(x)
        return x + self.w2(F.silu(self.w1(y)) * self.w3(y))


class Model(torch.nn.Module):
    def __init__(self, layers, h=4096, nh=32, nkv=8, ffn=14336, vocab=128256):
        super().__init__()
        self.emb = torch.nn.Embedding(vocab, h)
        self.layers = torch.nn.ModuleList([Layer(h, nh, nkv, ffn) for _ in range(layers)])
        self.norm = torch.nn.RMSNorm(h)
        self.out = torch.nn.Linear(h, vocab, bias=False)
        self.hd = h // nh

    def forward(self, tok, tgt):
        t = tok.shape[1]
        pos = torch.arange(t, device=tok.device, dtype=torch.float32)
        inv = 1.0 / (500000.0 ** (torch.arange(0, self.hd, 2, device=tok.device, dtype=torch.float32) / self.hd))
        ang = torch.outer(pos, inv)
        ang = torch.cat((ang, ang), -1)
        cos, sin = ang.cos()[None, :, None, :].to(torch.bfloat16), ang.sin()[None, :, None, :].to(torch.bfloat16)
        x = self.emb(tok)
        for l in self.layers:
            x = l(x, cos, sin)
        logits = self.out(self.norm(x))
        return F.cross_entropy(logits.float().view(-1, logits.shape[-1]), tgt.view(-1))


def kernel_table(prof, path):
    rows = []
    for e in prof.key_averages():
        dt = getattr(e, "self_device_time_total", None)
        if dt is None:
            dt = getattr(e, "self_cuda_time_total", 0)
        if dt and dt > 0:
            rows.append((e.key, dt, e.count))
    rows.sort(key=lambda r: -r[1])
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["name", "self_device_us", "count"])
        for r in rows:
            w.writerow([r[0][:200], f"{r[1]:.1f}", r[2]])
    return rows


@guarded("layer step")
def step():
    from torch.profiler import profile, ProfilerActivity
    res = {}
    for layers, seq, mb in ((4, 8192, 1), (4, 2048, 1), (4, 4096, 2)):
        torch.manual_seed(0)
        model = Model(layers).cuda().to(torch.bfloat16)
        tok = torch.randint(0, 128256, (mb, seq), device="cuda")
        tgt = torch.randint(0, 128256, (mb, seq), device="cuda")

        def one():
            loss = model(tok, tgt)
            loss.backward()
            for p in model.parameters():
                p.grad = None
        for _ in range(3):
            one()
        torch.cuda.synchronize()
        ts = []
        for _ in range(8):
            s, e = ev(), ev()
            w0 = time.perf_counter()
            s.record()
            one()
            e.record()
            torch.cuda.synchronize()
            ts.append((s.elapsed_time(e) / 1e3, time.perf_counter() - w0))
        med = statistics.median(t[0] for t in ts)
        key = f"L{layers}_s{seq}_mb{mb}"
        res[key] = {"step_s": med, "wall_s": statistics.median(t[1] for t in ts),
                    "peak_mem_gib": torch.cuda.max_memory_allocated() / 2 ** 30}
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            one()
            torch.cuda.synchronize()
        rows = kernel_table(prof, f"{OUT}/kernels-{key}.csv")
        res[key]["kernel_sum_s"] = sum(r[1] for r in rows if not r[0].startswith(("aten::", "autograd", "torch", "Optimizer", "cudaDevice", "cuda"))) / 1e6
        log("step", key, json.dumps(res[key]))
        if seq == 8192:
            # a training step held for 20 s: the clock it holds
            with open(f"{OUT}/step-sustain.csv", "w", newline="") as f:
                w = csv.writer(f)
                w.writerow(["t_s", "step_s", "sm_mhz", "power_w", "temp_c", "reasons"])
                t0 = time.monotonic()
                while time.monotonic() - t0 < 20:
                    w0 = time.monotonic()
                    s, e = ev(), ev()
                    s.record()
                    one(); one()
                    e.record()
                    torch.cuda.synchronize()
                    w.writerow([f"{time.monotonic() - t0:.2f}", f"{s.elapsed_time(e) / 2e3:.4f}"] + SAMPLER.between(w0, time.monotonic()))
        del model
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    with open(f"{OUT}/step.json", "w") as f:
        json.dump(res, f, indent=1)


if __name__ == "__main__":
    info()
    only = sys.argv[1:]
    for name, fn in (("sustain", sustain), ("sweep", sweep), ("launch", launch), ("elementwise", elementwise),
                     ("attention", attention), ("step", step)):
        if not only or name in only:
            fn()
    SAMPLER.done.set()
    log("done")
