#!/usr/bin/env python3
"""Second short H200 run (session 14): the clock a training-like step holds,
and the old curve's method (randn, no rotation) against the guideline's."""
import csv, math, statistics, time, sys
import h200_check as C
from h200_check import torch, F, ev, log, OUT, SAMPLER


def step_sustain(seconds=30):
    torch.manual_seed(0)
    model = C.Model(4).cuda().to(torch.bfloat16)
    tok = torch.randint(0, 128256, (1, 8192), device="cuda")
    tgt = torch.randint(0, 128256, (1, 8192), device="cuda")

    def one():
        model(tok, tgt).backward()
        for p in model.parameters():
            p.grad = None
    for _ in range(3):
        one()
    torch.cuda.synchronize()
    rows = []
    with open(f"{OUT}/step-sustain.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["t_s", "step_s", "sm_mhz", "power_w", "temp_c", "reasons"])
        t0 = time.monotonic()
        while time.monotonic() - t0 < seconds:
            w0 = time.monotonic()
            s, e = ev(), ev()
            s.record()
            for _ in range(4):
                one()
            e.record()
            torch.cuda.synchronize()
            cells = SAMPLER.between(w0, time.monotonic())
            st = s.elapsed_time(e) / 4e3
            w.writerow([f"{time.monotonic() - t0:.2f}", f"{st:.4f}"] + cells)
            rows.append((time.monotonic() - t0, st, float(cells[0]) if cells[0] else math.nan,
                         float(cells[1]) if cells[1] else math.nan, cells[3]))
    for lo, hi in ((0, 3), (3, 10), (10, 20), (20, 31)):
        rs = [r for r in rows if lo <= r[0] < hi]
        if rs:
            mhz = [r[2] for r in rs if not math.isnan(r[2])]
            pw = [r[3] for r in rs if not math.isnan(r[3])]
            log(f"step s8192 {lo}-{hi} s: step {statistics.mean(r[1] for r in rs)*1e3:.1f} ms, "
                f"{statistics.mean(mhz) if mhz else math.nan:.0f} MHz, {statistics.mean(pw) if pw else math.nan:.0f} W, reasons {rs[-1][4]}")
    del model
    torch.cuda.empty_cache()


def old_method(seconds=10):
    """randn operands, one copy (stays in L2 partly), as docs/h200-gemm-measured.json was made."""
    m, n, k = 8192, 14336, 4096
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    z = [torch.zeros(m, k, device="cuda", dtype=torch.bfloat16), torch.zeros(k, n, device="cuda", dtype=torch.bfloat16)]
    for name, (x, y) in (("randn-1copy", (a, b)), ("zeros", z)):
        t0 = time.monotonic()
        tfs, mhzs = [], []
        while time.monotonic() - t0 < seconds:
            w0 = time.monotonic()
            s, e = ev(), ev()
            s.record()
            for _ in range(300):
                torch.matmul(x, y)
            e.record()
            torch.cuda.synchronize()
            tfs.append(2.0 * m * n * k * 300 / (s.elapsed_time(e) / 1e3) / 1e12)
            c = SAMPLER.between(w0, time.monotonic())
            if c[0]:
                mhzs.append(float(c[0]))
        log(f"{name} 8192x14336x4096 over {seconds} s: first {tfs[0]:.1f} TF/s, mean of rest {statistics.mean(tfs[1:]):.1f} TF/s, "
            f"{statistics.mean(mhzs) if mhzs else math.nan:.0f} MHz")
        time.sleep(1)


if __name__ == "__main__":
    for fn in (step_sustain, old_method):
        try:
            fn()
        except Exception:
            import traceback
            traceback.print_exc()
    with open(f"{OUT}/smi-end.txt", "w") as f:
        f.write(C.smi(["-q", "-d", "POWER,CLOCK,PERFORMANCE"]))
    SAMPLER.done.set()
    log("done")
