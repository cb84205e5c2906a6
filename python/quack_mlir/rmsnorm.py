"""RMSNorm forward over the last dimension."""

from ._kernels import fast_caches, get_kernel
from ._runtime import float_arg
from .bundle import alignment_of

__all__ = ["rmsnorm"]

_torch = None
_DTYPES = None


def _init_torch():
    global _torch, _DTYPES
    import torch
    _torch = torch
    _DTYPES = {torch.bfloat16: ("bf16", 2), torch.float16: ("f16", 2),
               torch.float32: ("f32", 4)}
    return torch


def _check(x, weight):
    """Validates the inputs; returns (x as [M, N] or None, M, N, row stride,
    (T, element size))."""
    torch = _torch
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"rmsnorm: x must be a torch.Tensor, got "
                        f"{type(x).__name__}")
    if not isinstance(weight, torch.Tensor):
        raise TypeError(f"rmsnorm: weight must be a torch.Tensor, got "
                        f"{type(weight).__name__}")
    if x.dim() < 1:
        raise ValueError("rmsnorm: x must have at least one dimension "
                         "[..., N], got a 0-d tensor")
    dt = _DTYPES.get(x.dtype)
    if dt is None:
        raise TypeError(f"rmsnorm: x has dtype {x.dtype}; supported dtypes "
                        "are torch.bfloat16, torch.float16 and torch.float32")
    if weight.dtype != x.dtype:
        raise TypeError(f"rmsnorm: weight has dtype {weight.dtype} but x has "
                        f"{x.dtype}; they must match")
    n = x.shape[-1]
    if n == 0:
        raise ValueError(f"rmsnorm: the last dimension of x (N) must be "
                         f"positive, x has shape {tuple(x.shape)}")
    if weight.dim() != 1 or weight.shape[0] != n:
        raise ValueError(f"rmsnorm: weight must have shape [N] = [{n}], got "
                         f"{list(weight.shape)}")
    if n > 1 and x.stride(-1) != 1:
        raise ValueError(f"rmsnorm: the last dimension of x must have stride "
                         f"1, x has strides {tuple(x.stride())}; call "
                         ".contiguous() first")
    if n > 1 and weight.stride(0) != 1:
        raise ValueError(f"rmsnorm: weight must be contiguous, it has stride "
                         f"{weight.stride(0)}")
    if x.device.type != "cuda":
        raise ValueError(f"rmsnorm: x must be on a CUDA device, it is on "
                         f"{x.device}")
    if weight.device != x.device:
        raise ValueError(f"rmsnorm: weight is on {weight.device} but x is on "
                         f"{x.device}; they must be on the same device")
    if x.dim() == 2:
        x2 = x
    else:
        try:
            x2 = x.view(-1, n)
        except RuntimeError:
            raise ValueError(
                f"rmsnorm: x of shape {tuple(x.shape)} and strides "
                f"{tuple(x.stride())} cannot be viewed as rows [M, N] "
                "without a copy; call .contiguous() first") from None
    m = x2.shape[0]
    stride = x2.stride(0) if m > 1 else 0
    if m > 1 and stride < n:
        raise ValueError(f"rmsnorm: the rows of x overlap (row stride "
                         f"{stride} < N = {n}); pass a tensor whose rows are "
                         "distinct, e.g. x.contiguous()")
    return x2, m, n, stride, dt


# (T, N, alignment) -> Kernel: the hot path skips the bundle lookup.
_kernels = {}
fast_caches.append(_kernels)
# eps -> its bit pattern as a double.
_eps_bits = {}


def _launch(x2, weight, eps, y, rstd, m, n, stride, dt):
    torch = _torch
    t, size = dt
    y_stride = n if m > 1 else 0
    xp, wp, yp, rp = (x2.data_ptr(), weight.data_ptr(), y.data_ptr(),
                      rstd.data_ptr())
    align = alignment_of(xp, wp, yp, rp, stride * size, y_stride * size)
    key = (t, n, align)
    kernel = _kernels.get(key)
    if kernel is None:
        kernel = get_kernel("rmsnorm_fwd", {"N": n, "T": t}, align)
        _kernels[key] = kernel
    eps_bits = _eps_bits.get(eps)
    if eps_bits is None:
        eps_bits = _eps_bits.setdefault(eps, float_arg(eps))
    args = (xp, stride, wp, eps_bits, yp, y_stride, rp)
    index = x2.device.index
    if index is not None and torch.cuda.current_device() != index:
        with torch.cuda.device(index):
            kernel.launch(m, args, torch.cuda.current_stream().cuda_stream)
    else:
        kernel.launch(m, args, torch.cuda.current_stream().cuda_stream)


def rmsnorm_forward(x, weight, eps):
    """Returns (y, rstd) for validated-or-not inputs; the eager path."""
    if _torch is None:
        _init_torch()
    x2, m, n, stride, dt = _check(x, weight)
    torch = _torch
    y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    rstd = torch.empty((m,), dtype=torch.float32, device=x.device)
    if m > 0:
        _launch(x2, weight, eps, y, rstd, m, n, stride, dt)
    return y, rstd


_op = None


def _get_op():
    """The torch.library op that torch.compile sees (registered lazily)."""
    global _op
    if _op is not None:
        return _op
    torch = _torch

    @torch.library.custom_op("quack_mlir::rmsnorm_fwd", mutates_args=())
    def rmsnorm_fwd(x: torch.Tensor, weight: torch.Tensor,
                    eps: float) -> tuple[torch.Tensor, torch.Tensor]:
        return rmsnorm_forward(x, weight, eps)

    @rmsnorm_fwd.register_fake
    def _(x, weight, eps):
        return (torch.empty_like(x, memory_format=torch.contiguous_format),
                x.new_empty((x.shape[:-1].numel(),), dtype=torch.float32))

    _op = rmsnorm_fwd
    return _op


def rmsnorm(x, weight, eps=1e-6, return_rstd=False):
    """RMSNorm over the last dimension of `x`.

    y = x * rsqrt(mean(x * x, dim=-1) + eps) * weight, accumulated in f32 and
    returned in x's dtype and shape (contiguous); with `return_rstd`, also the
    per-row rsqrt(mean(x * x) + eps) in f32, of shape [M] where M is the
    product of x's leading dimensions.

    x: [..., N] on a CUDA device, bf16/f16/f32, last dimension unit-stride
    (a 2-D view with a wider row stride is used as is). weight: [N], same
    dtype and device, contiguous. Runs on the current CUDA stream.
    """
    if _torch is None:
        _init_torch()
    if not isinstance(eps, (int, float)) or isinstance(eps, bool):
        raise TypeError(f"rmsnorm: eps must be a float, got "
                        f"{type(eps).__name__}")
    if _torch.compiler.is_compiling():
        y, rstd = _get_op()(x, weight, float(eps))
    else:
        y, rstd = rmsnorm_forward(x, weight, eps)
    return (y, rstd) if return_rstd else y


# Register the op at import (it cannot be registered while torch.compile
# traces); without torch the package still imports, for CPU-only use.
try:
    _init_torch()
except ImportError:
    pass
else:
    _get_op()
