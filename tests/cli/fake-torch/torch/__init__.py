"""A stand-in for PyTorch, for tests/cli/run-fit-logs-tests.sh: just the
calls scripts/measure-gpu.py makes, on a simulated GPU whose clock is a
number, so the script runs here (no GPU, no torch) and every time it
reports is known in advance. Not PyTorch's semantics beyond that.

The simulated GPU: a GEMM of F FLOPs takes F / 500e12 s (16-bit) or
F / 1000e12 s (fp8) plus 5 us; any other kernel 1 us plus its bytes at
4e12 B/s. An eager call costs the larger of its GPU time and HOST_S, the
host's launch (the queue never fills: the host is the bound when it is
slower); in a CUDA graph capture a call costs nothing, and a replay the
sum of its calls' GPU times."""
import contextlib
import types

HOST_S = 12e-6
GEMM_FLOPS_S = {"bf16": 500e12, "fp16": 500e12, "fp8": 1000e12}
GEMM_FIXED_S = 5e-6
KERNEL_S, BYTES_S = 1e-6, 4e12

__version__ = "0.0-fake"


class dtype:
    def __init__(self, name, itemsize):
        self.name, self.itemsize = name, itemsize

    def __repr__(self):
        return "torch." + self.name


float32 = dtype("float32", 4)
bfloat16 = dtype("bfloat16", 2)
float16 = dtype("float16", 2)
float8_e4m3fn = dtype("float8_e4m3fn", 1)

_clock = {"now": 0.0, "graph": None}


def _launch(gpu_s):
    g = _clock["graph"]
    if g is not None:
        g.cost += gpu_s
    else:
        _clock["now"] += max(gpu_s, HOST_S)


class Tensor:
    def __init__(self, shape, dt=float32, cost=0.0):
        self.shape, self.dtype, self.cost = tuple(shape), dt, cost

    def numel(self):
        n = 1
        for s in self.shape:
            n *= s
        return n

    def _ew(self, *others):
        _launch(KERNEL_S + self.numel() * self.dtype.itemsize * (2 + len(others)) / BYTES_S)
        return Tensor(self.shape, self.dtype)

    def __mul__(self, other):
        return self._ew(other)

    __rmul__ = __add__ = __radd__ = __sub__ = __mul__

    def to(self, dt):
        out = self._ew()
        out.dtype = dt
        return out

    def t(self):
        return Tensor(self.shape[::-1], self.dtype)

    def transpose(self, i, j):
        s = list(self.shape)
        s[i], s[j] = s[j], s[i]
        return Tensor(s, self.dtype)

    def requires_grad_(self, flag=True):
        return self

    def detach(self):
        return self

    def clone(self):
        return self._ew()

    def copy_(self, src):
        self._ew()
        return self

    def add_(self, v):
        self._ew()
        return self

    def item(self):
        _launch(KERNEL_S)
        return 0.0


def _shape(args):
    return args[0] if len(args) == 1 and isinstance(args[0], (tuple, list)) else args


def rand(*shape, device=None, dtype=float32):
    return Tensor(_shape(shape), dtype)


def empty(*shape, device=None, dtype=float32):
    return Tensor(_shape(shape), dtype)


ones = zeros = empty


def tensor(value, device=None, dtype=float32):
    return Tensor((), dtype)


def ones_like(x):
    return Tensor(x.shape, x.dtype)


def _gemm(m, n, k, kind):
    _launch(2.0 * m * n * k / GEMM_FLOPS_S[kind] + GEMM_FIXED_S)


def matmul(a, b, out=None):
    (m, k), n = a.shape, b.shape[1]
    _gemm(m, n, k, "fp16" if a.dtype is float16 else "bf16")
    return out if out is not None else Tensor((m, n), a.dtype)


def _scaled_mm(a, b, scale_a=None, scale_b=None, out_dtype=None, use_fast_accum=False):
    (m, k), n = a.shape, b.shape[1]
    _gemm(m, n, k, "fp8")
    return Tensor((m, n), out_dtype)


def softmax(x, dim):
    return x._ew()


def _grad(outputs, inputs, grad_outputs=None, retain_graph=False):
    """A backward 2.5 times its forward kernel (@outputs.cost) where
    that is known (attention), else an element-wise pass."""
    if outputs.cost:
        _launch(2.5 * outputs.cost)
    else:
        outputs._ew(*inputs)
    return tuple(Tensor(x.shape, x.dtype) for x in inputs)


autograd = types.SimpleNamespace(grad=_grad)


class _Props:
    name = "Fake GPU"
    multi_processor_count = 132
    L2_cache_size = 50 * 2 ** 20


class _Event:
    def __init__(self, enable_timing=False):
        self.t = None

    def record(self):
        self.t = _clock["now"]

    def elapsed_time(self, end):
        return (end.t - self.t) * 1e3  # ms, as CUDA events


class _Stream:
    def wait_stream(self, other):
        pass


class _Graph:
    def __init__(self):
        self.cost = 0.0

    def replay(self):
        _clock["now"] += self.cost


@contextlib.contextmanager
def _capture(g):
    _clock["graph"] = g
    try:
        yield
    finally:
        _clock["graph"] = None


cuda = types.SimpleNamespace(
    is_available=lambda: True, current_device=lambda: 0, get_device_properties=lambda dev: _Props(),
    synchronize=lambda: None, empty_cache=lambda: None, Event=_Event, Stream=_Stream,
    stream=lambda st: contextlib.nullcontext(), current_stream=lambda: _Stream(), CUDAGraph=_Graph,
    graph=_capture)

from . import nn  # noqa: E402,F401  (torch.nn.functional as an attribute, as PyTorch has it)
