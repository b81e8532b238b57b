#!/usr/bin/env python3
"""Writes h100-pcie-waves.csv: bf16 GEMM timings, synthetic, in the layout
scripts/measure-gpu.py writes, from plan-cli's parametric GEMM model
(src/core/fit_gemm.c, compute.c) with the wave factor of cluster.c
(cluster_gemm_wave_factor) at known values, times a deterministic +-1 %
wobble. They test fit-logs --gemm's search of the wave model, not a real
machine. Known values: an H100 PCIe (gpus/h100-pcie-80gb.yaml: 756 TFLOPS,
2 TB/s at the Hopper default memory_efficiency 0.9) with 114 SMs, CTA
tiles of 128 x 128, gemm_efficiency_max 0.70 and gemm_overhead 6 us.
Shapes: M = 128 a and N = 128 b make a x b tiles of 128 x 128 around the
wave boundaries of 114 SMs (and of the 132 of an SXM part), K 8192; and
square GEMMs that pin the efficiency and the overhead."""
import math

PEAK, MEM_BPS = 756e12, 2e12 * 0.9
EFF, OVERHEAD, SMS, TILE_M, TILE_N = 0.70, 6e-6, 114, 128, 128
seed = [2026]


def wobble():
    seed[0] = (seed[0] * 1103515245 + 12345) % 2**31
    return 1.0 + 0.02 * (seed[0] / 2**31 - 0.5)


def ceil_count(x):
    return math.ceil(x * (1.0 - 1e-12))


def best_fill_sms(m, n):
    m_tm, m_tn = ceil_count(m / TILE_M), ceil_count(m / TILE_N)
    n_tm, n_tn = ceil_count(n / TILE_M), ceil_count(n / TILE_N)
    half = m_tm * n_tm if TILE_M <= TILE_N else m_tn * n_tn
    return max(t / ceil_count(t / SMS) for t in (m_tm * n_tn, m_tn * n_tm, half))


def wave_factor(m, n, k):
    fill = best_fill_sms(m, n)
    if fill >= SMS:
        return 1.0
    side = (m * n * k) ** (1.0 / 3.0)
    return min(fill / best_fill_sms(side, side), 1.0)


def seconds(m, n, k):
    flops = 2.0 * m * n * k
    t_flop = (flops / (PEAK * EFF) + OVERHEAD) / wave_factor(m, n, k)
    t_mem = 2.0 * (m * k + k * n + m * n) / MEM_BPS
    return max(t_flop, t_mem) * wobble()


tiles = [(8, 12), (6, 19), (5, 23), (4, 29), (10, 12), (12, 11), (7, 19), (10, 14), (12, 19), (10, 23),
         (9, 13), (11, 11), (16, 16), (24, 24), (32, 32), (6, 20), (8, 15), (15, 16), (19, 12), (20, 12)]
rows = [(128 * a, 128 * b, 8192) for a, b in tiles]
rows += [(s, s, s) for s in (512, 1024, 2048, 4096, 8192)]
print("m,n,k,dtype,seconds")
for m, n, k in rows:
    print(f"{m},{n},{k},bf16,{seconds(m, n, k):.6e}")
