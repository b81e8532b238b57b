"""torch.nn.functional's calls measure-gpu.py makes (see torch/__init__.py)."""
import torch


def linear(x, w):
    (m, k), n = x.shape, w.shape[0]
    torch._gemm(m, n, k, "bf16")
    return torch.Tensor((m, n), x.dtype)


def gelu(x):
    return x._ew()


silu = softmax = gelu


def rms_norm(x, shape, weight=None):
    return x._ew()


layer_norm = rms_norm


def scaled_dot_product_attention(q, k, v, is_causal=False):
    b, h, s, d = q.shape
    cost = 4.0 * b * h * s * s * d / 2 / torch.GEMM_FLOPS_S["bf16"] + torch.GEMM_FIXED_S
    torch._launch(cost)
    return torch.Tensor(q.shape, q.dtype, cost)
